/**
 * The best `capacity` rows of a ranked query, over typed arrays: in a bounded binary heap whose
 * root is the worst row kept, or for a deep page in a buffer cut down to the best rows each
 * time it fills (BUFFER_MIN_CAPACITY). Order (spec 4.1 rule 8 and DESIGN "Queries"): key descending
 * (unknown = -Infinity, last), ties by building_id ascending: by the precomputed rank within one
 * snapshot, by the id words across snapshots.
 *
 * One heap is reused by every query of the thread (queries run to completion synchronously).
 */
import { compareIds } from '../catalog/ids.ts';
import { NATIVE_MIN, native, type AppendArgs, type NativeKernels } from './native-kernels.ts';
import { MAX_WINDOW } from './types.ts';

/** A sort key whose rows the buffer can take through the addon: it calls the append of its kind, its own arguments then `buffer`. */
export interface ListedKey {
  appendListed(k: NativeKernels, buffer: AppendArgs): number;
}

/**
 * Above this capacity the rows are kept in a buffer instead of a heap: a row that passes the
 * cut is appended, and when the buffer holds 2 x capacity rows the best capacity are selected
 * (Hoare's selection) and the worst of them becomes the cut. A deep page (k in the thousands)
 * replaced a heap's root tens of thousands of times, each sifting ~13 levels: 78% of an
 * unfiltered deep page's time. Below it the heap's exact threshold prunes more (best-first
 * search reads it after every row).
 */
export const BUFFER_MIN_CAPACITY = 1000;

/** A rank bound that bounds nothing: ranks are below 2^32. */
export const NO_RANK_BOUND = 0x100000000;

export class TopK {
  private readonly key = new Float64Array(2 * MAX_WINDOW);
  private readonly row = new Uint32Array(2 * MAX_WINDOW);
  private readonly rank = new Uint32Array(2 * MAX_WINDOW);
  private readonly snap = new Uint16Array(2 * MAX_WINDOW);
  /** Buffer mode (capacity > BUFFER_MIN_CAPACITY): rows kept unordered. */
  private buffered = false;
  /** Once a selection has run: the worst row it kept is the cut*; rows not ranked before it are refused. */
  private cut = false;
  private cutKey = 0;
  private cutSnap = 0;
  private cutRow = 0;
  private cutRank = 0;
  /** The cut is the row cutAt made it, which no selection has dropped since. */
  private cutIsPlace = false;
  /**
   * A deep page's top (topAt): rows that rank before it are counted in `above`, not kept. The
   * page's rows are then the kept rows' places less `above`, if no more than its offset rank
   * before the top (guess.ts checks).
   */
  private top = false;
  private topKey = 0;
  private topSnap = 0;
  private topRow = 0;
  private topRank = 0;
  /** Rows counted before the top. */
  above = 0;
  private ids: Uint32Array[] = [];
  private capacity = 0;
  /** Buffer mode: the snapshot of every row kept, -1 before the first, -2 once two snapshots' rows are kept. */
  private oneSnap = -1;
  /** No row under this enters (floor.ts proves, or guess.ts checks after, that `capacity` rows reach it). */
  private floor = -Infinity;
  /** The rows the addon's appends hold, in and out; then the rows they counted before the top. */
  private readonly held = new Uint32Array(2);
  /** The appends' arguments after their key's own, reused (offerListed sets them per call; spread, they allocate nothing). */
  private readonly appendArgs: AppendArgs = [
    new Uint32Array(0),
    0,
    0,
    new Uint32Array(0),
    0,
    this.key,
    this.row,
    this.rank,
    this.snap,
    this.held,
    0,
    -Infinity,
    null,
    0,
    null,
    0,
  ];
  size = 0;

  /** Empties the heap for the same query again. */
  clear(): void {
    this.reset(this.capacity, this.ids);
  }

  /** Empties the heap for a query keeping `capacity` rows; ids[s] are the id words of snapshot s. */
  reset(capacity: number, ids: Uint32Array[]): void {
    if (capacity > MAX_WINDOW) throw new RangeError(`TopK keeps at most ${MAX_WINDOW} rows, asked for ${capacity}.`);
    this.capacity = capacity;
    this.ids = ids;
    this.size = 0;
    this.floor = -Infinity;
    this.buffered = capacity > BUFFER_MIN_CAPACITY;
    this.cut = false;
    this.cutIsPlace = false;
    this.top = false;
    this.above = 0;
    this.oneSnap = -1;
  }

