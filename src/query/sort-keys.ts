/**
 * Sort keys (spec 4.1 rule 8, DESIGN "Queries"), fused with the heap: a key source reads each
 * row's key and compares it with the heap's threshold in one loop (for scaled integer columns,
 * in integer space; ties at the threshold by building_id rank), and only rows that can still
 * enter are offered. Unknown keys count as -Infinity (real keys are finite). Where the addon
 * loads (native-kernels.ts), its compiled loops list the candidates of a range.
 */
import { NULL_I32 } from '../catalog/arrow.ts';
import { NULL_I16, lowerCode } from '../catalog/numeric.ts';
import { LEAF_ROWS } from '../catalog/rowtree.ts';
import { NATIVE_MIN, native, type AppendArgs, type NativeKernels } from './native-kernels.ts';
import { NO_RANK_BOUND, type ListedKey, type TopK } from './topk.ts';

/** The sort key of a plan, over one snapshot. */
export interface KeySource {
  /** Offers rows sel[0..n) of snapshot s. */
  offer(heap: TopK, s: number, rank: Uint32Array, sel: Uint32Array, n: number): void;
  /**
   * Keeps the rows of sel[0..n) that could still enter the heap (as candidates' test), in order;
   * their count. Only the business keys have one: reading a row's businesses costs more than the
   * rest of an offer, while a column key's offer tests each row for about what this would.
   */
  refine?(sel: Uint32Array, n: number, thr: number, rank: Uint32Array, rankBound: number): number;
  /** Offers every row of [lo, hi) of snapshot s; `scratch` (the search state's) may be written; `maxima` as candidates'. */
  offerRange(heap: TopK, s: number, rank: Uint32Array, lo: number, hi: number, scratch: Uint32Array, maxima: LeafMaxima): void;
  /**
   * Writes into sel the rows of [lo, hi) that could still enter the heap: key above thr, or
   * equal to it with a rank below rankBound (ties at thr are otherwise kept and left to the heap).
   * Once the count no longer matters, filters run only on these. With `maxima`, the compiled
   * loop does not read the leaves bounded below thr (the same rows are listed).
   */
  candidates(lo: number, hi: number, sel: Uint32Array, thr: number, rank: Uint32Array, rankBound: number, maxima: LeafMaxima): number;
}

/**
 * Offers matches sel[0..n) of snapshot s that were not listed as candidates (KeySource.candidates):
 * those that cannot enter are dropped first where the key has a refine step, unless the heap's
 * compiled append takes them (TopK.offerListed), which tests each row as refine would. May
 * overwrite sel.
 */
export function offerMatches(key: KeySource, heap: TopK, s: number, rank: Uint32Array, sel: Uint32Array, n: number): void {
  if (key.refine !== undefined && !heap.takesListed(s, n)) n = key.refine(sel, n, heap.threshold(), rank, heap.rankBound(s));
  if (n > 0) key.offer(heap, s, rank, sel, n);
}

/**
 * The greatest key of each leaf of LEAF_ROWS rows, rounded up (the plan's `attained`), which the
 * walks pass: a leaf bounded below the heap's threshold has no row to list, and a deep page's
 * walk past the count reads only the keys of leaves above its cut. Null for the plain scan, which
 * reads no summary, and for the keys that have none.
 */
export type LeafMaxima = Float32Array | null;

/** A key whose candidates come from the compiled loop. */
interface PlainKey extends KeySource {
  /** Offers every row of [lo, hi), one at a time. */
  offerRows(heap: TopK, s: number, rank: Uint32Array, lo: number, hi: number): void;
}

/**
 * offerRange of every plain key. Without the addon, offerRows. With it, through the compiled
 * candidates: a chunk at a time, the rows that can still enter at the chunk's threshold are
 * listed in `scratch` and offered. The threshold only rises while rows are offered, so they are
 * a superset of the rows offerRows would let in, and offer() tests each against the threshold
 * of its turn.
 */
