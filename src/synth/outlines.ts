/**
 * Building outlines. A shape is drawn in metres around its bounding-box centre, in canonical
 * orientation (long side along x), into reusable scratch arrays; `footprint()` rotates it,
 * turns it into closed lon/lat rings (outer rings counter-clockwise, holes clockwise, as
 * GeoJSON wants) and is the only step that allocates. Every shape is a union of rectangles
 * whose sides are at least a few metres, so outlines are simple and never degenerate; each
 * shape also knows a point well inside one of its rectangles (the representative point), and
 * its exact area.
 */
import type { Polygon } from '../snapshot/schema.ts';
import { metresPerDegreeLat, metresPerDegreeLon } from '../geo/wgs84.ts';
import type { Prng } from './prng.ts';

export const RECTANGLE = 0;
export const CHAMFERED = 1;
export const L_SHAPE = 2;
export const T_SHAPE = 3;
export const U_SHAPE = 4;
export const COURTYARD = 5;
export const STEPPED = 6;
export const CROSS = 7;
export const ROUND = 8;
export const TWO_PARTS = 9;

const ROUND_VERTICES = 12;
/** Narrowest wing, notch or part of a shape (m). */
const MIN_PART = 2.5;

export class Outline {
  /** x,y of every ring's vertices, rings one after another, not closed. */
  private readonly xy = new Float64Array(64);
  /** End (in vertices) of each ring, and whether the ring starts a new polygon. */
  private readonly ringEnd = new Int32Array(4);
  private readonly ringStartsPolygon = new Uint8Array(4);
  private rings = 0;
  private vertices = 0;
  /** Area in m² of the current shape. */
  area = 0;
  /** A point inside the current shape (m, shape coordinates). */
  repX = 0;
  repY = 0;

  private ring(startsPolygon: boolean): void {
    if (this.rings > 0) this.ringEnd[this.rings - 1] = this.vertices;
    this.ringStartsPolygon[this.rings++] = startsPolygon ? 1 : 0;
  }

  private v(x: number, y: number): void {
    this.xy[2 * this.vertices] = x;
    this.xy[2 * this.vertices + 1] = y;
    this.vertices++;
  }

  private reset(): void {
    this.rings = 0;
    this.vertices = 0;
  }

  private end(): void {
    this.ringEnd[this.rings - 1] = this.vertices;
  }

  private rectangle(x0: number, y0: number, x1: number, y1: number, clockwise: boolean): void {
    if (clockwise) {
      this.v(x0, y0);
      this.v(x0, y1);
      this.v(x1, y1);
      this.v(x1, y0);
    } else {
      this.v(x0, y0);
      this.v(x1, y0);
      this.v(x1, y1);
      this.v(x0, y1);
    }
  }

