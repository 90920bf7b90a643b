/**
 * The WGS84 ellipsoid near a point: radii of curvature, and a local plane in which short
 * distances are the ellipsoid's.
 *
 * LocalFrame maps lon/lat to metres east (x) and north (y) of an origin on the plane tangent to
 * the ellipsoid there (the east-north of ECEF coordinates, height dropped). The horizontal
 * distance from the origin is the geodesic one less s³/6ρ² (under 1e-7 m at 200 m). Away from
 * the poles the map is its second-order Taylor expansion in (Δlat, Δlon): a few multiplications
 * a vertex, within 1e-6 m of the geodesic at 200 m up to 75° of latitude. Beyond, longitude
 * differences grow too fast for the expansion, and the frame computes the tangent plane exactly.
 */

export const WGS84_A = 6_378_137;
export const WGS84_F = 1 / 298.257223563;
/** First eccentricity squared. */
export const WGS84_E2 = WGS84_F * (2 - WGS84_F);
const RAD = Math.PI / 180;

/** Latitudes (degrees, either hemisphere) beyond which LocalFrame computes the tangent plane exactly. */
export const EXPANSION_MAX_LAT = 75;

/** Metres per degree of latitude at `lat` (degrees): the meridian radius of curvature M. */
export function metresPerDegreeLat(lat: number): number {
  const s = Math.sin(lat * RAD);
  const w2 = 1 - WGS84_E2 * s * s;
  return ((WGS84_A * (1 - WGS84_E2)) / (w2 * Math.sqrt(w2))) * RAD;
}

/** Metres per degree of longitude at `lat` (degrees): the prime-vertical radius N times cos(lat); 0 at a pole. */
export function metresPerDegreeLon(lat: number): number {
  if (Math.abs(lat) >= 90) return 0;
  const s = Math.sin(lat * RAD);
  return (WGS84_A / Math.sqrt(1 - WGS84_E2 * s * s)) * Math.cos(lat * RAD) * RAD;
}

/** Distance in metres between two points a few kilometres apart at most: a plane scaled at their mean latitude. */
export function localDistance(lon1: number, lat1: number, lon2: number, lat2: number): number {
  const lat = (lat1 + lat2) / 2;
  return Math.hypot((lon2 - lon1) * metresPerDegreeLon(lat), (lat2 - lat1) * metresPerDegreeLat(lat));
}

/**
 * A local plane centred on one point. Per-query state: centre it, then `project` each vertex
 * and read `x`, `y` (nothing is allocated per vertex).
 */
export class LocalFrame {
  lon0 = 0;
  lat0 = 0;
  /** The last point projected, metres east and north of the origin. */
  x = 0;
  y = 0;

  /** Whether the frame computes the tangent plane exactly (beyond EXPANSION_MAX_LAT) rather than its expansion. */
  exact = false;
  // The expansion, in degrees: x = l(ax + bx d), y = d(ay + by d) + cy l², with d = Δlat, l = Δlon
  // (read by the bench's SQL peer, which writes the same operations).
  ax = 0;
  bx = 0;
  ay = 0;
  by = 0;
  cy = 0;
  // The exact tangent plane: sin and cos of the origin's latitude, its distance from the axis
  // (N cos) and its height above the equatorial plane (N (1 - e²) sin).
  s0 = 0;
  c0 = 1;
  p0 = 0;
  z0 = 0;

  /** Centres the frame on (lon0, lat0), degrees. */
  centre(lon0: number, lat0: number): this {
    this.lon0 = lon0;
    this.lat0 = lat0;
    const phi = lat0 * RAD;
    const s = Math.sin(phi);
    const c = Math.cos(phi);
    const w2 = 1 - WGS84_E2 * s * s;
    const w = Math.sqrt(w2);
    const n = WGS84_A / w;
    const m = (WGS84_A * (1 - WGS84_E2)) / (w2 * w);
    const dm = (3 * WGS84_A * (1 - WGS84_E2) * WGS84_E2 * s * c) / (w2 * w2 * w); // dM/dφ
    const p = n * c;
    this.ax = p * RAD;
    this.bx = -m * s * RAD * RAD; // dp/dφ = -M sin φ
    this.ay = m * RAD;
    this.by = 0.5 * dm * RAD * RAD;
    this.cy = 0.5 * s * p * RAD * RAD; // a parallel bends poleward of the tangent plane
    this.exact = Math.abs(lat0) > EXPANSION_MAX_LAT;
    this.s0 = s;
    this.c0 = c;
    this.p0 = n * c;
    this.z0 = n * (1 - WGS84_E2) * s;
    return this;
  }

  /** Sets x, y to the point (lon, lat), degrees. */
  project(lon: number, lat: number): void {
    if (this.exact) {
      this.projectExactly(lon, lat);
      return;
    }
    let l = lon - this.lon0;
    // The short way round: across the antimeridian, 179.9° and -179.9° are 0.2° apart.
    if (l > 180) l -= 360;
    else if (l < -180) l += 360;
    const d = lat - this.lat0;
    this.x = l * (this.ax + this.bx * d);
    this.y = d * (this.ay + this.by * d) + this.cy * l * l;
  }

  private projectExactly(lon: number, lat: number): void {
    const l = (lon - this.lon0) * RAD;
    const phi = lat * RAD;
    const s = Math.sin(phi);
    const c = Math.cos(phi);
    const n = WGS84_A / Math.sqrt(1 - WGS84_E2 * s * s);
    // ECEF turned about the axis so that the origin is on meridian 0, then east and north there;
    // written as centre() writes p0 and z0, so the origin itself comes out at exactly (0, 0).
    const p = n * c;
    this.x = p * Math.sin(l);
    this.y = -this.s0 * (p * Math.cos(l) - this.p0) + this.c0 * (n * (1 - WGS84_E2) * s - this.z0);
  }
}