function offerCandidates(
  key: PlainKey,
  heap: TopK,
  s: number,
  rank: Uint32Array,
  lo: number,
  hi: number,
  scratch: Uint32Array,
  maxima: LeafMaxima,
): void {
  if (native === null) {
    key.offerRows(heap, s, rank, lo, hi);
    return;
  }
  for (let a = lo; a < hi; a += scratch.length) {
    const b = Math.min(hi, a + scratch.length);
    const thr = heap.threshold();
    const rankBound = heap.rankBound(s);
    // While every row can still enter (the heap not yet full), every row is offered.
    if ((thr === -Infinity && rankBound >= NO_RANK_BOUND) || b - a < NATIVE_MIN) key.offerRows(heap, s, rank, a, b);
    else {
      const n = key.candidates(a, b, scratch, thr, rank, rankBound, maxima);
      if (n > 0) key.offer(heap, s, rank, scratch, n);
    }
  }
}

export class KeyF64 implements PlainKey, ListedKey {
  constructor(readonly col: Float64Array) {}

  candidates(lo: number, hi: number, sel: Uint32Array, thr: number, rank: Uint32Array, rankBound: number, maxima: LeafMaxima): number {
    const col = this.col;
    if (native !== null && hi - lo >= NATIVE_MIN)
      return native.candidates(col, lo, hi, sel, thr, NaN, rank, rankBound, maxima, thr, LEAF_ROWS);
    let k = 0;
    for (let r = lo; r < hi; r++) {
      const v = col[r];
      if (v > thr || ((v === thr || (v !== v && thr === -Infinity)) && rank[r] < rankBound)) sel[k++] = r;
    }
    return k;
  }

  /** Keeps the rows of sel[0..n) at or above thr by the compiled refine: offer() tests the ties' ranks. */
  refine(sel: Uint32Array, n: number, thr: number): number {
    if (native === null || n < NATIVE_MIN || thr === -Infinity) return n;
    return native.refine(this.col, thr, Infinity, sel, n);
  }

  offer(heap: TopK, s: number, rank: Uint32Array, sel: Uint32Array, n: number): void {
    if (heap.offerListed(this, s, rank, sel, n)) return;
    const col = this.col;
    let thr = heap.threshold();
    let rb = heap.rankBound(s);
    for (let i = 0; i < n; i++) {
      const r = sel[i];
      const v = col[r];
      if (v < thr) continue;
      const k = v === v ? v : -Infinity;
      if (k < thr || (k === thr && rank[r] >= rb)) continue;
      if (heap.consider(k, s, r, rank[r])) {
        thr = heap.threshold();
        rb = heap.rankBound(s);
      }
    }
  }

  appendListed(k: NativeKernels, buffer: AppendArgs): number {
    return k.append(this.col, 1, ...buffer);
  }

  offerRange(heap: TopK, s: number, rank: Uint32Array, lo: number, hi: number, scratch: Uint32Array, maxima: LeafMaxima): void {
    offerCandidates(this, heap, s, rank, lo, hi, scratch, maxima);
  }

  offerRows(heap: TopK, s: number, rank: Uint32Array, lo: number, hi: number): void {
    const col = this.col;
    let thr = heap.threshold();
    let rb = heap.rankBound(s);
    for (let r = lo; r < hi; r++) {
      const v = col[r];
      if (v < thr) continue;
      const k = v === v ? v : -Infinity;
      if (k < thr || (k === thr && rank[r] >= rb)) continue;
      if (heap.consider(k, s, r, rank[r])) {
        thr = heap.threshold();
        rb = heap.rankBound(s);
      }
    }
  }
}

/**
 * The heap's threshold in the integer space of a scaled column: rows below `min` cannot enter;
 * a row equal to `tie` (the threshold itself, when a stored integer has that value; for an
 * unknown threshold, the null sentinel) enters only with a rank below `rank`.
 */
class IntBounds {
  min = -Infinity;
  tie = NaN;
  rank = 0x100000000;

  update(heap: TopK, s: number, scale: number, nullValue: number): void {
    const thr = heap.threshold();
    this.rank = heap.rankBound(s);
    if (thr === -Infinity) {
      this.min = -Infinity;
      this.tie = nullValue;
    } else if (thr === Infinity) {
      this.min = Infinity;
      this.tie = NaN;
    } else {
      this.min = lowerCode(thr, scale);
      this.tie = this.min / scale === thr ? this.min : NaN;
    }
  }
}

export class KeyI32 implements PlainKey, ListedKey {
  private readonly bounds = new IntBounds();
  constructor(
    readonly col: Int32Array,
    readonly scale: number,
  ) {}

