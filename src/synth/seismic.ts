/**
 * Earthquake hazard: the design ground acceleration of the seismic code and the official lists
 * of technically assessed buildings. Acceleration falls smoothly away from one intermediate-depth
 * source (as Vrancea does for Romania) and is published in the code's 0.05 g steps, so
 * neighbouring buildings share exact values. Lists name old blocks and public buildings of
 * towns, mostly where the acceleration is high.
 */
import type { SeismicRiskClass } from '../snapshot/schema.ts';
import type { Country } from './bounds.ts';
import { valueNoise } from './noise.ts';
import type { Prng } from './prng.ts';

/**
 * Classes on the lists, and how often each is given (RsII and RsI dominate real lists); null is a
 * list's N/A: the building is named with neither a class nor an examination year.
 */
const CLASSES: readonly (SeismicRiskClass | null)[] = ['RsI', 'RsII', 'RsIII', 'RsIV', 'U1', 'U2', 'U3', 'consolidated', null];
const CLASS_WEIGHTS = [24, 36, 18, 5, 3, 4, 3, 7, 6];
const CLASS_TOTAL = CLASS_WEIGHTS.reduce((a, b) => a + b, 0);

/** A building's entry on a seismic list, if any. */
export interface Assessment {
  listed: boolean;
  cls: SeismicRiskClass | null;
  year: number | null;
}

export class SeismicHazard {
  private readonly sourceLon: number;
  private readonly sourceLat: number;

  constructor(
    private readonly country: Country,
    rng: Prng,
    private readonly seed: number,
  ) {
    this.sourceLon = country.minLon + (country.maxLon - country.minLon) * rng.range(0.65, 0.85);
    this.sourceLat = country.minLat + (country.maxLat - country.minLat) * rng.range(0.45, 0.7);
  }

  /** Design acceleration at a point, in g: 0.10 to 0.40 in steps of 0.05. */
  acceleration(lon: number, lat: number): number {
    const dx = (lon - this.sourceLon) * this.country.mPerLon,
      dy = (lat - this.sourceLat) * this.country.mPerLat;
    const km = Math.sqrt(dx * dx + dy * dy) / 1000;
    const ag = 0.1 + 0.32 * Math.exp(-Math.pow(km / 170, 1.3)) + 0.06 * (valueNoise(this.seed, 41, lon * 1.2, lat * 1.2) - 0.5);
    return Math.round(Math.min(0.4, Math.max(0.1, ag)) * 20) / 20;
  }

  /**
   * Whether a building is on a list and with what class and year, written into `out`. Lists
   * cover buildings finished before the 1977 and 1990 code revisions, blocks and public ones.
   */
  assess(rng: Prng, ag: number, builtYear: number, listed: boolean, lastYear: number, out: Assessment): void {
    out.listed = false;
    out.cls = null;
    out.year = null;
    if (!listed || builtYear >= 1990) return;
    const p = (builtYear < 1978 ? 0.25 : 0.03) * (ag / 0.3);
    if (!rng.chance(p)) return;
    out.listed = true;
    out.cls = CLASSES[rng.weighted(CLASS_WEIGHTS, CLASS_TOTAL)];
    const year = Math.min(lastYear, out.cls === 'RsI' ? rng.int(1993, 2018) : rng.int(1996, 2025));
    out.year = out.cls === null ? null : year;
  }
}
