/**
 * A floor under a deep page's k-th key, proven from the node summaries before any row is read.
 *
 * A leaf wholly inside the bbox whose summaries prove every row matches holds a matching row
 * whose key is its greatest (the summary's maximum, less one Float32 step for the rounding up).
 * Leaves are disjoint, so when at least k such leaves exist, at least k matches have a key at
 * least the k-th greatest of their maxima: no row below that can enter the page, so rows
 * under it are dropped on their key alone, before the filters and before the top-k keeps them.
 * The maximum of 64 rows sits high in their distribution, so the floor lands close under the
 * final threshold. With topk.ts's buffer, what it spares is the rows kept before the buffer's
 * first cut: it pays on large unfiltered deep pages.
 *
 * Only keys whose summary maximum is attained by a row of the node (volume, area, height: plain
 * columns) give a floor; so do only leaves proven ALL, which a filter that leaves out rows at
 * random rarely allows. Without k such leaves there is no floor (-Infinity).
 */
import type { Snapshot } from '../catalog/snapshot.ts';
import { LEAF_ROWS, type NodeStep, type NodeVisitor } from '../catalog/rowtree.ts';
import { kthLargest } from '../catalog/selection.ts';
import { candidateRows } from './estimate.ts';
import type { SearchPlan } from './plan.ts';
import type { SearchState } from './search-state.ts';
import { ALL, NONE, verdictOf } from './proofs.ts';
import type { BBox } from './types.ts';

/** Pages of k at most this are not worth the search (see buildings.ts). */
export const FLOOR_MIN_K = 256;

const F32_MAX = 3.4028234663852886e38;

/**
 * The search gives up once it has looked at this many leaves (proven, ruled out or undecided)
 * and those proven ALL among them, projected over the bbox's candidate leaves, fall short of k:
 * a filter that leaves out rows at random leaves almost no leaf proven, and the search would
 * otherwise go down to every leaf of the bbox for nothing. A floor is only ever a saving, so
 * giving up on a projection costs time, never an answer.
 */
export const FLOOR_TRIAL_LEAVES = 256;

/** A key that at least k matches of `plans` (one per snapshot) in bbox reach, or -Infinity. */
export function provenFloor(
  st: SearchState,
  snapshots: readonly Snapshot[],
  plans: readonly (SearchPlan | null)[],
  bbox: BBox,
  k: number,
): number {
  // k leaves wholly inside hold k * LEAF_ROWS rows: where the bbox's candidates (over-counted
  // from the tree's upper boxes) are fewer, the search is vain. The count also sizes its give-up.
  if (k === 0) return -Infinity;
  const candidates = candidateRows(st, snapshots, bbox);
  if (candidates < k * LEAF_ROWS) return -Infinity;
  const leaves = (st.leafMaxima ??= new LeafMaxima(st));
  leaves.start(k, candidates / LEAF_ROWS);
  for (let si = 0; si < snapshots.length; si++) {
    const plan = plans[si];
    if (plan === null || plan.attained === null || snapshots[si].rows === 0) continue;
    if (!leaves.collect(snapshots[si], plan, plan.attained, bbox)) break;
  }
  st.floorLeaves = leaves.looked;
  return leaves.n < k ? -Infinity : kthLargest(st.maxima, leaves.n, k);
}

/**
 * The floor's walk: nodes inside the bbox and proven ALL give their leaves' maxima; others are
 * searched below. One per search state, reused (SearchState.leafMaxima).
 */
export class LeafMaxima implements NodeVisitor {
  /** Maxima in st.maxima[0..n). */
  n = 0;
  /** Leaves looked at, and those proven ALL among them (FLOOR_TRIAL_LEAVES). */
  looked = 0;
  private proven = 0;
  private k = 0;
  /** The bbox's candidate leaves, over-counted. */
  private leaves = 0;
  private s!: Snapshot;
  private plan!: SearchPlan;
  private attained!: Float32Array;

  constructor(private readonly st: SearchState) {}

  /** Starts the search for a floor under the k-th key of a bbox of about `leaves` candidate leaves. */
  start(k: number, leaves: number): void {
    this.n = this.looked = this.proven = 0;
    this.k = k;
    this.leaves = leaves;
  }

  /** Appends the maxima of snapshot s's leaves inside bbox proven ALL; false once the search gave up. */
  collect(s: Snapshot, plan: SearchPlan, attained: Float32Array, bbox: BBox): boolean {
    this.s = s;
    this.plan = plan;
    this.attained = attained;
    const st = this.st;
    st.stack[0] = s.tree.levelStart.length - 1;
    st.stack[1] = 0;
    return s.tree.walk(bbox, this, st.stack, 2) === 0;
  }

  visit(level: number, i: number, node: number, inside: boolean): NodeStep {
    const verdict = verdictOf(this.plan.proofs, this.plan.complete, node);
    const { levelCount, levelSpan } = this.s.tree;
    if (verdict === NONE) {
      this.looked += levelSpan[level] / LEAF_ROWS;
      return 'over';
    }
    if (verdict !== ALL || !inside) {
      if (level > 0) return 'down';
      this.looked++;
      return this.hopeless() ? 'stop' : 'over';
    }
    // Every leaf below is inside and proven ALL too.
    const first = (i * levelSpan[level]) / LEAF_ROWS;
    const end = Math.min(levelCount[0], first + levelSpan[level] / LEAF_ROWS);
    this.looked += end - first;
    this.proven += end - first;
    let n = this.n;
    const maxima = this.st.maxima.length < n + (end - first) ? grow(this.st, n + (end - first)) : this.st.maxima;
    const attained = this.attained;
    for (let leaf = first; leaf < end; leaf++) {
      const v = attained[leaf];
      // A leaf of unknown keys only holds -Infinity: no known key to vouch for. Above the
      // greatest Float32 (+Infinity), the key is at least that greatest Float32.
      if (v === -Infinity) continue;
      maxima[n++] = v === Infinity ? F32_MAX : v - Math.max(Math.abs(v) * 2 ** -23, 2 ** -149);
    }
    this.n = n;
    return 'over';
  }

  private hopeless(): boolean {
    return this.looked >= FLOOR_TRIAL_LEAVES && (this.proven / this.looked) * this.leaves < this.k;
  }
}

function grow(st: SearchState, need: number): Float64Array {
  let size = st.maxima.length;
  while (size < need) size *= 2;
  const next = new Float64Array(size);
  next.set(st.maxima);
  return (st.maxima = next);
}
