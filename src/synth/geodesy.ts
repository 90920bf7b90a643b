/**
 * Metres and degrees on the WGS84 ellipsoid near a point. Outlines are drawn in metres and
 * turned into lon/lat with the local scale of the building's own latitude, so the planar
 * area of the metre drawing is the ellipsoidal area of the outline to far better than 0.01 %
 * (buildings span at most a few hundred metres).
 */
const A = 6_378_137; // semi-major axis, m
const E2 = 0.00669437999014; // first eccentricity squared
const RAD = Math.PI / 180;

/** Metres per degree of latitude at `lat` (meridian radius of curvature). */
export function metresPerDegreeLat(lat: number): number {
  const s = Math.sin(lat * RAD);
  return ((A * (1 - E2)) / Math.pow(1 - E2 * s * s, 1.5)) * RAD;
}

/** Metres per degree of longitude at `lat` (prime-vertical radius times cos lat). */
export function metresPerDegreeLon(lat: number): number {
  const s = Math.sin(lat * RAD);
  return (A / Math.sqrt(1 - E2 * s * s)) * Math.cos(lat * RAD) * RAD;
}
