/**
 * Per-node summaries of a snapshot's row tree (the aggregate R-tree of Papadias et al., SSTD
 * 2001): node for node beside `RowTree.boxes` (same flat index, level 0 = leaves), what the
 * rows of a node hold, so that a query can prove a node holds no match or only matches
 * without reading its rows, and can bound the best sort key a node can hold.
 *
 * - flags: OR and AND of the rows' flag words;
 * - enums: one bit per code present (bit 31 stands for the null code and any code above 30),
 *   and, for the nodes of level 1 and up, the rows per bit (a list filter's matches counted unread);
 * - numbers: the least and greatest known value of every hot numeric column, rounded outward
 *   to Float32 (a node with no known value holds +Infinity / -Infinity), and one bit per
 *   column set when some row's value is unknown;
 * - by floors: the greatest height and volume among the rows of at most t floors, for each t
 *   of FLOOR_STEPS, so that under maxFloors a node's best key is that of its low buildings
 *   (every node holds some tall building: without it, sort=height&max_floors=4 reads them all);
 * - by roof shape: the greatest height, volume and footprint area among the rows of each roof
 *   shape, so that under a roof_shape list a node's best key is that of its listed shapes (about
 *   half the buildings have no known shape, and a list refuses them: with the node's maximum,
 *   sort=height&roof_shape=<7 of 10> read twice the leaves it needed);
 * - business sort keys: the greatest band start of employees (over all rows, and among the rows
 *   of each category: the large employers sit in commercial buildings, so a category filter
 *   works against the sort), and the greatest turnover in
 *   each of the SUMMARY_CURRENCIES currencies most businesses state it in (other currencies
 *   have no summary: a turnover sort in one of them is left to the plain scan).
 *
 * A node's row count needs no array: it is its row range, from the tree's spans. Every array
 * lives on shared memory like the columns.
 */
import { NULL_I32 } from './arrow.ts';
import { CATEGORY, ROOF_SHAPE } from '../snapshot/schema.ts';
import { HOT_ENUM, HOT_NUM, type HotEnum, type HotNum } from './columns.ts';
import { numberAt, storedCodes, type NumColumn } from './numeric.ts';
import { FANOUT, LEAF_ROWS, type RowTree } from './rowtree.ts';
import { sharedBuffer, sharedF64, sharedU32 } from './shared.ts';

/** Sort keys that grow with the number of floors: bounded by floors under maxFloors. */
export const FLOORS_KEYS = ['height_m', 'volume_m3'] as const;
export type FloorsKey = (typeof FLOORS_KEYS)[number];
/** Floors at which those bounds are kept (maxFloors above the last has none). */
export const FLOOR_STEPS: readonly number[] = [0, 1, 2, 3, 4, 5, 6, 8, 10, 15, 20];

/** Sort keys bounded per roof shape under a roof_shape list. */
export const ROOF_KEYS = ['height_m', 'volume_m3', 'footprint_area_m2'] as const;
export type RoofKey = (typeof ROOF_KEYS)[number];

/** Currencies whose greatest turnover per node is kept, most stated first. */
export const SUMMARY_CURRENCIES = 4;

/** Bit of an enum code in `codes` (the null code 0xff, and codes above 30, share bit 31). */
export const codeBit = (code: number): number => (code < 31 ? 1 << code : 1 << 31);
/** The index of codeBit(code): 0 to 31. */
export const bitIndex = (code: number): number => (code < 31 ? code : 31);
export const CODE_BITS = 32;

export interface SummarySource {
  rows: number;
  num: Readonly<Record<HotNum, NumColumn>>;
  enums: Readonly<Record<HotEnum, Uint8Array>>;
  flags: Uint32Array;
  business: {
    row: Uint32Array;
    employeesMin: Int32Array;
    currency: Uint16Array;
    currencies: readonly string[];
    turnover: Float64Array;
  };
}

const sharedF32 = (n: number): Float32Array => new Float32Array(sharedBuffer(4 * n));

