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
import { candidatesReach } from './estimate.ts';
import type { SearchPlan } from './plan.ts';
import type { SearchState } from './search-state.ts';
import { ALL, NONE, verdictOf } from './proofs.ts';
import type { BBox } from './types.ts';

/** Pages of k at most this are not worth the search (see buildings.ts). */
export const FLOOR_MIN_K = 256;

const F32_MAX = 3.4028234663852886e38;

/** A key that at least k matches of `plans` (one per snapshot) in bbox reach, or -Infinity. */
export function provenFloor(
  st: SearchState,
  snapshots: readonly Snapshot[],
  plans: readonly (SearchPlan | null)[],
  bbox: BBox,
  k: number,
): number {
  // k leaves wholly inside hold k * LEAF_ROWS rows: where the bbox's candidates (over-counted
  // from the tree's upper boxes, ~0.2 µs) are fewer, the search (~1 µs on a street) is vain.
  if (k === 0 || !candidatesReach(st, snapshots, bbox, k * LEAF_ROWS)) return -Infinity;
  let n = 0;
  for (let si = 0; si < snapshots.length; si++) {
    const plan = plans[si];
    if (plan === null || plan.attained === null || snapshots[si].rows === 0) continue;
    n = collect(st, snapshots[si], plan, plan.attained, bbox, n);
  }
  return n < k ? -Infinity : kthLargest(st.maxima, n, k);
}

/** Appends to st.maxima[n..] the lower bound of the greatest key of each leaf inside bbox proven ALL; returns the new n. */
function collect(st: SearchState, s: Snapshot, plan: SearchPlan, attained: Float32Array, bbox: BBox, n: number): number {
  const leaves = new LeafMaxima(st, s, plan, attained, n);
  st.stack[0] = s.tree.levelStart.length - 1;
  st.stack[1] = 0;
  s.tree.walk(bbox, leaves, st.stack, 2);
  return leaves.n;
}

/** collect's visitor: nodes inside the bbox and proven ALL give their leaves' maxima; others are searched below. */
class LeafMaxima implements NodeVisitor {
  constructor(
    private readonly st: SearchState,
    private readonly s: Snapshot,
    private readonly plan: SearchPlan,
    private readonly attained: Float32Array,
    public n: number,
  ) {}

  visit(level: number, i: number, node: number, inside: boolean): NodeStep {
    const verdict = verdictOf(this.plan.proofs, this.plan.complete, node);
    if (verdict === NONE) return 'over';
    if (verdict !== ALL || !inside) return 'down';
    // Every leaf below is inside and proven ALL too.
    const { levelCount, levelSpan } = this.s.tree;
    const first = (i * levelSpan[level]) / LEAF_ROWS;
    const end = Math.min(levelCount[0], first + levelSpan[level] / LEAF_ROWS);
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
}

function grow(st: SearchState, need: number): Float64Array {
  let size = st.maxima.length;
  while (size < need) size *= 2;
  const next = new Float64Array(size);
  next.set(st.maxima);
  return (st.maxima = next);
}
