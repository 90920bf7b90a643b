/**
 * The order of a plan's column filters, checked against the rows a query reads. A chunk of rows
 * costs the first step one pass over every row and each later step one pass over the rows still
 * kept (kernels.ts: branch-free, so a pass costs the same whatever it keeps): the filter keeping
 * fewest rows should run first. compile() can only guess: list filters by their share of the
 * whole snapshot, bounds in a fixed order, knowing neither how many rows a bound keeps nor the
 * area queried (frost days, flood zones and heights change from region to region).
 *
 * So once PROFILE_FROM chunks' worth of rows wholly inside the bbox (CHUNK rows each) have been
 * read, and every PROFILE_EVERY chunks' worth after that, the column steps are tried over the
 * first PROFILE_ROWS rows of the next chunk that starts with that many in a row (a chunk the
 * walk gathers from leaves a proof ruled out between may not), greedily: the step keeping fewest
 * of them, then the one keeping fewest of what that one kept, and so on (ordering commutative
 * filters by their observed pass rates, Babu et al., "Adaptive Ordering of Pipelined Stream
 * Filters", SIGMOD 2004). Filters commute: the order changes the time, never the rows kept. A
 * step moves ahead only where that would pay even if its kernel cost twice the other's a row
 * (kernels' costs a row differ by up to about that much, and a sample of a few hundred rows is
 * noisy too). Business steps (loops over a row's businesses) stay last, in compile's order.
 * Both the planner's paths and the plain scan use it. It pays most on count-bound queries whose
 * most selective bound compile puts late.
 */
import { CHUNK, type Step } from './kernels.ts';

/** Chunks' worth of rows wholly inside the bbox between two tries. */
export const PROFILE_EVERY = 256;
/**
 * The first try is once this many chunks' worth of rows are read: a query that reads fewer has
 * little to gain, and a try (a few passes over PROFILE_ROWS rows, a few microseconds) would show
 * on it.
 */
export const PROFILE_FROM = 8;
/** Rows of a chunk the steps are tried over. */
export const PROFILE_ROWS = 256;

/** Rows the steps chosen so far keep, and a copy each candidate step filters. */
const kept = new Uint32Array(PROFILE_ROWS);
const trial = new Uint32Array(PROFILE_ROWS);

export class StepOrder {
  private rows = 0;
  private next = PROFILE_FROM * CHUNK;

  /** Orders steps[0..columns) in place. */
  constructor(
    private readonly steps: Step[],
    private readonly columns: number,
  ) {}

  /**
   * Before a chunk of `rows` rows wholly inside the bbox is filtered, whose first rows are [a, b);
   * on the chunks the header names, re-orders the column steps over its first PROFILE_ROWS
   * rows. Each place goes to the step keeping fewest of what the steps before it kept, so
   * filters that pick the same buildings (a height bound and a floors bound) are not counted
   * twice.
   */
  chunk(a: number, b: number, rows = b - a): void {
    const seen = this.rows;
    this.rows += rows;
    if (seen < this.next || b - a < PROFILE_ROWS) return;
    this.next = seen + PROFILE_EVERY * CHUNK;
    const { steps, columns } = this;
    const end = Math.min(b, a + PROFILE_ROWS);
    let n = end - a;
    for (let i = 0; i < n; i++) kept[i] = a + i;
    for (let p = 0; p < columns - 1 && n > 0; p++) {
      let best = p;
      let fewest = Infinity;
      let incumbent = 0;
      for (let j = p; j < columns; j++) {
        for (let i = 0; i < n; i++) trial[i] = kept[i];
        const m = steps[j].refine(trial, n);
        if (j === p) incumbent = m;
        else if (m < fewest) {
          fewest = m;
          best = j;
        }
      }
      // The other first costs c_other * n + c_in_place * fewest against c_in_place * n + c_other *
      // incumbent: less when c_other * (n - incumbent) < c_in_place * (n - fewest), which holds for
      // any c_other up to 2 * c_in_place when 2 * incumbent > n + fewest.
      if (2 * incumbent <= n + fewest) best = p;
      const step = steps[best];
      // Shift, not swap, so the steps not chosen keep their relative order.
      for (let j = best; j > p; j--) steps[j] = steps[j - 1];
      steps[p] = step;
      n = step.refine(kept, n);
    }
  }
}
