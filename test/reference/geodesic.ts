/**
 * Geodesics on the WGS84 ellipsoid from GeographicLib (Karney's algorithms, accurate to
 * nanometres): the independent measure of the engine's distances.
 */
import * as geographiclib from 'geographiclib-geodesic';

const WGS84 = geographiclib.Geodesic.WGS84;

/** Geodesic distance in metres between two points (degrees). */
export function geodesicDistance(lon1: number, lat1: number, lon2: number, lat2: number): number {
  return WGS84.Inverse(lat1, lon1, lat2, lon2).s12!;
}

/** The point `metres` from (lon, lat) along the geodesic leaving at `azimuth` (degrees from north): [lon, lat]. */
export function destination(lon: number, lat: number, azimuth: number, metres: number): [number, number] {
  const r = WGS84.Direct(lat, lon, azimuth, metres);
  return [r.lon2!, r.lat2!];
}

/** The azimuth (degrees from north) at which that geodesic arrives. */
export function arrivalAzimuth(lon: number, lat: number, azimuth: number, metres: number): number {
  return WGS84.Direct(lat, lon, azimuth, metres).azi2!;
}

/**
 * A point in the azimuthal equidistant frame centred on (lon0, lat0): metres east and north,
 * at its geodesic distance from the centre and in the geodesic's direction there.
 */
export function azimuthalEquidistant(lon: number, lat: number, lon0: number, lat0: number): [number, number] {
  const r = WGS84.Inverse(lat0, lon0, lat, lon);
  const a = (r.azi1! * Math.PI) / 180;
  return [r.s12! * Math.sin(a), r.s12! * Math.cos(a)];
}
