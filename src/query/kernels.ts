/**
 * Filter kernels. A query's filters compile (plan.ts) into a short list of steps; the scan hands
 * each step a run of contiguous rows or a selection vector of row numbers, and each step keeps
 * the rows that pass in a tight loop over typed arrays: no call, object or closure per row.
 *
 * - `range(lo, hi, sel, at, spare)` writes the passing rows of [lo, hi) into sel from sel[at] on
 *   and returns at + their count (a chunk can gather several runs of rows); `spare`, as long as
 *   sel, is scratch for the steps that only refine (the search state's, reused by every chunk);
 * - `refine(sel, n)` keeps the passing rows of sel[0..n) in order and returns their count.
 *
 * The loops are branch-free: every row is written to sel[k] and k advances by the test's 0 or
 * 1 (`+bool & +bool`, a table of 0s and 1s). A filter that keeps a share of rows at random
 * mispredicts a branch on a large part of them, which costs several times the branch-free loop.
 *
 * A comparison with NaN is false, so an unknown f64 value fails every bound without a branch;
 * integer columns exclude their null sentinel through the lower bound.
 *
 * Where the addon's compiled loops load (native-kernels.ts), the steps on plain columns call
 * them; the loops here are their reference and their fallback.
 */
import { NULL_I32 } from '../catalog/arrow.ts';
import { NULL_I16, sparseLowerBound, type SparseColumn } from '../catalog/numeric.ts';
import type { CodeArray } from '../catalog/shared.ts';
import { ENTRANCES_OVERFLOW } from '../catalog/snapshot.ts';
import { NATIVE_MIN, native } from './native-kernels.ts';
import type { BBox } from './types.ts';

/**
 * Rows a chunk of the scan holds at most: the size of every selection vector. A chunk costs
 * each step a call into the addon and the scan a turn of its loop, about as much as a few
 * hundred rows of a step; at 16,384 rows (64 KB a vector, within the L2 cache) those costs are
 * a small share of a large box's scan.
 */
export const CHUNK = 16_384;

export interface Step {
  range(lo: number, hi: number, sel: Uint32Array, at: number, spare: Uint32Array): number;
  refine(sel: Uint32Array, n: number): number;
}

/** Rows of [lo, hi) whose representative point lies in the bbox, edges included. */
export function bboxRange(lon: Float64Array, lat: Float64Array, q: BBox, lo: number, hi: number, sel: Uint32Array): number {
  const { minLon, minLat, maxLon, maxLat } = q;
  if (native !== null && hi - lo >= NATIVE_MIN) return native.bboxRange(lon, lat, minLon, minLat, maxLon, maxLat, lo, hi, sel);
  let k = 0;
  for (let r = lo; r < hi; r++) {
    const x = lon[r];
    const y = lat[r];
    sel[k] = r;
    k += +(x >= minLon) & +(x <= maxLon) & +(y >= minLat) & +(y <= maxLat);
  }
  return k;
}

/** Keeps the rows of sel[0..n) whose representative point lies in the bbox. */
export function bboxRefine(lon: Float64Array, lat: Float64Array, q: BBox, sel: Uint32Array, n: number): number {
  const { minLon, minLat, maxLon, maxLat } = q;
  if (native !== null && n >= NATIVE_MIN) return native.bboxRefine(lon, lat, minLon, minLat, maxLon, maxLat, sel, n);
  let k = 0;
  for (let i = 0; i < n; i++) {
    const r = sel[i];
    const x = lon[r];
    const y = lat[r];
    sel[k] = r;
    k += +(x >= minLon) & +(x <= maxLon) & +(y >= minLat) & +(y <= maxLat);
  }
  return k;
}

export function identityRange(lo: number, hi: number, sel: Uint32Array): number {
  let k = 0;
  for (let r = lo; r < hi; r++) sel[k++] = r;
  return k;
}

/** `range` of a step that only refines: [lo, hi) listed and refined apart in `spare`, so that rows before sel[at] are not tested again. */
function refineAppended(step: Step, lo: number, hi: number, sel: Uint32Array, at: number, spare: Uint32Array): number {
  if (at === 0) return step.refine(sel, identityRange(lo, hi, sel));
  const n = step.refine(spare, identityRange(lo, hi, spare));
  for (let i = 0; i < n; i++) sel[at + i] = spare[i];
  return at + n;
}

