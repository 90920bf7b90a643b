/**
 * What a node's summaries (catalog/summaries.ts) prove about one filter step of a plan: that
 * no row of the node passes it (NONE), that every row does (ALL), or neither (SOME). A plan's
 * proofs together decide a node: NONE if one proof says so, ALL only if the plan has a proof
 * for every step and each says ALL.
 *
 * A proof reads a few words of summary per node and allocates nothing.
 */
import { CODE_BITS, codeBit } from '../catalog/summaries.ts';

export const NONE = 0;
export const SOME = 1;
export const ALL = 2;

export interface NodeProof {
  verdict(node: number): number;
  /** Bit j set for each node first + j (j < count <= 32) this proof rules out: verdict NONE, in one loop. */
  emptyAmong(first: number, count: number): number;
}

/** (flags & mask) === want over the node's OR and AND of flags. */
export class FlagsProof implements NodeProof {
  private readonly unwanted: number;
  constructor(
    readonly any: Uint32Array,
    readonly all: Uint32Array,
    readonly mask: number,
    readonly want: number,
  ) {
    this.unwanted = mask & ~want;
  }

  verdict(node: number): number {
    const any = this.any[node];
    const all = this.all[node];
    const want = this.want;
    // A wanted bit no row has, or an unwanted bit every row has.
    if ((want & ~any) !== 0 || (all & this.unwanted) !== 0) return NONE;
    return (all & want) === want && (any & this.unwanted) === 0 ? ALL : SOME;
  }

  emptyAmong(first: number, count: number): number {
    const { any, all, want, unwanted } = this;
    let mask = 0;
    for (let j = 0; j < count; j++) {
      if ((want & ~any[first + j]) !== 0 || (all[first + j] & unwanted) !== 0) mask |= 1 << j;
    }
    return mask;
  }
}

/**
 * table[code] !== 0 over the node's code bits; with the rows per code bit of the nodes from
 * `countsFrom` on (NodeSummaries.codeCounts), also how many rows of such a node pass.
 */
export class CodesProof implements NodeProof {
  /** Bits whose codes can pass, and bits whose codes all pass. */
  private readonly pass: number;
  private readonly full: number;

  constructor(
    readonly present: Uint32Array,
    table: Uint8Array,
    readonly counts: Uint32Array | null = null,
    readonly countsFrom = 0,
  ) {
    let pass = 0;
    let full = -1;
    for (let code = 0; code < 256; code++) {
      const bit = codeBit(code);
      if (table[code] !== 0) pass |= bit;
      else full &= ~bit;
    }
    this.pass = pass;
    this.full = full;
  }

  verdict(node: number): number {
    const bits = this.present[node];
    if ((bits & this.pass) === 0) return NONE;
    return (bits & ~this.full) === 0 ? ALL : SOME;
  }

  emptyAmong(first: number, count: number): number {
    const { present, pass } = this;
    let mask = 0;
    for (let j = 0; j < count; j++) if ((present[first + j] & pass) === 0) mask |= 1 << j;
    return mask;
  }

  /** Rows of the node that pass, or -1 when that is not known (no counts there, or rows of a bit whose codes only partly pass). */
  count(node: number): number {
    const counts = this.counts;
    if (counts === null || node < this.countsFrom) return -1;
    const bits = this.present[node];
    if ((bits & this.pass & ~this.full) !== 0) return -1;
    let passing = bits & this.pass;
    const at = CODE_BITS * (node - this.countsFrom);
    let n = 0;
    while (passing !== 0) {
      const bit = 31 - Math.clz32(passing);
      n += counts[at + bit];
      passing &= ~(1 << bit);
    }
    return n;
  }
}

/** Category OR-ed with building_type: only the category side has a summary, which can prove ALL. */
export class EitherCodesProof implements NodeProof {
  private readonly category: CodesProof;
  constructor(present: Uint32Array, table: Uint8Array) {
    this.category = new CodesProof(present, table);
  }

  verdict(node: number): number {
    return this.category.verdict(node) === ALL ? ALL : SOME;
  }

  emptyAmong(): number {
    return 0;
  }
}

/** lo <= v <= hi (unknown fails) over the node's least and greatest known value and null bit. */
export class RangeProof implements NodeProof {
  constructor(
    readonly min: Float32Array,
    readonly max: Float32Array,
    readonly nulls: Uint32Array,
    readonly bit: number,
    readonly lo: number,
    readonly hi: number,
  ) {}

  verdict(node: number): number {
    const mn = this.min[node];
    const mx = this.max[node];
    // A node with no known value holds +Infinity..-Infinity and fails one side.
    if (mx < this.lo || mn > this.hi) return NONE;
    return (this.nulls[node] & this.bit) === 0 && mn >= this.lo && mx <= this.hi ? ALL : SOME;
  }

  emptyAmong(first: number, count: number): number {
    const { min, max, lo, hi } = this;
    let mask = 0;
    for (let j = 0; j < count; j++) if (max[first + j] < lo || min[first + j] > hi) mask |= 1 << j;
    return mask;
  }
}

/**
 * The rows of a node that match, where its summaries tell: 0 when a proof says NONE; else when
 * the plan is `complete` and every proof but at most one list filter (a CodesProof with
 * counts) says ALL. -1 otherwise. Every proof is asked (a NONE after two undecided ones still
 * settles the node): the walk asks this instead of verdictOf where a plan can count.
 */
export function countOf(proofs: readonly NodeProof[], complete: boolean, node: number, rows: number): number {
  let list: CodesProof | null = null;
  let countable = complete;
  for (let i = 0; i < proofs.length; i++) {
    const proof = proofs[i];
    const v = proof.verdict(node);
    if (v === NONE) return 0;
    if (v === ALL) continue;
    if (list !== null || !(proof instanceof CodesProof)) countable = false;
    else list = proof;
  }
  if (!countable) return -1;
  return list === null ? rows : list.count(node);
}

/** Bit j set for each node first + j (j < count <= 32) some proof rules out. */
export function emptyAmong(proofs: readonly NodeProof[], first: number, count: number): number {
  let mask = 0;
  for (let i = 0; i < proofs.length; i++) mask |= proofs[i].emptyAmong(first, count);
  return mask;
}

/** The plan's verdict on a node: NONE, ALL (only when `complete`: every step has a proof), else SOME. */
export function verdictOf(proofs: readonly NodeProof[], complete: boolean, node: number): number {
  let v = complete ? ALL : SOME;
  for (let i = 0; i < proofs.length; i++) {
    const p = proofs[i].verdict(node);
    if (p === NONE) return NONE;
    if (p === SOME) v = SOME;
  }
  return v;
}
