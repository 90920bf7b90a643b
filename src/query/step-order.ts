/**
 * The order a plan's column steps run in. The first step reads every row of a run in order; each
 * next one reads only the rows the steps before it kept, at scattered places. So a step that
 * keeps few rows goes early, weighed by what its kind costs: a code table's first pass costs
 * about three times a vector one, and a refine over rows spread thin pays a cache line a row.
 *
 * The share of rows a step keeps is the snapshot's (list filters: the summaries' code counts;
 * flags and bounds: SAMPLE_ROWS rows spread over the column), not the bbox's.
 */
import { BetweenF64, BetweenI16, BetweenI32, FlagsStep, type Step } from './kernels.ts';

/** What orderSteps weighs of a step. */
export interface CostedStep {
  step: Step;
  /** The share of rows it keeps: 1 where unknown, NaN to estimate it from the column's sample (flags, bounds). */
  share: number;
  /** Nanoseconds a row of its first pass. */
  firstCost: number;
  /** Bytes a row of its column, for the cache lines a refine reads. */
  width: number;
}

/**
 * Nanoseconds a row, measured over a 1° box of the 5M bench country, warm (bench/README.md, the
 * steps in the order a cost model picks): a first pass of 8 values at once (flags, Int16, Int32)
 * or of 4 (Float64), a code table read a row at a time; a refine per row kept so far, and per
 * cache line it reads.
 */
export const VECTOR_FIRST = 0.25;
export const F64_FIRST = 0.375;
export const CODES_FIRST = 0.7;
const REFINE_ROW = 0.9;
const REFINE_LINE = 6;
const LINE_BYTES = 64;

/**
 * The cost a box row of refining a column of `width` bytes (1, 2, 4 or 8) when `p` of the rows
 * reach it: a line is read when any of its rows is, with chance 1 - (1 - p)^rowsPerLine.
 */
function refineCost(width: number, p: number): number {
  const rowsPerLine = LINE_BYTES / width;
  let none = 1 - p;
  for (let k = 1; k < rowsPerLine; k *= 2) none *= none;
  return REFINE_ROW * p + (REFINE_LINE * (1 - none)) / rowsPerLine;
}

/** The cost a box row of running steps in the order `order` (indices into shares and the rest). */
function orderCost(order: Int32Array, shares: Float64Array, steps: readonly CostedStep[]): number {
  let cost = steps[order[0]].firstCost;
  let p = shares[order[0]];
  for (let i = 1; i < order.length; i++) {
    cost += refineCost(steps[order[i]].width, p);
    p *= shares[order[i]];
  }
  return cost;
}

/**
 * The steps in the order orderCost judges cheapest among these: each step in turn first, the
 * rest by their refine's cost over the rows it rules out (the order that is best where costs
 * are proportional to the rows read). Plain loops, no closures: compile runs it for every query.
 */
export function orderSteps(steps: readonly CostedStep[]): Step[] {
  const n = steps.length;
  const out = new Array<Step>(n);
  if (n < 2) {
    for (let i = 0; i < n; i++) out[i] = steps[i].step;
    return out;
  }
  const shares = new Float64Array(n);
  for (let i = 0; i < n; i++) shares[i] = Number.isNaN(steps[i].share) ? sampledShare(steps[i].step) : steps[i].share;
  const order = new Int32Array(n);
  const best = new Int32Array(n);
  const ranks = new Float64Array(n);
  let bestCost = Infinity;
  for (let f = 0; f < n; f++) {
    const p = shares[f];
    order[0] = f;
    let m = 1;
    for (let i = 0; i < n; i++) {
      if (i === f) continue;
      const rank = refineCost(steps[i].width, p) / Math.max(1e-9, 1 - shares[i]);
      let j = m++;
      for (; j > 1 && ranks[j - 1] > rank; j--) {
        order[j] = order[j - 1];
        ranks[j] = ranks[j - 1];
      }
      order[j] = i;
      ranks[j] = rank;
    }
    const cost = orderCost(order, shares, steps);
    if (cost < bestCost) {
      bestCost = cost;
      best.set(order);
    }
  }
  for (let i = 0; i < n; i++) out[i] = steps[best[i]].step;
  return out;
}

/** A flags or bound step's share of its column's sampled rows; 1 for any other step. */
function sampledShare(step: Step): number {
  if (step instanceof FlagsStep) return shareOfFlags(step.flags, step.mask, step.want);
  if (step instanceof BetweenI16 || step instanceof BetweenI32 || step instanceof BetweenF64)
    return shareWithin(step.col, step.lo, step.hi);
  return 1;
}

/** Rows of a column sampled to estimate a share: spread evenly, one in each of SAMPLE_ROWS equal parts. */
const SAMPLE_ROWS = 128;

type Column = Uint32Array | Int32Array | Int16Array | Float64Array;

/** Each column's sample, made at its first use: the columns of a snapshot never change. */
const samples = new WeakMap<Column, Column>();

function sampleOf<T extends Column>(col: T): T {
  let sample = samples.get(col) as T | undefined;
  if (sample === undefined) {
    const n = Math.min(SAMPLE_ROWS, col.length);
    sample = new (col.constructor as new (length: number) => T)(n);
    for (let i = 0; i < n; i++) sample[i] = col[Math.floor(((i + 0.5) * col.length) / n)];
    samples.set(col, sample);
  }
  return sample;
}

/** The share of `col`'s sampled rows with lo <= value <= hi (a NaN fails); 1 for an empty column. */
function shareWithin(col: Int32Array | Int16Array | Float64Array, lo: number, hi: number): number {
  const sample = sampleOf(col);
  if (sample.length === 0) return 1;
  let kept = 0;
  for (let i = 0; i < sample.length; i++) {
    const v = sample[i];
    if (v >= lo && v <= hi) kept++;
  }
  return kept / sample.length;
}

/** The share of the sampled rows of `flags` with (flags & mask) === want; 1 for an empty column. */
function shareOfFlags(flags: Uint32Array, mask: number, want: number): number {
  const sample = sampleOf(flags);
  if (sample.length === 0) return 1;
  let kept = 0;
  for (let i = 0; i < sample.length; i++) if ((sample[i] & mask) >>> 0 === want >>> 0) kept++;
  return kept / sample.length;
}
