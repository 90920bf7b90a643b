/**
 * The building itself and what records say of its size, age and form. `drawSize` and
 * `drawBody` draw the truth (footprint size, floors, height, year, roof); `describe` writes
 * what the sources report into the record, with the shares of unknowns, estimates and
 * rounding a real catalogue has: height unknown for ~20 %, floors ~25 %, construction year
 * ~40 %, roof shape ~50 %. Estimated heights are floors x 3 m and estimated volumes are
 * rounded to whole m³, so identical buildings tie exactly in every sort key.
 */
import type { BuildingRecord } from '../snapshot/schema.ts';
import type { Facts } from './facts.ts';
import { FARMHOUSE, GARAGE_ROW, HOUSE, SLAB, STANDARD_HOUSES, type Kind } from './kinds.ts';
import { RECTANGLE } from './outlines.ts';
import type { Prng } from './prng.ts';

/** Years of the map and photo series that show a building stood: `completed_by_year`. */
const SURVEY_YEARS = [1970, 1990, 2005, 2010, 2015, 2020, 2024];

function round1(v: number): number {
  return Math.round(v * 10) / 10;
}

function round2(v: number): number {
  return Math.round(v * 100) / 100;
}

/** Draws footprint size and shape into f.w, f.d (w the long side, 0.1 m steps) and f.shape. */
export function drawSize(rng: Prng, kind: Kind, f: Facts): void {
  f.shape = kind.shapes.values[rng.weighted(kind.shapes.weights, kind.shapes.total)];
  if ((kind === HOUSE || kind === FARMHOUSE) && rng.chance(0.3)) {
    const design = STANDARD_HOUSES[rng.int(0, STANDARD_HOUSES.length - 1)];
    f.w = Math.max(design[0], design[1]);
    f.d = Math.min(design[0], design[1]);
    f.shape = RECTANGLE;
    return;
  }
  const area = Math.min(kind.area[3], Math.max(kind.area[2], rng.lognormal(kind.area[0], kind.area[1])));
  if (kind === GARAGE_ROW) {
    // Identical 3.2 x 6 m boxes side by side.
    f.d = 6;
    f.w = 3.2 * Math.max(3, Math.min(14, Math.round(area / 19.2)));
    return;
  }
  const aspect = rng.range(kind.aspect[0], kind.aspect[1]);
  f.w = Math.max(1.6, round1(Math.sqrt(area * aspect)));
  f.d = Math.max(1.5, round1(area / f.w));
}

/** Draws floors, heights, roof and year of a building whose outline is already drawn. */
export function drawBody(rng: Prng, f: Facts): void {
  const kind = f.kind;
  f.floors = kind.floors.values[rng.weighted(kind.floors.weights, kind.floors.total)];
  f.roof = kind.roofs.values[rng.weighted(kind.roofs.weights, kind.roofs.total)];
  const walls = f.floors * kind.storeyM;
  if (f.roof === 'flat') {
    f.heightM = walls + 0.6;
    f.meanHeightM = walls + 0.3;
  } else {
    // A pitched roof over the short side: ridge height from a 25-40° pitch, capped.
    const ridge = Math.min(9, (Math.min(f.w, f.d) / 2) * Math.tan(rng.range(0.44, 0.7)));
    f.heightM = walls + ridge;
    f.meanHeightM = walls + ridge / 2;
  }
  const era = kind.eras.values[rng.weighted(kind.eras.weights, kind.eras.total)];
  f.year = rng.int(era[0], era[1]);
  f.staircases = kind === SLAB ? Math.min(8, Math.max(1, Math.round(f.w / 16))) : kind.category === 'apartment_block' ? rng.int(1, 3) : 1;
}