  candidates(lo: number, hi: number, sel: Uint32Array, thr: number, rank: Uint32Array, rankBound: number, maxima: LeafMaxima): number {
    const col = this.col;
    let k = 0;
    if (thr === -Infinity) {
      for (let r = lo; r < hi; r++) if (col[r] !== NULL_I32 || rank[r] < rankBound) sel[k++] = r;
    } else {
      const min = lowerCode(thr, this.scale);
      const tie = min / this.scale === thr ? min : NaN;
      if (native !== null && hi - lo >= NATIVE_MIN)
        return native.candidates(col, lo, hi, sel, min, tie, rank, rankBound, maxima, thr, LEAF_ROWS);
      for (let r = lo; r < hi; r++) {
        const v = col[r];
        if (v > min || (v === min && (v !== tie || rank[r] < rankBound))) sel[k++] = r;
      }
    }
    return k;
  }

  /** Keeps the rows of sel[0..n) at or above thr by the compiled refine: offer() tests the ties' ranks. */
  refine(sel: Uint32Array, n: number, thr: number): number {
    if (native === null || n < NATIVE_MIN || thr === -Infinity) return n;
    return native.refine(this.col, lowerCode(thr, this.scale), Infinity, sel, n);
  }

  offer(heap: TopK, s: number, rank: Uint32Array, sel: Uint32Array, n: number): void {
    if (heap.offerListed(this, s, rank, sel, n)) return;
    const { col, scale } = this;
    const t = this.bounds;
    t.update(heap, s, scale, NULL_I32);
    for (let i = 0; i < n; i++) {
      const r = sel[i];
      const v = col[r];
      if (v < t.min || (v === t.tie && rank[r] >= t.rank)) continue;
      if (heap.consider(v === NULL_I32 ? -Infinity : v / scale, s, r, rank[r])) t.update(heap, s, scale, NULL_I32);
    }
  }

  appendListed(k: NativeKernels, buffer: AppendArgs): number {
    return k.append(this.col, this.scale, ...buffer);
  }

  offerRange(heap: TopK, s: number, rank: Uint32Array, lo: number, hi: number, scratch: Uint32Array, maxima: LeafMaxima): void {
    offerCandidates(this, heap, s, rank, lo, hi, scratch, maxima);
  }

  offerRows(heap: TopK, s: number, rank: Uint32Array, lo: number, hi: number): void {
    const { col, scale } = this;
    const t = this.bounds;
    t.update(heap, s, scale, NULL_I32);
    for (let r = lo; r < hi; r++) {
      const v = col[r];
      if (v < t.min || (v === t.tie && rank[r] >= t.rank)) continue;
      if (heap.consider(v === NULL_I32 ? -Infinity : v / scale, s, r, rank[r])) t.update(heap, s, scale, NULL_I32);
    }
  }
}

export class KeyI16 implements PlainKey, ListedKey {
  private readonly bounds = new IntBounds();
  constructor(
    readonly col: Int16Array,
    readonly scale: number,
  ) {}

  candidates(lo: number, hi: number, sel: Uint32Array, thr: number, rank: Uint32Array, rankBound: number, maxima: LeafMaxima): number {
    const col = this.col;
    let k = 0;
    if (thr === -Infinity) {
      for (let r = lo; r < hi; r++) if (col[r] !== NULL_I16 || rank[r] < rankBound) sel[k++] = r;
    } else {
      const min = lowerCode(thr, this.scale);
      const tie = min / this.scale === thr ? min : NaN;
      if (native !== null && hi - lo >= NATIVE_MIN)
        return native.candidates(col, lo, hi, sel, min, tie, rank, rankBound, maxima, thr, LEAF_ROWS);
      for (let r = lo; r < hi; r++) {
        const v = col[r];
        if (v > min || (v === min && (v !== tie || rank[r] < rankBound))) sel[k++] = r;
      }
    }
    return k;
  }

  /** Keeps the rows of sel[0..n) at or above thr by the compiled refine: offer() tests the ties' ranks. */
  refine(sel: Uint32Array, n: number, thr: number): number {
    if (native === null || n < NATIVE_MIN || thr === -Infinity) return n;
    return native.refine(this.col, lowerCode(thr, this.scale), Infinity, sel, n);
  }