export class NodeSummaries {
  readonly nodes: number;
  readonly flagsAny: Uint32Array;
  readonly flagsAll: Uint32Array;
  readonly codes: Readonly<Record<HotEnum, Uint32Array>>;
  /**
   * Rows per code bit (bitIndex) of each enum, CODE_BITS words a node, for the nodes from
   * `countsFrom` (the first of level 1) on: node j's bit b at CODE_BITS * (j - countsFrom) + b.
   */
  readonly codeCounts: Readonly<Record<HotEnum, Uint32Array>>;
  readonly countsFrom: number;
  /** Rows per code of each enum over the whole snapshot (the root's histogram), for estimating a list filter's share. */
  readonly codeRows: Readonly<Record<HotEnum, Float64Array>>;
  readonly min: Readonly<Record<HotNum, Float32Array>>;
  readonly max: Readonly<Record<HotNum, Float32Array>>;
  /** Bit HOT_NUM.indexOf(column) set when some row of the node has no value in that column. */
  readonly nulls: Uint32Array;
  /** Per FLOOR_STEPS[i], the greatest value of the node's rows with at most that many floors (-Infinity: none). */
  readonly floorsMax: Readonly<Record<FloorsKey, readonly Float32Array[]>>;
  /** Per ROOF_SHAPE code, the greatest value of the node's rows of that roof shape (-Infinity: none). */
  readonly roofMax: Readonly<Record<RoofKey, readonly Float32Array[]>>;
  /** Greatest stated band start of a business of the node's rows (-Infinity: none). */
  readonly employeesMax: Float32Array;
  /** The same per category code (rows of unknown category are in none: a category filter refuses them). */
  readonly employeesMaxByCategory: readonly Float32Array[];
  /** Currency codes (into `business.currencies`) that have a turnover summary, and the summaries. */
  readonly turnoverCurrencies: readonly number[];
  readonly turnoverMax: readonly Float32Array[];

