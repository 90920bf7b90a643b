/**
 * Footprints of a snapshot: every outline's vertices in one Float64Array (lon, lat interleaved),
 * with offsets row -> polygons -> rings -> vertices. A ring's closing vertex (equal to its
 * first) is not stored; it is put back when an outline is decoded. When every row has one
 * polygon, or every polygon one ring, that level of offsets is the identity and not stored.
 */
import type { Data } from 'apache-arrow';
import type { LocalFrame } from '../geo/wgs84.ts';
import type { Polygon } from '../snapshot/schema.ts';
import { sharedF64, sharedU32 } from './shared.ts';

/** One batch's footprint column, its nested levels resolved. */
interface GeoBatch {
  length: number;
  polyOffsets: Int32Array;
  polyOff: number;
  ringOffsets: Int32Array;
  ringOff: number;
  vertOffsets: Int32Array;
  vertOff: number;
  coords: Float64Array;
  coordBase: number;
}

function resolve(data: Data): GeoBatch {
  const rings = data.children[0];
  const verts = rings.children[0];
  const points = verts.children[0];
  const xy = points.children[0];
  return {
    length: data.length,
    polyOffsets: data.valueOffsets as Int32Array,
    polyOff: data.offset,
    ringOffsets: rings.valueOffsets as Int32Array,
    ringOff: rings.offset,
    vertOffsets: verts.valueOffsets as Int32Array,
    vertOff: verts.offset,
    coords: xy.values as Float64Array,
    coordBase: xy.offset + 2 * points.offset,
  };
}

export class Footprints {
  private constructor(
    readonly rows: number,
    /** Vertices, lon/lat interleaved, closing vertices left out. */
    readonly coords: Float64Array,
    /** Ring r has vertices [ringStart[r], ringStart[r+1]). */
    readonly ringStart: Uint32Array,
    /** Polygon p has rings [polyStart[p], polyStart[p+1]); null: ring p. */
    readonly polyStart: Uint32Array | null,
    /** Row i has polygons [rowStart[i], rowStart[i+1]); null: polygon i. */
    readonly rowStart: Uint32Array | null,
  ) {}

  /** Builds the footprints of `rows` rows from the batches' footprint columns; throws on a malformed ring. */
  static build(columns: readonly Data[], rows: number): Footprints {
    const batches = columns.map(resolve);
    let polygons = 0;
    let rings = 0;
    let kept = 0;
    for (const b of batches) {
      const p0 = b.polyOffsets[b.polyOff];
      const p1 = b.polyOffsets[b.polyOff + b.length];
      const r0 = b.ringOffsets[b.ringOff + p0];
      const r1 = b.ringOffsets[b.ringOff + p1];
      const v0 = b.vertOffsets[b.vertOff + r0];
      const v1 = b.vertOffsets[b.vertOff + r1];
      polygons += p1 - p0;
      rings += r1 - r0;
      kept += v1 - v0 - (r1 - r0);
    }
    const coords = sharedF64(2 * kept);
    const ringStart = sharedU32(rings + 1);
    const polyStart = rings === polygons ? null : sharedU32(polygons + 1);
    const rowStart = polygons === rows ? null : sharedU32(rows + 1);
    let row = 0;
    let poly = 0;
    let ring = 0;
    let vert = 0;
    for (const b of batches) {
      for (let i = 0; i < b.length; i++, row++) {
        if (rowStart) rowStart[row] = poly;
        const pa = b.polyOffsets[b.polyOff + i];
        const pb = b.polyOffsets[b.polyOff + i + 1];
        if (pb <= pa) throw new Error(`footprint of row ${row} has no polygon`);
        if (!rowStart && pb - pa !== 1) throw new Error('footprint polygon count changed while loading');
        for (let p = pa; p < pb; p++, poly++) {
          if (polyStart) polyStart[poly] = ring;
          const ra = b.ringOffsets[b.ringOff + p];
          const rb = b.ringOffsets[b.ringOff + p + 1];
          if (rb <= ra) throw new Error(`footprint of row ${row} has a polygon without rings`);
          for (let r = ra; r < rb; r++, ring++) {
            ringStart[ring] = vert;
            const va = b.vertOffsets[b.vertOff + r];
            const vb = b.vertOffsets[b.vertOff + r + 1];
            const src = b.coords;
            const first = b.coordBase + 2 * va;
            const last = b.coordBase + 2 * (vb - 1);
            if (vb - va < 4 || src[first] !== src[last] || src[first + 1] !== src[last + 1]) {
              throw new Error(`footprint of row ${row} has a ring that is not closed with at least 4 points`);
            }
            for (let k = first, at = 2 * vert; k < last; k++, at++) coords[at] = src[k];
            vert += vb - 1 - va;
          }
        }
      }
    }
    if (rowStart) rowStart[rows] = poly;
    if (polyStart) polyStart[polygons] = ring;
    ringStart[rings] = vert;
    return new Footprints(rows, coords, ringStart, polyStart, rowStart);
  }