/** lo <= v <= hi on a Float64Array (NaN = unknown fails). */
export class BetweenF64 implements Step {
  constructor(
    readonly col: Float64Array,
    readonly lo: number,
    readonly hi: number,
  ) {}

  range(a: number, b: number, sel: Uint32Array, at: number): number {
    const { col, lo, hi } = this;
    if (native !== null && b - a >= NATIVE_MIN) return native.range(col, lo, hi, a, b, sel, at);
    let k = at;
    for (let r = a; r < b; r++) {
      const v = col[r];
      sel[k] = r;
      k += +(v >= lo) & +(v <= hi);
    }
    return k;
  }

  refine(sel: Uint32Array, n: number): number {
    const { col, lo, hi } = this;
    if (native !== null && n >= NATIVE_MIN) return native.refine(col, lo, hi, sel, n);
    let k = 0;
    for (let i = 0; i < n; i++) {
      const r = sel[i];
      const v = col[r];
      sel[k] = r;
      k += +(v >= lo) & +(v <= hi);
    }
    return k;
  }
}

/** lo <= k <= hi on an Int32Array of scaled integers; lo is above NULL_I32 so unknowns fail. */
export class BetweenI32 implements Step {
  readonly lo: number;
  constructor(
    readonly col: Int32Array,
    lo: number,
    readonly hi: number,
  ) {
    this.lo = Math.max(lo, NULL_I32 + 1);
  }

  range(a: number, b: number, sel: Uint32Array, at: number): number {
    const { col, lo, hi } = this;
    if (native !== null && b - a >= NATIVE_MIN) return native.range(col, lo, hi, a, b, sel, at);
    let k = at;
    for (let r = a; r < b; r++) {
      const v = col[r];
      sel[k] = r;
      k += +(v >= lo) & +(v <= hi);
    }
    return k;
  }

  refine(sel: Uint32Array, n: number): number {
    const { col, lo, hi } = this;
    if (native !== null && n >= NATIVE_MIN) return native.refine(col, lo, hi, sel, n);
    let k = 0;
    for (let i = 0; i < n; i++) {
      const r = sel[i];
      const v = col[r];
      sel[k] = r;
      k += +(v >= lo) & +(v <= hi);
    }
    return k;
  }
}

/** lo <= k <= hi on an Int16Array of scaled integers; lo is above NULL_I16 so unknowns fail. */
export class BetweenI16 implements Step {
  readonly lo: number;
  constructor(
    readonly col: Int16Array,
    lo: number,
    readonly hi: number,
  ) {
    this.lo = Math.max(lo, NULL_I16 + 1);
  }

  range(a: number, b: number, sel: Uint32Array, at: number): number {
    const { col, lo, hi } = this;
    if (native !== null && b - a >= NATIVE_MIN) return native.range(col, lo, hi, a, b, sel, at);
    let k = at;
    for (let r = a; r < b; r++) {
      const v = col[r];
      sel[k] = r;
      k += +(v >= lo) & +(v <= hi);
    }
    return k;
  }

  refine(sel: Uint32Array, n: number): number {
    const { col, lo, hi } = this;
    if (native !== null && n >= NATIVE_MIN) return native.refine(col, lo, hi, sel, n);
    let k = 0;
    for (let i = 0; i < n; i++) {
      const r = sel[i];
      const v = col[r];
      sel[k] = r;
      k += +(v >= lo) & +(v <= hi);
    }
    return k;
  }
}

/** lo <= entrances <= hi; counts from 255 up are looked up in the overflow map. */
export class EntrancesStep implements Step {
  constructor(
    readonly col: Uint8Array,
    readonly overflow: ReadonlyMap<number, number>,
    readonly lo: number,
    readonly hi: number,
  ) {}

  range(a: number, b: number, sel: Uint32Array, at: number): number {
    const { col, lo, hi } = this;
    let k = at;
    for (let r = a; r < b; r++) {
      let v = col[r];
      if (v === ENTRANCES_OVERFLOW) v = this.overflow.get(r)!;
      sel[k] = r;
      k += +(v >= lo) & +(v <= hi);
    }
    return k;
  }

  refine(sel: Uint32Array, n: number): number {
    const { col, lo, hi } = this;
    let k = 0;
    for (let i = 0; i < n; i++) {
      const r = sel[i];
      let v = col[r];
      if (v === ENTRANCES_OVERFLOW) v = this.overflow.get(r)!;
      sel[k] = r;
      k += +(v >= lo) & +(v <= hi);
    }
    return k;
  }
}

