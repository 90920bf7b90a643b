/**
 * The brute-force baseline: one plain loop over every row of the snapshot, testing the
 * representative point against the bbox and then each filter, keeping the best
 * offset + limit rows in a bounded heap and counting every match. No index, no early exit:
 * what the engine has to beat. Point lookups test every footprint's bounding box and measure
 * the exact distance of the few that are near.
 *
 * Filters are compiled once per query into two flat lists (ranges over number columns,
 * 256-entry masks over code columns), so the loop calls no function per filter.
 */
import { BASIS, CATEGORY, FLOOD_ZONE, PANELS_STATUS, ROOF_SHAPE, SEISMIC_RISK_CLASS, SOLAR_PRESENCE } from '../src/snapshot/schema.ts';
import { MAX_WINDOW, type BuildingsQuery, type PointQuery } from '../src/query/types.ts';
import { NULL_CODE, formatId, type BenchColumns } from './columns.ts';
import type { Answer, Engine, MixQuery } from './engine.ts';
import { LocalFrame } from '../src/geo/wgs84.ts';

/** The sphere of mean radius: within 0.6% of the ellipsoid's metres per degree, for shortcuts with a margin. */
export const EARTH_RADIUS_M = 6_371_008.8;

/** The filters of `BuildingsQuery` the bench's mix uses; anything else is refused. */
export const SUPPORTED_FILTERS = new Set([
  'category',
  'roofShape',
  'minFloors',
  'maxFloors',
  'minDwellings',
  'maxDwellings',
  'minAreaM2',
  'maxAreaM2',
  'minHeightM',
  'maxHeightM',
  'minVolumeM3',
  'maxVolumeM3',
  'measuredHeightOnly',
  'solarPresence',
  'excludeSolarPresence',
  'existingSolarPanels',
  'hasSolarPotential',
  'has3dModel',
  'minRecentFrostDays',
  'floodZone',
  'seismicRiskClass',
  'registeredBusinessTurnoverCurrency',
]);
const PAGING = new Set(['bbox', 'sort', 'limit', 'offset']);

export function checkSupported(q: BuildingsQuery): void {
  for (const [k, v] of Object.entries(q)) {
    if (v === undefined || PAGING.has(k) || SUPPORTED_FILTERS.has(k)) continue;
    throw new RangeError(`bench: filter ${k} is not supported by the scan and DuckDB baselines`);
  }
}

interface Compiled {
  rangeCols: Float64Array[];
  lo: number[];
  hi: number[];
  maskCols: Uint8Array[];
  masks: Uint8Array[];
}

function mask(values: readonly string[], keep: readonly string[]): Uint8Array {
  const m = new Uint8Array(256);
  for (const v of keep) {
    const at = values.indexOf(v);
    if (at < 0) throw new RangeError(`bench: "${v}" is not one of ${values.join(', ')}`);
    m[at] = 1;
  }
  return m;
}

export class ScanEngine implements Engine<{ rows: Int32Array; total: number; capped: boolean } | { rows: Int32Array; dist: Float64Array }> {
  readonly name = 'scan';
  readonly async = false;
  private readonly employeesMax: Float64Array;
  private readonly turnoverMax = new Map<string, Float64Array>();
  private readonly frame = new LocalFrame();

  constructor(readonly c: BenchColumns) {
    this.employeesMax = new Float64Array(c.n).fill(NaN);
    for (let j = 0; j < c.bizRow.length; j++) {
      const r = c.bizRow[j],
        v = c.bizEmployeesMin[j];
      if (v === v && !(this.employeesMax[r] >= v)) this.employeesMax[r] = v;
    }
  }

  /** Largest stated turnover in `currency` per building (NaN: none), built on first use. */
  private turnover(currency: string): Float64Array {
    let out = this.turnoverMax.get(currency);
    if (out) return out;
    const c = this.c;
    out = new Float64Array(c.n).fill(NaN);
    const code = c.currencies.indexOf(currency);
    for (let j = 0; j < c.bizRow.length; j++) {
      if (c.bizCurrency[j] !== code || code < 0) continue;
      const r = c.bizRow[j],
        v = c.bizTurnover[j];
      if (v === v && !(out[r] >= v)) out[r] = v;
    }
    this.turnoverMax.set(currency, out);
    return out;
  }

  sortKey(q: BuildingsQuery): Float64Array {
    switch (q.sort) {
      case 'volume':
        return this.c.volumeM3;
      case 'area':
        return this.c.areaM2;
      case 'height':
        return this.c.heightM;
      case 'registered_business_employees':
        return this.employeesMax;
      case 'registered_business_turnover':
        return this.turnover(q.registeredBusinessTurnoverCurrency!);
    }
  }

