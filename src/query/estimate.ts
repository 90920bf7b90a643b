/**
 * How many rows a bbox's candidates can number, read off the row tree's upper boxes without
 * touching a row: what the planner (choose.ts) and the searches that decide whether a floor can
 * pay (floor.ts, guess.ts, bestfirst.ts) size a query by.
 */
import { FANOUT } from '../catalog/rowtree.ts';
import type { Snapshot } from '../catalog/snapshot.ts';
import type { BBox } from './types.ts';

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
