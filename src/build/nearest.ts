/**
 * Nearest item within a distance, over a Flatbush of lon/lat boxes. Flatbush's own
 * `neighbors` ranks by distance in degrees, which is not distance on the ground away from the
 * equator, so the search grows a box measured in metres instead: once the best exact distance
 * found is within the box's radius, nothing outside the box can be nearer.
 *
 * Distances are in a local plane around the query, scaled by the WGS84 radii of curvature there
 * (geo/wgs84.ts), in metres.
 */
import type Flatbush from 'flatbush';
import { metresPerDegreeLat, metresPerDegreeLon } from '../geo/wgs84.ts';

export interface Box {
  minX: number;
  minY: number;
  maxX: number;
  maxY: number;
}

/** First search radius; doubled until it reaches the caller's maximum. */
const FIRST_RADIUS_M = 25;

/**
 * The item nearest to `box` for which `distance(id)` (metres) is smallest and at most
 * `maxMetres`, or null. Ties go to the lower id, so results do not depend on index layout.
 */
export function nearestItem(
  index: Flatbush,
  box: Box,
  maxMetres: number,
  distance: (id: number) => number,
): { id: number; metres: number } | null {
  // Degrees per metre grow poleward for longitude and equatorward for latitude: size the
  // box for the larger of each, with a margin for the local plane of the distance function.
  const poleward = Math.min(89.9, Math.max(Math.abs(box.minY), Math.abs(box.maxY)));
  const kx = metresPerDegreeLon(poleward) / 1.01;
  const ky = metresPerDegreeLat(0) / 1.01;
  let radius = Math.min(FIRST_RADIUS_M, maxMetres);
  for (;;) {
    const dx = radius / kx;
    const dy = radius / ky;
    let best = -1;
    let bestM = Infinity;
    for (const id of index.search(box.minX - dx, box.minY - dy, box.maxX + dx, box.maxY + dy)) {
      const m = distance(id);
      if (m < bestM || (m === bestM && id < best)) {
        best = id;
        bestM = m;
      }
    }
    if (best >= 0 && bestM <= radius) return bestM <= maxMetres ? { id: best, metres: bestM } : null;
    if (radius >= maxMetres) return null;
    radius = Math.min(radius * 2, maxMetres);
  }
}

/** A local plane in metres centred on (lon0, lat0). */
export class LocalPlane {
  readonly kx: number;
  readonly ky: number;
  constructor(
    readonly lon0: number,
    readonly lat0: number,
  ) {
    this.kx = metresPerDegreeLon(lat0);
    this.ky = metresPerDegreeLat(lat0);
  }
  x(lon: number): number {
    return (lon - this.lon0) * this.kx;
  }
  y(lat: number): number {
    return (lat - this.lat0) * this.ky;
  }
}

/** Distance from point p to segment ab, all planar. */
export function pointSegment(px: number, py: number, ax: number, ay: number, bx: number, by: number): number {
  const dx = bx - ax;
  const dy = by - ay;
  const len2 = dx * dx + dy * dy;
  let t = len2 > 0 ? ((px - ax) * dx + (py - ay) * dy) / len2 : 0;
  t = t < 0 ? 0 : t > 1 ? 1 : t;
  return Math.hypot(px - (ax + t * dx), py - (ay + t * dy));
}

function orient(ax: number, ay: number, bx: number, by: number, cx: number, cy: number): number {
  return (bx - ax) * (cy - ay) - (by - ay) * (cx - ax);
}

/** Distance between segments ab and cd: 0 when they cross or touch. */
export function segmentSegment(ax: number, ay: number, bx: number, by: number, cx: number, cy: number, dx: number, dy: number): number {
  const o1 = orient(ax, ay, bx, by, cx, cy);
  const o2 = orient(ax, ay, bx, by, dx, dy);
  const o3 = orient(cx, cy, dx, dy, ax, ay);
  const o4 = orient(cx, cy, dx, dy, bx, by);
  if (((o1 > 0 && o2 < 0) || (o1 < 0 && o2 > 0)) && ((o3 > 0 && o4 < 0) || (o3 < 0 && o4 > 0))) return 0;
  return Math.min(
    pointSegment(ax, ay, cx, cy, dx, dy),
    pointSegment(bx, by, cx, cy, dx, dy),
    pointSegment(cx, cy, ax, ay, bx, by),
    pointSegment(dx, dy, ax, ay, bx, by),
  );
}