  /**
   * Keeps out every row whose key is below `floor`: a floor proven (floor.ts) or checked after
   * (guess.ts) to leave `capacity` rows. In heap mode, before the first offer; in buffer mode at
   * any time (rows kept before stay).
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
    if (this.buffered) return this.cut && this.cutKey >= this.floor ? this.cutKey : this.floor;
    return this.size < this.capacity ? this.floor : this.key[0];
  }

  /**
   * Rows of snapshot s whose key equals the threshold must rank below this to enter: the worst
   * kept row's rank when it is of snapshot s and the heap is full; else no bound (2^32).
   */
  rankBound(s: number): number {
    if (this.buffered) return this.cut && this.cutKey >= this.floor && this.cutSnap === s ? this.cutRank : NO_RANK_BOUND;
    return this.size === this.capacity && this.capacity > 0 && this.snap[0] === s ? this.rank[0] : NO_RANK_BOUND;
  }

  capacityOf(): number {
    return this.capacity;
  }

  /** Copies the keys of the rows kept into out; returns their count. */
  keysInto(out: Float64Array): number {
    out.set(this.key.subarray(0, this.size));
    return this.size;
  }

  /** Rows kept that rank before the row (key, snapshot s, row r, rank rk), which is kept or not. */
  countBefore(k: number, s: number, r: number, rk: number): number {
    // The guess's cut (cutAt) with no selection since: every row kept ranks before it but itself.
    if (this.cutIsPlace && this.cutSnap === s && this.cutRow === r) return this.above + this.size - 1;
    // Rows counted before the top rank before every row kept.
    let n = this.above;
    for (let j = 0; j < this.size; j++) if (!(this.snap[j] === s && this.row[j] === r) && !this.slotAfter(j, k, s, r, rk)) n++;
    return n;
  }

  /**
   * Buffer mode: keeps `capacity` rows from now on (at most the capacity it was reset to). The
   * rows kept stay; the cut, which a smaller capacity may have set too high, is dropped.
   */
  resize(capacity: number): void {
    if (!this.buffered) throw new Error('resize is for buffer mode');
    if (capacity < 1 || capacity > MAX_WINDOW) throw new RangeError(`TopK keeps 1 to ${MAX_WINDOW} rows, asked for ${capacity}.`);
    this.capacity = capacity;
    this.cut = false;
    this.cutIsPlace = false;
    if (this.size >= 2 * capacity) this.keepBest();
  }

  /** Buffer mode: puts the row of place j (0 = best) among those kept at slot j, for keyAt, snapAt, rowAt and rankAt. */
  selectPlace(j: number): void {
    if (!this.buffered) throw new Error('selectPlace is for buffer mode');
    if (j < 0 || j >= this.size) throw new RangeError(`no place ${j} among ${this.size} rows kept`);
    this.select(0, this.size - 1, j);
  }

  /**
   * Buffer mode: the row at slot j (selectPlace) becomes the cut, as if a selection had kept
   * slots [0, j]: the rows after it are dropped and none ranked after it enters from now on. A
   * guess (guess.ts), checked by the caller.
   */
  cutAt(j: number): void {
    if (!this.buffered) throw new Error('cutAt is for buffer mode');
    if (j < 0 || j >= this.size) throw new RangeError(`no place ${j} among ${this.size} rows kept`);
    this.size = j + 1;
    this.setCut(this.key[j], this.snap[j], this.row[j], this.rank[j], true);
  }

  /**
   * Buffer mode, on an empty buffer: the row (key k, snapshot s, row r, rank rk), kept or not,
   * becomes the cut, as cutAt makes a kept row. A guess known to leave `capacity` rows before it
   * (guess.ts).
   */
  cutAtRow(k: number, s: number, r: number, rk: number): void {
    if (!this.buffered || this.size > 0) throw new Error('cutAtRow is for an empty buffer');
    this.setCut(k, s, r, rk, false);
  }

  /** The row (k, s, r, rk) becomes the cut; `isPlace`: cutAt's, a kept row no selection has dropped. */
  private setCut(k: number, s: number, r: number, rk: number, isPlace: boolean): void {
    this.cut = true;
    this.cutIsPlace = isPlace;
    this.cutKey = k;
    this.cutSnap = s;
    this.cutRow = r;
    this.cutRank = rk;
  }

