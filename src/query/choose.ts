/**
 * The planner's choice for one GET /buildings query, among paths that all give the same answer
 * (the choice is only about time):
 *
 * - 'best-first' (bestfirst.ts): the walk over node summaries counts until the count is
 *   settled, then nodes are ranked best-first by the greatest key they can hold. It needs a
 *   per-node bound of the sort key: volume, area, height and employees always have one;
 *   turnover has one for the SUMMARY_CURRENCIES currencies most stated in the snapshot.
 * - 'walk' (bestfirst.ts): the same walk in row order to the end, ranking as the scan does;
 *   nodes proven empty are still skipped, nodes proven full still skip their filters; a deep
 *   page starts from a floor under its k-th key proven by leaf maxima (floor.ts), or guessed
 *   from a sample of its blocks and checked at the end (guess.ts).
 * - 'scan' (scan.ts): the plain scan, which the others replace: chosen for a bbox that fits in
 *   one node of 4,096 rows (estimate.ts fitsInOneNode: streets, neighbourhoods), and where no
 *   filter of the query has a node summary and the page is too short to look for a floor
 *   (hasProofs).
 *
 * Best-first is for large areas (BEST_FIRST_MIN_ROWS candidates and more; a page with no filter,
 * whose count costs nothing, from BEST_FIRST_UNFILTERED_MIN_ROWS), and pays while
 * k = offset + limit is small next to the matches: the k-th key then sits high, and most
 * nodes bound below it are never read. For a deep page the k-th key sits low,
 * few nodes bound below it, the time goes to keeping the top k (which the order barely changes), and
 * the queue's per-node work is not repaid (bench/README.md, bench:query). Such pages, and sort
 * keys without a bound, take the walk.
 */
import type { Snapshot } from '../catalog/snapshot.ts';
import { candidatesReach, fitsInOneNode } from './estimate.ts';
import { FLOOR_MIN_K } from './floor.ts';
import type { SearchPlan } from './plan.ts';
import type { SearchState } from './search-state.ts';
import type { BuildingsQuery } from './types.ts';

export type Path = 'scan' | 'walk' | 'best-first';

/** Above this k, the ranking is left to the walk's row order. */
export const BEST_FIRST_MAX_K = 1000;

/** Every plan that can match has a per-node bound of its sort key. */
export function hasBounds(plans: readonly (SearchPlan | null)[]): boolean {
  for (const plan of plans) if (plan !== null && plan.bound === null) return false;
  return true;
}

/**
 * Below this many candidate rows (candidateRows), the walk (or the scan: hasProofs): the count
 * walk settles most of such a bbox, and what is left, read best-first leaf by leaf, costs more
 * than in one run. Tuned with `npm run bench:query` (bench/README.md, bench:query).
 */
export const BEST_FIRST_MIN_ROWS = 131_072;

/**
 * The same for a page with no filter: every node wholly inside is counted unread, so the count
 * costs nothing and best-first reads only the nodes bounded above the k-th key. Below this the
 * count barely caps (fewer than ~10,001 rows lie in the box) and the scan reads them in one run.
 * Tuned with `npm run bench:query` (bench/README.md, bench:query).
 */
export const BEST_FIRST_UNFILTERED_MIN_ROWS = 49_152;

/** No plan that can match has a filter step. */
function unfiltered(plans: readonly (SearchPlan | null)[]): boolean {
  for (const plan of plans) if (plan !== null && plan.steps.length > 0) return false;
  return true;
}

/**
 * The path for q, whose per-snapshot plans are `plans` (null: nothing can match there).
 *
 * A bbox that fits in one node of 4,096 rows takes the scan whatever its filters and page: the
 * walk's node summaries, cold in a mix of queries over the whole country, cost more there than
 * the few rows they spare.
 */
export function choosePath(
  st: SearchState,
  snapshots: readonly Snapshot[],
  plans: readonly (SearchPlan | null)[],
  q: BuildingsQuery,
): Path {
  const k = q.offset + q.limit;
  if (fitsInOneNode(snapshots, q.bbox)) return 'scan';
  const least = unfiltered(plans) ? BEST_FIRST_UNFILTERED_MIN_ROWS : BEST_FIRST_MIN_ROWS;
  if (k <= BEST_FIRST_MAX_K && hasBounds(plans) && candidatesReach(st, snapshots, q.bbox, least)) return 'best-first';
  return k > FLOOR_MIN_K || hasProofs(plans) ? 'walk' : 'scan';
}

/**
 * Some plan has a filter whose node summaries can prove something. Without one, and without a
 * floor to look for, the walk reads what the scan reads, node by node, and pays for the nodes.
 */
export function hasProofs(plans: readonly (SearchPlan | null)[]): boolean {
  for (const plan of plans) if (plan !== null && plan.proofs.length > 0) return true;
  return false;
}