  offer(heap: TopK, s: number, rank: Uint32Array, sel: Uint32Array, n: number): void {
    if (heap.offerListed(this, s, rank, sel, n)) return;
    const { col, scale } = this;
    const t = this.bounds;
    t.update(heap, s, scale, NULL_I16);
    for (let i = 0; i < n; i++) {
      const r = sel[i];
      const v = col[r];
      if (v < t.min || (v === t.tie && rank[r] >= t.rank)) continue;
      if (heap.consider(v === NULL_I16 ? -Infinity : v / scale, s, r, rank[r])) t.update(heap, s, scale, NULL_I16);
    }
  }

  appendListed(k: NativeKernels, buffer: AppendArgs): number {
    return k.append(this.col, this.scale, ...buffer);
  }

  offerRange(heap: TopK, s: number, rank: Uint32Array, lo: number, hi: number, scratch: Uint32Array, maxima: LeafMaxima): void {
    offerCandidates(this, heap, s, rank, lo, hi, scratch, maxima);
  }

  offerRows(heap: TopK, s: number, rank: Uint32Array, lo: number, hi: number): void {
    const { col, scale } = this;
    const t = this.bounds;
    t.update(heap, s, scale, NULL_I16);
    for (let r = lo; r < hi; r++) {
      const v = col[r];
      if (v < t.min || (v === t.tie && rank[r] >= t.rank)) continue;
      if (heap.consider(v === NULL_I16 ? -Infinity : v / scale, s, r, rank[r])) t.update(heap, s, scale, NULL_I16);
    }
  }
}

/** Per employees column, the rows whose key is known (BusinessKey.knownRows). */
const knownEmployees = new WeakMap<Int32Array, Uint8Array>();
/**
 * Per turnover column, the rows whose key is known in each currency code, least recently used
 * first: at most KNOWN_CURRENCIES of them, so that pages in many currencies keep a bitset (an
 * eighth of a byte a row) for the latest few only.
 */
const knownTurnovers = new WeakMap<Float64Array, Map<number, Uint8Array>>();
const KNOWN_CURRENCIES = 8;

/**
 * Keys computed from a row's businesses; rows without one are unknown. Once the heap's threshold
 * is a known key, only rows with a business can enter, and the loops walk the businesses of the
 * range (through `rowOf`) instead of its rows.
 */
abstract class BusinessKey implements PlainKey, ListedKey {
  constructor(
    readonly offsets: Uint32Array,
    readonly rowOf: Uint32Array,
  ) {}

  /** The key of the businesses [j, e) of a row (-Infinity: unknown). */
  abstract keyOf(j: number, e: number): number;

  /** Keeps the rows of sel[0..n) that can enter at thr, by the addon's compiled loop (NativeKernels.employeesRefine). */
  abstract compiledRefine(k: NativeKernels, sel: Uint32Array, n: number, thr: number, rank: Uint32Array, rankBound: number): number;

  /** The buffer's append of this key by the addon (TopK.offerListed). */
  abstract appendListed(k: NativeKernels, buffer: AppendArgs): number;

  /** candidates() by the addon's compiled loop. */
  abstract compiledCandidates(
    k: NativeKernels,
    lo: number,
    hi: number,
    sel: Uint32Array,
    thr: number,
    rank: Uint32Array,
    rankBound: number,
  ): number;

  /** knownRows, once this key has asked its columns' cache for them. */
  private known: Uint8Array | null = null;

  /** The snapshot's bits of this key's known rows, from its columns' cache (built there with buildKnown when missing). */
  protected abstract cachedKnown(): Uint8Array;

  /**
   * A bit per row, set where the row's key is known: while the threshold is an unknown key,
   * every row of a range can enter by its rank, and the compiled loop then tests 8 rows' bits and
   * ranks at once instead of reading each business's row. Built once per snapshot's columns (and
   * currency), at the first such page: 5,000,000 rows and 624,490 businesses in about 10 ms.
   */
  knownRows(): Uint8Array {
    return (this.known ??= this.cachedKnown());
  }

