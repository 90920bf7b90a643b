/**
 * The walk of a deep page from a floor under its k-th key guessed from a sample of its own
 * rows, and checked at the end.
 *
 * A deep page (k = offset + limit past BUFFER_MIN_CAPACITY) keeps its best rows in a buffer
 * that selects the best k each time it holds 2k (topk.ts). With no floor every match above the
 * last cut is appended, and selecting among them is a large share of such a page's time. So
 * the walk first reads every SAMPLE_STRIDE-th block of 512 rows
 * (blocks in row order follow the space: the sample spreads over the whole bbox), counting and
 * keeping its matches as usual. The key at rank GUESS_MARGIN * k / SAMPLE_STRIDE among them has
 * about GUESS_MARGIN * k matches of the bbox at or above it; the walk over the other blocks
 * keeps out the rows below it (after the count, it tests their key before their filters).
 *
 * The page is exact when at least k rows kept are at or above the guess: the top k are then
 * all among them, and every row kept out ranks after each of them. When fewer are (the sample
 * misled, or fewer than k rows match), the query runs again without the guess.
 */
import type { Snapshot } from '../catalog/snapshot.ts';
import { candidatesReach } from './estimate.ts';
import { walkBuildings } from './bestfirst.ts';
import { kthLargest } from './floor.ts';
import type { SearchPlan } from './plan.ts';
import { SAMPLE_STRIDE } from './run.ts';
import type { SearchState } from './search-state.ts';
import { BUFFER_MIN_CAPACITY } from './topk.ts';
import type { BBox } from './types.ts';

/** The guess aims at this many times k matches at or above it. */
export const GUESS_MARGIN = 1.5;

/**
 * The buffer selects only once it holds 2k rows: a bbox of fewer than GUESS_MIN_ROWS * k
 * candidate rows (over-counted from the tree's upper boxes, ~0.2 µs) has too few matches for a
 * floor to save selections, and its walk would only be cut in two.
 */
const GUESS_MIN_ROWS = 4;

/** A page of k rows kept in a buffer (not a heap), over a bbox large enough for a guess to pay. */
export function worthGuessing(st: SearchState, snapshots: readonly Snapshot[], bbox: BBox, k: number): boolean {
  return k > BUFFER_MIN_CAPACITY && candidatesReach(st, snapshots, bbox, GUESS_MIN_ROWS * k);
}

/** What walkGuessing did: no guess above the floor, a guess the walk confirmed, or one it did not (and the walk ran again without it). */
export type GuessOutcome = 'none' | 'held' | 'failed';

/** The walk for a page of k rows kept in a buffer, from `floor` (proven, or -Infinity) or from a higher guess. */
export function walkGuessing(
  st: SearchState,
  snapshots: readonly Snapshot[],
  plans: readonly (SearchPlan | null)[],
  bbox: BBox,
  k: number,
  floor: number,
  margin = GUESS_MARGIN,
): GuessOutcome {
  const { heap, keys } = st;
  heap.raiseFloor(floor);
  walkBuildings(st, snapshots, plans, bbox, 'sampled');
  const rank = Math.ceil((margin * k) / SAMPLE_STRIDE);
  const n = heap.keysInto(keys);
  const guess = n < rank ? -Infinity : kthLargest(keys, n, rank);
  if (guess > floor) heap.raiseFloor(guess);
  walkBuildings(st, snapshots, plans, bbox, 'others');
  if (guess <= floor) return 'none';
  if (heap.countAtLeast(guess) >= k) return 'held';
  st.start(
    k,
    snapshots.map((s) => s.ids),
  );
  heap.raiseFloor(floor);
  walkBuildings(st, snapshots, plans, bbox);
  return 'failed';
}
