/**
 * Matches a search's count walk has found and not yet ranked (bestfirst.ts holds them while the
 * state's `holding` is set): the rows, in the order found, to be offered to their plans' keys
 * later or dropped.
 */
import type { Snapshot } from '../catalog/snapshot.ts';
import type { SearchPlan } from './plan.ts';
import { offerMatches } from './sort-keys.ts';
import type { TopK } from './topk.ts';

const SCRATCH = 2048;

export class HeldMatches {
  private rows = new Uint32Array(16_384);
  private snaps = new Uint16Array(16_384);
  private count = 0;
  private readonly scratch = new Uint32Array(SCRATCH);

  /** Holds the rows sel[0..n) of snapshot s. */
  add(s: number, sel: Uint32Array, n: number): void {
    this.room(n);
    const { rows, snaps } = this;
    let c = this.count;
    for (let i = 0; i < n; i++, c++) {
      rows[c] = sel[i];
      snaps[c] = s;
    }
    this.count = c;
  }

  /** Holds the rows [lo, hi) of snapshot s. */
  addRange(s: number, lo: number, hi: number): void {
    this.room(hi - lo);
    const { rows, snaps } = this;
    let c = this.count;
    for (let r = lo; r < hi; r++, c++) {
      rows[c] = r;
      snaps[c] = s;
    }
    this.count = c;
  }

  clear(): void {
    this.count = 0;
  }

  /** Offers the rows held, in the order found, to the heap through each snapshot's key; then holds none. */
  release(heap: TopK, snapshots: readonly Snapshot[], plans: readonly (SearchPlan | null)[]): void {
    const { rows, snaps, scratch } = this;
    let a = 0;
    while (a < this.count) {
      const si = snaps[a];
      let n = 0;
      for (; a < this.count && n < SCRATCH && snaps[a] === si; a++) scratch[n++] = rows[a];
      offerMatches(plans[si]!.key, heap, si, snapshots[si].rank, scratch, n);
    }
    this.count = 0;
  }

  private room(n: number): void {
    if (this.count + n <= this.rows.length) return;
    const size = 2 * (this.count + n);
    const rows = new Uint32Array(size);
    const snaps = new Uint16Array(size);
    rows.set(this.rows.subarray(0, this.count));
    snaps.set(this.snaps.subarray(0, this.count));
    this.rows = rows;
    this.snaps = snaps;
  }
}
