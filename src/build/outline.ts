/**
 * Building outlines: GeoJSON Polygon/MultiPolygon geometry checked and turned into the
 * snapshot's interleaved rings, plus the point-in-outline test the joins rely on.
 */
import type { Polygon } from '../snapshot/schema.ts';

export interface Outline {
  polygons: Polygon[];
  minX: number;
  minY: number;
  maxX: number;
  maxY: number;
}

/** The outline, or what makes the geometry unusable as one. */
export type OutlineResult = { outline: Outline; problem?: undefined } | { outline?: undefined; problem: string };

function ringFrom(coords: unknown, box: number[]): number[] | string {
  if (!Array.isArray(coords)) return 'a ring is not an array of positions';
  if (coords.length < 4) return `a ring has ${coords.length} positions, fewer than 4`;
  // A plain array of doubles: a Float64Array per ring costs more in headers than a small ring holds.
  const ring = new Array<number>(coords.length * 2).fill(0);
  for (let i = 0; i < coords.length; i++) {
    const p = coords[i];
    if (!Array.isArray(p) || p.length < 2) return `position ${i} is not [lon, lat]`;
    const x = p[0];
    const y = p[1];
    if (typeof x !== 'number' || typeof y !== 'number' || !Number.isFinite(x) || !Number.isFinite(y)) {
      return `position ${i} has a non-numeric coordinate`;
    }
    if (x < -180 || x > 180 || y < -90 || y > 90) return `position ${i} (${x}, ${y}) is outside WGS84 degrees`;
    ring[2 * i] = x;
    ring[2 * i + 1] = y;
    if (x < box[0]) box[0] = x;
    if (y < box[1]) box[1] = y;
    if (x > box[2]) box[2] = x;
    if (y > box[3]) box[3] = y;
  }
  const n = ring.length;
  if (ring[0] !== ring[n - 2] || ring[1] !== ring[n - 1]) return 'a ring is not closed (first and last positions differ)';
  // Twice the planar area in degrees²: zero means every vertex lies on one line.
  let twice = 0;
  for (let i = 2; i < n; i += 2) twice += (ring[i - 2] - ring[0]) * (ring[i + 1] - ring[1]) - (ring[i] - ring[0]) * (ring[i - 1] - ring[1]);
  if (twice === 0) return 'a ring encloses no area';
  return ring;
}

function polygonFrom(coords: unknown, box: number[]): Polygon | string {
  if (!Array.isArray(coords) || coords.length === 0) return 'a polygon has no rings';
  const rings: Polygon = [];
  for (const c of coords) {
    const ring = ringFrom(c, box);
    if (typeof ring === 'string') return ring;
    rings.push(ring);
  }
  return rings;
}

/** Checks a GeoJSON geometry and converts it, or says what is wrong with it. */
export function outlineFrom(geometry: { type: string; coordinates?: unknown } | null): OutlineResult {
  if (!geometry) return { problem: 'no geometry' };
  const box = [Infinity, Infinity, -Infinity, -Infinity];
  const polygons: Polygon[] = [];
  if (geometry.type === 'Polygon') {
    const p = polygonFrom(geometry.coordinates, box);
    if (typeof p === 'string') return { problem: p };
    polygons.push(p);
  } else if (geometry.type === 'MultiPolygon') {
    if (!Array.isArray(geometry.coordinates) || geometry.coordinates.length === 0) return { problem: 'a MultiPolygon has no polygons' };
    for (const c of geometry.coordinates) {
      const p = polygonFrom(c, box);
      if (typeof p === 'string') return { problem: p };
      polygons.push(p);
    }
  } else {
    return { problem: `a ${geometry.type} is not an outline` };
  }
  return { outline: { polygons, minX: box[0], minY: box[1], maxX: box[2], maxY: box[3] } };
}

/** Even-odd test over every ring of every polygon: holes and separate parts come out right. */
export function outlineContains(polygons: readonly Polygon[], x: number, y: number): boolean {
  let inside = false;
  for (const polygon of polygons) {
    for (const ring of polygon) {
      const n = ring.length;
      for (let i = 0, j = n - 2; i < n; j = i, i += 2) {
        const yi = ring[i + 1];
        const yj = ring[j + 1];
        if (yi > y !== yj > y && x < ((ring[j] - ring[i]) * (y - yi)) / (yj - yi) + ring[i]) inside = !inside;
      }
    }
  }
  return inside;
}