  protected buildKnown(): Uint8Array {
    const { offsets, rowOf } = this;
    const rows = offsets.length - 1;
    const known = new Uint8Array((rows + 7) >>> 3);
    // A row's key is known when one of its businesses' own is.
    for (let j = 0, e = offsets[rows]; j < e; j++) {
      if (this.keyOf(j, j + 1) === -Infinity) continue;
      const r = rowOf[j];
      known[r >>> 3] |= 1 << (r & 7);
    }
    return known;
  }

  candidates(lo: number, hi: number, sel: Uint32Array, thr: number, rank: Uint32Array, rankBound: number): number {
    const { offsets, rowOf } = this;
    if (native !== null && hi - lo >= NATIVE_MIN) {
      if (thr === -Infinity) return native.knownCandidates(this.knownRows(), lo, hi, sel, rank, rankBound);
      return this.compiledCandidates(native, lo, hi, sel, thr, rank, rankBound);
    }
    let k = 0;
    if (thr > -Infinity) {
      let last = -1;
      for (let j = offsets[lo], e = offsets[hi]; j < e; j++) {
        const r = rowOf[j];
        if (r === last) continue;
        last = r;
        const key = this.keyOf(offsets[r], offsets[r + 1]);
        if (key > thr || (key === thr && rank[r] < rankBound)) sel[k++] = r;
      }
      return k;
    }
    for (let r = lo; r < hi; r++) {
      if (this.keyOf(offsets[r], offsets[r + 1]) > -Infinity || rank[r] < rankBound) sel[k++] = r;
    }
    return k;
  }

  offer(heap: TopK, s: number, rank: Uint32Array, sel: Uint32Array, n: number): void {
    if (heap.offerListed(this, s, rank, sel, n)) return;
    const offsets = this.offsets;
    let thr = heap.threshold();
    let rb = heap.rankBound(s);
    for (let i = 0; i < n; i++) {
      const r = sel[i];
      const j = offsets[r];
      const e = offsets[r + 1];
      if (j === e && thr > -Infinity) continue;
      const k = this.keyOf(j, e);
      if (k < thr || (k === thr && rank[r] >= rb)) continue;
      if (heap.consider(k, s, r, rank[r])) {
        thr = heap.threshold();
        rb = heap.rankBound(s);
      }
    }
  }

  offerRange(heap: TopK, s: number, rank: Uint32Array, lo: number, hi: number, scratch: Uint32Array, maxima: LeafMaxima): void {
    offerCandidates(this, heap, s, rank, lo, hi, scratch, maxima);
  }

  /** Most matches cannot enter (no business, or a key below the cut): the compiled loop drops them at once. */
  refine(sel: Uint32Array, n: number, thr: number, rank: Uint32Array, rankBound: number): number {
    if (native === null || n < NATIVE_MIN) return n;
    return this.compiledRefine(native, sel, n, thr, rank, rankBound);
  }

  offerRows(heap: TopK, s: number, rank: Uint32Array, lo: number, hi: number): void {
    const { offsets, rowOf } = this;
    let thr = heap.threshold();
    let rb = heap.rankBound(s);
    let r = lo;
    // Every row while unknown keys can still enter.
    for (; r < hi && thr === -Infinity; r++) {
      const k = this.keyOf(offsets[r], offsets[r + 1]);
      if (k === -Infinity && rank[r] >= rb) continue;
      if (heap.consider(k, s, r, rank[r])) {
        thr = heap.threshold();
        rb = heap.rankBound(s);
      }
    }
    let last = -1;
    for (let j = offsets[r], e = offsets[hi]; j < e; j++) {
      const row = rowOf[j];
      if (row === last) continue;
      last = row;
      const k = this.keyOf(offsets[row], offsets[row + 1]);
      if (k < thr || (k === thr && rank[row] >= rb)) continue;
      if (heap.consider(k, s, row, rank[row])) {
        thr = heap.threshold();
        rb = heap.rankBound(s);
      }
    }
  }
}

/** Largest band start among the row's businesses with a stated size. */
export class KeyEmployees extends BusinessKey {
  constructor(
    offsets: Uint32Array,
    rowOf: Uint32Array,
    readonly employeesMin: Int32Array,
  ) {
    super(offsets, rowOf);
  }

