/**
 * The representative point of an outline: a point that lies inside it, which decides bbox
 * membership and where a building is drawn as a dot. The area centroid when it falls inside
 * (most buildings); otherwise the middle of the widest horizontal chord. Chords are taken
 * half-way between distinct vertex latitudes, so no vertex and no horizontal edge lies on the
 * scanline and every chord between two crossings is strictly inside.
 */
import type { Polygon } from '../snapshot/schema.ts';
import { outlineContains } from './outline.ts';

/** Scanlines tried on an outline whose centroid falls outside it. */
const MAX_SCANLINES = 16;

/** Planar area and centroid of one polygon (holes subtracted), relative to its first vertex. */
function centroid(polygon: Polygon): { area: number; x: number; y: number } {
  const ox = polygon[0][0];
  const oy = polygon[0][1];
  let a = 0;
  let cx = 0;
  let cy = 0;
  for (let r = 0; r < polygon.length; r++) {
    const ring = polygon[r];
    let ra = 0;
    let rx = 0;
    let ry = 0;
    for (let i = 2; i < ring.length; i += 2) {
      const x0 = ring[i - 2] - ox;
      const y0 = ring[i - 1] - oy;
      const x1 = ring[i] - ox;
      const y1 = ring[i + 1] - oy;
      const cross = x0 * y1 - x1 * y0;
      ra += cross;
      rx += (x0 + x1) * cross;
      ry += (y0 + y1) * cross;
    }
    // Outer ring counts positive and holes negative whatever way each is wound.
    const sign = (r === 0) === ra > 0 ? 1 : -1;
    a += sign * ra;
    cx += sign * rx;
    cy += sign * ry;
  }
  return { area: a / 2, x: ox + cx / (3 * a), y: oy + cy / (3 * a) };
}

/** Widest chord of `polygon` along latitude `y`: [left, right], or null if none. */
function widestChord(polygon: Polygon, y: number, xs: number[]): [number, number] | null {
  xs.length = 0;
  for (const ring of polygon) {
    for (let i = 2; i < ring.length; i += 2) {
      const y0 = ring[i - 1];
      const y1 = ring[i + 1];
      if (y0 > y !== y1 > y) xs.push(ring[i - 2] + ((ring[i] - ring[i - 2]) * (y - y0)) / (y1 - y0));
    }
  }
  xs.sort((a, b) => a - b);
  let best: [number, number] | null = null;
  for (let i = 0; i + 1 < xs.length; i += 2) {
    if (!best || xs[i + 1] - xs[i] > best[1] - best[0]) best = [xs[i], xs[i + 1]];
  }
  return best;
}

/** [longitude, latitude] of a point strictly inside the outline's largest part. */
export function representativePoint(polygons: readonly Polygon[]): [number, number] {
  let polygon = polygons[0];
  let c = centroid(polygon);
  for (let p = 1; p < polygons.length; p++) {
    const other = centroid(polygons[p]);
    if (Math.abs(other.area) > Math.abs(c.area)) {
      polygon = polygons[p];
      c = other;
    }
  }
  if (Number.isFinite(c.x) && Number.isFinite(c.y) && outlineContains([polygon], c.x, c.y)) return [c.x, c.y];

  const levels: number[] = [];
  for (const ring of polygon) for (let i = 1; i < ring.length; i += 2) levels.push(ring[i]);
  levels.sort((a, b) => a - b);
  const bands: number[] = [];
  for (let i = 1; i < levels.length; i++) if (levels[i] !== levels[i - 1]) bands.push((levels[i] + levels[i - 1]) / 2);

  const candidates = new Set<number>();
  const step = Math.max(1, Math.floor(bands.length / MAX_SCANLINES));
  for (let i = Math.floor(step / 2); i < bands.length; i += step) candidates.add(bands[i]);
  // The band around the centroid's latitude keeps the point near the middle of the shape.
  let near = bands[0];
  for (const b of bands) if (Math.abs(b - c.y) < Math.abs(near - c.y)) near = b;
  candidates.add(near);

  const xs: number[] = [];
  let best: [number, number] | null = null;
  let bestY = 0;
  for (const y of candidates) {
    const chord = widestChord(polygon, y, xs);
    if (chord && (!best || chord[1] - chord[0] > best[1] - best[0])) {
      best = chord;
      bestY = y;
    }
  }
  if (!best) throw new RangeError('representativePoint: the outline has no interior (it should have been refused as broken).');
  return [(best[0] + best[1]) / 2, bestY];
}
