/**
 * GET /buildings/at (spec 4.2): buildings whose outline lies within radiusM of a point, nearest
 * first (ties by building_id), at most limit. Candidates come from each snapshot's Flatbush over
 * outline boxes; each is measured exactly (catalog/geometry.ts: 0 inside the outline, a hole is
 * outside) in the plane tangent to the WGS84 ellipsoid at the point (geo/wgs84.ts), where
 * distances from the point are the ellipsoid's.
 *
 * Measuring an outline costs a pass over its vertices, and a box of 200 m holds ~180 candidates
 * where a page is ~10 (the load mix's points, 1M country). So each candidate's box first gives a
 * lower bound of its distance: a box farther than the radius is dropped unmeasured, and the
 * others are measured nearest box first until the next box lies beyond the limit-th distance
 * kept (a box at exactly that distance is still measured: a tie there goes by building_id).
 *
 * Near ±180° the window goes on from the other side, and the frame and the boxes' bounds take
 * longitudes the short way round: at Taveuni or in Chukotka, buildings across the antimeridian
 * are as near as they are.
 *
 * A PointSearch holds one query's state; a thread runs one query at a time (queries run to
 * completion synchronously), so by default they share one.
 */
import type { CatalogView } from '../catalog/catalog.ts';
import { compareIds } from '../catalog/ids.ts';
import { POINT_INDEX_PAD_DEG } from '../catalog/file-parts.ts';
import type { Snapshot } from '../catalog/snapshot.ts';
import { LocalFrame, WGS84_A, WGS84_E2, metresPerDegreeLat, metresPerDegreeLon } from '../geo/wgs84.ts';
import type { RowRef } from './buildings.ts';
import { QueryError, type PointQuery } from './types.ts';

export interface PointRow extends RowRef {
  distanceM: number;
}

/**
 * The local frame keeps distances within 1e-6 of their length up to here, which the bounds
 * below rely on (the API allows 200 m).
 */
export const MAX_RADIUS_M = 1000;

export function checkPointQuery(q: PointQuery): void {
  if (typeof q.lat !== 'number' || !(q.lat >= -90 && q.lat <= 90))
    throw new QueryError('lat', `lat must be a number from -90 to 90, got ${q.lat}.`);
  if (typeof q.lon !== 'number' || !(q.lon >= -180 && q.lon <= 180))
    throw new QueryError('lon', `lon must be a number from -180 to 180, got ${q.lon}.`);
  if (typeof q.radiusM !== 'number' || !(q.radiusM >= 0 && q.radiusM <= MAX_RADIUS_M)) {
    throw new QueryError('radius_m', `radius_m must be a number of metres from 0 to ${MAX_RADIUS_M}, got ${q.radiusM}.`);
  }
  if (!Number.isInteger(q.limit) || q.limit < 0) throw new QueryError('limit', `limit must be a non-negative integer, got ${q.limit}.`);
}

const RAD = Math.PI / 180;
/** The least metres per degree of latitude anywhere (at the equator): a(1 - e²) in radians. */
const MIN_METRES_PER_DEGREE_LAT = WGS84_A * (1 - WGS84_E2) * RAD;
/** A bound on both radii of curvature anywhere (each is largest at the poles, a²/b = 6,399,594 m). */
const MAX_RADIUS_OF_CURVATURE = 6_400_000;
/**
 * The frame's distances fall short of the geodesic ones by less than this fraction within
 * MAX_RADIUS_M (the tangent plane by s²/6ρ², 4e-9 at 1 km; its expansion, below 75°, by under 1e-7).
 */
const FRAME_SHORTFALL = 1e-6;

/** One query's state: the frame, the search window's scales and the candidates. */
export class PointSearch {
  readonly frame = new LocalFrame();
  // Candidates: snapshot index, row, lower bound of the distance in metres; `order` is a
  // min-heap of candidate numbers by bound.
  candSnap = new Uint16Array(256);
  candRow = new Uint32Array(256);
  candBound = new Float64Array(256);
  order = new Uint32Array(256);
  candidates = 0;
  // What `collect` needs, set before each snapshot's search: the point, the radius, metres
  // per degree of latitude and of longitude no path from the point within the window can beat,
  // and the factors of a box's size that bound how far an edge straight in the frame strays
  // from the box's image.
  lon0 = 0;
  lat0 = 0;
  radius = 0;
  kLat = 0;
  kLon = 0;
  sagLonLon = 0;
  sagMixed = 0;
  snapIndex = 0;
  /** Longitudes of the window's first part while `collect` serves its second (else an empty range). */
  skipWest = Infinity;
  skipEast = -Infinity;