  /**
   * The summaries of `s`'s rows over `tree`. `same`: summaries of the same tree, enums and
   * numbers (an approved removal changes only flags and businesses), whose other arrays are
   * shared instead of rebuilt: 1.3-1.6 s for 5M rows otherwise.
   */
  constructor(tree: RowTree, s: SummarySource, same?: NodeSummaries) {
    const nodes = (this.nodes = tree.boxes.length / 4);
    const leaves = tree.levelCount[0] ?? 0;
    const n = s.rows;

    const flagsAny = (this.flagsAny = sharedU32(nodes));
    const flagsAll = (this.flagsAll = sharedU32(nodes));
    for (let leaf = 0; leaf < leaves; leaf++) {
      let any = 0;
      let all = -1;
      for (let r = leaf * LEAF_ROWS, e = Math.min(n, r + LEAF_ROWS); r < e; r++) {
        any |= s.flags[r];
        all &= s.flags[r];
      }
      flagsAny[leaf] = any;
      flagsAll[leaf] = all;
    }
    combineUp(tree, flagsAny, OR);
    combineUp(tree, flagsAll, AND);

    if (same !== undefined) {
      // Enums and numbers are the same rows: only what flags and businesses bound is rebuilt.
      this.codes = same.codes;
      this.codeRows = same.codeRows;
      this.codeCounts = same.codeCounts;
      this.countsFrom = same.countsFrom;
      this.min = same.min;
      this.max = same.max;
      this.nulls = same.nulls;
      this.floorsMax = same.floorsMax;
      this.roofMax = same.roofMax;
    } else {
      const codes = {} as Record<HotEnum, Uint32Array>;
      const codeRows = {} as Record<HotEnum, Float64Array>;
      for (const name of HOT_ENUM) {
        const col = s.enums[name];
        const counts = (codeRows[name] = sharedF64(256));
        for (let r = 0; r < n; r++) counts[col[r]]++;
        const out = (codes[name] = sharedU32(nodes));
        for (let leaf = 0; leaf < leaves; leaf++) {
          let bits = 0;
          for (let r = leaf * LEAF_ROWS, e = Math.min(n, r + LEAF_ROWS); r < e; r++) bits |= codeBit(col[r]);
          out[leaf] = bits;
        }
        combineUp(tree, out, OR);
      }
      this.codes = codes;
      this.codeRows = codeRows;

      // Rows per code bit of the nodes of level 1 (blocks of 512 rows) and above: the count walk
      // counts a block whose only undecided filter is a list without reading it.
      const countsFrom = (this.countsFrom = tree.levelStart.length > 1 ? tree.levelStart[1] : nodes);
      const counted = nodes - countsFrom;
      const blockRows = LEAF_ROWS * FANOUT;
      const codeCounts = {} as Record<HotEnum, Uint32Array>;
      for (const name of HOT_ENUM) {
        const col = s.enums[name];
        const out = (codeCounts[name] = sharedU32(CODE_BITS * counted));
        for (let block = 0; block < (tree.levelCount[1] ?? 0); block++) {
          const at = CODE_BITS * block;
          for (let r = block * blockRows, e = Math.min(n, r + blockRows); r < e; r++) out[at + bitIndex(col[r])]++;
        }
        for (let level = 2; level < tree.levelStart.length; level++) {
          const below = tree.levelStart[level - 1] - countsFrom;
          const belowCount = tree.levelCount[level - 1];
          const at = tree.levelStart[level] - countsFrom;
          for (let i = 0; i < tree.levelCount[level]; i++) {
            for (let c = i * FANOUT, e = Math.min(belowCount, c + FANOUT); c < e; c++) {
              for (let bit = 0; bit < CODE_BITS; bit++) out[CODE_BITS * (at + i) + bit] += out[CODE_BITS * (below + c) + bit];
            }
          }
        }
      }
      this.codeCounts = codeCounts;

      const min = {} as Record<HotNum, Float32Array>;
      const max = {} as Record<HotNum, Float32Array>;
      const nulls = (this.nulls = sharedU32(nodes));
      HOT_NUM.forEach((name, j) => {
        const lo = (min[name] = sharedF32(nodes));
        const hi = (max[name] = sharedF32(nodes));
        const { codes: values, nullCode: nullValue, scale } = storedCodes(s.num[name]);
        for (let leaf = 0; leaf < leaves; leaf++) {
          let mn = Infinity;
          let mx = -Infinity;
          let unknown = 0;
          for (let r = leaf * LEAF_ROWS, e = Math.min(n, r + LEAF_ROWS); r < e; r++) {
            const v = values[r];
            if (v !== v || v === nullValue) unknown = 1;
            else {
              if (v < mn) mn = v;
              if (v > mx) mx = v;
            }
          }
          lo[leaf] = floor32(mn / scale);
          hi[leaf] = ceil32(mx / scale);
          nulls[leaf] |= unknown << j;
        }
        combineUp(tree, lo, MIN);
        combineUp(tree, hi, MAX);
      });
      combineUp(tree, nulls, OR);
      this.min = min;
      this.max = max;

      const floorsMax = {} as Record<FloorsKey, Float32Array[]>;
      const steps = FLOOR_STEPS.length;
      const stepMax = new Float64Array(steps);
      for (const name of FLOORS_KEYS) {
        const col = s.num[name];
        const perStep = Array.from({ length: steps }, () => new Float64Array(leaves));
        for (let leaf = 0; leaf < leaves; leaf++) {
          stepMax.fill(-Infinity);
          for (let r = leaf * LEAF_ROWS, e = Math.min(n, r + LEAF_ROWS); r < e; r++) {
            const floors = numberAt(s.num.floors, r);
            const v = numberAt(col, r);
            // Unknown floors fail every floors filter, so those rows need no bound here.
            if (floors !== floors || v !== v) continue;
            for (let k = steps - 1; k >= 0 && FLOOR_STEPS[k] >= floors; k--) if (v > stepMax[k]) stepMax[k] = v;
          }
          for (let k = 0; k < steps; k++) perStep[k][leaf] = stepMax[k];
        }
        floorsMax[name] = perStep.map((m) => roundedUp(tree, m));
      }
      this.floorsMax = floorsMax;

      const roofMax = {} as Record<RoofKey, Float32Array[]>;
      const roof = s.enums.roof_shape;
      const shapes = ROOF_SHAPE.length;
      for (const name of ROOF_KEYS) {
        const { codes: values, nullCode: nullValue, scale } = storedCodes(s.num[name]);
        // Greatest stored value per leaf and shape, side by side, scaled once at the end (scale > 0
        // keeps the order). Rows of unknown shape (the null code) are in none: a roof_shape list refuses them.
        const best = new Float64Array(leaves * shapes).fill(-Infinity);
        for (let r = 0; r < n; r++) {
          const code = roof[r];
          const v = values[r];
          if (code >= shapes || v !== v || v === nullValue) continue;
          const at = ((r / LEAF_ROWS) | 0) * shapes + code;
          if (v > best[at]) best[at] = v;
        }
        roofMax[name] = ROOF_SHAPE.map((_, code) => {
          const m = new Float64Array(leaves);
          for (let leaf = 0; leaf < leaves; leaf++) m[leaf] = best[leaf * shapes + code] / scale;
          return roundedUp(tree, m);
        });
      }
      this.roofMax = roofMax;
    }

    const b = s.business;
    const leafMax = new Float64Array(leaves).fill(-Infinity);
    for (let j = 0; j < b.row.length; j++) {
      const v = b.employeesMin[j];
      const leaf = (b.row[j] / LEAF_ROWS) | 0;
      if (v !== NULL_I32 && v > leafMax[leaf]) leafMax[leaf] = v;
    }
    this.employeesMax = roundedUp(tree, leafMax);
    this.employeesMaxByCategory = CATEGORY.map((_, code) => {
      leafMax.fill(-Infinity);
      for (let j = 0; j < b.row.length; j++) {
        const v = b.employeesMin[j];
        const leaf = (b.row[j] / LEAF_ROWS) | 0;
        if (v !== NULL_I32 && s.enums.category[b.row[j]] === code && v > leafMax[leaf]) leafMax[leaf] = v;
      }
      return roundedUp(tree, leafMax);
    });

    // The currencies most businesses state a turnover in.
    const stated = new Float64Array(b.currencies.length);
    for (let j = 0; j < b.row.length; j++) if (b.turnover[j] === b.turnover[j] && b.currency[j] < stated.length) stated[b.currency[j]]++;
    this.turnoverCurrencies = [...stated.keys()]
      .filter((c) => stated[c] > 0)
      .sort((x, y) => stated[y] - stated[x] || x - y)
      .slice(0, SUMMARY_CURRENCIES);
    this.turnoverMax = this.turnoverCurrencies.map((code) => {
      leafMax.fill(-Infinity);
      for (let j = 0; j < b.row.length; j++) {
        const t = b.turnover[j];
        const leaf = (b.row[j] / LEAF_ROWS) | 0;
        if (b.currency[j] === code && t > leafMax[leaf]) leafMax[leaf] = t;
      }
      return roundedUp(tree, leafMax);
    });
  }

