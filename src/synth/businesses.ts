/**
 * Businesses whose registered office is at a building's address: a few per cent of buildings,
 * most in shops, offices and industry, some in blocks of flats (offices registered at home).
 * Sizes are stated exactly, as a band (10..19), as the open top band (250+, max null) or not at
 * all; turnover is the latest statement's, in RON or EUR, with its financial year. Some
 * businesses are no longer active. None of this says who owns or uses the building.
 */
import type { BusinessRecord } from '../snapshot/schema.ts';
import type { Facts } from './facts.ts';
import { flatAscii } from './flat.ts';
import { businessName } from './names.ts';
import type { Prng } from './prng.ts';

/** Bands of the business register, as [min, max]; max null = open-ended top band. */
const BANDS: readonly (readonly [number, number | null])[] = [
  [1, 9],
  [10, 19],
  [20, 49],
  [50, 249],
  [250, null],
];

/** Workforce of one business: log-normal around the kind's median, so a few are large. */
function workforce(rng: Prng, median: number): number {
  return Math.max(0, Math.round(rng.lognormal(median, 1.2)) - 1);
}

export class BusinessRegister {
  private counter = 0;

  constructor(
    private readonly sourcePrefix: string,
    private readonly snapshotYear: number,
  ) {}

  /** Businesses registered at a plot's main building (an empty list for most). */
  draw(rng: Prng, f: Facts): BusinessRecord[] {
    const out: BusinessRecord[] = [];
    if (!rng.chance(f.kind.businesses[0])) return out;
    const n = Math.max(1, Math.min(40, Math.round(rng.lognormal(f.kind.businesses[1], 0.6))));
    for (let i = 0; i < n; i++) out.push(this.business(rng, f));
    return out;
  }

  private business(rng: Prng, f: Facts): BusinessRecord {
    const id = this.counter++;
    const active = rng.chance(0.88);
    const name = businessName(rng);
    const size = workforce(rng, f.kind.workforce);
    let min: number | null = null,
      max: number | null = null;
    const form = rng.next();
    if (form < 0.45) {
      min = max = size;
    } else if (form < 0.72) {
      const band = BANDS.find(([, hi]) => hi === null || size <= hi)!;
      min = Math.max(band[0], 1);
      max = band[1];
    }
    let turnover: number | null = null,
      currency: string | null = null,
      year: number | null = null;
    if (rng.chance(active ? 0.7 : 0.3)) {
      currency = rng.chance(0.85) ? 'RON' : 'EUR';
      // Dormant and newly founded businesses file zero turnover: an exact tie at 0.
      turnover = rng.chance(0.06) ? 0 : Math.round(rng.lognormal(currency === 'RON' ? 180_000 : 40_000, 1.4) * (1 + size));
      year = active ? this.snapshotYear - (rng.chance(0.7) ? 1 : rng.chance(0.8) ? 2 : rng.int(3, 5)) : this.snapshotYear - rng.int(2, 9);
    } else if (rng.chance(0.15)) {
      // A statement filed without a turnover figure still names its year (and often the currency).
      year = this.snapshotYear - rng.int(1, 4);
      currency = rng.chance(0.5) ? 'RON' : null;
    }
    const solo = name.endsWith(' PFA') || name.endsWith(' II');
    return {
      business_id: flatAscii(`${this.sourcePrefix}business/${id}`),
      registration_number: rng.chance(0.92)
        ? `${solo ? 'F' : 'J'}${String(f.settlement.county + 1).padStart(2, '0')}/${1 + (id % 99_999)}/${rng.int(1991, this.snapshotYear)}`
        : null,
      name,
      active,
      employees_min: min,
      employees_max: max,
      turnover,
      turnover_currency: currency,
      turnover_financial_year: year,
    };
  }
}
