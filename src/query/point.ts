/**
 * GET /buildings/at (spec 4.2): buildings whose outline lies within radiusM of a point, nearest
 * first (ties by building_id), at most limit. Candidates come from each snapshot's Flatbush over
 * outline boxes; each is measured exactly (catalog/geometry.ts: 0 inside the outline, a hole is
 * outside) in the local equirectangular frame centred on the point.
 *
 * Measuring an outline costs a pass over its vertices, and a box of 200 m holds ~180 candidates
 * where a page is ~10 (the load mix's points, 1M country). So each candidate's box first gives a
 * lower bound of its distance: a box farther than the radius is dropped unmeasured, and the
 * others are measured nearest box first until the next box lies beyond the limit-th distance
 * kept (a box at exactly that distance is still measured: a tie there goes by building_id).
 *
 * One query at a time owns this module's buffers (queries run to completion synchronously).
 */
import type { CatalogView } from '../catalog/catalog.ts';
import { EARTH_RADIUS_M } from '../catalog/geometry.ts';
import { compareIds } from '../catalog/ids.ts';
import { POINT_INDEX_PAD_DEG } from '../catalog/load.ts';
import type { Snapshot } from '../catalog/snapshot.ts';
import type { RowRef } from './buildings.ts';
import { QueryError, type PointQuery } from './types.ts';

export interface PointRow extends RowRef {
  distanceM: number;
}

export function checkPointQuery(q: PointQuery): void {
  if (typeof q.lat !== 'number' || !(q.lat >= -90 && q.lat <= 90)) throw new QueryError('lat', `lat must be a number from -90 to 90, got ${q.lat}.`);
  if (typeof q.lon !== 'number' || !(q.lon >= -180 && q.lon <= 180)) throw new QueryError('lon', `lon must be a number from -180 to 180, got ${q.lon}.`);
  if (typeof q.radiusM !== 'number' || !(q.radiusM >= 0 && Number.isFinite(q.radiusM))) {
    throw new QueryError('radius_m', `radius_m must be a finite number of metres, got ${q.radiusM}.`);
  }
  if (!Number.isInteger(q.limit) || q.limit < 0) throw new QueryError('limit', `limit must be a non-negative integer, got ${q.limit}.`);
}

// Candidates of the query: snapshot index, row, lower bound of the distance in metres; `order`
// is a min-heap of candidate numbers by bound.
let candSnap = new Uint16Array(256);
let candRow = new Uint32Array(256);
let candBound = new Float64Array(256);
let order = new Uint32Array(256);
let candidates = 0;

// What `collect` needs of the query, set before each snapshot's search.
let lon0 = 0;
let lat0 = 0;
let cosLat = 1;
let radius = 0;
let snapIndex = 0;

/**
 * The least distance in metres from the point to a box of the index, as geometry.ts would
 * measure it to any point within the box. The index keeps boxes as Float32, each coordinate
 * within |x| · 2^-24 of the outline's: widened by twice that (and 1e-9°, for coordinates near 0),
 * the box holds the outline, and the bound stays under the measured distance.
 */
function boxBound(x0: number, y0: number, x1: number, y1: number): number {
  const minX = x0 - Math.abs(x0) * 2 ** -23 - 1e-9;
  const maxX = x1 + Math.abs(x1) * 2 ** -23 + 1e-9;
  const minY = y0 - Math.abs(y0) * 2 ** -23 - 1e-9;
  const maxY = y1 + Math.abs(y1) * 2 ** -23 + 1e-9;
  const ex = minX > lon0 ? minX - lon0 : lon0 > maxX ? lon0 - maxX : 0;
  const ey = minY > lat0 ? minY - lat0 : lat0 > maxY ? lat0 - maxY : 0;
  const dx = ex * cosLat * EARTH_RADIUS_M * Math.PI / 180;
  const dy = ey * EARTH_RADIUS_M * Math.PI / 180;
  return Math.sqrt(dx * dx + dy * dy);
}

/** Flatbush's filter: keeps the candidate in the buffers, never in Flatbush's own result array. */
function collect(row: number, x0: number, y0: number, x1: number, y1: number): boolean {
  const bound = boxBound(x0, y0, x1, y1);
  if (bound > radius) return false;
  if (candidates === candRow.length) grow();
  candSnap[candidates] = snapIndex;
  candRow[candidates] = row;
  candBound[candidates] = bound;
  candidates++;
  return false;
}

function grow(): void {
  const n = 2 * candRow.length;
  const snap = new Uint16Array(n);
  snap.set(candSnap);
  candSnap = snap;
  const row = new Uint32Array(n);
  row.set(candRow);
  candRow = row;
  const bound = new Float64Array(n);
  bound.set(candBound);
  candBound = bound;
  order = new Uint32Array(n);
}

/** Restores the heap property of `order[0..size)` below position i. */
function siftDown(i: number, size: number): void {
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

/** Row `row` of `snapshot` at `distanceM` comes before `b`: nearer, or as near with a smaller building_id. */
function before(snapshot: Snapshot, row: number, distanceM: number, b: PointRow): boolean {
  return distanceM !== b.distanceM ? distanceM < b.distanceM : compareIds(snapshot.ids, row, b.snapshot.ids, b.row) < 0;
}

export function queryPoint(view: CatalogView, q: PointQuery): { rows: PointRow[] } {
  checkPointQuery(q);
  const metresPerDegree = (EARTH_RADIUS_M * Math.PI) / 180;
  // Every point of an outline within the radius lies within radius along x and along y of the
  // local frame; pad for rounding and for the Float32 boxes of the index.
  const dLat = (q.radiusM / metresPerDegree) * (1 + 1e-9) + POINT_INDEX_PAD_DEG;
  lon0 = q.lon;
  lat0 = q.lat;
  cosLat = Math.cos((q.lat * Math.PI) / 180);
  radius = q.radiusM;
  const dLon = cosLat > 1e-9 ? (q.radiusM / (metresPerDegree * cosLat)) * (1 + 1e-9) + POINT_INDEX_PAD_DEG : 360;
  candidates = 0;
  const snapshots: readonly Snapshot[] = view.snapshots;
  if (q.limit > 0) {
    for (snapIndex = 0; snapIndex < snapshots.length; snapIndex++) {
      snapshots[snapIndex].index?.search(q.lon - dLon, q.lat - dLat, q.lon + dLon, q.lat + dLat, collect);
    }
  }
  for (let i = 0; i < candidates; i++) order[i] = i;
  for (let i = (candidates >> 1) - 1; i >= 0; i--) siftDown(i, candidates);
  // The rows kept, best first; at most limit.
  const rows: PointRow[] = [];
  for (let size = candidates; size > 0;) {
    const c = order[0];
    if (rows.length === q.limit && candBound[c] > rows[rows.length - 1].distanceM) break;
    order[0] = order[--size];
    siftDown(0, size);
    const snapshot = snapshots[candSnap[c]];
    const row = candRow[c];
    const distanceM = snapshot.footprints.distance(row, q.lon, q.lat);
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
