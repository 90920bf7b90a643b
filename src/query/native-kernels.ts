/**
 * The scan's loops compiled, from the addon in `native/` (built by `npm install`, `kernels.cc`):
 * the same branch-free loops as kernels.ts and sort-keys.ts, which call these where the addon
 * loads and keep their own loops where it does not (or with EDIFICE_KERNELS=js).
 *
 * Why: V8 keeps a bounds check and a conversion on every typed-array access of these loops.
 * Compiled, a code filter over the 630,000 rows of a 1° box takes 0.24 ms instead of 1.15, a
 * Float64 range 0.43 instead of 0.78; a call costs about 20 ns, so selections shorter than
 * NATIVE_MIN rows stay in JavaScript.
 */
import { loadAddon } from '../native-addon.ts';
import type { CodeArray } from '../catalog/shared.ts';

export type NumberArray = Float64Array | Int32Array | Int16Array;

export interface NativeKernels {
  /** Rows of [a, b) with lo <= col[r] <= hi (NaN fails), written to sel from sel[at] on; at + their count. */
  range(col: NumberArray, lo: number, hi: number, a: number, b: number, sel: Uint32Array, at: number): number;
  /** Keeps the rows of sel[0..n) with lo <= col[r] <= hi, in order; their count. */
  refine(col: NumberArray, lo: number, hi: number, sel: Uint32Array, n: number): number;
  /** Rows of [a, b) whose code's table entry is 1. */
  codesRange(col: CodeArray, table: Uint8Array, a: number, b: number, sel: Uint32Array, at: number): number;
  codesRefine(col: CodeArray, table: Uint8Array, sel: Uint32Array, n: number): number;
  /** Rows of [a, b) with (flags[r] & mask) === want. */
  flagsRange(flags: Uint32Array, mask: number, want: number, a: number, b: number, sel: Uint32Array, at: number): number;
  flagsRefine(flags: Uint32Array, mask: number, want: number, sel: Uint32Array, n: number): number;
  /** Rows of [a, b) whose point lies in the box, edges included, from sel[0] on. */
  bboxRange(
    lon: Float64Array,
    lat: Float64Array,
    minLon: number,
    minLat: number,
    maxLon: number,
    maxLat: number,
    a: number,
    b: number,
    sel: Uint32Array,
  ): number;
  bboxRefine(
    lon: Float64Array,
    lat: Float64Array,
    minLon: number,
    minLat: number,
    maxLon: number,
    maxLat: number,
    sel: Uint32Array,
    n: number,
  ): number;
  /**
   * Rows of [lo, hi) whose key can still enter a heap (KeySource.candidates): for a Float64Array
   * `bound` is the threshold; for an integer column, the least stored value that can enter, and a
   * value equal to it enters only with rank < rankBound when it equals `tie` too (NaN: never).
   * With `maxima` (per leaf of `leafRows` rows, the greatest key rounded up), the leaves bounded
   * below `thr` (the threshold as a key) are not read: the rows listed are the same.
   */
  candidates(
    col: NumberArray,
    lo: number,
    hi: number,
    sel: Uint32Array,
    bound: number,
    tie: number,
    rank: Uint32Array,
    rankBound: number,
    maxima?: Float32Array | null,
    thr?: number,
    leafRows?: number,
  ): number;
  /** candidates() of the employees key (the largest band start among a row's businesses) above -Infinity; below it, knownCandidates. */
  employeesCandidates(
    offsets: Uint32Array,
    rowOf: Uint32Array,
    employeesMin: Int32Array,
    lo: number,
    hi: number,
    sel: Uint32Array,
    thr: number,
    rank: Uint32Array,
    rankBound: number,
  ): number;
  /** candidates() of the turnover key (the largest turnover in currency `code`) above -Infinity. */
  turnoverCandidates(
    offsets: Uint32Array,
    rowOf: Uint32Array,
    currency: Uint16Array,
    turnover: Float64Array,
    code: number,
    lo: number,
    hi: number,
    sel: Uint32Array,
    thr: number,
    rank: Uint32Array,
    rankBound: number,
  ): number;
  /**
   * Rows of [lo, hi) whose bit is set in `known` (bit r % 8 of byte r >> 3) or whose rank is below
   * rankBound, in order: a business key's candidates while its threshold is an unknown key.
   */
  knownCandidates(known: Uint8Array, lo: number, hi: number, sel: Uint32Array, rank: Uint32Array, rankBound: number): number;
  /**
   * Keeps the rows of sel[0..n) whose employees key can still enter a heap (KeySource.offer's
   * test: above thr, or equal to it with rank < rankBound; a row without one is -Infinity), in order.
   */
  employeesRefine(offsets: Uint32Array, employeesMin: Int32Array, ...refine: RefineArgs): number;
  /** employeesRefine() of the turnover key in currency `code`. */
  turnoverRefine(offsets: Uint32Array, currency: Uint16Array, turnover: Float64Array, code: number, ...refine: RefineArgs): number;
  /**
   * Reorders slots [lo, hi] of a buffer of ranked rows of one snapshot so that slot t holds the
   * row of that place (key descending, then rank ascending), better rows before it, worse after;
   * with `first` (lo <= first <= t), slots [first, t] hold the rows of places first..t in order.
   * With `drop`, the slots after t are left as they were (the caller drops them). The snapshots'
   * slots are left as they are: every row is of the same one.
   */
  select(key: Float64Array, rank: Uint32Array, row: Uint32Array, lo: number, hi: number, t: number, first?: number, drop?: boolean): void;
  /**
   * A deep page's buffer of rows of snapshot s (topk.ts) takes the rows sel[i..n) whose key
   * (column `col`, an integer column's values over `scale`; NaN and the least integer are
   * unknown, -Infinity) reaches `floor` and ranks before the cut (key, then rank below cutRank;
   * cutKey null: no cut), from slot size[0] on, until it holds `limit` rows; a row that ranks
   * before the top (topKey, then rank below topRank; null: none) is only counted, in size[1]
   * (the slot after the rows held may then be written). Returns the first row of sel not
   * offered; size[0] becomes the rows held.
   */
  append(col: NumberArray, scale: number, ...buffer: AppendArgs): number;
  /** append() with the employees key of a row's businesses. */
  appendEmployees(offsets: Uint32Array, employeesMin: Int32Array, ...buffer: AppendArgs): number;
  /** append() with the turnover key in currency `code`. */
  appendTurnover(offsets: Uint32Array, currency: Uint16Array, turnover: Float64Array, code: number, ...buffer: AppendArgs): number;
}

