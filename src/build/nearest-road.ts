/**
 * nearest_road: the name of the named highway line nearest to a building's outline, for
 * buildings that no address names. Road lines are cut into segments so that the index finds
 * the part of a long road near the building, not its whole bounding box.
 */
import Flatbush from 'flatbush';
import { outlineContains, type Outline } from './outline.ts';
import { LocalPlane, nearestItem, segmentSegment } from './nearest.ts';

/** OSM highway values that are not roads on the ground (yet, or any more). */
const NOT_A_ROAD = new Set(['proposed', 'construction', 'abandoned', 'razed', 'disused', 'platform', 'bus_stop', 'no']);

export function isNamedRoad(tags: Readonly<Record<string, string>>): boolean {
  const highway = tags.highway;
  return highway !== undefined && !NOT_A_ROAD.has(highway) && (tags.name ?? '').trim() !== '';
}

/** Collects road lines while the input is read; `finish` builds the index. */
export class RoadCollector {
  private coords: number[] = [];
  private roadOfSegment: number[] = [];
  private names: string[] = [];

  /** One named line, as GeoJSON LineString or MultiLineString coordinates. Returns false if unusable. */
  add(name: string, geometry: { type: string; coordinates?: unknown }): boolean {
    const lines =
      geometry.type === 'LineString'
        ? [geometry.coordinates]
        : geometry.type === 'MultiLineString' && Array.isArray(geometry.coordinates)
          ? geometry.coordinates
          : null;
    if (!lines) return false;
    const road = this.names.length;
    let added = false;
    for (const line of lines) {
      if (!Array.isArray(line)) return false;
      for (let i = 1; i < line.length; i++) {
        const a = line[i - 1];
        const b = line[i];
        if (!Array.isArray(a) || !Array.isArray(b) || ![a[0], a[1], b[0], b[1]].every((v) => typeof v === 'number' && Number.isFinite(v)))
          continue;
        this.coords.push(a[0], a[1], b[0], b[1]);
        this.roadOfSegment.push(road);
        added = true;
      }
    }
    if (added) this.names.push(name.trim());
    return added;
  }

  finish(): RoadIndex {
    return new RoadIndex(Float64Array.from(this.coords), Int32Array.from(this.roadOfSegment), this.names);
  }
}

export class RoadIndex {
  private readonly index: Flatbush | null;

  constructor(
    private readonly segments: Float64Array,
    private readonly roadOf: Int32Array,
    private readonly names: readonly string[],
  ) {
    const n = roadOf.length;
    this.index = n > 0 ? new Flatbush(n) : null;
    for (let i = 0; i < n; i++) {
      const s = 4 * i;
      this.index!.add(
        Math.min(segments[s], segments[s + 2]),
        Math.min(segments[s + 1], segments[s + 3]),
        Math.max(segments[s], segments[s + 2]),
        Math.max(segments[s + 1], segments[s + 3]),
      );
    }
    this.index?.finish();
  }

  /** Name of the road nearest to the outline within `maxMetres`, or null. */
  nearestName(outline: Outline, lon0: number, lat0: number, maxMetres: number): string | null {
    if (!this.index) return null;
    const plane = new LocalPlane(lon0, lat0);
    const s = this.segments;
    const found = nearestItem(this.index, outline, maxMetres, (id) => {
      const j = 4 * id;
      if (outlineContains(outline.polygons, s[j], s[j + 1])) return 0;
      const cx = plane.x(s[j]);
      const cy = plane.y(s[j + 1]);
      const dx = plane.x(s[j + 2]);
      const dy = plane.y(s[j + 3]);
      let d = Infinity;
      for (const polygon of outline.polygons) {
        for (const ring of polygon) {
          for (let i = 2; i < ring.length; i += 2) {
            d = Math.min(
              d,
              segmentSegment(plane.x(ring[i - 2]), plane.y(ring[i - 1]), plane.x(ring[i]), plane.y(ring[i + 1]), cx, cy, dx, dy),
            );
          }
        }
      }
      return d;
    });
    return found ? this.names[this.roadOf[found.id]] : null;
  }
}
