/**
 * The planner's choice for one GET /buildings query, among paths that all give the same answer
 * (the choice is only about time):
 *
 * - 'best-first' (bestfirst.ts): the walk over node summaries counts until the count is
 *   settled, then nodes are ranked best-first by the greatest key they can hold. It needs a
 *   per-node bound of the sort key: volume, area, height and employees always have one;
 *   turnover has one for the SUMMARY_CURRENCIES currencies most stated in the snapshot.
 * - 'walk' (bestfirst.ts): the same walk in row order to the end, ranking as the scan does;
 *   nodes proven empty are still skipped, nodes proven full still skip their filters.
 * - 'scan' (scan.ts): the plain scan, which the others replace; chosen only when forced.
 *
 * Best-first pays while k = offset + limit is small next to the matches: the k-th key then sits
 * high, and most nodes bound below it are never read. For a deep page the k-th key sits low,
 * few nodes bound below it, the time goes to the heap (which the order barely changes), and
 * the queue's per-node work is not repaid: measured on the bench mix, best-first was faster
 * than the scan at every bbox size for k up to a few hundred, and a wash, now faster, now
 * slower, for k in the thousands (bench/README.md). Such pages, and sort keys without a bound,
 * take the walk.
 */
import type { Plan } from './plan.ts';
import type { BuildingsQuery } from './types.ts';

export type Path = 'scan' | 'walk' | 'best-first';

/** Above this k, the ranking is left to the walk's row order. */
export const BEST_FIRST_MAX_K = 1000;

/** Every plan that can match has a per-node bound of its sort key. */
export function hasBounds(plans: readonly (Plan | null)[]): boolean {
  for (const plan of plans) if (plan !== null && plan.bound === null) return false;
  return true;
}

/** The path for q, whose per-snapshot plans are `plans` (null: nothing can match there). */
export function choosePath(plans: readonly (Plan | null)[], q: BuildingsQuery): Path {
  return q.offset + q.limit <= BEST_FIRST_MAX_K && hasBounds(plans) ? 'best-first' : 'walk';
}