/** value >= lo on a sparse column (rows without a value fail): a merge of sel with the column's rows. */
export class SparseAtLeast implements Step {
  constructor(
    readonly col: SparseColumn,
    readonly lo: number,
  ) {}

  range(a: number, b: number, sel: Uint32Array, at: number, spare: Uint32Array): number {
    return refineAppended(this, a, b, sel, at, spare);
  }

  refine(sel: Uint32Array, n: number): number {
    if (n === 0) return 0;
    const { rows, values } = this.col;
    const lo = this.lo;
    const m = rows.length;
    let c = sparseLowerBound(rows, sel[0]);
    let k = 0;
    for (let i = 0; i < n && c < m; i++) {
      const r = sel[i];
      while (c < m && rows[c] < r) c++;
      if (c < m && rows[c] === r && values[c] >= lo) sel[k++] = r;
    }
    return k;
  }
}

/** table[code] !== 0: list filters on enums and dictionary codes (the null code's entry is 0). */
export class CodeIn implements Step {
  constructor(
    readonly col: CodeArray,
    readonly table: Uint8Array,
  ) {}

  range(a: number, b: number, sel: Uint32Array, at: number): number {
    const { col, table } = this;
    if (native !== null && b - a >= NATIVE_MIN) return native.codesRange(col, table, a, b, sel, at);
    let k = at;
    for (let r = a; r < b; r++) {
      sel[k] = r;
      k += table[col[r]];
    }
    return k;
  }

  refine(sel: Uint32Array, n: number): number {
    const { col, table } = this;
    if (native !== null && n >= NATIVE_MIN) return native.codesRefine(col, table, sel, n);
    let k = 0;
    for (let i = 0; i < n; i++) {
      const r = sel[i];
      sel[k] = r;
      k += table[col[r]];
    }
    return k;
  }
}

/** tableA[a] or tableB[b]: category OR-ed with building_type. */
export class CodeOr implements Step {
  constructor(
    readonly a: Uint8Array,
    readonly tableA: Uint8Array,
    readonly b: CodeArray,
    readonly tableB: Uint8Array,
  ) {}

  range(lo: number, hi: number, sel: Uint32Array, at: number): number {
    const { a, tableA, b, tableB } = this;
    let k = at;
    for (let r = lo; r < hi; r++) {
      sel[k] = r;
      k += tableA[a[r]] | tableB[b[r]];
    }
    return k;
  }

  refine(sel: Uint32Array, n: number): number {
    const { a, tableA, b, tableB } = this;
    let k = 0;
    for (let i = 0; i < n; i++) {
      const r = sel[i];
      sel[k] = r;
      k += tableA[a[r]] | tableB[b[r]];
    }
    return k;
  }
}

/** (flags & mask) === want: every boolean filter of a query in one test. */
export class FlagsStep implements Step {
  constructor(
    readonly flags: Uint32Array,
    readonly mask: number,
    readonly want: number,
  ) {}

  range(a: number, b: number, sel: Uint32Array, at: number): number {
    const { flags, mask, want } = this;
    if (native !== null && b - a >= NATIVE_MIN) return native.flagsRange(flags, mask >>> 0, want >>> 0, a, b, sel, at);
    let k = at;
    for (let r = a; r < b; r++) {
      sel[k] = r;
      k += +((flags[r] & mask) === want);
    }
    return k;
  }

  refine(sel: Uint32Array, n: number): number {
    const { flags, mask, want } = this;
    if (native !== null && n >= NATIVE_MIN) return native.flagsRefine(flags, mask >>> 0, want >>> 0, sel, n);
    let k = 0;
    for (let i = 0; i < n; i++) {
      const r = sel[i];
      sel[k] = r;
      k += +((flags[r] & mask) === want);
    }
    return k;
  }
}

/** A step that only refines: a range is first listed row by row. */
abstract class ChildStep implements Step {
  range(a: number, b: number, sel: Uint32Array, at: number, spare: Uint32Array): number {
    return refineAppended(this, a, b, sel, at, spare);
  }

  abstract refine(sel: Uint32Array, n: number): number;
}

/** Some business's name code is in the table (names matched once against the dictionary). */
export class BusinessNameStep extends ChildStep {
  constructor(
    readonly offsets: Uint32Array,
    readonly name: Uint32Array,
    readonly table: Uint8Array,
  ) {
    super();
  }

