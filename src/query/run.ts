/**
 * Rows a walk over the row tree has decided to read, waiting to be scanned as one run
 * (bestfirst.ts): adjacent ranges of one kind merge, so kernels run over long runs. In the
 * walk, ranges wholly inside the bbox that need their filters also gather across gaps (nodes
 * or leaves the proofs ruled out) into one run of several spans, scanned a chunk at a time
 * (scan.ts scanSpans).
 */
import { FANOUT, LEAF_ROWS } from '../catalog/rowtree.ts';
import type { Snapshot } from '../catalog/snapshot.ts';
import type { SearchPlan } from './plan.ts';
import { scanRows, scanSpans } from './scan.ts';
import type { SearchState } from './search-state.ts';
import type { BBox } from './types.ts';

/** A sampled walk (guess.ts) reads every SAMPLE_STRIDE-th block of BLOCK_ROWS rows from row 0, or the others. */
export const SAMPLE_STRIDE = 8;
export const BLOCK_ROWS = LEAF_ROWS * FANOUT;
/**
 * Rows a run of the search's count walk, or of the ranking's leaves, grows to: the count walk
 * stops close to the cap (rows scanned past it are wasted), and the ranking reads the heap's
 * threshold again after each run.
 */
export const RUN_ROWS = 2048;
/** Spans a gathered run holds at most. */
const MAX_SPANS = 128;

export class Run {
  private s!: Snapshot;
  private si = 0;
  private plan!: SearchPlan;
  private bbox!: BBox;
  private readonly spans = new Uint32Array(2 * MAX_SPANS);
  private count = 0;
  private rows = 0;
  private partial = false;
  private filtered = false;
  private limit = RUN_ROWS;
  private gaps = false;

  constructor(private readonly st: SearchState) {}

  /**
   * Runs grow to `limit` rows (and MAX_SPANS spans): unbounded in the walk; RUN_ROWS in the
   * search's count walk, whose rows past the count are held and dropped (their nodes read again
   * by the ranking), so that it stops close to the cap on heavy boxes. With `gaps`, filtered
   * ranges inside the bbox gather across gaps, in ascending row order only (scanSpans).
   */
  start(s: Snapshot, si: number, plan: SearchPlan, bbox: BBox, limit = RUN_ROWS, gaps = false): void {
    this.s = s;
    this.si = si;
    this.plan = plan;
    this.bbox = bbox;
    this.limit = limit;
    this.gaps = gaps;
    this.count = this.rows = 0;
  }

  /** Adds rows [lo, hi); true when the run before them was scanned (so the heap may have changed). */
  add(lo: number, hi: number, partial: boolean, filtered: boolean): boolean {
    const count = this.count;
    if (count > 0 && partial === this.partial && filtered === this.filtered && this.rows < this.limit) {
      const end = 2 * count - 1;
      if (lo === this.spans[end]) {
        this.spans[end] = hi;
        this.rows += hi - lo;
        return false;
      }
      if (this.gaps && !partial && filtered && count < MAX_SPANS && lo > this.spans[end]) {
        this.spans[2 * count] = lo;
        this.spans[2 * count + 1] = hi;
        this.count++;
        this.rows += hi - lo;
        return false;
      }
    }
    const scanned = this.flush();
    this.spans[0] = lo;
    this.spans[1] = hi;
    this.count = 1;
    this.rows = hi - lo;
    this.partial = partial;
    this.filtered = filtered;
    return scanned;
  }

  flush(): boolean {
    const count = this.count;
    if (count === 0) return false;
    const st = this.st;
    this.count = this.rows = 0;
    if (count > 1 && st.sample === 'every' && this.plan.steps.length > 0) {
      scanSpans(st, this.s, this.si, this.plan, this.bbox, this.spans, count);
    } else for (let j = 0; j < count; j++) this.scan(this.spans[2 * j], this.spans[2 * j + 1]);
    return true;
  }

  private scan(lo: number, hi: number): void {
    const st = this.st;
    if (st.sample === 'every') scanRows(st, this.s, this.si, this.plan, this.bbox, lo, hi, this.partial, this.filtered, this.plan.attained);
    else {
      // Each period of SAMPLE_STRIDE blocks starts with its sampled block.
      const sampled = st.sample === 'sampled';
      const period = SAMPLE_STRIDE * BLOCK_ROWS;
      for (let base = Math.floor(lo / period) * period; base < hi; base += period) {
        const a = Math.max(lo, sampled ? base : base + BLOCK_ROWS);
        const b = Math.min(hi, sampled ? base + BLOCK_ROWS : base + period);
        if (a < b) scanRows(st, this.s, this.si, this.plan, this.bbox, a, b, this.partial, this.filtered, this.plan.attained);
      }
    }
  }
}
