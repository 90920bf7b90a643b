/**
 * The planner's choice for one GET /buildings query: the plain scan (scan.ts) or the count and
 * best-first search over node summaries (bestfirst.ts). Both give the same answer; the choice
 * is only about time.
 *
 * The search needs a per-node bound of the sort key. Volume, area, height and employees always
 * have one; turnover has one for the SUMMARY_CURRENCIES currencies most stated in the snapshot
 * (catalog/summaries.ts), and a sort by turnover in any other currency is scanned.
 *
 * Where a bound exists the search is chosen whatever the bbox size and filters: on the bench
 * mix (bench/README.md) it was no slower in any bucket of candidate rows, from a street (the
 * proofs drop whole runs that cannot match) to 3x3 degrees, and it adapts to the filters as it
 * runs: a node proven empty is skipped, a node proven full is counted unread, and where no
 * proof helps (selective filters without summaries, keys mostly unknown) it degrades to the
 * scan's own runs of rows.
 */
import type { Plan } from './plan.ts';

export type Path = 'scan' | 'best-first';

/** The path for a query whose per-snapshot plans are `plans` (null: nothing can match there). */
export function choosePath(plans: readonly (Plan | null)[]): Path {
  for (const plan of plans) if (plan !== null && plan.bound === null) return 'scan';
  return 'best-first';
}