  private compile(q: BuildingsQuery): Compiled {
    checkSupported(q);
    const c = this.c;
    const out: Compiled = { rangeCols: [], lo: [], hi: [], maskCols: [], masks: [] };
    const range = (col: Float64Array, lo: number | undefined, hi: number | undefined): void => {
      if (lo === undefined && hi === undefined) return;
      out.rangeCols.push(col);
      out.lo.push(lo ?? -Infinity);
      out.hi.push(hi ?? Infinity);
    };
    const codes = (col: Uint8Array, m: Uint8Array): void => {
      out.maskCols.push(col);
      out.masks.push(m);
    };
    range(c.floors, q.minFloors, q.maxFloors);
    range(c.dwellings, q.minDwellings, q.maxDwellings);
    range(c.areaM2, q.minAreaM2, q.maxAreaM2);
    range(c.heightM, q.minHeightM, q.maxHeightM);
    range(c.volumeM3, q.minVolumeM3, q.maxVolumeM3);
    range(c.recentFrostDays, q.minRecentFrostDays, undefined);
    if (q.category) codes(c.category, mask(CATEGORY, q.category));
    if (q.roofShape) codes(c.roofShape, mask(ROOF_SHAPE, q.roofShape));
    if (q.measuredHeightOnly) codes(c.volumeBasis, mask(BASIS, ['measured']));
    if (q.solarPresence) codes(c.solarPresence, mask(SOLAR_PRESENCE, q.solarPresence));
    if (q.excludeSolarPresence) {
      const m = mask(SOLAR_PRESENCE, q.excludeSolarPresence);
      for (let i = 0; i < 256; i++) m[i] ^= 1;
      codes(c.solarPresence, m);
    }
    if (q.existingSolarPanels) codes(c.panelsStatus, mask(PANELS_STATUS, q.existingSolarPanels));
    if (q.hasSolarPotential) {
      const m = new Uint8Array(256).fill(1);
      m[NULL_CODE] = 0;
      codes(c.solarPotentialBasis, m);
    }
    if (q.has3dModel) codes(c.has3dModel, Uint8Array.of(0, 1));
    if (q.floodZone) codes(c.floodZone, mask(FLOOD_ZONE, q.floodZone));
    if (q.seismicRiskClass) codes(c.seismicRiskClass, mask(SEISMIC_RISK_CLASS, q.seismicRiskClass));
    return out;
  }

  run(m: MixQuery): { rows: Int32Array; total: number; capped: boolean } | { rows: Int32Array; dist: Float64Array } {
    return m.kind === 'buildings' ? this.buildings(m.q) : this.point(m.q);
  }

  answer(raw: { rows: Int32Array; total?: number; capped?: boolean }): Answer {
    const ids = Array.from(raw.rows, (r) => formatId(this.c.idWords, r));
    return raw.total === undefined ? { ids } : { ids, total: raw.total, capped: raw.capped };
  }

  buildings(q: BuildingsQuery): { rows: Int32Array; total: number; capped: boolean } {
    const c = this.c;
    const { rangeCols, lo, hi, maskCols, masks } = this.compile(q);
    const nr = rangeCols.length,
      nm = maskCols.length;
    const key = this.sortKey(q);
    const words = c.idWords;
    const { minLon, minLat, maxLon, maxLat } = q.bbox;
    const lon = c.lon,
      lat = c.lat;
    const k = q.offset + q.limit;
    const heap = new Int32Array(k);
    let size = 0;
    let matches = 0;

    // a ranks before b: key descending, unknown (NaN) last, ties by building_id ascending.
    const before = (a: number, b: number): boolean => {
      const ka = key[a],
        kb = key[b];
      if (ka === kb || (ka !== ka && kb !== kb)) {
        for (let w = 0; w < 4; w++) {
          const x = words[4 * a + w],
            y = words[4 * b + w];
          if (x !== y) return x < y;
        }
        return false;
      }
      if (ka !== ka) return false;
      if (kb !== kb) return true;
      return ka > kb;
    };

    rows: for (let i = 0, n = c.n; i < n; i++) {
      const x = lon[i];
      if (x < minLon || x > maxLon) continue;
      const y = lat[i];
      if (y < minLat || y > maxLat) continue;
      for (let f = 0; f < nr; f++) {
        const v = rangeCols[f][i];
        if (!(v >= lo[f] && v <= hi[f])) continue rows;
      }
      for (let f = 0; f < nm; f++) if (masks[f][maskCols[f][i]] === 0) continue rows;
      matches++;
      // heap[0] is the worst row kept.
      if (size < k) {
        let at = size++;
        while (at > 0) {
          const parent = (at - 1) >> 1;
          if (!before(heap[parent], i)) break;
          heap[at] = heap[parent];
          at = parent;
        }
        heap[at] = i;
      } else if (k > 0 && before(i, heap[0])) {
        let at = 0;
        for (;;) {
          const l = 2 * at + 1;
          if (l >= size) break;
          const r = l + 1;
          const worse = r < size && before(heap[l], heap[r]) ? r : l;
          if (!before(i, heap[worse])) break;
          heap[at] = heap[worse];
          at = worse;
        }
        heap[at] = i;
      }
    }
    const kept = Array.from(heap.subarray(0, size)).sort((a, b) => (a === b ? 0 : before(a, b) ? -1 : 1));
    return {
      rows: Int32Array.from(kept.slice(q.offset, q.offset + q.limit)),
      total: Math.min(matches, MAX_WINDOW),
      capped: matches > MAX_WINDOW,
    };
  }