  /**
   * Draws shape `kind` filling a w x d box (w along x). Parts (wings, notches, courtyards) are
   * drawn from `rng` but kept at least MIN_PART metres wide, so thin slivers never occur.
   * Falls back to a rectangle when the box is too small for the shape.
   */
  draw(kind: number, w: number, d: number, rng: Prng): void {
    this.reset();
    const hw = w / 2,
      hd = d / 2;
    const minPart = MIN_PART;
    const small = Math.min(w, d) < 3 * minPart;
    if (small && kind !== ROUND) kind = kind === CHAMFERED ? CHAMFERED : RECTANGLE;
    switch (kind) {
      case CHAMFERED: {
        const c = Math.min(w, d) * rng.range(0.12, 0.25);
        this.ring(true);
        this.v(-hw, -hd);
        this.v(hw, -hd);
        this.v(hw, hd - c);
        this.v(hw - c, hd);
        this.v(-hw, hd);
        this.area = w * d - (c * c) / 2;
        this.repX = 0;
        this.repY = 0;
        break;
      }
      case L_SHAPE: {
        // A notch cut from the top-right corner; the full-width bottom bar holds the point.
        const a = Math.max(minPart, w * rng.range(0.35, 0.6));
        const b = Math.min(d - minPart, Math.max(minPart, d * rng.range(0.35, 0.6)));
        this.ring(true);
        this.v(-hw, -hd);
        this.v(hw, -hd);
        this.v(hw, hd - b);
        this.v(hw - a, hd - b);
        this.v(hw - a, hd);
        this.v(-hw, hd);
        this.area = w * d - a * b;
        this.repX = 0;
        this.repY = -b / 2;
        break;
      }
      case T_SHAPE: {
        const t = Math.max(minPart, d * rng.range(0.35, 0.5));
        const s = Math.max(minPart, w * rng.range(0.3, 0.5));
        this.ring(true);
        this.v(-s / 2, -hd);
        this.v(s / 2, -hd);
        this.v(s / 2, hd - t);
        this.v(hw, hd - t);
        this.v(hw, hd);
        this.v(-hw, hd);
        this.v(-hw, hd - t);
        this.v(-s / 2, hd - t);
        this.area = w * t + s * (d - t);
        this.repX = 0;
        this.repY = hd - t / 2;
        break;
      }
      case U_SHAPE: {
        const t = Math.max(minPart, d * rng.range(0.3, 0.45));
        const a = Math.max(minPart, w * rng.range(0.22, 0.32));
        this.ring(true);
        this.v(-hw, -hd);
        this.v(hw, -hd);
        this.v(hw, hd);
        this.v(hw - a, hd);
        this.v(hw - a, -hd + t);
        this.v(-hw + a, -hd + t);
        this.v(-hw + a, hd);
        this.v(-hw, hd);
        this.area = w * t + 2 * a * (d - t);
        this.repX = 0;
        this.repY = -hd + t / 2;
        break;
      }
      case COURTYARD: {
        // Wings 10 to 14 m deep around a closed yard, which is a hole of the polygon.
        const t = Math.min(Math.min(w, d) * 0.35, rng.range(10, 14));
        this.ring(true);
        this.rectangle(-hw, -hd, hw, hd, false);
        this.ring(false);
        this.rectangle(-hw + t, -hd + t, hw - t, hd - t, true);
        this.area = w * d - (w - 2 * t) * (d - 2 * t);
        this.repX = 0;
        this.repY = -hd + t / 2;
        break;
      }
      case STEPPED: {
        // Two sections side by side, the right one shifted up by s: a staggered block.
        const s = Math.min(d - 2 * minPart, Math.max(1, d * rng.range(0.15, 0.35)));
        const xm = w * rng.range(-0.15, 0.15);
        this.ring(true);
        this.v(-hw, -hd);
        this.v(xm, -hd);
        this.v(xm, -hd + s);
        this.v(hw, -hd + s);
        this.v(hw, hd);
        this.v(xm, hd);
        this.v(xm, hd - s);
        this.v(-hw, hd - s);
        this.area = w * (d - s);
        this.repX = (-hw + xm) / 2;
        this.repY = -s / 2;
        break;
      }
      case CROSS: {
        // A nave along x crossed by a transept: church plans, cross-shaped towers.
        const b = Math.max(minPart, d * rng.range(0.35, 0.5));
        const a = Math.max(minPart, w * rng.range(0.18, 0.3));
        const cx = Math.min(hw - a / 2 - 1, w * rng.range(0, 0.2));
        this.ring(true);
        this.v(-hw, -b / 2);
        this.v(cx - a / 2, -b / 2);
        this.v(cx - a / 2, -hd);
        this.v(cx + a / 2, -hd);
        this.v(cx + a / 2, -b / 2);
        this.v(hw, -b / 2);
        this.v(hw, b / 2);
        this.v(cx + a / 2, b / 2);
        this.v(cx + a / 2, hd);
        this.v(cx - a / 2, hd);
        this.v(cx - a / 2, b / 2);
        this.v(-hw, b / 2);
        this.area = w * b + a * (d - b);
        this.repX = (-hw + cx - a / 2) / 2;
        this.repY = 0;
        break;
      }
      case ROUND: {
        // Silos, tanks, rotundas: a regular polygon inscribed in the box's smaller side.
        const r = Math.min(w, d) / 2;
        this.ring(true);
        for (let i = 0; i < ROUND_VERTICES; i++) {
          const t = (2 * Math.PI * i) / ROUND_VERTICES;
          this.v(r * Math.cos(t), r * Math.sin(t));
        }
        this.area = (ROUND_VERTICES / 2) * r * r * Math.sin((2 * Math.PI) / ROUND_VERTICES);
        this.repX = 0;
        this.repY = 0;
        break;
      }
      case TWO_PARTS: {
        // One building recorded as two separate parts (a multipolygon) with a passage between.
        const g = Math.min(w * 0.2, rng.range(2, 5));
        const split = w * rng.range(-0.15, 0.15);
        this.ring(true);
        this.rectangle(-hw, -hd, split - g / 2, hd, false);
        this.ring(true);
        this.rectangle(split + g / 2, -hd, hw, hd, false);
        this.area = (w - g) * d;
        this.repX = (-hw + split - g / 2) / 2;
        this.repY = 0;
        break;
      }
      default: {
        this.ring(true);
        this.rectangle(-hw, -hd, hw, hd, false);
        this.area = w * d;
        this.repX = 0;
        this.repY = 0;
      }
    }
    this.end();
  }

  /**
   * The current shape rotated by `angle` (radians, counter-clockwise) about its centre placed
   * at (lon, lat), as closed rings of interleaved lon,lat. The representative point, rotated
   * the same way, goes to `rep`.
   */
  footprint(lon: number, lat: number, angle: number, rep: { lon: number; lat: number }): Polygon[] {
    // The building's own latitude scales it: over a few hundred metres, the planar area of the
    // drawing is the ellipsoidal area of the outline to far better than 0.01 %.
    const kx = 1 / metresPerDegreeLon(lat),
      ky = 1 / metresPerDegreeLat(lat);
    const cos = Math.cos(angle),
      sin = Math.sin(angle);
    const polygons: Polygon[] = [];
    let start = 0;
    for (let r = 0; r < this.rings; r++) {
      const end = this.ringEnd[r];
      const ring = new Array<number>(2 * (end - start) + 2);
      for (let i = start, o = 0; i < end; i++, o += 2) {
        const x = this.xy[2 * i],
          y = this.xy[2 * i + 1];
        ring[o] = lon + (x * cos - y * sin) * kx;
        ring[o + 1] = lat + (x * sin + y * cos) * ky;
      }
      // Closed by repeating the first vertex exactly.
      ring[ring.length - 2] = ring[0];
      ring[ring.length - 1] = ring[1];
      if (this.ringStartsPolygon[r]) polygons.push([ring]);
      else polygons[polygons.length - 1].push(ring);
      start = end;
    }
    rep.lon = lon + (this.repX * cos - this.repY * sin) * kx;
    rep.lat = lat + (this.repX * sin + this.repY * cos) * ky;
    return polygons;
  }
}
