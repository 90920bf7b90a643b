/**
 * Hot numeric columns, each in the narrowest exact form: a column whose every value v is
 * k / 10^d for an integer k (the rounding catalogues use: 0.1 m heights, 0.01 m² areas, whole
 * m³) keeps k in an Int16Array or Int32Array with a null sentinel; any other column stays a
 * Float64Array with NaN for null. Decoding k / 10^d gives back the very double that was stored,
 * and bounds on v become bounds on k (`lowerCode`, `upperCode`), so filters and sorts stay exact.
 */
import { NULL_I32 } from './arrow.ts';
import { sharedBuffer, sharedF64 } from './shared.ts';

export const NULL_I16 = -32768;

export type NumColumn =
  | { readonly kind: 'f64'; readonly values: Float64Array }
  | { readonly kind: 'i32'; readonly values: Int32Array; readonly scale: number }
  | { readonly kind: 'i16'; readonly values: Int16Array; readonly scale: number };

const MAX_DECIMALS = 4;

/** Decimals (0..MAX_DECIMALS) v needs to be k / 10^d for an integer k in Int32 range; -1 if none. */
function decimalsOf(v: number): number {
  if (v === 0 && 1 / v < 0) return -1;
  for (let d = 0, scale = 1; d <= MAX_DECIMALS; d++, scale *= 10) {
    const k = Math.round(v * scale);
    if (k / scale === v) return k > NULL_I32 && k <= 2147483647 ? d : -1;
  }
  return -1;
}

/** The narrowest exact column for values (NaN = null). */
export function packNumbers(values: Float64Array): NumColumn {
  const n = values.length;
  let d = 0;
  let scale = 1;
  for (let i = 0; i < n && d >= 0; i++) {
    const v = values[i];
    if (v !== v) continue;
    // Exact with the decimals found so far (the common case): one multiplication and division.
    // A negative zero goes on to decimalsOf, which refuses it: a code cannot keep its sign.
    if (v !== 0 ? Math.round(v * scale) / scale === v : 1 / v > 0) continue;
    const need = decimalsOf(v);
    if (need < 0) d = -1;
    else if (need > d) {
      d = need;
      scale = 10 ** d;
    }
  }
  if (d >= 0) {
    // The codes, checked exact and within Int32 while they are made, then narrowed if they fit Int16.
    const codes = new Int32Array(sharedBuffer(4 * n));
    let min = 0;
    let max = 0;
    let fits = true;
    for (let i = 0; i < n; i++) {
      const v = values[i];
      if (v !== v) {
        codes[i] = NULL_I32;
        continue;
      }
      const k = Math.round(v * scale);
      // A value exact with fewer decimals is exact with more, unless k leaves the Int32 range.
      if (k / scale !== v || k <= NULL_I32 || k > 2147483647) {
        fits = false;
        break;
      }
      codes[i] = k;
      if (k < min) min = k;
      if (k > max) max = k;
    }
    if (fits && min > NULL_I16 && max <= 32767) {
      const out = new Int16Array(sharedBuffer(2 * n));
      for (let i = 0; i < n; i++) out[i] = codes[i] === NULL_I32 ? NULL_I16 : codes[i];
      return { kind: 'i16', values: out, scale };
    }
    if (fits) return { kind: 'i32', values: codes, scale };
  }
  const out = sharedF64(n);
  out.set(values);
  return { kind: 'f64', values: out };
}

/** An Int32 column (NULL_I32 = null) in the narrowest exact form. */
export function packIntegers(values: Int32Array): NumColumn {
  const wide = new Float64Array(values.length);
  for (let i = 0; i < values.length; i++) wide[i] = values[i] === NULL_I32 ? NaN : values[i];
  return packNumbers(wide);
}

/** Value of row (NaN = null). */
export function numberAt(col: NumColumn, row: number): number {
  switch (col.kind) {
    case 'f64':
      return col.values[row];
    case 'i32': {
      const k = col.values[row];
      return k === NULL_I32 ? NaN : k / col.scale;
    }
    case 'i16': {
      const k = col.values[row];
      return k === NULL_I16 ? NaN : k / col.scale;
    }
  }
}

/**
 * The stored codes of a column, for loops that read many rows without numberAt's switch: a
 * row's code is null when it is NaN or `nullCode`, else its value is code / scale (scale > 0,
 * so codes keep the values' order).
 */
export function storedCodes(col: NumColumn): { codes: ArrayLike<number>; nullCode: number; scale: number } {
  switch (col.kind) {
    case 'f64':
      return { codes: col.values, nullCode: NaN, scale: 1 };
    case 'i32':
      return { codes: col.values, nullCode: NULL_I32, scale: col.scale };
    case 'i16':
      return { codes: col.values, nullCode: NULL_I16, scale: col.scale };
  }
}

const LIMIT = 2 ** 52;

/** Smallest integer k with k / scale >= lo (±Infinity passes through). */
export function lowerCode(lo: number, scale: number): number {
  if (!Number.isFinite(lo)) return lo;
  let k = Math.ceil(lo * scale);
  if (!(Math.abs(k) < LIMIT)) return lo > 0 ? Infinity : -Infinity;
  while ((k - 1) / scale >= lo) k--;
  while (k / scale < lo) k++;
  return k;
}

/** Largest integer k with k / scale <= hi (±Infinity passes through). */
export function upperCode(hi: number, scale: number): number {
  if (!Number.isFinite(hi)) return hi;
  let k = Math.floor(hi * scale);
  if (!(Math.abs(k) < LIMIT)) return hi > 0 ? Infinity : -Infinity;
  while ((k + 1) / scale <= hi) k++;
  while (k / scale > hi) k--;
  return k;
}

/** Sparse numbers: the rows that have a value (ascending) and their values. */
export interface SparseColumn {
  readonly rows: Uint32Array;
  readonly values: Float64Array;
}

/** First index i with rows[i] >= row. */
export function sparseLowerBound(rows: Uint32Array, row: number): number {
  let lo = 0;
  let hi = rows.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (rows[mid] < row) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export function sparseAt(col: SparseColumn, row: number): number {
  const i = sparseLowerBound(col.rows, row);
  return i < col.rows.length && col.rows[i] === row ? col.values[i] : NaN;
}
