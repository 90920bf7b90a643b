/**
 * Rivers and the official flood hazard maps along them. A main river crosses the south of the
 * country from west to east; tributaries run from the edges into it. A building's zone is the
 * most frequently flooded zone whose extent reaches it, extents growing with the return period
 * and the river's size, their edges made irregular by noise. Maps exist only for some stretches
 * and for one region (its whole area), so `flood_zone_mapped` and `flood_zone_source` vary and
 * a null zone is not evidence of low risk.
 */
import type { FloodZone } from '../snapshot/schema.ts';
import type { Country } from './bounds.ts';
import { metresPerDegreeLat, metresPerDegreeLon } from '../geo/wgs84.ts';
import { fractalNoise } from './noise.ts';
import type { Prng } from './prng.ts';

/** Outer edge of each zone, in metres from the bank of a small river. */
const REACH_M: Record<FloodZone, number> = {
  '5_year': 20,
  '10_year': 40,
  '20_year': 70,
  '50_year': 120,
  '100_year': 190,
  '100_year_climate_change': 250,
  '500_year': 350,
  '1000_year': 460,
  '10000_year': 700,
};
/** Zones mapped by each kind of map, most frequent first: maps differ in the periods they draw. */
const ZONE_SETS: readonly (readonly FloodZone[])[] = [
  ['10_year', '100_year', '100_year_climate_change', '1000_year'],
  ['5_year', '20_year', '50_year', '100_year', '500_year'],
  ['10_year', '100_year', '500_year', '10000_year'],
];
/** River sizes: bed half-width and how far its floods reach, relative to a small river. */
const HALF_WIDTH_M = [10, 30, 160];
const REACH_SCALE = [1, 1.6, 2.6];
/** A map covers its river's floodplain study area: this far from the centreline. */
const STUDY_AREA_M = 5_000;
const CELL_DEG = 0.05;

const RIVER_NAMES = [
  'Lunca',
  'Argeșel',
  'Bistra',
  'Cerna',
  'Crișul Mic',
  'Dâmbovnic',
  'Gilort',
  'Holod',
  'Ialomicioara',
  'Jijioara',
  'Lotru',
  'Moravița',
  'Neajlov',
  'Olteț',
  'Putna',
  'Râmnic',
  'Sebeș',
  'Tazlău',
  'Vedea',
  'Zeletin',
];

interface River {
  /** 0 small, 1 medium, 2 the main river. */
  size: number;
  /** Map drawing this river's zones, or -1 where none is published. */
  source: number;
}

/** Result of a flood look-up; one object is reused for every building. */
export interface FloodAt {
  zone: FloodZone | null;
  mapped: boolean;
  source: string | null;
  /** Metres from the nearest river's centreline (Infinity when none is near). */
  distanceM: number;
  /** Metres from the nearest river's bank (negative inside the bed). */
  bankM: number;
}

export class FloodMaps {
  private readonly rivers: River[] = [];
  private readonly sources: { name: string; zones: readonly FloodZone[] }[] = [];
  /** Segments, flattened: endpoints, river, and whether a map covers the segment. */
  private ax: number[] = [];
  private ay: number[] = [];
  private bx: number[] = [];
  private by: number[] = [];
  private segRiver: number[] = [];
  private segMapped: number[] = [];
  private cellStart!: Int32Array;
  private cellItems!: Int32Array;
  private readonly cols: number;
  private readonly rows: number;
  /** Every location west of this longitude lies in the regional map. */
  private readonly regionMaxLon: number;
  private readonly regionSource: number;