  /**
   * Buffer mode, after cutAt: the row at slot j (selectPlace, among the rows before the cut)
   * becomes the top: the rows kept before it are counted in `above` and dropped, and so is every
   * row offered from now on that ranks before it. A guess (guess.ts), checked by the caller.
   */
  topAt(j: number): void {
    if (!this.buffered || !this.cut) throw new Error('topAt is for buffer mode, after cutAt');
    if (j < 0 || j >= this.size) throw new RangeError(`no place ${j} among ${this.size} rows kept`);
    this.top = true;
    this.topKey = this.key[j];
    this.topSnap = this.snap[j];
    this.topRow = this.row[j];
    this.topRank = this.rank[j];
    this.above += j;
    for (let i = j; i < this.size; i++) this.move(i, i - j);
    this.size -= j;
  }

  keyAt(j: number): number {
    return this.key[j];
  }

  snapAt(j: number): number {
    return this.snap[j];
  }

  rowAt(j: number): number {
    return this.row[j];
  }

  rankAt(j: number): number {
    return this.rank[j];
  }

  /**
   * Offers one row (key, snapshot s, row, its id rank); true when the threshold or the rank
   * bound may have changed (the heap filled, its root was replaced, the buffer selected), which
   * is all a caller that keeps them in locals must know.
   */
  consider(k: number, s: number, r: number, rk: number): boolean {
    if (this.buffered) return this.append(k, s, r, rk);
    if (this.size < this.capacity) {
      if (k < this.floor) return false;
      this.siftUp(this.size++, k, s, r, rk);
      return this.size === this.capacity;
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
   * Buffer mode, through the addon: offers the rows sel[0..n) of snapshot s (KeySource.offer's
   * rows) as consider() would one at a time, in compiled loops; a deep page offers tens of
   * thousands. False, having offered none, where it cannot: without the addon, for few rows,
   * or once rows of another snapshot are held (their ties compare ids).
   */
  offerListed(key: ListedKey, s: number, rank: Uint32Array, sel: Uint32Array, n: number): boolean {
    if (native === null || !this.takesListed(s, n)) return false;
    // AppendArgs: sel, i, n, rank, s, keys, rows, ranks, snaps, size, limit, floor, cutKey, cutRank, topKey, topRank.
    const a = this.appendArgs;
    const held = this.held;
    const limit = 2 * this.capacity;
    a[0] = sel;
    a[2] = n;
    a[3] = rank;
    a[4] = s;
    a[10] = limit;
    a[11] = this.floor;
    a[14] = this.top ? this.topKey : null;
    a[15] = this.topRank;
    for (let i = 0; i < n;) {
      held[0] = this.size;
      held[1] = 0;
      a[1] = i;
      a[12] = this.cut ? this.cutKey : null;
      a[13] = this.cutRank;
      i = key.appendListed(native, a);
      if (held[0] > this.size) this.oneSnap = s;
      this.size = held[0];
      this.above += held[1];
      if (this.size >= limit) this.keepBest();
    }
    return true;
  }

  /** Whether offerListed takes n rows of snapshot s through the addon. */
  takesListed(s: number, n: number): boolean {
    if (!this.buffered || native === null || n < NATIVE_MIN || this.capacity === 0) return false;
    return (this.oneSnap === -1 || this.oneSnap === s) && (!this.cut || this.cutSnap === s) && (!this.top || this.topSnap === s);
  }

  /** Buffer mode: keeps the row if it ranks before the cut; selects when the buffer is full (true: the cut moved). */
  private append(k: number, s: number, r: number, rk: number): boolean {
    if (this.capacity === 0 || k < this.floor) return false;
    if (this.cut && !this.before(k, s, r, rk, this.cutKey, this.cutSnap, this.cutRow, this.cutRank)) return false;
    if (this.top && this.before(k, s, r, rk, this.topKey, this.topSnap, this.topRow, this.topRank)) {
      this.above++;
      return false;
    }
    if (s !== this.oneSnap) this.oneSnap = this.oneSnap === -1 ? s : -2;
    this.put(this.size++, k, s, r, rk);
    if (this.size < 2 * this.capacity) return false;
    this.keepBest();
    return true;
  }

  /** Does the row (k, s, r, rk) rank before the one (pk, ps, pr, prk) (the cut, the top)? */
  private before(k: number, s: number, r: number, rk: number, pk: number, ps: number, pr: number, prk: number): boolean {
    if (k !== pk) return k > pk;
    return ps === s ? rk < prk : compareIds(this.ids[s], r, this.ids[ps], pr) < 0;
  }

  /** Buffer mode: the best `capacity` rows, less those counted before the top, to the first slots; the worst of them the cut. */
  private keepBest(): void {
    // The rows counted before the top are among the best `capacity`: the buffer keeps the rest.
    const keep = Math.max(1, this.capacity - this.above);
    if (this.size <= keep) return;
    this.select(0, this.size - 1, keep - 1, true);
    this.size = keep;
    const c = keep - 1;
    this.setCut(this.key[c], this.snap[c], this.row[c], this.rank[c], false);
  }

  /** Rows of one snapshot are selected by the addon's compiled loop where it loads. */
  private selectsNatively(lo: number, hi: number): boolean {
    return native !== null && this.oneSnap >= 0 && hi - lo >= NATIVE_MIN;
  }

  /**
   * Reorders slots [lo, hi] so that slot t holds the row of that place, better rows before it,
   * worse after; with `drop`, the slots after t may be left as they were (they are dropped).
   * Keys, and ranks within one snapshot, are compared inline (a deep page's selections are a
   * fifth of its time); only rows of two snapshots with equal keys compare ids.
   */
  private select(lo: number, hi: number, t: number, drop = false): void {
    const { key, snap, row, rank } = this;
    if (this.selectsNatively(lo, hi)) {
      native!.select(key, rank, row, lo, hi, t, t, drop);
      return;
    }
    while (lo < hi) {
      const m = (lo + hi) >>> 1;
      const pk = key[m];
      const ps = snap[m];
      const pr = row[m];
      const prk = rank[m];
      let i = lo;
      let j = hi;
      while (i <= j) {
        while (key[i] > pk || (key[i] === pk && (snap[i] === ps ? rank[i] < prk : this.rowAfterSlot(i, pk, ps, pr, prk)))) i++;
        while (key[j] < pk || (key[j] === pk && (snap[j] === ps ? rank[j] > prk : this.slotAfter(j, pk, ps, pr, prk)))) j--;
        if (i <= j) {
          const k = key[i];
          key[i] = key[j];
          key[j] = k;
          const sn = snap[i];
          snap[i] = snap[j];
          snap[j] = sn;
          const r = row[i];
          row[i] = row[j];
          row[j] = r;
          const rk = rank[i];
          rank[i] = rank[j];
          rank[j] = rk;
          i++;
          j--;
        }
      }
      if (t <= j) hi = j;
      else if (t >= i) lo = i;
      else return;
    }
  }

  /**
   * Buffer mode page: the rows of places [offset, capacity), selected, then only they sorted.
   * The addon does it in one call; else the place offset is selected first, then the last place
   * among the rows after it. The rows counted before the top hold the first places.
   */
  private bufferPage(offset: number): { snap: number; row: number }[] {
    if (this.above > offset) throw new Error(`${this.above} rows rank before the top, past the page's offset ${offset}`);
    const n = this.size;
    const end = Math.min(n, this.capacity - this.above);
    offset -= this.above;
    this.size = 0;
    if (offset >= end) return [];
    if (this.selectsNatively(0, n - 1)) {
      // The page's places in order in one call: the addon selects the last, then the first among the rows before it.
      native!.select(this.key, this.rank, this.row, 0, n - 1, end - 1, offset, true);
      const out = new Array<{ snap: number; row: number }>(end - offset);
      for (let i = offset; i < end; i++) out[i - offset] = { snap: this.snap[i], row: this.row[i] };
      return out;
    }
    if (offset > 0) this.select(0, n - 1, offset);
    if (n > end) this.select(offset, n - 1, end - 1);
    const order = Array.from({ length: end - offset }, (_, i) => offset + i);
    // Rows are distinct, so two slots never tie.
    order.sort((a, b) => (a === b ? 0 : this.slotAfter(a, this.key[b], this.snap[b], this.row[b], this.rank[b]) ? 1 : -1));
    return order.map((i) => ({ snap: this.snap[i], row: this.row[i] }));
  }

  /**
   * The rows at ranks [offset, offset + limit) of everything offered (best first), as
   * [snapshot index, row] pairs. Empties the heap.
   */
  page(offset: number): { snap: number; row: number }[] {
    if (this.buffered) return this.bufferPage(offset);
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