  override refine(sel: Uint32Array, n: number): number {
    const { offsets, name, table } = this;
    let k = 0;
    for (let i = 0; i < n; i++) {
      const r = sel[i];
      for (let j = offsets[r], e = offsets[r + 1]; j < e; j++) {
        if (table[name[j]] !== 0) {
          sel[k++] = r;
          break;
        }
      }
    }
    return k;
  }
}

/** Some business (active or not) states a latest turnover in the currency of at least min. */
export class TurnoverMinStep extends ChildStep {
  constructor(
    readonly offsets: Uint32Array,
    readonly currency: Uint16Array,
    readonly turnover: Float64Array,
    readonly code: number,
    readonly min: number,
  ) {
    super();
  }

  override refine(sel: Uint32Array, n: number): number {
    const { offsets, currency, turnover, code, min } = this;
    let k = 0;
    for (let i = 0; i < n; i++) {
      const r = sel[i];
      for (let j = offsets[r], e = offsets[r + 1]; j < e; j++) {
        if (currency[j] === code && turnover[j] >= min) {
          sel[k++] = r;
          break;
        }
      }
    }
    return k;
  }
}

/** Some business states a latest turnover in the currency, and every such turnover is at most max. */
export class TurnoverMaxStep extends ChildStep {
  constructor(
    readonly offsets: Uint32Array,
    readonly currency: Uint16Array,
    readonly turnover: Float64Array,
    readonly code: number,
    readonly max: number,
  ) {
    super();
  }

  override refine(sel: Uint32Array, n: number): number {
    const { offsets, currency, turnover, code, max } = this;
    let k = 0;
    for (let i = 0; i < n; i++) {
      const r = sel[i];
      let seen = false;
      let ok = true;
      for (let j = offsets[r], e = offsets[r + 1]; j < e; j++) {
        const t = turnover[j];
        if (t === t && currency[j] === code) {
          seen = true;
          if (!(t <= max)) {
            ok = false;
            break;
          }
        }
      }
      if (seen && ok) sel[k++] = r;
    }
    return k;
  }
}

/** Some business with a stated size whose band start is at least min (the whole band is). */
export class EmployeesMinStep extends ChildStep {
  constructor(
    readonly offsets: Uint32Array,
    readonly employeesMin: Int32Array,
    readonly min: number,
  ) {
    super();
  }

  override refine(sel: Uint32Array, n: number): number {
    const { offsets, employeesMin, min } = this;
    let k = 0;
    for (let i = 0; i < n; i++) {
      const r = sel[i];
      for (let j = offsets[r], e = offsets[r + 1]; j < e; j++) {
        const v = employeesMin[j];
        if (v !== NULL_I32 && v >= min) {
          sel[k++] = r;
          break;
        }
      }
    }
    return k;
  }
}

/** Some business has a stated size, and every stated size ends at most max (an open top band never does). */
export class EmployeesMaxStep extends ChildStep {
  constructor(
    readonly offsets: Uint32Array,
    readonly employeesMin: Int32Array,
    readonly employeesMax: Int32Array,
    readonly max: number,
  ) {
    super();
  }

  override refine(sel: Uint32Array, n: number): number {
    const { offsets, employeesMin, employeesMax, max } = this;
    let k = 0;
    for (let i = 0; i < n; i++) {
      const r = sel[i];
      let seen = false;
      let ok = true;
      for (let j = offsets[r], e = offsets[r + 1]; j < e; j++) {
        if (employeesMin[j] === NULL_I32) continue;
        seen = true;
        const top = employeesMax[j];
        if (top === NULL_I32 || !(top <= max)) {
          ok = false;
          break;
        }
      }
      if (seen && ok) sel[k++] = r;
    }
    return k;
  }
}

/** Some business's latest statement is for year y, with or without a turnover. */
export class FinancialYearStep extends ChildStep {
  constructor(
    readonly offsets: Uint32Array,
    readonly year: Int32Array,
    readonly y: number,
  ) {
    super();
  }

  override refine(sel: Uint32Array, n: number): number {
    const { offsets, year, y } = this;
    let k = 0;
    for (let i = 0; i < n; i++) {
      const r = sel[i];
      for (let j = offsets[r], e = offsets[r + 1]; j < e; j++) {
        if (year[j] === y) {
          sel[k++] = r;
          break;
        }
      }
    }
    return k;
  }
}