  get byteLength(): number {
    return this.coords.byteLength + this.ringStart.byteLength + (this.polyStart?.byteLength ?? 0) + (this.rowStart?.byteLength ?? 0);
  }

  private polygonsOf(row: number): [number, number] {
    return this.rowStart ? [this.rowStart[row], this.rowStart[row + 1]] : [row, row + 1];
  }

  private ringsOf(poly: number): [number, number] {
    return this.polyStart ? [this.polyStart[poly], this.polyStart[poly + 1]] : [poly, poly + 1];
  }

  /** Bounding box of row's outline into out[0..3] (minLon, minLat, maxLon, maxLat). */
  bbox(row: number, out: Float64Array): void {
    const [p0, p1] = this.polygonsOf(row);
    const [r0] = this.ringsOf(p0);
    const [, r1] = this.ringsOf(p1 - 1);
    const c = this.coords;
    let minX = Infinity,
      minY = Infinity,
      maxX = -Infinity,
      maxY = -Infinity;
    for (let v = this.ringStart[r0], e = this.ringStart[r1]; v < e; v++) {
      const x = c[2 * v];
      const y = c[2 * v + 1];
      if (x < minX) minX = x;
      if (x > maxX) maxX = x;
      if (y < minY) minY = y;
      if (y > maxY) maxY = y;
    }
    out[0] = minX;
    out[1] = minY;
    out[2] = maxX;
    out[3] = maxY;
  }

  /** The outline of row as the writer took it: polygons -> rings -> closed lon,lat rings. */
  polygons(row: number): Polygon[] {
    const out: Polygon[] = [];
    const [p0, p1] = this.polygonsOf(row);
    const c = this.coords;
    for (let p = p0; p < p1; p++) {
      const polygon: number[][] = [];
      const [r0, r1] = this.ringsOf(p);
      for (let r = r0; r < r1; r++) {
        const a = this.ringStart[r];
        const b = this.ringStart[r + 1];
        const ring = new Array<number>(2 * (b - a + 1));
        for (let v = a, k = 0; v < b; v++, k += 2) {
          ring[k] = c[2 * v];
          ring[k + 1] = c[2 * v + 1];
        }
        ring[2 * (b - a)] = c[2 * a];
        ring[2 * (b - a) + 1] = c[2 * a + 1];
        polygon.push(ring);
      }
      out.push(polygon);
    }
    return out;
  }

  /**
   * Distance in metres from the frame's origin to row's outline (spec 4.2): 0 when the origin is
   * inside a polygon and in none of its holes, else the distance to the nearest ring, each edge
   * straight in the frame. Each vertex is projected once: one pass over a ring gives both its
   * even-odd parity and its distance.
   */
  distance(row: number, frame: LocalFrame): number {
    const c = this.coords;
    const starts = this.ringStart;
    let best = Infinity;
    const [p0, p1] = this.polygonsOf(row);
    for (let p = p0; p < p1; p++) {
      const [r0, r1] = this.ringsOf(p);
      let inside = false;
      let nearest = Infinity;
      for (let r = r0; r < r1; r++) {
        const a = starts[r];
        const b = starts[r + 1];
        let odd = false;
        // Edges (v[i-1], v[i]), the first from the last vertex.
        frame.project(c[2 * (b - 1)], c[2 * (b - 1) + 1]);
        let ax = frame.x;
        let ay = frame.y;
        for (let v = a; v < b; v++) {
          frame.project(c[2 * v], c[2 * v + 1]);
          const bx = frame.x;
          const by = frame.y;
          if (by > 0 !== ay > 0) {
            const xCross = bx + ((0 - by) * (ax - bx)) / (ay - by);
            if (xCross > 0) odd = !odd;
          }
          const dx = bx - ax;
          const dy = by - ay;
          const len2 = dx * dx + dy * dy;
          let t = len2 === 0 ? 0 : ((0 - ax) * dx + (0 - ay) * dy) / len2;
          if (t < 0) t = 0;
          if (t > 1) t = 1;
          const px = ax + t * dx;
          const py = ay + t * dy;
          // Not Math.hypot: V8 boxes its arguments (garbage per edge), about ten times slower
          // here; its guard against overflow is idle at metre scales.
          const d = Math.sqrt(px * px + py * py);
          if (d < nearest) nearest = d;
          ax = bx;
          ay = by;
        }
        if (r === r0) inside = odd;
        else if (odd) inside = false;
      }
      if (inside) return 0;
      if (nearest < best) best = nearest;
    }
    return best;
  }
}