  constructor(
    private readonly country: Country,
    rng: Prng,
    private readonly seed: number,
  ) {
    this.cols = Math.ceil((country.maxLon - country.minLon) / CELL_DEG) + 1;
    this.rows = Math.ceil((country.maxLat - country.minLat) / CELL_DEG) + 1;
    const width = country.maxLon - country.minLon;
    const height = country.maxLat - country.minLat;

    // The main river: west to east across the southern tenth, meandering.
    const mainY: number[] = [];
    const mainX: number[] = [];
    let lat = country.minLat + height * rng.range(0.06, 0.12);
    const stepDeg = 2_000 / country.mPerLon;
    for (let lon = country.minLon - stepDeg; lon <= country.maxLon + stepDeg; lon += stepDeg) {
      mainX.push(lon);
      mainY.push(lat);
      lat += (rng.normal() * 1_000) / country.mPerLat;
      lat = Math.min(country.minLat + height * 0.16, Math.max(country.minLat + height * 0.03, lat));
    }
    this.addRiver(rng, 'Dunărea Mică', 2, mainX, mainY);

    // Tributaries: from a point on the north, west or east edge towards a point of the main river.
    const tributaries = Math.max(2, Math.min(12, Math.round(country.areaKm2 / 30_000)));
    for (let t = 0; t < tributaries; t++) {
      const edge = rng.int(0, 2);
      let x = edge === 0 ? country.minLon + width * rng.range(0.05, 0.95) : edge === 1 ? country.minLon : country.maxLon;
      let y = edge === 0 ? country.maxLat : country.minLat + height * rng.range(0.35, 0.95);
      const end = rng.int(0, mainX.length - 1);
      const tx = mainX[end],
        ty = mainY[end];
      const xs: number[] = [],
        ys: number[] = [];
      let heading = Math.atan2((ty - y) * country.mPerLat, (tx - x) * country.mPerLon);
      for (let step = 0; step < 3_000; step++) {
        xs.push(x);
        ys.push(y);
        const dx = (tx - x) * country.mPerLon,
          dy = (ty - y) * country.mPerLat;
        if (dx * dx + dy * dy < 1_500 * 1_500) break;
        // Meander: a random turn, pulled back towards the mouth so the river arrives.
        const toMouth = Math.atan2(dy, dx);
        let turn = toMouth - heading;
        turn = Math.atan2(Math.sin(turn), Math.cos(turn));
        heading += 0.2 * turn + rng.normal() * 0.35;
        x += (Math.cos(heading) * 1_500) / country.mPerLon;
        y += (Math.sin(heading) * 1_500) / country.mPerLat;
      }
      xs.push(tx);
      ys.push(ty);
      this.addRiver(rng, RIVER_NAMES[t % RIVER_NAMES.length], t < tributaries / 3 ? 1 : 0, xs, ys);
    }

    this.regionMaxLon = country.minLon + width * rng.range(0.2, 0.35);
    this.regionSource = this.sources.push({ name: 'Regional flood hazard map, West (2020)', zones: ZONE_SETS[2] }) - 1;
    this.index();
  }

  private addRiver(rng: Prng, name: string, size: number, xs: number[], ys: number[]): void {
    const id = this.rivers.length;
    // Most rivers have a published map over part of their course; some have none.
    let source = -1;
    let from = 0,
      to = -1;
    if (rng.chance(0.75)) {
      source = this.sources.push({ name: `${name} basin flood hazard map (${rng.int(2016, 2024)})`, zones: ZONE_SETS[rng.int(0, 1)] }) - 1;
      from = rng.chance(0.5) ? 0 : rng.int(0, xs.length >> 1);
      to = rng.chance(0.5) ? xs.length : rng.int(from + ((xs.length - from) >> 1), xs.length);
    }
    this.rivers.push({ size, source });
    for (let i = 0; i + 1 < xs.length; i++) {
      this.ax.push(xs[i]);
      this.ay.push(ys[i]);
      this.bx.push(xs[i + 1]);
      this.by.push(ys[i + 1]);
      this.segRiver.push(id);
      this.segMapped.push(i >= from && i < to ? 1 : 0);
    }
  }

  /** A grid of cells listing the segments within the study distance: look-ups test a few. */
  private index(): void {
    const cells = this.cols * this.rows;
    const lists: number[][] = Array.from({ length: cells }, () => []);
    const padLon = STUDY_AREA_M / this.country.mPerLon,
      padLat = STUDY_AREA_M / this.country.mPerLat;
    for (let s = 0; s < this.ax.length; s++) {
      const c0 = this.col(Math.min(this.ax[s], this.bx[s]) - padLon),
        c1 = this.col(Math.max(this.ax[s], this.bx[s]) + padLon);
      const r0 = this.row(Math.min(this.ay[s], this.by[s]) - padLat),
        r1 = this.row(Math.max(this.ay[s], this.by[s]) + padLat);
      for (let r = r0; r <= r1; r++) for (let c = c0; c <= c1; c++) lists[r * this.cols + c].push(s);
    }
    this.cellStart = new Int32Array(cells + 1);
    for (let i = 0; i < cells; i++) this.cellStart[i + 1] = this.cellStart[i] + lists[i].length;
    this.cellItems = new Int32Array(this.cellStart[cells]);
    for (let i = 0; i < cells; i++) this.cellItems.set(lists[i], this.cellStart[i]);
  }