/** Writes what records say of the building's form, size and age into `r`. */
export function describe(rng: Prng, f: Facts, r: BuildingRecord, snapshotYear: number): void {
  const kind = f.kind;
  r.category = kind.category;
  r.category_evidence = kind.category === 'unknown' || rng.chance(0.35) ? 'inferred' : 'confirmed';
  r.building_type = kind.types.values[rng.weighted(kind.types.weights, kind.types.total)];
  r.roof_shape = rng.chance(0.5) ? f.roof : null;
  r.footprint_area_m2 = round2(f.area);

  // Height: measured (survey, lidar), stated (a record) or none; floors stated or none. Each
  // missing one is estimated from the other often, but not always.
  const source = rng.next();
  const floorsStated = rng.chance(0.6);
  if (source < 0.4) {
    r.height_m = round1(Math.max(1.5, f.heightM + rng.normal() * 0.3));
    r.height_basis = 'measured';
  } else if (source < 0.6) {
    r.height_m = Math.round(f.heightM * 2) / 2;
    r.height_basis = 'stated';
  } else if (floorsStated && rng.chance(0.8)) {
    r.height_m = f.floors * 3;
    r.height_basis = 'estimated';
  } else {
    r.height_m = null;
    r.height_basis = null;
  }
  if (floorsStated) {
    r.floors = f.floors;
    r.floors_is_estimate = false;
  } else if (r.height_m !== null && r.height_basis !== 'estimated' && rng.chance(0.625)) {
    r.floors = Math.max(1, Math.round(r.height_m / 3));
    r.floors_is_estimate = true;
  } else {
    r.floors = null;
    r.floors_is_estimate = false;
  }
  if (r.floors !== null && rng.chance(0.7)) {
    const basement = kind.category === 'apartment_block' ? 1 : kind.category === 'residential_house' && rng.chance(0.3) ? 1 : 0;
    r.floors_including_underground = r.floors + basement;
  } else {
    r.floors_including_underground = null;
  }

  // A 3D model comes with most lidar-measured buildings; the volume counts as measured only
  // when the building itself was surveyed, not when it is integrated under a modelled roof.
  r.has_3d_model = r.height_basis === 'measured' && rng.chance(0.55);
  if (r.height_basis === 'measured' && rng.chance(0.4)) {
    r.volume_m3 = Math.round(f.area * f.meanHeightM * (1 + rng.normal() * 0.03));
    r.volume_basis = 'measured';
  } else if (r.height_m !== null) {
    const underRoof = f.roof === 'flat' ? 1 : 0.85;
    r.volume_m3 = Math.round(r.footprint_area_m2 * r.height_m * underRoof);
    r.volume_basis = 'estimated';
  } else if (rng.chance(0.05)) {
    // A few records state a volume (a cadastre's round figure) where no height is known.
    r.volume_m3 = Math.round((f.area * f.meanHeightM) / 10) * 10;
    r.volume_basis = 'stated';
  } else {
    r.volume_m3 = null;
    r.volume_basis = null;
  }

  const floorsKnown = r.floors ?? (r.height_m !== null ? Math.max(1, Math.round(r.height_m / 3)) : null);
  if (floorsKnown !== null && rng.chance(0.2)) {
    r.floor_area_m2 = round1(f.area * f.floors * 0.97);
    r.floor_area_basis = 'stated';
  } else if (floorsKnown !== null) {
    r.floor_area_m2 = round1(r.footprint_area_m2 * floorsKnown);
    r.floor_area_basis = 'estimated';
  } else {
    r.floor_area_m2 = null;
    r.floor_area_basis = null;
  }
  r.floor_area_scope = r.floor_area_m2 === null ? null : 'gross_above_ground';

  // Years: a record states it (sometimes only its decade, flagged as an estimate), or not;
  // a map or photo series often shows by when it stood.
  const year = Math.min(f.year, snapshotYear);
  const known = rng.next();
  if (known < 0.45) {
    r.construction_year = year;
    r.construction_year_is_estimate = false;
  } else if (known < 0.6) {
    r.construction_year = Math.floor(year / 10) * 10;
    r.construction_year_is_estimate = true;
  } else {
    r.construction_year = null;
    r.construction_year_is_estimate = false;
  }
  r.completed_by_year = null;
  if (rng.chance(r.construction_year === null ? 0.6 : 0.4)) {
    for (const survey of SURVEY_YEARS) {
      if (survey >= year && survey <= snapshotYear) {
        r.completed_by_year = survey;
        break;
      }
    }
  }
}
