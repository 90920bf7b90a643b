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
 * - 'scan' (scan.ts): the plain scan, which the others replace; chosen only when forced.
 *
 * Best-first is for large areas (BEST_FIRST_MIN_ROWS candidates and more), and pays while
 * k = offset + limit is small next to the matches: the k-th key then sits high, and most
 * nodes bound below it are never read. For a deep page the k-th key sits low,
 * few nodes bound below it, the time goes to keeping the top k (which the order barely changes), and
 * the queue's per-node work is not repaid: measured on the bench mix, best-first was faster
 * than the scan at every bbox size for k up to a few hundred, and a wash, now faster, now
 * slower, for k in the thousands (bench/README.md). Such pages, and sort keys without a bound,
 * take the walk.
 */
import { FANOUT } from '../catalog/rowtree.ts';
import type { Snapshot } from '../catalog/snapshot.ts';
import type { Plan } from './plan.ts';
import type { BBox, BuildingsQuery } from './types.ts';

export type Path = 'scan' | 'walk' | 'best-first';

/** Above this k, the ranking is left to the walk's row order. */
export const BEST_FIRST_MAX_K = 1000;

/** Every plan that can match has a per-node bound of its sort key. */
export function hasBounds(plans: readonly (Plan | null)[]): boolean {
  for (const plan of plans) if (plan !== null && plan.bound === null) return false;
  return true;
}

/**
 * Below this many candidate rows (candidateRows), the walk. Measured per query on the bench
 * mix (5M country, each query on both paths in turn): under ~100,000 candidates (streets,
 * neighbourhoods, most cities) the walk was faster at both class p50s (neighbourhood 0.026 ms
 * against 0.033, city 0.044 against 0.059): the count walk settles most of them, and what is
 * left, read best-first leaf by leaf, costs more than in one run; from 1 degree up, best-first
 * (region p50 0.27 ms against 0.54). Between the two, each won about as often.
 */
export const BEST_FIRST_MIN_ROWS = 131_072;

/** The path for q, whose per-snapshot plans are `plans` (null: nothing can match there). */
export function choosePath(snapshots: readonly Snapshot[], plans: readonly (Plan | null)[], q: BuildingsQuery): Path {
  if (q.offset + q.limit > BEST_FIRST_MAX_K || !hasBounds(plans)) return 'walk';
  return candidateRows(snapshots, q.bbox, BEST_FIRST_MIN_ROWS) >= BEST_FIRST_MIN_ROWS ? 'best-first' : 'walk';
}

const stack = new Int32Array(2 * 32 * FANOUT);
/** Nodes of this level and above are looked at: 4,096 rows each. */
const ESTIMATE_LEVEL = 2;

/**
 * Rows of the bbox's candidates, over-counted: the rows of the tree nodes of ESTIMATE_LEVEL
 * (or above, when wholly inside) whose boxes meet the bbox. Stops once past `enough`.
 */
export function candidateRows(snapshots: readonly Snapshot[], bbox: BBox, enough: number): number {
  const { minLon, minLat, maxLon, maxLat } = bbox;
  let rows = 0;
  for (const s of snapshots) {
    if (s.rows === 0) continue;
    const { boxes, levelStart, levelCount, levelSpan } = s.tree;
    let sp = 0;
    stack[sp++] = levelStart.length - 1;
    stack[sp++] = 0;
    while (sp > 0 && rows < enough) {
      const i = stack[--sp];
      const level = stack[--sp];
      const b = 4 * (levelStart[level] + i);
      const x0 = boxes[b], y0 = boxes[b + 1], x1 = boxes[b + 2], y1 = boxes[b + 3];
      if (x1 < minLon || x0 > maxLon || y1 < minLat || y0 > maxLat) continue;
      if (level <= ESTIMATE_LEVEL || (x0 >= minLon && x1 <= maxLon && y0 >= minLat && y1 <= maxLat)) {
        rows += levelSpan[level];
        continue;
      }
      for (let c = i * FANOUT, e = Math.min(levelCount[level - 1], i * FANOUT + FANOUT); c < e; c++) {
        stack[sp++] = level - 1;
        stack[sp++] = c;
      }
    }
  }
  return rows;
}