/** The arguments of the business keys' refines after the key's own. */
export type RefineArgs = [sel: Uint32Array, n: number, thr: number, rank: Uint32Array, rankBound: number];

/** The arguments of every append after its key's own: the rows offered, then the buffer. */
export type AppendArgs = [
  sel: Uint32Array,
  i: number,
  n: number,
  rank: Uint32Array,
  s: number,
  keys: Float64Array,
  rows: Uint32Array,
  ranks: Uint32Array,
  snaps: Uint16Array,
  size: Uint32Array,
  limit: number,
  floor: number,
  cutKey: number | null,
  cutRank: number,
  topKey: number | null,
  topRank: number,
];

/** Selections shorter than this are refined in JavaScript: the call would cost more than the loop. */
export const NATIVE_MIN = 32;

function load(): { addon: NativeKernels | null; why: string | null } {
  if (process.env.EDIFICE_KERNELS === 'js') return { addon: null, why: 'EDIFICE_KERNELS=js' };
  return loadAddon<NativeKernels>('kernels');
}

const loaded = load();

/** The compiled loops, or null where the scan runs its own. */
export const native: NativeKernels | null = loaded.addon;

/** Why the scan runs its JavaScript loops, or null when it runs the compiled ones. */
export const nativeUnavailable: string | null = loaded.why;
