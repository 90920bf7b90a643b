/**
 * GET /buildings/at (spec 4.2): buildings whose outline lies within radiusM of a point, nearest
 * first (ties by building_id), at most limit. Candidates come from each snapshot's Flatbush over
 * outline boxes; each is measured exactly (catalog/geometry.ts: 0 inside the outline, a hole is
 * outside) in the local equirectangular frame centred on the point.
 */
import type { CatalogView } from '../catalog/catalog.ts';
import { EARTH_RADIUS_M } from '../catalog/geometry.ts';
import { compareIds } from '../catalog/ids.ts';
import { POINT_INDEX_PAD_DEG } from '../catalog/load.ts';
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

export function queryPoint(view: CatalogView, q: PointQuery): { rows: PointRow[] } {
  checkPointQuery(q);
  const metresPerDegree = (EARTH_RADIUS_M * Math.PI) / 180;
  // Every point of an outline within the radius lies within radius along x and along y of the
  // local frame; pad for rounding and for the Float32 boxes of the index.
  const dLat = (q.radiusM / metresPerDegree) * (1 + 1e-9) + POINT_INDEX_PAD_DEG;
  const cosLat = Math.cos((q.lat * Math.PI) / 180);
  const dLon = cosLat > 1e-9 ? (q.radiusM / (metresPerDegree * cosLat)) * (1 + 1e-9) + POINT_INDEX_PAD_DEG : 360;
  const found: PointRow[] = [];
  for (const snapshot of view.snapshots) {
    const index = snapshot.index;
    if (index === null) continue;
    const hits = index.search(q.lon - dLon, q.lat - dLat, q.lon + dLon, q.lat + dLat);
    for (const row of hits) {
      const distanceM = snapshot.footprints.distance(row, q.lon, q.lat);
      if (distanceM <= q.radiusM) found.push({ snapshot, row, distanceM });
    }
  }
  found.sort((a, b) => a.distanceM - b.distanceM || compareIds(a.snapshot.ids, a.row, b.snapshot.ids, b.row));
  if (found.length > q.limit) found.length = q.limit;
  return { rows: found };
}
