/**
 * The order of a plan's column steps (src/query/step-order.ts) against costs worked out by hand
 * from its model, and shares estimated from real columns. That every order gives the same answer
 * is the differential test's (query-differential.test.ts, against the brute-force reference).
 */
import { describe, expect, it } from 'vitest';
import { BetweenI16, CodeIn, FlagsStep, type Step } from '../src/query/kernels.ts';
import { CODES_FIRST, VECTOR_FIRST, orderSteps, type CostedStep } from '../src/query/step-order.ts';
import { Rng } from './reference/random.ts';

const N = 100_000;
const rng = new Rng(42);
const flags = new Uint32Array(N).map(() => (rng.next() < 0.25 ? 1 : 0)); // a quarter of rows have bit 0
const heights = new Int16Array(N).map(() => rng.int(0, 99));
const codes = new Uint8Array(N).map(() => rng.int(0, 3));

const named = (name: string): Step & { name: string } => ({ name, range: () => 0, refine: () => 0 });
const names = (steps: Step[]): string[] => steps.map((s) => (s as Step & { name: string }).name);

describe('orderSteps', () => {
  it('runs first the step that keeps fewest rows, where the kinds cost the same', () => {
    const steps: CostedStep[] = [
      { step: named('common'), share: 0.9, firstCost: VECTOR_FIRST, width: 2 },
      { step: named('rare'), share: 0.1, firstCost: VECTOR_FIRST, width: 2 },
      { step: named('half'), share: 0.5, firstCost: VECTOR_FIRST, width: 2 },
    ];
    expect(names(orderSteps(steps))).toEqual(['rare', 'half', 'common']);
  });

  it('weighs a code table against a vector first pass', () => {
    // Codes first: 0.7 + refine(2 bytes, p = 0.5) = 0.7 + 0.9 * 0.5 + 6 * (1 - 0.5^32) / 32 = 1.3375.
    // The bound first: 0.25 + refine(1 byte, p = 0.6) = 0.25 + 0.9 * 0.6 + 6 * (1 - 0.4^64) / 64 = 0.88375.
    const steps: CostedStep[] = [
      { step: named('codes'), share: 0.5, firstCost: CODES_FIRST, width: 1 },
      { step: named('bound'), share: 0.6, firstCost: VECTOR_FIRST, width: 2 },
    ];
    expect(names(orderSteps(steps))).toEqual(['bound', 'codes']);
    // A code table that keeps 1 row in 100 goes first all the same:
    // 0.7 + 0.9 * 0.01 + 6 * (1 - 0.99^32) / 32 = 0.7638, against 0.25 + 0.9 * 0.6 + 0.09375 = 0.88375.
    steps[0].share = 0.01;
    expect(names(orderSteps(steps))).toEqual(['codes', 'bound']);
  });

  it('keeps a lone step, and no step at all', () => {
    expect(orderSteps([])).toEqual([]);
    const one = named('one');
    expect(orderSteps([{ step: one, share: 0.5, firstCost: VECTOR_FIRST, width: 4 }])).toEqual([one]);
  });

  it('estimates flags and bounds from their columns where their share is not given', () => {
    // Shares 1/4, 2/100, 90/100 and 3/4. With the low one first (p = 0.02), the others' ranks,
    // refine cost over the share ruled out: flags (0.018 + 6 * (1 - 0.98^16) / 16) / 0.75 = 0.16,
    // the list (0.018 + 6 * (1 - 0.98^64) / 64) / 0.25 = 0.34, the wide bound 0.107 / 0.1 = 1.07.
    const flagged = new FlagsStep(flags, 1, 1);
    const low = new BetweenI16(heights, 0, 1);
    const most = new BetweenI16(heights, 10, 99);
    const list = new CodeIn(
      codes,
      Uint8Array.from({ length: 256 }, (_, c) => (c < 3 ? 1 : 0)),
    );
    const label = new Map<Step, string>([
      [flagged, 'flags'],
      [low, 'low'],
      [most, 'most'],
      [list, 'list'],
    ]);
    const order = orderSteps([
      { step: list, share: 0.75, firstCost: CODES_FIRST, width: 1 },
      { step: most, share: NaN, firstCost: VECTOR_FIRST, width: 2 },
      { step: flagged, share: NaN, firstCost: VECTOR_FIRST, width: 4 },
      { step: low, share: NaN, firstCost: VECTOR_FIRST, width: 2 },
    ]);
    expect(order.map((s) => label.get(s))).toEqual(['low', 'flags', 'list', 'most']);
  });
});
