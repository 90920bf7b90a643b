/**
 * The best `capacity` rows of a ranked query, in a bounded binary heap over typed arrays whose
 * root is the worst row kept. Order (spec 4.1 rule 8 and DESIGN "Queries"): key descending
 * (unknown = -Infinity, last), ties by building_id ascending: by the precomputed rank within one
 * snapshot, by the id words across snapshots.
 *
 * One heap is reused by every query of the thread (queries run to completion synchronously).
 */
import { compareIds } from '../catalog/ids.ts';
import { MAX_WINDOW } from './types.ts';

export class TopK {
  private readonly key = new Float64Array(MAX_WINDOW);
  private readonly row = new Uint32Array(MAX_WINDOW);
  private readonly rank = new Uint32Array(MAX_WINDOW);
  private readonly snap = new Uint16Array(MAX_WINDOW);
  private ids: Uint32Array[] = [];
  private capacity = 0;
  /** No row under this enters (floor.ts proves at least `capacity` rows reach it). */
  private floor = -Infinity;
  size = 0;

  /** Empties the heap for a query keeping `capacity` rows; ids[s] are the id words of snapshot s. */
  reset(capacity: number, ids: Uint32Array[]): void {
    if (capacity > MAX_WINDOW) throw new RangeError(`TopK keeps at most ${MAX_WINDOW} rows, asked for ${capacity}.`);
    this.capacity = capacity;
    this.ids = ids;
    this.size = 0;
    this.floor = -Infinity;
  }

  /**
   * Keeps out every row whose key is below `floor`. Only for a floor at least `capacity` of the
   * rows offered afterwards reach (so the heap still fills); set before the first offer.
   */
  raiseFloor(floor: number): void {
    this.floor = floor;
  }

  /** Is the entry in slot j ranked after the row (k, s, r, rk)? */
  private slotAfter(j: number, k: number, s: number, r: number, rk: number): boolean {
    const kj = this.key[j];
    if (kj !== k) return kj < k;
    const sj = this.snap[j];
    if (sj === s) return this.rank[j] > rk;
    return compareIds(this.ids[sj], this.row[j], this.ids[s], r) > 0;
  }

  private put(j: number, k: number, s: number, r: number, rk: number): void {
    this.key[j] = k;
    this.snap[j] = s;
    this.row[j] = r;
    this.rank[j] = rk;
  }

  private move(from: number, to: number): void {
    this.key[to] = this.key[from];
    this.snap[to] = this.snap[from];
    this.row[to] = this.row[from];
    this.rank[to] = this.rank[from];
  }

  /** Places the row at the free slot i; the root holds the worst row, so it rises while ranked after its parent. */
  private siftUp(i: number, k: number, s: number, r: number, rk: number): void {
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.rowAfterSlot(p, k, s, r, rk)) break;
      this.move(p, i);
      i = p;
    }
    this.put(i, k, s, r, rk);
  }

  /** Is the row (k, s, r, rk) ranked after slot j? */
  private rowAfterSlot(j: number, k: number, s: number, r: number, rk: number): boolean {
    const kj = this.key[j];
    if (kj !== k) return k < kj;
    const sj = this.snap[j];
    if (sj === s) return rk > this.rank[j];
    return compareIds(this.ids[s], r, this.ids[sj], this.row[j]) > 0;
  }

  /** Places the row at the free slot i, moving the worse child up while it ranks after the row. */
  private siftDown(i: number, k: number, s: number, r: number, rk: number): void {
    const size = this.size;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= size) break;
      let c = l;
      if (l + 1 < size && this.slotAfter(l + 1, this.key[l], this.snap[l], this.row[l], this.rank[l])) c = l + 1;
      if (!this.slotAfter(c, k, s, r, rk)) break;
      this.move(c, i);
      i = c;
    }
    this.put(i, k, s, r, rk);
  }

  /**
   * The key a row must reach to be worth offering: the floor (-Infinity unless raised) while
   * the heap is not full (every row reaching it enters), +Infinity when it keeps nothing, else
   * the worst key kept (a row with that key enters only if its building_id comes first).
   */
  threshold(): number {
    if (this.capacity === 0) return Infinity;
    return this.size < this.capacity ? this.floor : this.key[0];
  }

  /**
   * Rows of snapshot s whose key equals the threshold must rank below this to enter: the worst
   * kept row's rank when it is of snapshot s and the heap is full; else no bound (2^32).
   */
  rankBound(s: number): number {
    return this.size === this.capacity && this.capacity > 0 && this.snap[0] === s ? this.rank[0] : 0x100000000;
  }

  /** Rows kept whose key is above x. */
  countAbove(x: number): number {
    let n = 0;
    for (let j = 0; j < this.size; j++) if (this.key[j] > x) n++;
    return n;
  }

  capacityOf(): number {
    return this.capacity;
  }

  /** Offers one row (key, snapshot s, row, its id rank); true when the heap changed. */
  consider(k: number, s: number, r: number, rk: number): boolean {
    if (this.size < this.capacity) {
      if (k < this.floor) return false;
      this.siftUp(this.size++, k, s, r, rk);
      return true;
    }
    if (this.capacity === 0) return false;
    const worst = this.key[0];
    if (k < worst) return false;
    if (k === worst) {
      const before = this.snap[0] === s ? rk < this.rank[0] : compareIds(this.ids[s], r, this.ids[this.snap[0]], this.row[0]) < 0;
      if (!before) return false;
    }
    this.siftDown(0, k, s, r, rk);
    return true;
  }

  /**
   * The rows at ranks [offset, offset + limit) of everything offered (best first), as
   * [snapshot index, row] pairs. Empties the heap.
   */
  page(offset: number): { snap: number; row: number }[] {
    const count = Math.max(0, this.size - offset);
    const out = new Array<{ snap: number; row: number }>(count);
    for (let k = count - 1; k >= 0; k--) {
      out[k] = { snap: this.snap[0], row: this.row[0] };
      const last = --this.size;
      if (last > 0) this.siftDown(0, this.key[last], this.snap[last], this.row[last], this.rank[last]);
    }
    return out;
  }
}
