/**
 * The plain scan of GET /buildings, and the pass over a run of rows that every path shares.
 *
 * The plain scan walks a snapshot's row tree, which hands out runs of rows wholly or partly
 * inside the bbox; each run is cut into chunks of CHUNK rows that go through the bbox test
 * (partial runs only), the compiled filter steps, the sort-key gather and the search state's
 * heap (or, while a search's count walk holds its matches, into `held`: bestfirst.ts).
 */
import type { Snapshot } from '../catalog/snapshot.ts';
import { CHUNK, bboxRange, bboxRefine } from './kernels.ts';
import type { SearchPlan } from './plan.ts';
import type { SearchState } from './search-state.ts';
import { offerMatches, type LeafMaxima } from './sort-keys.ts';
import { NO_RANK_BOUND } from './topk.ts';
import type { BBox } from './types.ts';

export { CHUNK };

/**
 * Passes rows [lo, hi) of snapshot si through the bbox test (when `partial`), the filter steps
 * (when `filtered`; a run proven to match skips them), the count and the heap.
 *
 * While fewer than MAX_WINDOW + 1 matches are counted, every row is tested and counted. Past
 * that (or once the count is closed) a chunk first keeps only the rows whose key can still
 * enter the heap, and only those are tested: most rows of a large area cost one key comparison.
 * While the heap's threshold is an unknown key (fewer than k matches with a known key so far),
 * only once it bounds the ranks: every row with a key can still enter, and a row without one
 * only below the bound, which a business key tells from its bitset of known rows (sort-keys.ts
 * knownRows) without reading any business. Without a bound every row can enter.
 * The walks pass the key's leaf maxima (sort-keys.ts LeafMaxima); the plain scan passes null.
 */
export function scanRows(
  st: SearchState,
  s: Snapshot,
  si: number,
  plan: SearchPlan,
  bbox: BBox,
  lo: number,
  hi: number,
  partial: boolean,
  filtered: boolean,
  maxima: LeafMaxima,
): void {
  const { key, steps } = plan;
  const { heap, sel, spare } = st;
  const stepCount = filtered ? steps.length : 0;
  const { lon, lat, rank } = s;
  if (!partial && stepCount === 0) {
    // Wholly inside, no filter to run: every row matches; the key loop reads the rows directly.
    if (st.countOpen()) st.matched += hi - lo;
    if (st.holding) st.held.addRange(si, lo, hi);
    else key.offerRange(heap, si, rank, lo, hi, sel, maxima);
    return;
  }
  for (let a = lo; a < hi; a += CHUNK) {
    const b = Math.min(hi, a + CHUNK);
    let n: number;
    let i = 0;
    const open = st.countOpen();
    // Held rows have no threshold to meet: they are ranked, if at all, once released.
    const listed = !open && !st.holding && (heap.threshold() > -Infinity || heap.rankBound(si) < NO_RANK_BOUND);
    if (listed) {
      n = key.candidates(a, b, sel, heap.threshold(), rank, heap.rankBound(si), maxima);
      if (n > 0 && partial) n = bboxRefine(lon, lat, bbox, sel, n);
    } else if (partial) n = bboxRange(lon, lat, bbox, a, b, sel);
    else {
      n = steps[0].range(a, b, sel, 0, spare);
      i = 1;
    }
    for (; i < stepCount && n > 0; i++) n = steps[i].refine(sel, n);
    if (n === 0) continue;
    if (open) st.matched += n;
    if (st.holding) st.held.add(si, sel, n);
    else if (listed) key.offer(heap, si, rank, sel, n);
    else offerMatches(key, heap, si, rank, sel, n);
  }
}

/**
 * Passes the runs of rows [spans[2j], spans[2j + 1]) for j < count, in ascending row order (a
 * business step merges the selection with its column's rows in order), all wholly inside the
 * bbox and filtered, as scanRows would one by one, but gathered into chunks of up to CHUNK rows
 * while the count is open: the first step appends each run's passing rows to one selection
 * vector, and the other steps, the count and the heap take a chunk at a time. Runs of one leaf
 * or a few (the walk's, between leaves its proofs rule out) then cost the steps one call a
 * chunk, not one a run. Only the walks gather runs: the key's leaf maxima are the plan's.
 */
export function scanSpans(st: SearchState, s: Snapshot, si: number, plan: SearchPlan, bbox: BBox, spans: Uint32Array, count: number): void {
  const { key, steps } = plan;
  const { heap, sel, spare } = st;
  const rank = s.rank;
  let j = 0;
  let from = spans[0];
  while (j < count) {
    if (!st.countOpen()) {
      // Closed: each run keeps only the rows whose key can still enter the heap (scanRows).
      scanRows(st, s, si, plan, bbox, from, spans[2 * j + 1], false, true, plan.attained);
      for (j++; j < count; j++) scanRows(st, s, si, plan, bbox, spans[2 * j], spans[2 * j + 1], false, true, plan.attained);
      return;
    }
    let n = 0;
    let room = CHUNK;
    while (j < count && room > 0) {
      const hi = spans[2 * j + 1];
      const to = Math.min(hi, from + room);
      n = steps[0].range(from, to, sel, n, spare);
      room -= to - from;
      if (to < hi) from = to;
      else if (++j < count) from = spans[2 * j];
    }
    for (let i = 1; i < steps.length && n > 0; i++) n = steps[i].refine(sel, n);
    if (n === 0) continue;
    st.matched += n;
    if (st.holding) st.held.add(si, sel, n);
    else offerMatches(key, heap, si, rank, sel, n);
  }
}

/** The plain scan of one snapshot: every run of rows the bbox meets, in row order. */
export function scanSnapshot(st: SearchState, s: Snapshot, si: number, plan: SearchPlan, bbox: BBox): void {
  s.tree.ranges(bbox, (lo, hi, partial) => scanRows(st, s, si, plan, bbox, lo, hi, partial, true, null));
}