  /** Flatbush's filter: keeps the candidate in the buffers, never in Flatbush's own result array. */
  readonly collect = (row: number, x0: number, y0: number, x1: number, y1: number): boolean => {
    // The second part of a window across ±180° leaves what the first found (a box across the line).
    if (x0 <= this.skipEast && x1 >= this.skipWest) return false;
    const bound = this.boxBound(x0, y0, x1, y1);
    if (bound > this.radius) return false;
    if (this.candidates === this.candRow.length) this.grow();
    this.candSnap[this.candidates] = this.snapIndex;
    this.candRow[this.candidates] = row;
    this.candBound[this.candidates] = bound;
    this.candidates++;
    return false;
  };

  /**
   * A lower bound of the distance, as geometry.ts measures it, from the point to any outline
   * within a box of the index. The index keeps boxes as Float32, each coordinate within
   * |x| · 2^-24 of the outline's: widened by twice that (and 1e-9°, for coordinates near 0), the
   * box holds the outline. A path on the ellipsoid from the point to the box is at least
   * kLat·Δlat north-south and kLon·Δlon east-west, so at least their hypotenuse; the frame's
   * distance falls short of the path by at most FRAME_SHORTFALL, and an edge straight in the
   * frame strays from the box's image by at most an eighth of the map's second derivative along it.
   */
  boxBound(x0: number, y0: number, x1: number, y1: number): number {
    const minX = x0 - Math.abs(x0) * 2 ** -23 - 1e-9;
    const maxX = x1 + Math.abs(x1) * 2 ** -23 + 1e-9;
    const minY = y0 - Math.abs(y0) * 2 ** -23 - 1e-9;
    const maxY = y1 + Math.abs(y1) * 2 ** -23 + 1e-9;
    const lon0 = this.lon0;
    const lat0 = this.lat0;
    let ex = minX > lon0 ? minX - lon0 : lon0 > maxX ? lon0 - maxX : 0;
    // A box across the antimeridian from the point (from the window's other part): the short way round.
    if (ex > 180) ex = Math.max(0, minX > lon0 ? lon0 + 360 - maxX : minX + 360 - lon0);
    const ey = minY > lat0 ? minY - lat0 : lat0 > maxY ? lat0 - maxY : 0;
    const dx = ex * this.kLon;
    const dy = ey * this.kLat;
    const w = maxX - minX;
    const h = maxY - minY;
    const sag = this.sagLonLon * w * w + this.sagMixed * h * (2 * w + h);
    const bound = Math.sqrt(dx * dx + dy * dy) * (1 - FRAME_SHORTFALL) - sag;
    return bound > 0 ? bound : 0;
  }

  private grow(): void {
    const n = 2 * this.candRow.length;
    const snap = new Uint16Array(n);
    snap.set(this.candSnap);
    this.candSnap = snap;
    const row = new Uint32Array(n);
    row.set(this.candRow);
    this.candRow = row;
    const bound = new Float64Array(n);
    bound.set(this.candBound);
    this.candBound = bound;
    this.order = new Uint32Array(n);
  }

  /** Restores the heap property of `order[0..size)` below position i. */
  siftDown(i: number, size: number): void {
    const order = this.order;
    const candBound = this.candBound;
    const c = order[i];
    const b = candBound[c];
    for (;;) {
      let child = 2 * i + 1;
      if (child >= size) break;
      if (child + 1 < size && candBound[order[child + 1]] < candBound[order[child]]) child++;
      if (candBound[order[child]] >= b) break;
      order[i] = order[child];
      i = child;
    }
    order[i] = c;
  }
}

/** Row `row` of `snapshot` at `distanceM` comes before `b`: nearer, or as near with a smaller building_id. */
function before(snapshot: Snapshot, row: number, distanceM: number, b: PointRow): boolean {
  return distanceM !== b.distanceM ? distanceM < b.distanceM : compareIds(snapshot.ids, row, b.snapshot.ids, b.row) < 0;
}