  private col(lon: number): number {
    return Math.min(this.cols - 1, Math.max(0, Math.floor((lon - this.country.minLon) / CELL_DEG)));
  }

  private row(lat: number): number {
    return Math.min(this.rows - 1, Math.max(0, Math.floor((lat - this.country.minLat) / CELL_DEG)));
  }

  /** Fills `out` for a point: nearest river, the zone a map gives it, and which map. */
  at(lon: number, lat: number, out: FloodAt): FloodAt {
    const kx = metresPerDegreeLon(lat),
      ky = metresPerDegreeLat(lat);
    const cell = this.row(lat) * this.cols + this.col(lon);
    let best = Infinity,
      bestSeg = -1;
    for (let k = this.cellStart[cell], end = this.cellStart[cell + 1]; k < end; k++) {
      const s = this.cellItems[k];
      const ax = (this.ax[s] - lon) * kx,
        ay = (this.ay[s] - lat) * ky;
      const bx = (this.bx[s] - lon) * kx,
        by = (this.by[s] - lat) * ky;
      const dx = bx - ax,
        dy = by - ay;
      const len2 = dx * dx + dy * dy;
      const t = len2 > 0 ? Math.min(1, Math.max(0, -(ax * dx + ay * dy) / len2)) : 0;
      const px = ax + t * dx,
        py = ay + t * dy;
      const d2 = px * px + py * py;
      if (d2 < best) {
        best = d2;
        bestSeg = s;
      }
    }
    out.distanceM = Math.sqrt(best);
    out.zone = null;
    out.mapped = false;
    out.source = null;
    out.bankM = Infinity;
    let source = -1;
    if (lon <= this.regionMaxLon) source = this.regionSource;
    if (bestSeg >= 0 && out.distanceM <= STUDY_AREA_M) {
      const river = this.rivers[this.segRiver[bestSeg]];
      out.bankM = out.distanceM - HALF_WIDTH_M[river.size];
      // A river's own map, where published, is the more detailed one.
      if (this.segMapped[bestSeg] === 1) source = river.source;
      if (source >= 0) {
        // Floodplains widen and narrow along a river: stretch the distance by smooth noise.
        const stretch = 0.55 + 0.9 * fractalNoise(this.seed, 71, lon * 25, lat * 25);
        const reach = out.bankM / (REACH_SCALE[river.size] * stretch);
        for (const zone of this.sources[source].zones) {
          if (reach <= REACH_M[zone]) {
            out.zone = zone;
            break;
          }
        }
      }
    }
    if (source >= 0) {
      out.mapped = true;
      out.source = this.sources[source].name;
    }
    return out;
  }

  /**
   * A point near a random river, `offsetM` metres or less from it: where towns grow. Returns
   * false when the draw lands outside the country.
   */
  pointNear(rng: Prng, offsetM: number, out: { lon: number; lat: number }): boolean {
    const s = rng.int(0, this.ax.length - 1);
    const t = rng.next();
    const lon = this.ax[s] + t * (this.bx[s] - this.ax[s]);
    const lat = this.ay[s] + t * (this.by[s] - this.ay[s]);
    const angle = rng.range(0, 2 * Math.PI);
    const r = rng.range(0, offsetM);
    out.lon = lon + (Math.cos(angle) * r) / this.country.mPerLon;
    out.lat = lat + (Math.sin(angle) * r) / this.country.mPerLat;
    return out.lon > this.country.minLon && out.lon < this.country.maxLon && out.lat > this.country.minLat && out.lat < this.country.maxLat;
  }
}
