/** A box in WGS84 degrees, edges included. */
export interface BBox {
  minLon: number;
  minLat: number;
  maxLon: number;
  maxLat: number;
}

/** Degrees of longitude a box spans; one whose minLon is above its maxLon crosses the antimeridian (as OGC API Features reads it). */
export function lonSpan(b: BBox): number {
  return b.minLon <= b.maxLon ? b.maxLon - b.minLon : b.maxLon + 360 - b.minLon;
}

/** The box as boxes that do not cross the antimeridian: itself, or its parts west and east of it. */
export function partsOf(b: BBox): BBox[] {
  if (b.minLon <= b.maxLon) return [b];
  return [
    { ...b, maxLon: 180 },
    { ...b, minLon: -180 },
  ];
}