export function queryPoint(view: CatalogView, q: PointQuery, search: PointSearch = new PointSearch()): { rows: PointRow[] } {
  checkPointQuery(q);
  const s = search;
  const frame = s.frame.centre(q.lon, q.lat);
  // The window: every point whose frame distance is within the radius lies within reach of a
  // path at most `reach` long, so within reach / (least metres per degree) of the point along
  // each axis. Latitude: the meridian radius is least at the equator. Longitude: a short
  // geodesic bulges poleward of its ends by less than the window's half-height, so metres per
  // degree of longitude are taken two half-heights poleward (none when that passes a pole).
  // The padding for the index's Float32 boxes also covers how far an edge straight in the frame
  // strays from its outline's box (under a millimetre for a 100 m box at 45°).
  const reach = q.radiusM * (1 + 2 * FRAME_SHORTFALL);
  const dLat = reach / MIN_METRES_PER_DEGREE_LAT + POINT_INDEX_PAD_DEG;
  const absLat = Math.abs(q.lat);
  const nearestEquator = absLat > dLat ? absLat - dLat : 0;
  const poleward = absLat + 2 * dLat;
  s.kLat = metresPerDegreeLat(nearestEquator);
  s.kLon = poleward < 90 ? metresPerDegreeLon(poleward) : 0;
  const dLon = s.kLon * 360 > reach ? reach / s.kLon + POINT_INDEX_PAD_DEG : 360;
  // The box of an outline reaching past the window is no wider than a degree.
  s.sagLonLon = (metresPerDegreeLon(nearestEquator > 1 ? nearestEquator - 1 : 0) * RAD) / 8;
  s.sagMixed = (MAX_RADIUS_OF_CURVATURE * RAD * RAD) / 8;
  s.lon0 = q.lon;
  s.lat0 = q.lat;
  s.radius = q.radiusM;
  s.candidates = 0;
  s.skipWest = Infinity;
  s.skipEast = -Infinity;
  const snapshots: readonly Snapshot[] = view.snapshots;
  if (q.limit > 0) {
    // A window past ±180° goes on from the other side: [west, east] and [west2, east2], disjoint.
    const west = q.lon - dLon;
    const east = q.lon + dLon;
    const wraps = dLon < 180 && (west < -180 || east > 180);
    const west2 = west < -180 ? west + 360 : -180;
    const east2 = west < -180 ? 180 : east - 360;
    for (s.snapIndex = 0; s.snapIndex < snapshots.length; s.snapIndex++) {
      const index = snapshots[s.snapIndex].index;
      if (!index) continue;
      index.search(west, q.lat - dLat, east, q.lat + dLat, s.collect);
      if (!wraps) continue;
      s.skipWest = west;
      s.skipEast = east;
      index.search(west2, q.lat - dLat, east2, q.lat + dLat, s.collect);
      s.skipWest = Infinity;
      s.skipEast = -Infinity;
    }
  }
  const order = s.order;
  const candBound = s.candBound;
  const candidates = s.candidates;
  for (let i = 0; i < candidates; i++) order[i] = i;
  for (let i = (candidates >> 1) - 1; i >= 0; i--) s.siftDown(i, candidates);
  // The rows kept, best first; at most limit.
  const rows: PointRow[] = [];
  for (let size = candidates; size > 0;) {
    const c = order[0];
    if (rows.length === q.limit && candBound[c] > rows[rows.length - 1].distanceM) break;
    order[0] = order[--size];
    s.siftDown(0, size);
    const snapshot = snapshots[s.candSnap[c]];
    const row = s.candRow[c];
    const distanceM = snapshot.footprints.distance(row, frame);
    if (distanceM > q.radiusM) continue;
    if (rows.length === q.limit) {
      if (!before(snapshot, row, distanceM, rows[rows.length - 1])) continue;
      rows.pop();
    }
    let at = rows.length;
    while (at > 0 && before(snapshot, row, distanceM, rows[at - 1])) at--;
    rows.splice(at, 0, { snapshot, row, distanceM });
  }
  return { rows };
}
