/**
 * The walk of a deep page from a floor under its k-th key guessed from a sample of its own
 * rows, and checked at the end.
 *
 * A deep page (k = offset + limit past BUFFER_MIN_CAPACITY) keeps its best rows in a buffer
 * that selects the best k each time it holds 2k (topk.ts). With no floor every match above the
 * last cut is appended, and selecting among them is a large share of such a page's time. So
 * the walk first reads every SAMPLE_STRIDE-th block of 512 rows
 * (blocks in row order follow the space: the sample spreads over the whole bbox), counting and
 * keeping its matches as usual. The row at place GUESS_MARGIN * k / SAMPLE_STRIDE among them (by
 * key, then by rank within its snapshot) has about GUESS_MARGIN * k matches of the bbox before
 * it; the walk over the other blocks keeps out the rows after it (after the count, it tests their
 * key and rank before their filters). Ranking by key alone would keep every row of a tie, and
 * keys tie over most of a bbox where few of its buildings have one (a business sort).
 *
 * The page's rows are the places [offset, k), so the rows before them need only be counted:
 * the sample's row at place TOP_MARGIN * offset / SAMPLE_STRIDE becomes the buffer's top, and
 * the rows ranked before it are counted, not kept nor selected among (topk.ts topAt).
 *
 * The page is exact when at least k rows rank before the guess (counted or kept) and no more
 * than the offset before the top: the top k are then all among them, every row kept out ranks
 * after each of them, and the page's rows are all kept. When more than the offset rank before
 * the top (the sample misled) but k before the guess, the guess still bounds the page: the walk
 * runs again from it with no top, its count already final. When fewer than k rank before the
 * guess (the sample misled, or fewer than k rows match), the query runs again without the guess.
 */
import type { Snapshot } from '../catalog/snapshot.ts';
import { candidatesReach } from './estimate.ts';
import { walkBuildings } from './bestfirst.ts';
import type { SearchPlan } from './plan.ts';
import { SAMPLE_STRIDE } from './run.ts';
import type { SearchState } from './search-state.ts';
import { BUFFER_MIN_CAPACITY } from './topk.ts';
import type { BBox } from './types.ts';

/** The guess aims at this many times k matches at or above it. */
export const GUESS_MARGIN = 1.5;

/** The top aims at this many times the page's offset matches before it. */
export const TOP_MARGIN = 0.75;

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

/**
 * What walkGuessing did: no guess above the floor, a guess the walk confirmed, a guess it
 * confirmed with a top it did not (and the walk ran again from the guess alone), or a guess it
 * did not confirm (and the walk ran again without it).
 */
export type GuessOutcome = 'none' | 'held' | 'top missed' | 'failed';

/**
 * The walk for the page [offset, k) kept in a buffer, from `floor` (proven, or -Infinity) or
 * from a higher guess; `topMargin` 0 keeps every row before the page.
 */
export function walkGuessing(
  st: SearchState,
  snapshots: readonly Snapshot[],
  plans: readonly (SearchPlan | null)[],
  bbox: BBox,
  k: number,
  offset: number,
  floor: number,
  margin = GUESS_MARGIN,
  topMargin = TOP_MARGIN,
): GuessOutcome {
  const { heap } = st;
  heap.raiseFloor(floor);
  // The guess is a place in the order (key, then rank), not only a key: where keys tie over
  // many rows (unknown keys, employee bands) a key alone keeps every row of the tie. The sample's
  // rows after it would be kept out with the rows after the guess: the sample keeps only its best.
  const place = Math.ceil((margin * k) / SAMPLE_STRIDE) - 1;
  heap.resize(place + 1);
  walkBuildings(st, snapshots, plans, bbox, 'sampled');
  heap.resize(k);
  if (place >= heap.size) {
    walkBuildings(st, snapshots, plans, bbox, 'others');
    return 'none';
  }
  heap.selectPlace(place);
  const key = heap.keyAt(place);
  const snap = heap.snapAt(place);
  const row = heap.rowAt(place);
  const rank = heap.rankAt(place);
  if (key < floor) {
    walkBuildings(st, snapshots, plans, bbox, 'others');
    return 'none';
  }
  // The buffer's cut is a place in the order already: the guess becomes it.
  heap.cutAt(place);
  const top = Math.floor((topMargin * offset) / SAMPLE_STRIDE) - 1;
  if (top > 0 && top < place) {
    heap.selectPlace(top);
    heap.topAt(top);
  }
  walkBuildings(st, snapshots, plans, bbox, 'others');
  const before = heap.countBefore(key, snap, row, rank);
  if (heap.above <= offset && before >= k) return 'held';
  const matched = st.matched;
  st.start(
    k,
    snapshots.map((s) => s.ids),
  );
  heap.raiseFloor(floor);
  if (before < k) {
    walkBuildings(st, snapshots, plans, bbox);
    return 'failed';
  }
  // Every row the page needs ranks before the guess, and the count is done: only those rows are read.
  st.matched = matched;
  st.closeCount();
  heap.cutAtRow(key, snap, row, rank);
  walkBuildings(st, snapshots, plans, bbox);
  return 'top missed';
}
