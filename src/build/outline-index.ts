/**
 * Which building outline a point belongs to: a Flatbush over the outlines' boxes narrows the
 * candidates, an exact point-in-polygon test decides. Used by every point layer joined to the
 * outlines (address points, points of interest, seismic-list rows).
 */
import Flatbush from 'flatbush';
import { outlineContains, type Outline } from './outline.ts';
import { LocalPlane, nearestItem, pointSegment } from './nearest.ts';

export class OutlineIndex {
  private readonly index: Flatbush | null;

  /** `areas[i]` is the footprint area of `outlines[i]`: it breaks ties between nested outlines. */
  constructor(
    private readonly outlines: readonly Outline[],
    private readonly areas: ArrayLike<number>,
  ) {
    if (outlines.length === 0) {
      this.index = null;
      return;
    }
    const index = new Flatbush(outlines.length);
    for (const o of outlines) index.add(o.minX, o.minY, o.maxX, o.maxY);
    index.finish();
    this.index = index;
  }

  /** The outline containing the point, or -1. When outlines overlap, the smallest one wins: it is the more specific. */
  containing(lon: number, lat: number): number {
    if (!this.index) return -1;
    let best = -1;
    for (const id of this.index.search(lon, lat, lon, lat)) {
      if (!outlineContains(this.outlines[id].polygons, lon, lat)) continue;
      if (best < 0 || this.areas[id] < this.areas[best] || (this.areas[id] === this.areas[best] && id < best)) best = id;
    }
    return best;
  }

  /** The outline containing the point, else the nearest one within `maxMetres`, else -1. */
  containingOrNearest(lon: number, lat: number, maxMetres: number): number {
    const inside = this.containing(lon, lat);
    if (inside >= 0 || !this.index) return inside;
    const plane = new LocalPlane(lon, lat);
    const found = nearestItem(this.index, { minX: lon, minY: lat, maxX: lon, maxY: lat }, maxMetres, (id) => {
      let d = Infinity;
      for (const polygon of this.outlines[id].polygons) {
        for (const ring of polygon) {
          for (let i = 2; i < ring.length; i += 2) {
            d = Math.min(d, pointSegment(0, 0, plane.x(ring[i - 2]), plane.y(ring[i - 1]), plane.x(ring[i]), plane.y(ring[i + 1])));
          }
        }
      }
      return d;
    });
    return found ? found.id : -1;
  }
}