  point(q: PointQuery): { rows: Int32Array; dist: Float64Array } {
    const c = this.c;
    const lon0 = q.lon,
      lat0 = q.lat;
    const cos0 = Math.cos((lat0 * Math.PI) / 180);
    const frame = this.frame.centre(lon0, lat0);
    const margin = q.radiusM * 1.01 + 1;
    const near: number[] = [];
    const dists: number[] = [];
    const { fpMinLon, fpMinLat, fpMaxLon, fpMaxLat } = c;
    for (let i = 0, n = c.n; i < n; i++) {
      // Skip what lies wholly beyond the radius (1% + 1 m over the sphere's measure) on one side.
      const x0 = ((fpMinLon[i] - lon0) * cos0 * EARTH_RADIUS_M * Math.PI) / 180;
      if (x0 > margin) continue;
      const x1 = ((fpMaxLon[i] - lon0) * cos0 * EARTH_RADIUS_M * Math.PI) / 180;
      if (-x1 > margin) continue;
      const y0 = ((fpMinLat[i] - lat0) * EARTH_RADIUS_M * Math.PI) / 180;
      if (y0 > margin) continue;
      const y1 = ((fpMaxLat[i] - lat0) * EARTH_RADIUS_M * Math.PI) / 180;
      if (-y1 > margin) continue;
      const d = footprintDistance(c, i, frame);
      if (d <= q.radiusM) {
        near.push(i);
        dists.push(d);
      }
    }
    const order = near
      .map((_, j) => j)
      .sort((a, b) => {
        if (dists[a] !== dists[b]) return dists[a] - dists[b];
        for (let w = 0; w < 4; w++) {
          const x = c.idWords[4 * near[a] + w],
            y = c.idWords[4 * near[b] + w];
          if (x !== y) return x < y ? -1 : 1;
        }
        return 0;
      })
      .slice(0, q.limit);
    return { rows: Int32Array.from(order, (j) => near[j]), dist: Float64Array.from(order, (j) => dists[j]) };
  }
}

/**
 * Distance in metres from the frame's origin to the outline of row i, in the plane tangent to
 * the WGS84 ellipsoid there (the engine's frame): 0 inside a polygon's outer ring and outside
 * its holes, else the nearest edge of any ring. Edges join consecutive vertices (rings are
 * stored closed); the even-odd test also closes the ring from the last vertex to the first.
 */
export function footprintDistance(c: BenchColumns, i: number, frame: LocalFrame): number {
  const xy = c.coords;
  let best = Infinity;
  for (let p = c.polyStart[i]; p < c.polyStart[i + 1]; p++) {
    let insideOuter = false,
      insideHole = false;
    for (let r = c.ringStart[p]; r < c.ringStart[p + 1]; r++) {
      const v0 = c.vertexStart[r],
        v1 = c.vertexStart[r + 1];
      let inside = false;
      frame.project(xy[2 * (v1 - 1)], xy[2 * (v1 - 1) + 1]);
      let jx = frame.x;
      let jy = frame.y;
      let px = 0,
        py = 0;
      for (let v = v0; v < v1; v++) {
        frame.project(xy[2 * v], xy[2 * v + 1]);
        const x = frame.x;
        const y = frame.y;
        if (y > 0 !== jy > 0) {
          const xCross = x + ((0 - y) * (jx - x)) / (jy - y);
          if (xCross > 0) inside = !inside;
        }
        if (v > v0) {
          const dx = x - px,
            dy = y - py;
          const len2 = dx * dx + dy * dy;
          let t = len2 === 0 ? 0 : ((0 - px) * dx + (0 - py) * dy) / len2;
          if (t < 0) t = 0;
          if (t > 1) t = 1;
          const d = Math.hypot(px + t * dx, py + t * dy);
          if (d < best) best = d;
        }
        px = x;
        py = y;
        jx = x;
        jy = y;
      }
      if (r === c.ringStart[p]) insideOuter = inside;
      else if (inside) insideHole = true;
    }
    if (insideOuter && !insideHole) return 0;
  }
  return best;
}
