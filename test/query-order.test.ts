/**
 * The order of a plan's column steps, re-measured on the rows a query reads (src/query/order.ts):
 * real kernels over hand-made columns, whose rows kept by each step are counted by hand.
 */
import { describe, expect, it } from 'vitest';
import { BetweenI32, type Step } from '../src/query/kernels.ts';
import { PROFILE_EVERY, PROFILE_FROM, PROFILE_ROWS, StepOrder } from '../src/query/order.ts';
import { CHUNK } from '../src/query/scan.ts';

/** Row r holds r % 100; the first PROFILE_ROWS (256) rows hold 0..99 twice, then 0..55. */
const col = Int32Array.from({ length: 4 * CHUNK }, (_, r) => r % 100);
const between = (lo: number, hi: number) => new BetweenI32(col, lo, hi);

/** The steps after the first chunk that is measured. */
function ordered(steps: Step[], columns = steps.length): Step[] {
  const order = new StepOrder(steps, columns);
  // Chunks' worth of rows too short to try on: counted, not tried.
  for (let k = 0; k < PROFILE_FROM; k++) order.chunk(0, 0, CHUNK);
  order.chunk(0, CHUNK);
  return steps;
}

describe('the order of column steps (order.ts)', () => {
  it("moves a step ahead only where that pays even if its kernel costs twice the other's: 2 x kept in place > rows + kept by it", () => {
    expect(PROFILE_ROWS).toBe(256);
    const all = between(0, 99),
      tenth = between(0, 9),
      half = between(0, 49),
      third = between(0, 29),
      eighth = between(50, 59);
    // all keeps 256, tenth 30: 512 > 286.
    expect(ordered([all, tenth])).toEqual([tenth, all]);
    // half keeps 150, third 90: 300 > 346 fails; eighth keeps 26: 300 > 282.
    expect(ordered([half, third])).toEqual([half, third]);
    expect(ordered([half, eighth])).toEqual([eighth, half]);
  });

  it('counts each place on the rows the steps before it kept, so filters that pick the same rows are not counted twice', () => {
    const all = between(0, 99);
    const a = between(0, 19); // alone 60 of the first 256 rows
    const b = between(15, 39); // alone 75, the most of the three
    const c = between(0, 18); // alone 57, the fewest
    // Place 0: c (57) against all (256). Place 1, on c's 57 rows: all keeps 57, a 57, b only the
    // 12 of 15..18. Place 2, on those 12: all and a keep them all, so neither moves.
    expect(ordered([all, a, c, b])).toEqual([c, b, all, a]);
  });

  it('leaves the steps past `columns` (business loops) where they are', () => {
    const all = between(0, 99),
      tenth = between(0, 9),
      business = between(0, 0);
    expect(ordered([all, tenth, business], 2)).toEqual([tenth, all, business]);
  });

  it('measures the PROFILE_FROM-th chunk and every PROFILE_EVERY-th after it, on its first PROFILE_ROWS rows', () => {
    const later = PROFILE_FROM + PROFILE_EVERY;
    // Row r holds r % 100 before chunk `later`, 0 from it on.
    const shifted = Int32Array.from({ length: (later + 1) * CHUNK }, (_, r) => (r < later * CHUNK ? r % 100 : 0));
    const low = new BetweenI32(shifted, 0, 0); // ~1% before, every row after
    const high = new BetweenI32(shifted, 10, 99); // ~90% before, no row after
    const steps: Step[] = [high, low];
    const order = new StepOrder(steps, 2);
    for (let k = 0; k <= later; k++) {
      order.chunk(k * CHUNK, (k + 1) * CHUNK);
      expect(steps, `after chunk ${k}`).toEqual(k < PROFILE_FROM ? [high, low] : k < later ? [low, high] : [high, low]);
    }
    expect(PROFILE_ROWS).toBeLessThanOrEqual(CHUNK);
  });

  it("counts a chunk's rows, and tries on the next chunk that starts with PROFILE_ROWS rows in a row (a gathered chunk may not)", () => {
    const low = between(0, 0); // 3 of the first 256 rows
    const high = between(10, 99);
    const steps: Step[] = [high, low];
    const order = new StepOrder(steps, 2);
    // PROFILE_FROM chunks' worth of rows, each chunk starting with a run of one leaf only.
    for (let k = 0; k < PROFILE_FROM; k++) order.chunk(0, 64, CHUNK);
    expect(steps).toEqual([high, low]);
    order.chunk(0, PROFILE_ROWS - 1, CHUNK);
    expect(steps, 'due, but its first run is too short to try on').toEqual([high, low]);
    order.chunk(0, PROFILE_ROWS, CHUNK);
    expect(steps, 'the next chunk that can be tried on').toEqual([low, high]);
  });

  it('keeps every step and changes no row kept, in any order it picks', () => {
    const steps: Step[] = [between(0, 99), between(10, 80), between(5, 12), between(7, 60)];
    const before = new Set(steps);
    const keep = (list: Step[]) => {
      const sel = new Uint32Array(CHUNK);
      let n = list[0].range(CHUNK, 2 * CHUNK, sel, 0, new Uint32Array(CHUNK));
      for (let i = 1; i < list.length; i++) n = list[i].refine(sel, n);
      return Array.from(sel.subarray(0, n));
    };
    const want = keep(steps);
    ordered(steps);
    expect(steps[0]).not.toBe([...before][0]);
    expect(new Set(steps)).toEqual(before);
    expect(steps.length).toBe(4);
    expect(keep(steps)).toEqual(want);
    expect(want).toEqual(Array.from({ length: CHUNK }, (_, i) => CHUNK + i).filter((r) => r % 100 >= 10 && r % 100 <= 12));
  });
});