  override compiledRefine(k: NativeKernels, sel: Uint32Array, n: number, thr: number, rank: Uint32Array, rankBound: number): number {
    return k.employeesRefine(this.offsets, this.employeesMin, sel, n, thr, rank, rankBound);
  }

  override appendListed(k: NativeKernels, buffer: AppendArgs): number {
    return k.appendEmployees(this.offsets, this.employeesMin, ...buffer);
  }

  override compiledCandidates(
    k: NativeKernels,
    lo: number,
    hi: number,
    sel: Uint32Array,
    thr: number,
    rank: Uint32Array,
    rankBound: number,
  ): number {
    return k.employeesCandidates(this.offsets, this.rowOf, this.employeesMin, lo, hi, sel, thr, rank, rankBound);
  }

  protected override cachedKnown(): Uint8Array {
    let known = knownEmployees.get(this.employeesMin);
    if (known === undefined) knownEmployees.set(this.employeesMin, (known = this.buildKnown()));
    return known;
  }

  override keyOf(j: number, e: number): number {
    const employeesMin = this.employeesMin;
    let best = -Infinity;
    for (; j < e; j++) {
      const v = employeesMin[j];
      if (v !== NULL_I32 && v > best) best = v;
    }
    return best;
  }
}

/** Largest turnover among the row's businesses in the currency (any year, active or not). */
export class KeyTurnover extends BusinessKey {
  constructor(
    offsets: Uint32Array,
    rowOf: Uint32Array,
    readonly currency: Uint16Array,
    readonly turnover: Float64Array,
    readonly code: number,
  ) {
    super(offsets, rowOf);
  }

  override compiledRefine(k: NativeKernels, sel: Uint32Array, n: number, thr: number, rank: Uint32Array, rankBound: number): number {
    return k.turnoverRefine(this.offsets, this.currency, this.turnover, this.code, sel, n, thr, rank, rankBound);
  }

  override appendListed(k: NativeKernels, buffer: AppendArgs): number {
    return k.appendTurnover(this.offsets, this.currency, this.turnover, this.code, ...buffer);
  }

  override compiledCandidates(
    k: NativeKernels,
    lo: number,
    hi: number,
    sel: Uint32Array,
    thr: number,
    rank: Uint32Array,
    rankBound: number,
  ): number {
    return k.turnoverCandidates(this.offsets, this.rowOf, this.currency, this.turnover, this.code, lo, hi, sel, thr, rank, rankBound);
  }

  protected override cachedKnown(): Uint8Array {
    let byCode = knownTurnovers.get(this.turnover);
    if (byCode === undefined) knownTurnovers.set(this.turnover, (byCode = new Map()));
    let known = byCode.get(this.code);
    // The latest used go last: the first is the one used least recently.
    if (known !== undefined) byCode.delete(this.code);
    else {
      if (byCode.size >= KNOWN_CURRENCIES) byCode.delete(byCode.keys().next().value!);
      known = this.buildKnown();
    }
    byCode.set(this.code, known);
    return known;
  }

  override keyOf(j: number, e: number): number {
    const { currency, turnover, code } = this;
    let best = -Infinity;
    for (; j < e; j++) {
      const t = turnover[j];
      if (currency[j] === code && t > best) best = t;
    }
    return best;
  }
}

/** Every key unknown (a currency no business of the snapshot states): rows compete by building_id alone. */
export class KeyUnknown implements KeySource {
  candidates(lo: number, hi: number, sel: Uint32Array, thr: number, rank: Uint32Array, rankBound: number): number {
    if (thr > -Infinity) return 0;
    let k = 0;
    for (let r = lo; r < hi; r++) if (rank[r] < rankBound) sel[k++] = r;
    return k;
  }

  offer(heap: TopK, s: number, rank: Uint32Array, sel: Uint32Array, n: number): void {
    // A known key kept means no unknown can enter; unknowns never raise the threshold.
    if (heap.threshold() > -Infinity) return;
    for (let i = 0; i < n; i++) heap.consider(-Infinity, s, sel[i], rank[sel[i]]);
  }

  offerRange(heap: TopK, s: number, rank: Uint32Array, lo: number, hi: number): void {
    if (heap.threshold() > -Infinity) return;
    for (let r = lo; r < hi; r++) heap.consider(-Infinity, s, r, rank[r]);
  }
}
