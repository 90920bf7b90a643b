/**
 * The rectangle a synthetic country fills, and its partition into counties. Counties give
 * postal-code prefixes and business-register numbers their regional part, as in the
 * Romanian systems the default bounds imitate.
 */
import { metresPerDegreeLat, metresPerDegreeLon } from '../geo/wgs84.ts';

/** [minLon, minLat, maxLon, maxLat], WGS84 degrees. */
export type Bounds = readonly [number, number, number, number];

export const DEFAULT_BOUNDS: Bounds = [20, 44, 26, 48];

const COUNTY_COLUMNS = 7;
const COUNTY_ROWS = 6;

export class Country {
  readonly minLon: number;
  readonly minLat: number;
  readonly maxLon: number;
  readonly maxLat: number;
  /** Metres per degree at the middle latitude: good enough to size things country-wide. */
  readonly mPerLon: number;
  readonly mPerLat: number;
  readonly widthM: number;
  readonly heightM: number;

  constructor(bounds: Bounds) {
    [this.minLon, this.minLat, this.maxLon, this.maxLat] = bounds;
    const midLat = (this.minLat + this.maxLat) / 2;
    this.mPerLon = metresPerDegreeLon(midLat);
    this.mPerLat = metresPerDegreeLat(midLat);
    this.widthM = (this.maxLon - this.minLon) * this.mPerLon;
    this.heightM = (this.maxLat - this.minLat) * this.mPerLat;
  }

  get areaKm2(): number {
    return (this.widthM * this.heightM) / 1e6;
  }

  contains(lon: number, lat: number): boolean {
    return lon > this.minLon && lon < this.maxLon && lat > this.minLat && lat < this.maxLat;
  }

  /** County index of a point, 0 to 41. */
  county(lon: number, lat: number): number {
    const c = Math.min(COUNTY_COLUMNS - 1, Math.max(0, Math.floor(((lon - this.minLon) / (this.maxLon - this.minLon)) * COUNTY_COLUMNS)));
    const r = Math.min(COUNTY_ROWS - 1, Math.max(0, Math.floor(((lat - this.minLat) / (this.maxLat - this.minLat)) * COUNTY_ROWS)));
    return r * COUNTY_COLUMNS + c;
  }
}
