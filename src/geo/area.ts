/**
 * Areas on the WGS84 ellipsoid. Each ring is mapped to the cylindrical equal-area projection of
 * the ellipsoid (x = a·λ, y = a·q(φ)/2, Snyder, "Map Projections: A Working Manual", eq. 3-12 and
 * 10-15) and measured there with the shoelace formula. The projection preserves area exactly, so
 * the only approximation is that an edge is straight in the projection instead of a geodesic: for
 * building-sized rings the difference is far below a square centimetre. Coordinates are taken
 * relative to the ring's first vertex so that products of large numbers do not cancel.
 */
import { WGS84_A, WGS84_E2 } from './wgs84.ts';

/** A ring as flat [lon0, lat0, lon1, lat1, …] in degrees; a polygon is its outer ring, then its holes. */
type Ring = ArrayLike<number>;
type Polygon = readonly Ring[];

const E = Math.sqrt(WGS84_E2);
const RAD = Math.PI / 180;

/** Snyder's q(φ), given sin φ: twice the authalic "height" of a latitude, in units of a. */
function q(sinPhi: number): number {
  const es = E * sinPhi;
  return (1 - WGS84_E2) * (sinPhi / (1 - es * es) - (1 / (2 * E)) * Math.log((1 - es) / (1 + es)));
}

/** Signed area of one ring in m²: positive when counter-clockwise in (lon, lat). */
export function ringArea(ring: Ring): number {
  const n = ring.length / 2;
  if (n < 3) return 0;
  const x0 = ring[0] * RAD;
  const y0 = q(Math.sin(ring[1] * RAD));
  let sum = 0;
  let px = 0;
  let py = 0;
  for (let i = 1; i < n; i++) {
    const x = ring[2 * i] * RAD - x0;
    const y = q(Math.sin(ring[2 * i + 1] * RAD)) - y0;
    sum += px * y - x * py;
    px = x;
    py = y;
  }
  // x·y products are in a·(a/2) units: the projection's area element is a²/2 dλ dq.
  return (sum / 2) * ((WGS84_A * WGS84_A) / 2);
}

/** Ground area of a multipolygon in m²: outer rings minus their holes, whatever their winding. */
export function footprintArea(polygons: readonly Polygon[]): number {
  let total = 0;
  for (const polygon of polygons) {
    total += Math.abs(ringArea(polygon[0]));
    for (let r = 1; r < polygon.length; r++) total -= Math.abs(ringArea(polygon[r]));
  }
  return total;
}
