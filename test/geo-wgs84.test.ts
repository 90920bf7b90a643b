/**
 * src/geo/wgs84.ts against GeographicLib's geodesics (Karney): metres per degree, and the local
 * frame's distances from its origin at latitudes from the equator to both poles, every 10° of
 * azimuth, up to the API's largest radius (200 m) and the query layer's (1 km).
 */
import { describe, expect, it } from 'vitest';
import { EXPANSION_MAX_LAT, LocalFrame, metresPerDegreeLat, metresPerDegreeLon } from '../src/geo/wgs84.ts';
import { azimuthalEquidistant, destination, geodesicDistance } from './reference/geodesic.ts';

const LATITUDES = [
  0,
  15,
  30,
  45,
  47.2,
  60,
  70,
  EXPANSION_MAX_LAT - 0.01,
  EXPANSION_MAX_LAT + 0.01,
  78.2,
  85,
  89.9,
  89.999,
  90,
  -33.9,
  -62.2,
  -89.99,
  -90,
];
const AZIMUTHS = Array.from({ length: 36 }, (_, i) => 10 * i + 3);

/** Largest |frame distance - geodesic distance| and |frame point - azimuthal equidistant point| over the azimuths. */
function worst(lon0: number, lat0: number, metres: number): { distance: number; position: number } {
  const frame = new LocalFrame().centre(lon0, lat0);
  let distance = 0;
  let position = 0;
  for (const az of AZIMUTHS) {
    const [lon, lat] = destination(lon0, lat0, az, metres);
    frame.project(lon, lat);
    distance = Math.max(distance, Math.abs(Math.hypot(frame.x, frame.y) - geodesicDistance(lon0, lat0, lon, lat)));
    const [x, y] = azimuthalEquidistant(lon, lat, lon0, lat0);
    position = Math.max(position, Math.hypot(frame.x - x, frame.y - y));
  }
  return { distance, position };
}

describe('metres per degree', () => {
  it.each(LATITUDES.filter((lat) => Math.abs(lat) < 89.99))('at %f°: those of a geodesic over a thousandth of a degree', (lat) => {
    const h = 0.0005;
    expect(metresPerDegreeLat(lat) * 2 * h).toBeCloseTo(geodesicDistance(10, lat - h, 10, lat + h), 6);
    // Along a parallel the geodesic is shorter than the arc by under a nanometre at this length.
    expect(metresPerDegreeLon(lat) * 2 * h).toBeCloseTo(geodesicDistance(10 - h, lat, 10 + h, lat), 6);
  });

  it('none of longitude at a pole', () => {
    expect(metresPerDegreeLon(90)).toBe(0);
    expect(metresPerDegreeLon(-90)).toBe(0);
  });
});

describe('the local frame', () => {
  it.each(LATITUDES)('at %f°: geodesic distances within 1e-6 m up to 200 m, 1e-4 m at 1 km', (lat) => {
    const lon = 7.5 - lat / 10;
    for (const m of [0.5, 25, 117.19, 200]) {
      const w = worst(lon, lat, m);
      expect(w.distance, `${m} m`).toBeLessThan(1e-6);
      // The frame's points are where the geodesics point, not only at their lengths.
      expect(w.position, `${m} m`).toBeLessThan(1e-5);
    }
    expect(worst(lon, lat, 1000).distance).toBeLessThan(1e-4);
  });

  it('puts the origin at exactly (0, 0), and mirror images east and west at exactly the same distance', () => {
    for (const lat of [0, 45, 80, 90]) {
      const frame = new LocalFrame().centre(3, lat);
      frame.project(3, lat);
      expect([frame.x, frame.y]).toEqual([0, 0]);
      frame.project(3.001, lat + 0.0004);
      const east = [frame.x, frame.y];
      frame.project(2.999, lat + 0.0004);
      expect([frame.x, frame.y]).toEqual([-east[0], east[1]]);
    }
  });
});
