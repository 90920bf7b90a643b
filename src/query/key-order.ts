/**
 * A first page of a large area read off the top of its sort key's whole order
 * (catalog/key-order.ts): rows come in the order the page ranks them, KEY_ORDER_BATCH at a
 * time, through the bbox test and the filters, into the heap; a snapshot is done once k of its
 * rows have passed, since every later row of its order ranks after them. The answer is the
 * best-first search's, row for row.
 *
 * It pays where matches are common over the snapshot's rows: a 3° box with loose filters finds
 * its 100 tallest within a few hundred rows of the order, where best-first reads every block that
 * holds one tall building, matching or not. Where matches are rare it reads many rows at random,
 * each a cache miss per column: so it is tried only when the count walk's rate of matches
 * projects at most KEY_ORDER_ROWS rows read, and given up past a few times the projection, or
 * as soon as the rate of rows passing so far projects that (the heap is emptied and best-first
 * ranks as before). The projection misses where the key and the
 * matches are correlated: the tallest buildings of a country lie in its cities, outside most
 * boxes, and a cap on floors leaves out the tallest everywhere.
 */
import type { Snapshot } from '../catalog/snapshot.ts';
import { candidateRows } from './estimate.ts';
import { bboxRefine } from './kernels.ts';
import type { SearchPlan } from './plan.ts';
import type { SearchState } from './search-state.ts';
import type { BBox } from './types.ts';

/** Rows of the order tested at a time. */
export const KEY_ORDER_BATCH = 256;
/** Tried when the rows to read are projected at most this many. */
export const KEY_ORDER_ROWS = 8192;
/** Given up past KEY_ORDER_SLACK times the projection, at least KEY_ORDER_LEAST rows (so at most KEY_ORDER_MOST). */
export const KEY_ORDER_SLACK = 2;
export const KEY_ORDER_LEAST = 2048;
export const KEY_ORDER_MOST = KEY_ORDER_SLACK * KEY_ORDER_ROWS;

/**
 * Given up early once the rows read and those still needed at the rate seen so far pass this
 * many times the budget: where the key and the filters go against each other, the first batches
 * already show it, and each row read is a cache miss or more per column.
 */
export const KEY_ORDER_LATE = 2;

/**
 * Whether the order is past hope after `at` rows of a snapshot's order, `found` of them passing
 * and `missing` more wanted: the rows read over every snapshot, `read`, and those still needed at
 * the rate seen (one more pass counted: none seen is no rate of 0), at most the `left` unread in
 * the snapshot, pass KEY_ORDER_LATE times the budget.
 */
export function pastHope(read: number, at: number, found: number, missing: number, left: number, budget: number): boolean {
  return at > 0 && read + Math.min(left, (missing * at) / (found + 1)) > KEY_ORDER_LATE * budget;
}

/** The rows read before the order is given up, for a projection of `rows`. */
export function keyOrderBudget(rows: number): number {
  return Math.min(KEY_ORDER_MOST, Math.max(KEY_ORDER_LEAST, KEY_ORDER_SLACK * rows));
}

/**
 * The rows the order is projected to read for the page of k: k over the share of all the
 * snapshots' rows that match, the count walk's rate of matches (matched over the rows it
 * disposed of) times the bbox's share of rows (its candidates, over-counted).
 */
export function keyOrderRows(k: number, matched: number, covered: number, candidates: number, rows: number): number {
  if (matched === 0 || covered === 0 || candidates === 0) return Infinity;
  return (k * rows * covered) / (matched * candidates);
}

/** Every plan that can match has a key order. */
function hasOrders(plans: readonly (SearchPlan | null)[]): boolean {
  for (const plan of plans) if (plan !== null && plan.order === null) return false;
  return true;
}

/**
 * After a count walk that capped while holding (the heap empty, st's count past MAX_WINDOW):
 * ranks the page from the plans' key orders where they have them and the projection is short;
 * false, the heap empty, where it did not.
 */
export function rankFromOrder(st: SearchState, snapshots: readonly Snapshot[], plans: readonly (SearchPlan | null)[], bbox: BBox): boolean {
  if (!hasOrders(plans)) return false;
  if (st.candidates < 0) st.candidates = candidateRows(st, snapshots, bbox);
  let rows = 0;
  for (const s of snapshots) rows += s.rows;
  const k = st.heap.capacityOf();
  const projected = keyOrderRows(k, st.matched, st.coveredRows, st.candidates, rows);
  return projected <= KEY_ORDER_ROWS && rankByKeyOrder(st, snapshots, plans, bbox, k, keyOrderBudget(projected));
}

/**
 * Ranks the page into st's heap (empty, capacity k) from the plans' key orders, which every plan
 * that can match has; false, with the heap empty again, when `budget` rows were read first.
 */
export function rankByKeyOrder(
  st: SearchState,
  snapshots: readonly Snapshot[],
  plans: readonly (SearchPlan | null)[],
  bbox: BBox,
  k: number,
  budget: number,
): boolean {
  const { heap, sel } = st;
  let read = 0;
  for (let si = 0; si < snapshots.length; si++) {
    const plan = plans[si];
    if (plan === null) continue;
    const s = snapshots[si];
    const order = plan.order!;
    const { steps, key } = plan;
    let found = 0;
    for (let a = 0; a < s.rows && found < k; a += KEY_ORDER_BATCH) {
      if (read >= budget || pastHope(read, a, found, k - found, s.rows - a, budget)) {
        heap.clear();
        return false;
      }
      const b = Math.min(s.rows, a + KEY_ORDER_BATCH);
      for (let i = a; i < b; i++) sel[i - a] = order[i];
      read += b - a;
      let n = bboxRefine(s.lon, s.lat, bbox, sel, b - a);
      for (let i = 0; i < steps.length && n > 0; i++) n = steps[i].refine(sel, n);
      // Past the k-th of this snapshot, its rows rank after k of its own: none can enter.
      if (found + n > k) n = k - found;
      found += n;
      if (n > 0) key.offer(heap, si, s.rank, sel, n);
    }
  }
  return true;
}
