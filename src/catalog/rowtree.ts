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

/** What a walk does after visiting a node: go down to its children, pass over them, or stop. */
export type NodeStep = 'down' | 'over' | 'stop';

/** Visits the nodes of a walk (RowTree.walk). */
export interface NodeVisitor {
  /**
   * Node i of `level` (`node` its index in boxes, levels counted from the leaves), whose box
   * meets the bbox, wholly inside it when `inside`.
   */
  visit(level: number, i: number, node: number, inside: boolean): NodeStep;
}

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

  /** Node `node`'s box meets the bbox (edges included). */
  meets(node: number, q: BBox): boolean {
    const boxes = this.boxes;
    const b = 4 * node;
    return !(boxes[b + 2] < q.minLon || boxes[b] > q.maxLon || boxes[b + 3] < q.minLat || boxes[b + 1] > q.maxLat);
  }

  /** Node `node`'s box lies wholly inside the bbox (edges included). */
  within(node: number, q: BBox): boolean {
    const boxes = this.boxes;
    const b = 4 * node;
    return boxes[b] >= q.minLon && boxes[b + 2] <= q.maxLon && boxes[b + 1] >= q.minLat && boxes[b + 3] <= q.maxLat;
  }

  /**
   * Walks depth-first, in row order, from the sp / 2 (level, index) pairs on `stack` (the last
   * pushed first), handing the visitor each node whose box meets the bbox; 'down' pushes the
   * node's children. Returns the stack's height when the visitor stopped the walk, 0 once done.
   * The stack must have room above sp for FANOUT pairs a level.
   */
  walk(q: BBox, visitor: NodeVisitor, stack: Int32Array, sp: number): number {
    const { levelStart, levelCount } = this;
    while (sp > 0) {
      const i = stack[--sp];
      const level = stack[--sp];
      const node = levelStart[level] + i;
      if (!this.meets(node, q)) continue;
      const step = visitor.visit(level, i, node, this.within(node, q));
      if (step === 'stop') return sp;
      if (step === 'over' || level === 0) continue;
      const first = i * FANOUT;
      for (let c = Math.min(levelCount[level - 1], first + FANOUT) - 1; c >= first; c--) {
        stack[sp++] = level - 1;
        stack[sp++] = c;
      }
    }
    return 0;
  }

  /**
   * Visits, in row order, the row ranges whose points may lie in the bbox (edges included):
   * nodes wholly inside, and leaves it cuts. Adjacent ranges of the same kind are merged before
   * the visitor sees them.
   */
  ranges(q: BBox, visit: RangeVisitor): void {
    if (this.rows === 0) return;
    this.stack[0] = this.levelStart.length - 1;
    this.stack[1] = 0;
    this.rangesFrom(q, visit, this.stack, 2);
  }

  /** `ranges` for what is left of a walk: below the sp / 2 (level, index) pairs on `stack`. */
  rangesFrom(q: BBox, visit: RangeVisitor, stack: Int32Array, sp: number): void {
    let merge = merges.get(this);
    if (merge === undefined) merges.set(this, (merge = new RangeMerge(this)));
    merge.start(visit);
    this.walk(q, merge, stack, sp);
    merge.flush();
  }

  get byteLength(): number {
    return this.boxes.byteLength;
  }
}

/**
 * Each tree's `ranges` visitor, reused: a class whose every instance is garbage at a full
 * collection loses its V8 map, and the optimised walks that checked for it are thrown away.
 * Kept beside the tree, which is data only (cloned field by field to workers and into the
 * prepared file).
 */
const merges = new WeakMap<RowTree, RangeMerge>();

/** RowTree.ranges' visitor: a node wholly inside or a leaf is a range; adjacent ones of a kind merge. */
class RangeMerge implements NodeVisitor {
  private lo = 0;
  private hi = 0;
  private partial = false;
  private out: RangeVisitor = () => {};

  constructor(private readonly tree: RowTree) {}

  /** Starts a walk handing its ranges to `out`. */
  start(out: RangeVisitor): void {
    this.out = out;
    this.lo = this.hi = 0;
  }

  visit(level: number, i: number, _node: number, inside: boolean): NodeStep {
    if (!inside && level > 0) return 'down';
    const span = this.tree.levelSpan[level];
    const lo = i * span;
    const hi = Math.min(this.tree.rows, lo + span);
    const partial = !inside;
    if (lo === this.hi && partial === this.partial && this.hi > this.lo) this.hi = hi;
    else {
      this.flush();
      this.lo = lo;
      this.hi = hi;
      this.partial = partial;
    }
    return 'over';
  }

  /** Hands out the range waiting. */
  flush(): void {
    if (this.hi > this.lo) this.out(this.lo, this.hi, this.partial);
    this.lo = this.hi = 0;
  }
}
