/**
 * A packed tree over row ranges. Rows are already in Hilbert order of their representative
 * point, so consecutive rows are near on the ground: leaves are runs of LEAF_ROWS consecutive
 * rows, each parent covers FANOUT consecutive children, and so every node is a contiguous row
 * range with the bounding box of its rows' representative points. A bbox query walks it and
 * hands out row ranges: wholly inside the bbox (no per-row point test needed) or partly inside
 * (test each row), merged when adjacent, so kernels run tight loops over contiguous rows.
 *
 * Per-node aggregates sit beside `boxes`, node for node, in summaries.ts.
 */
import { sharedF64 } from './shared.ts';
import type { BBox } from '../geo/bbox.ts';

export const LEAF_ROWS = 64;
export const FANOUT = 8;

/** Called for each run of rows [lo, hi); partial: some rows may lie outside the bbox. */
export type RangeVisitor = (lo: number, hi: number, partial: boolean) => void;

export class RowTree {
  /** minLon, minLat, maxLon, maxLat per node, level 0 (leaves) first. */
  readonly boxes: Float64Array;
  /** First node of each level; the last level holds the root alone. */
  readonly levelStart: number[] = [];
  readonly levelCount: number[] = [];
  /** Rows a node of each level covers. */
  readonly levelSpan: number[] = [];
  private readonly stack = new Int32Array(64 * FANOUT);

  constructor(
    readonly rows: number,
    lon: Float64Array,
    lat: Float64Array,
  ) {
    let count = Math.ceil(rows / LEAF_ROWS);
    let span = LEAF_ROWS;
    let total = 0;
    if (rows > 0) {
      for (;;) {
        this.levelStart.push(total);
        this.levelCount.push(count);
        this.levelSpan.push(span);
        total += count;
        if (count === 1) break;
        count = Math.ceil(count / FANOUT);
        span *= FANOUT;
      }
    }
    const boxes = (this.boxes = sharedF64(4 * total));
    for (let leaf = 0; leaf < (this.levelCount[0] ?? 0); leaf++) {
      let minX = Infinity,
        minY = Infinity,
        maxX = -Infinity,
        maxY = -Infinity;
      for (let r = leaf * LEAF_ROWS, e = Math.min(rows, r + LEAF_ROWS); r < e; r++) {
        const x = lon[r];
        const y = lat[r];
        if (x < minX) minX = x;
        if (x > maxX) maxX = x;
        if (y < minY) minY = y;
        if (y > maxY) maxY = y;
      }
      boxes.set([minX, minY, maxX, maxY], 4 * leaf);
    }
    for (let level = 1; level < this.levelStart.length; level++) {
      const below = this.levelStart[level - 1];
      const belowCount = this.levelCount[level - 1];
      for (let i = 0; i < this.levelCount[level]; i++) {
        let minX = Infinity,
          minY = Infinity,
          maxX = -Infinity,
          maxY = -Infinity;
        for (let c = i * FANOUT, e = Math.min(belowCount, c + FANOUT); c < e; c++) {
          const b = 4 * (below + c);
          if (boxes[b] < minX) minX = boxes[b];
          if (boxes[b + 1] < minY) minY = boxes[b + 1];
          if (boxes[b + 2] > maxX) maxX = boxes[b + 2];
          if (boxes[b + 3] > maxY) maxY = boxes[b + 3];
        }
        boxes.set([minX, minY, maxX, maxY], 4 * (this.levelStart[level] + i));
      }
    }
  }

  /**
   * The least box area (square degrees) of a full node of `level` (Infinity where none is
   * full): where the snapshot is densest, levelSpan[level] rows fit in this much.
   */
  leastArea(level: number): number {
    let least = Infinity;
    if (level >= this.levelStart.length) return least;
    const boxes = this.boxes;
    for (let i = 0, full = Math.floor(this.rows / this.levelSpan[level]); i < full; i++) {
      const b = 4 * (this.levelStart[level] + i);
      least = Math.min(least, (boxes[b + 2] - boxes[b]) * (boxes[b + 3] - boxes[b + 1]));
    }
    return least;
  }

  /** Bounding box of every representative point, or null for an empty snapshot. */
  get extent(): BBox | null {
    if (this.rows === 0) return null;
    const b = 4 * this.levelStart[this.levelStart.length - 1];
    return { minLon: this.boxes[b], minLat: this.boxes[b + 1], maxLon: this.boxes[b + 2], maxLat: this.boxes[b + 3] };
  }

  /**
   * Visits, in row order, the row ranges whose points may lie in the bbox (edges included).
   * Adjacent ranges of the same kind are merged before the visitor sees them.
   */
  ranges(q: BBox, visit: RangeVisitor): void {
    if (this.rows === 0) return;
    const { minLon, minLat, maxLon, maxLat } = q;
    const boxes = this.boxes;
    const stack = this.stack;
    let sp = 0;
    const top = this.levelStart.length - 1;
    stack[sp++] = top;
    stack[sp++] = 0;
    let pendingLo = 0;
    let pendingHi = 0;
    let pendingPartial = false;
    while (sp > 0) {
      const i = stack[--sp];
      const level = stack[--sp];
      const b = 4 * (this.levelStart[level] + i);
      const x0 = boxes[b],
        y0 = boxes[b + 1],
        x1 = boxes[b + 2],
        y1 = boxes[b + 3];
      if (x1 < minLon || x0 > maxLon || y1 < minLat || y0 > maxLat) continue;
      const inside = x0 >= minLon && x1 <= maxLon && y0 >= minLat && y1 <= maxLat;
      if (inside || level === 0) {
        const lo = i * this.levelSpan[level];
        const hi = Math.min(this.rows, lo + this.levelSpan[level]);
        const partial = !inside;
        if (lo === pendingHi && partial === pendingPartial && pendingHi > pendingLo) {
          pendingHi = hi;
        } else {
          if (pendingHi > pendingLo) visit(pendingLo, pendingHi, pendingPartial);
          pendingLo = lo;
          pendingHi = hi;
          pendingPartial = partial;
        }
        continue;
      }
      const first = i * FANOUT;
      const last = Math.min(this.levelCount[level - 1], first + FANOUT) - 1;
      for (let c = last; c >= first; c--) {
        stack[sp++] = level - 1;
        stack[sp++] = c;
      }
    }
    if (pendingHi > pendingLo) visit(pendingLo, pendingHi, pendingPartial);
  }

  get byteLength(): number {
    return this.boxes.byteLength;
  }
}
