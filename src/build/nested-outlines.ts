/**
 * Mapping duplicates: a building outline lying almost wholly inside another building's outline
 * (the same house drawn twice, an old outline under a newer one, a part tagged as a building).
 *
 * Rule: an outline at least `NESTED_SHARE` of whose area lies inside another outline is merged
 * into it, and of several such outlines into the largest; the outer one is kept (merged in turn
 * into its own outer one, if any). Two outlines each within the other (near-identical
 * drawings) keep the one read first. The builder then fills what the kept building's tags leave
 * unknown from the merged ones' and counts every merge in its report.
 *
 * Shares are measured in a plane local to the inner outline (metres east and north): a ratio
 * of areas, it does not depend on the plane's scale, and building-sized outlines are flat.
 */
import Flatbush from 'flatbush';
import polygonClipping, { type MultiPolygon as ClipMultiPolygon } from 'polygon-clipping';
import { metresPerDegreeLat, metresPerDegreeLon } from '../geo/wgs84.ts';
import type { Outline } from './outline.ts';

export const NESTED_SHARE = 0.95;

export interface NestedOutline {
  /** Index of the inner outline. */
  inner: number;
  /** Index of the kept outline it is merged into (the outermost of a chain). */
  into: number;
  /** Share of the inner outline's area inside the outline that contains it directly, 0 to 1. */
  share: number;
}

function planar(outline: Outline, x0: number, y0: number, kx: number, ky: number): ClipMultiPolygon {
  return outline.polygons.map((polygon) =>
    polygon.map((ring) => {
      const out: [number, number][] = [];
      for (let i = 0; i < ring.length; i += 2) out.push([(ring[i] - x0) * kx, (ring[i + 1] - y0) * ky]);
      return out;
    }),
  );
}

function area(multi: ClipMultiPolygon): number {
  let total = 0;
  for (const polygon of multi) {
    for (let r = 0; r < polygon.length; r++) {
      const ring = polygon[r];
      let twice = 0;
      for (let i = 1; i < ring.length; i++) twice += ring[i - 1][0] * ring[i][1] - ring[i][0] * ring[i - 1][1];
      // Outer rings count, holes subtract, whatever their winding.
      total += ((r === 0 ? 1 : -1) * Math.abs(twice)) / 2;
    }
  }
  return total;
}

/** The outlines to merge, each with the kept outline it goes into; in order of `inner`. `onProgress(done)` every 4,096 outlines. */
export function nestedOutlines(outlines: readonly Outline[], onProgress?: (done: number) => void): NestedOutline[] {
  if (outlines.length < 2) return [];
  const index = new Flatbush(outlines.length);
  for (const o of outlines) index.add(o.minX, o.minY, o.maxX, o.maxY);
  index.finish();

  const direct = new Int32Array(outlines.length).fill(-1);
  const shares = new Float64Array(outlines.length);
  for (let i = 0; i < outlines.length; i++) {
    if ((i & 4095) === 0) onProgress?.(i);
    const a = outlines[i];
    const midLat = (a.minY + a.maxY) / 2;
    const kx = metresPerDegreeLon(midLat);
    const ky = metresPerDegreeLat(midLat);
    const pa = planar(a, a.minX, a.minY, kx, ky);
    const areaA = area(pa);
    if (!(areaA > 0)) continue;
    let best = -1;
    let bestArea = 0;
    let bestShare = 0;
    for (const j of index.search(a.minX, a.minY, a.maxX, a.maxY)) {
      if (j === i) continue;
      const b = outlines[j];
      // The boxes' overlap bounds the outlines': too small, and no clipping is needed.
      const overlap =
        Math.max(0, (Math.min(a.maxX, b.maxX) - Math.max(a.minX, b.minX)) * kx) *
        Math.max(0, (Math.min(a.maxY, b.maxY) - Math.max(a.minY, b.minY)) * ky);
      if (overlap < NESTED_SHARE * areaA) continue;
      const pb = planar(b, a.minX, a.minY, kx, ky);
      const areaB = area(pb);
      if (areaB < NESTED_SHARE * areaA) continue;
      let common: number;
      try {
        common = area(polygonClipping.intersection(pa, pb));
      } catch {
        continue; // a self-touching ring the clipper cannot take: not counted as nested
      }
      if (common < NESTED_SHARE * areaA) continue;
      // Each within the other: the same building drawn twice; the one read first stays.
      if (common >= NESTED_SHARE * areaB && j > i) continue;
      if (areaB > bestArea) [best, bestArea, bestShare] = [j, areaB, Math.min(1, common / areaA)];
    }
    direct[i] = best;
    shares[i] = bestShare;
  }

  const found: NestedOutline[] = [];
  for (let i = 0; i < outlines.length; i++) {
    if (direct[i] < 0) continue;
    // Follow the chain outwards to an outline merged into none; a loop (possible only with
    // shares near the threshold) keeps its outline read first.
    const path = [i];
    let into = direct[i];
    while (direct[into] >= 0 && !path.includes(into)) {
      path.push(into);
      into = direct[into];
    }
    const loop = path.indexOf(into);
    if (loop >= 0) into = Math.min(...path.slice(loop));
    if (into !== i) found.push({ inner: i, into, share: shares[i] });
  }
  return found;
}
