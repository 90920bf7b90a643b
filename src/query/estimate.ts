/**
 * How many rows a bbox's candidates can number, read off the row tree's upper boxes without
 * touching a row: what the planner (choose.ts) and the searches that decide whether a floor can
 * pay (floor.ts, guess.ts, bestfirst.ts) size a query by.
 *
 * The count is over: the rows of the tree nodes of ESTIMATE_LEVEL (or above, when wholly inside)
 * whose boxes meet the bbox. Going down a level never raises it (a node's children hold its
 * rows), which lets `candidatesReach` stop at the first level whose nodes already hold too few.
 */
import { FANOUT } from '../catalog/rowtree.ts';
import type { Snapshot } from '../catalog/snapshot.ts';
import type { SearchState } from './search-state.ts';
import type { BBox } from './types.ts';

/** Nodes of this level and above are looked at: 4,096 rows each (Snapshot.leastNodeArea is of this level). */
const ESTIMATE_LEVEL = 2;

/** The bbox's candidate rows, over-counted (above). */
export function candidateRows(st: SearchState, snapshots: readonly Snapshot[], bbox: BBox): number {
  let rows = 0;
  for (const s of snapshots) rows += walk(st.estimateStack, s, bbox, Infinity, -Infinity);
  return rows;
}

/**
 * candidateRows(snapshots, bbox) >= n, decided in fewer nodes: a street's bbox is settled a
 * level or two below the root, where the few nodes it meets hold fewer than n rows together.
 * The planner asks this of every query, where the tree's upper boxes are often cold: the full
 * count would cost a street query a noticeable share of its time.
 */
export function candidatesReach(st: SearchState, snapshots: readonly Snapshot[], bbox: BBox, n: number): boolean {
  let rest = 0;
  for (const s of snapshots) rest += s.rows;
  let rows = 0;
  for (const s of snapshots) {
    rest -= s.rows;
    rows += walk(st.estimateStack, s, bbox, n - rows, n - rows - rest);
    if (rows >= n) return true;
    if (rows + rest < n) return false;
  }
  return false;
}

/**
 * The bbox fits in a square of less area than any full node of ESTIMATE_LEVEL (4,096 rows
 * where the snapshot is densest: Snapshot.leastNodeArea): it meets a few such nodes. A
 * heuristic, not a bound (nodes may overlap), for the planner alone, whose choice is only about
 * time; it reads one number beside the extent every query reads, where `candidatesReach` reads
 * ~20 of the tree's upper boxes, cold in a mix of queries over the whole country. Street and
 * neighbourhood bboxes fit; city bboxes do not.
 */
export function fitsInOneNode(snapshots: readonly Snapshot[], bbox: BBox): boolean {
  const side = Math.max(bbox.maxLon - bbox.minLon, bbox.maxLat - bbox.minLat);
  for (const s of snapshots) if (!(side * side < s.leastNodeArea)) return false;
  return true;
}

/**
 * Snapshot s's over-count for bbox, stopped once past `enough`, or once the nodes counted and
 * those still to look at hold fewer than `short` rows (returning that upper bound). `stack`
 * holds the walk's (level, index) pairs.
 */
function walk(stack: Int32Array, s: Snapshot, bbox: BBox, enough: number, short: number): number {
  if (s.rows === 0) return 0;
  const { minLon, minLat, maxLon, maxLat } = bbox;
  const { boxes, levelStart, levelCount, levelSpan } = s.tree;
  const top = levelStart.length - 1;
  let b = 4 * levelStart[top];
  if (boxes[b + 2] < minLon || boxes[b] > maxLon || boxes[b + 3] < minLat || boxes[b + 1] > maxLat) return 0;
  let rows = 0;
  // Rows of the nodes on the stack, each of which meets the bbox.
  let pending = s.rows;
  let sp = 0;
  stack[sp++] = top;
  stack[sp++] = 0;
  while (sp > 0) {
    if (rows >= enough) return rows;
    if (rows + pending < short) return rows + pending;
    const i = stack[--sp];
    const level = stack[--sp];
    const span = levelSpan[level];
    const held = Math.min(span, s.rows - i * span);
    pending -= held;
    b = 4 * (levelStart[level] + i);
    if (level <= ESTIMATE_LEVEL || (boxes[b] >= minLon && boxes[b + 2] <= maxLon && boxes[b + 1] >= minLat && boxes[b + 3] <= maxLat)) {
      rows += held;
      continue;
    }
    const below = levelStart[level - 1];
    const childSpan = levelSpan[level - 1];
    for (let c = i * FANOUT, e = Math.min(levelCount[level - 1], i * FANOUT + FANOUT); c < e; c++) {
      b = 4 * (below + c);
      if (boxes[b + 2] < minLon || boxes[b] > maxLon || boxes[b + 3] < minLat || boxes[b + 1] > maxLat) continue;
      pending += Math.min(childSpan, s.rows - c * childSpan);
      stack[sp++] = level - 1;
      stack[sp++] = c;
    }
  }
  return rows;
}
