/**
 * Dwellings and the units of a building. Blocks of flats list their flats (and, in the centre,
 * shops on the ground floor and, in newer blocks, parking spaces), some office buildings their
 * offices; a house is one dwelling, sometimes two. The dwelling count agrees with the listed
 * flats when they are listed, and is otherwise stated or estimated from the floors, or unknown.
 */
import type { BuildingRecord, UnitRecord, UnitUse } from '../snapshot/schema.ts';
import type { Facts } from './facts.ts';
import { flatAscii } from './flat.ts';
import { OFFICE, SHOP, TOWER } from './kinds.ts';
import { CORE, INNER, TOWN_CENTRE } from './layout.ts';
import type { Prng } from './prng.ts';

const FLAT_AREA_BY_ROOMS = [0, 34, 52, 68, 86];

/**
 * Unit labels ("Ap. 12", "P3") repeat in every block: one shared string per label rather than a
 * new one per unit, since the snapshot writer holds them all until it finishes.
 */
class Labels {
  private readonly cache: string[] = [];
  constructor(private readonly prefix: string) {}
  get(n: number): string {
    return (this.cache[n] ??= `${this.prefix}${n}`);
  }
}
const FLAT_LABEL = new Labels('Ap. ');
const SHOP_LABEL = new Labels('Sp. ');
const PARKING_LABEL = new Labels('P');

function unit(rng: Prng, r: BuildingRecord, floor: number, use: UnitUse, label: string, rooms: number | null): UnitRecord {
  const area =
    use === 'residential' && rooms !== null
      ? FLAT_AREA_BY_ROOMS[rooms] * rng.range(0.85, 1.2)
      : use === 'parking'
        ? 12.5
        : rng.lognormal(use === 'office' ? 60 : 45, 0.5);
  return {
    unit_id: flatAscii(`${r.source_id}:unit/${r.units.length}`),
    label: rng.chance(0.9) ? label : null,
    floor: rng.chance(0.95) ? floor : null,
    use: rng.chance(0.95) ? use : null,
    area_m2: rng.chance(0.8) ? Math.round(area * 10) / 10 : null,
    rooms: rooms !== null && rng.chance(0.85) ? rooms : null,
  };
}

function blockOfFlats(rng: Prng, f: Facts, r: BuildingRecord): void {
  // Flats per floor per staircase: two to four (more in towers), on every floor.
  const perFloor = f.kind === TOWER ? rng.int(4, 6) : rng.int(2, 4);
  const flats = Math.max(2, perFloor * f.staircases * f.floors);
  const listed = rng.chance(0.7);
  if (listed) {
    const centre = f.zone === CORE || f.zone === INNER || f.zone === TOWN_CENTRE;
    const shops = centre && rng.chance(0.3) ? rng.int(1, 4) : 0;
    for (let i = 0; i < shops; i++) r.units.push(unit(rng, r, 0, 'commercial', SHOP_LABEL.get(i + 1), null));
    for (let i = 0; i < flats; i++) {
      const floor = Math.floor(i / (perFloor * f.staircases));
      r.units.push(unit(rng, r, floor, 'residential', FLAT_LABEL.get(i + 1), rng.int(1, 4)));
    }
    const spaces = f.year >= 2005 && rng.chance(0.4) ? rng.int(5, 40) : 0;
    for (let i = 0; i < spaces; i++) r.units.push(unit(rng, r, -1, 'parking', PARKING_LABEL.get(i + 1), null));
    r.dwellings = flats;
    r.dwellings_is_estimate = false;
  } else if (rng.chance(0.5)) {
    r.dwellings = flats;
    r.dwellings_is_estimate = rng.chance(0.5);
  } else {
    r.dwellings = null;
    r.dwellings_is_estimate = false;
  }
}

export function unitsAndDwellings(rng: Prng, f: Facts, r: BuildingRecord): void {
  r.units = [];
  r.dwellings_is_estimate = false;
  const category = f.kind.category;
  if (category === 'apartment_block') {
    blockOfFlats(rng, f, r);
  } else if (category === 'residential_house') {
    r.dwellings = rng.chance(0.75) ? (rng.chance(0.9) ? 1 : 2) : null;
    r.dwellings_is_estimate = r.dwellings !== null && rng.chance(0.5);
  } else if (f.kind === OFFICE && rng.chance(0.35)) {
    const perFloor = rng.int(2, 6);
    for (let floor = 0; floor < f.floors; floor++) {
      for (let i = 0; i < perFloor; i++) {
        const ground = floor === 0 && i === 0;
        r.units.push(unit(rng, r, floor, ground ? 'commercial' : 'office', `${floor}.${i + 1}`, null));
      }
    }
    r.dwellings = rng.chance(0.4) ? 0 : null;
  } else if (f.kind === SHOP && f.floors > 1 && rng.chance(0.25)) {
    // A shop with a flat above it.
    r.units.push(unit(rng, r, 0, 'commercial', SHOP_LABEL.get(1), null));
    r.units.push(unit(rng, r, 1, 'residential', FLAT_LABEL.get(1), 2));
    r.dwellings = 1;
  } else {
    // Other buildings hold no dwellings; records say so for some, nothing for the rest.
    r.dwellings = rng.chance(0.35) ? 0 : null;
  }
}
