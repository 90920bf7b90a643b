/**
 * Sort keys' whole orders over a snapshot's rows: rows by the key descending, unknown last, ties
 * by building_id (the order GET /buildings ranks by, spec 4.1). A large area's first page can
 * then be read off the top of the order, testing rows until enough pass the bbox and the filters
 * (query/key-order.ts), instead of searching the area's nodes.
 *
 * Built by a stable LSD radix sort over the rows in id order (`byRank`), 16 bits a pass: one pass
 * for an Int16 column, two for an Int32 one, four for a Float64 one (packNumbers found no exact
 * integer form); 4 bytes a row a key. Volume, area and height are ordered from the file's columns
 * with the other file parts; the employees sort from the business columns, which removals
 * change (removals.ts), so it is built with them. Turnover has no order: its key depends on the
 * currency a request asks for.
 */
import { NULL_I32 } from './arrow.ts';
import type { NumColumn } from './numeric.ts';
import { sharedU32 } from './shared.ts';

/** The numeric keys ordered: the columns of the sort keys volume, area and height. */
export const ORDERED_KEYS = ['volume_m3', 'footprint_area_m2', 'height_m'] as const;
export type OrderedKey = (typeof ORDERED_KEYS)[number];

/** Per numeric key, the rows in the order GET /buildings ranks them. */
export type NumberOrders = Record<OrderedKey, Uint32Array>;

/** Every key's order: the numeric keys', and the employees sort's (`registered_business_employees`). */
export interface KeyOrders extends NumberOrders {
  employees: Uint32Array;
}

export function buildNumberOrders(num: Record<OrderedKey, NumColumn>, byRank: Uint32Array, rows: number): NumberOrders {
  const sorter = new KeySorter(rows);
  const orders = {} as NumberOrders;
  for (const name of ORDERED_KEYS) orders[name] = sorter.order(num[name], byRank);
  return orders;
}

/**
 * The rows by the employees sort's key: each row's largest stated band start among its
 * businesses (query/sort-keys.ts KeyEmployees), none stated last. Few rows state one, so only
 * they are sorted (two passes over their keys, in id order); the rest follow in id order.
 */
export function buildEmployeesOrder(
  business: { readonly row: Uint32Array; readonly employeesMin: Int32Array },
  byRank: Uint32Array,
  rows: number,
): Uint32Array {
  const { row, employeesMin } = business;
  // keys[r] is read only where stated[r] is 1.
  const keys = new Int32Array(rows);
  const stated = new Uint8Array(rows);
  let sized = 0;
  for (let j = 0; j < row.length; j++) {
    const v = employeesMin[j];
    if (v === NULL_I32) continue;
    const r = row[j];
    if (stated[r] === 0) {
      stated[r] = 1;
      keys[r] = v;
      sized++;
    } else if (v > keys[r]) keys[r] = v;
  }
  const out = sharedU32(rows);
  const first = new Uint32Array(sized);
  for (let i = 0, a = 0, z = sized; i < rows; i++) {
    const r = byRank[i];
    if (stated[r] === 1) first[a++] = r;
    else out[z++] = r;
  }
  const second = new Uint32Array(sized);
  const counts = new Uint32Array(RADIX + 1);
  digitPass(first, second, keys, 0, counts);
  digitPass(second, out, keys, 16, counts);
  return out;
}

/** Stable counting sort of `from` into `to` by 16 bits (at `shift`) of each row's key, as unsigned digits ascending as the key descends. */
function digitPass(from: Uint32Array, to: Uint32Array, keys: Int32Array, shift: number, counts: Uint32Array): void {
  counts.fill(0);
  for (let i = 0; i < from.length; i++) counts[(((0x7fffffff - keys[from[i]]) >>> shift) & 0xffff) + 1]++;
  for (let c = 0; c < RADIX; c++) counts[c + 1] += counts[c];
  for (let i = 0; i < from.length; i++) {
    const r = from[i];
    to[counts[((0x7fffffff - keys[r]) >>> shift) & 0xffff]++] = r;
  }
}

const RADIX = 1 << 16;

/**
 * The radix sort's scratch, shared by the keys of a store: one row's 16-bit digit per pass, and one
 * array the passes alternate with the result (an odd pass count starts on the result), so the
 * load leaves 14 bytes a row of garbage, not several times the orders.
 */
class KeySorter {
  private readonly digits: Uint16Array;
  private readonly scratch: Uint32Array;
  private readonly counts = new Uint32Array(RADIX + 1);
  private readonly bits = new Float64Array(1);
  private readonly half = new Uint32Array(this.bits.buffer);

  constructor(private readonly rows: number) {
    this.digits = new Uint16Array(rows);
    this.scratch = new Uint32Array(rows);
  }

  /** Rows of `col` by value descending (null, the least value or NaN, last), ties in the order of `byRank`. */
  order(col: NumColumn, byRank: Uint32Array): Uint32Array {
    const out = sharedU32(this.rows);
    const passes = col.kind === 'i16' ? 1 : col.kind === 'i32' ? 2 : 4;
    let from = byRank;
    for (let p = 0; p < passes; p++) {
      this.fillDigits(col, p);
      const to = (passes - p) % 2 === 1 ? out : this.scratch;
      this.pass(from, to);
      from = to;
    }
    return out;
  }

  /** Stable counting sort of `from` into `to` by the rows' digits. */
  private pass(from: Uint32Array, to: Uint32Array): void {
    const { digits, counts, rows } = this;
    counts.fill(0);
    for (let r = 0; r < rows; r++) counts[digits[r] + 1]++;
    for (let c = 0; c < RADIX; c++) counts[c + 1] += counts[c];
    for (let i = 0; i < rows; i++) {
      const r = from[i];
      to[counts[digits[r]]++] = r;
    }
  }

  /** Digit p (16 bits, least significant first) of each row's key as an unsigned number that ascends as the value descends. */
  private fillDigits(col: NumColumn, p: number): void {
    const { digits, rows } = this;
    if (col.kind === 'i16') {
      // The null code is the least Int16: 0x7fff - v ranks it last.
      const v = col.values;
      for (let r = 0; r < rows; r++) digits[r] = 0x7fff - v[r];
    } else if (col.kind === 'i32') {
      const v = col.values;
      const shift = 16 * p;
      for (let r = 0; r < rows; r++) digits[r] = (0x7fffffff - v[r]) >>> shift;
    } else {
      const v = col.values;
      const { bits, half } = this;
      const word = p >> 1;
      const shift = 16 * (p & 1);
      for (let r = 0; r < rows; r++) {
        const x = v[r];
        if (x !== x) {
          digits[r] = 0xffff; // unknown: last
          continue;
        }
        bits[0] = x === 0 ? 0 : x; // -0 ties with 0, as every comparison has it
        // Ascending as unsigned: a positive's sign bit set, a negative's every bit flipped; then all flipped.
        const negative = half[1] >>> 31 === 1;
        const w = word === 0 ? (negative ? half[0] : ~half[0]) : negative ? half[1] : ~half[1] ^ 0x80000000;
        digits[r] = w >>> shift;
      }
    }
  }
}
