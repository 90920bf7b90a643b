/**
 * Each numeric sort key's whole order over a snapshot's rows: rows by the key descending,
 * unknown last, ties by building_id (the order GET /buildings ranks by, spec 4.1). A large
 * area's first page can then be read off the top of the order, testing rows until enough pass
 * the bbox and the filters (query/key-order.ts), instead of searching the area's nodes.
 *
 * Built by a stable LSD radix sort over the rows in id order (`byRank`), 16 bits a pass: one pass
 * for an Int16 column, two for an Int32 one, four for a Float64 one (packNumbers found no exact
 * integer form); 4 bytes a row a key.
 */
import type { NumColumn } from './numeric.ts';
import { sharedU32 } from './shared.ts';

/** The keys ordered: the columns of the sort keys volume, area and height. */
export const ORDERED_KEYS = ['volume_m3', 'footprint_area_m2', 'height_m'] as const;
export type OrderedKey = (typeof ORDERED_KEYS)[number];

/** Per key, the rows in the order GET /buildings ranks them. */
export type KeyOrders = Record<OrderedKey, Uint32Array>;

export function buildKeyOrders(num: Record<OrderedKey, NumColumn>, byRank: Uint32Array, rows: number): KeyOrders {
  const sorter = new KeySorter(rows);
  const orders = {} as KeyOrders;
  for (const name of ORDERED_KEYS) orders[name] = sorter.order(num[name], byRank);
  return orders;
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
