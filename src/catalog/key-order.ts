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
  const orders = {} as KeyOrders;
  for (const name of ORDERED_KEYS) orders[name] = keyOrder(num[name], byRank, rows);
  return orders;
}

const RADIX = 1 << 16;

/** Rows of `col` by value descending (null, the least value or NaN, last), ties in the order of `byRank`. */
export function keyOrder(col: NumColumn, byRank: Uint32Array, rows: number): Uint32Array {
  // Each row's key as unsigned words, least significant first, that ascend as the value descends.
  const words: Uint32Array[] = [];
  const digits: number[] = [];
  if (col.kind === 'i16') {
    // The null code is the least Int16: 0x7fff - v ranks it last.
    const w = new Uint32Array(rows);
    for (let r = 0; r < rows; r++) w[r] = 0x7fff - col.values[r];
    words.push(w);
    digits.push(1);
  } else if (col.kind === 'i32') {
    const w = new Uint32Array(rows);
    for (let r = 0; r < rows; r++) w[r] = 0x7fffffff - col.values[r];
    words.push(w);
    digits.push(2);
  } else {
    const lo = new Uint32Array(rows);
    const hi = new Uint32Array(rows);
    const bits = new Float64Array(1);
    const half = new Uint32Array(bits.buffer);
    for (let r = 0; r < rows; r++) {
      const v = col.values[r];
      if (v !== v) {
        lo[r] = hi[r] = 0xffffffff;
        continue;
      }
      bits[0] = v === 0 ? 0 : v; // -0 ties with 0, as every comparison has it
      // Ascending as unsigned: a positive's sign bit set, a negative's every bit flipped; then all flipped.
      const negative = half[1] >>> 31 === 1;
      lo[r] = negative ? half[0] : ~half[0] >>> 0;
      hi[r] = negative ? half[1] : (~half[1] ^ 0x80000000) >>> 0;
    }
    words.push(lo, hi);
    digits.push(2, 2);
  }
  // Every pass but the last writes to plain scratch memory, freed after the load.
  const passes = digits.reduce((x, y) => x + y, 0);
  const scratch = passes > 1 ? [new Uint32Array(rows), passes > 2 ? new Uint32Array(rows) : null] : [];
  const out = sharedU32(rows);
  const counts = new Uint32Array(RADIX + 1);
  let from = byRank;
  let pass = 0;
  for (let w = 0; w < words.length; w++) {
    const word = words[w];
    for (let d = 0; d < digits[w]; d++, pass++) {
      const shift = 16 * d;
      counts.fill(0);
      for (let r = 0; r < rows; r++) counts[((word[r] >>> shift) & 0xffff) + 1]++;
      for (let c = 0; c < RADIX; c++) counts[c + 1] += counts[c];
      const to = pass === passes - 1 ? out : scratch[pass % 2]!;
      for (let i = 0; i < rows; i++) {
        const r = from[i];
        to[counts[(word[r] >>> shift) & 0xffff]++] = r;
      }
      from = to;
    }
  }
  return out;
}