  /** The share of the snapshot's rows whose code of enum `name` the table keeps (table[code] !== 0). */
  share(name: HotEnum, table: Uint8Array): number {
    const counts = this.codeRows[name];
    let kept = 0;
    let all = 0;
    for (let code = 0; code < 256; code++) {
      all += counts[code];
      if (table[code] !== 0) kept += counts[code];
    }
    return all === 0 ? 0 : kept / all;
  }

  /** Per-node greatest turnover in currency `code`, or null when that currency has no summary. */
  turnoverMaxOf(code: number): Float32Array | null {
    const k = this.turnoverCurrencies.indexOf(code);
    return k < 0 ? null : this.turnoverMax[k];
  }

  get byteLength(): number {
    let bytes = this.flagsAny.byteLength + this.flagsAll.byteLength + this.nulls.byteLength + this.employeesMax.byteLength;
    for (const m of this.employeesMaxByCategory) bytes += m.byteLength;
    for (const name of FLOORS_KEYS) for (const m of this.floorsMax[name]) bytes += m.byteLength;
    for (const name of ROOF_KEYS) for (const m of this.roofMax[name]) bytes += m.byteLength;
    for (const name of HOT_ENUM) bytes += this.codes[name].byteLength + this.codeRows[name].byteLength + this.codeCounts[name].byteLength;
    for (const name of HOT_NUM) bytes += this.min[name].byteLength + this.max[name].byteLength;
    for (const t of this.turnoverMax) bytes += t.byteLength;
    return bytes;
  }
}

type Combine = (a: number, b: number) => number;
const OR: Combine = (a, b) => a | b;
const AND: Combine = (a, b) => a & b;
const MIN: Combine = (a, b) => (b < a ? b : a);
const MAX: Combine = (a, b) => (b > a ? b : a);

/** Fills every level above the leaves from the level below. */
function combineUp(tree: RowTree, out: Uint32Array | Float32Array, combine: Combine): void {
  for (let level = 1; level < tree.levelStart.length; level++) {
    const below = tree.levelStart[level - 1];
    const belowCount = tree.levelCount[level - 1];
    const at = tree.levelStart[level];
    for (let i = 0; i < tree.levelCount[level]; i++) {
      const first = i * FANOUT;
      let v = out[below + first];
      for (let c = first + 1, e = Math.min(belowCount, first + FANOUT); c < e; c++) v = combine(v, out[below + c]);
      out[at + i] = v;
    }
  }
}

/** A Float32 node array from per-leaf maxima: each rounded up, parents the max of their children. */
function roundedUp(tree: RowTree, leafMax: Float64Array): Float32Array {
  const out = sharedF32(tree.boxes.length / 4);
  for (let leaf = 0; leaf < leafMax.length; leaf++) out[leaf] = ceil32(leafMax[leaf]);
  combineUp(tree, out, MAX);
  return out;
}

const f32 = new Float32Array(1);
const bits = new Uint32Array(f32.buffer);

/** The greatest Float32 at most v (so a stored minimum never exceeds the true one). */
export function floor32(v: number): number {
  const r = Math.fround(v);
  if (!(r > v)) return r;
  if (r === 0) return -1.401298464324817e-45;
  f32[0] = r;
  bits[0] += r > 0 ? -1 : 1;
  return f32[0];
}

/** The least Float32 at least v (so a stored maximum never falls short of the true one). */
export function ceil32(v: number): number {
  const r = Math.fround(v);
  if (!(r < v)) return r;
  if (r === 0) return 1.401298464324817e-45;
  f32[0] = r;
  bits[0] += r > 0 ? 1 : -1;
  return f32[0];
}
