/**
 * The bench's noise band (bench/noise.ts): its selection against a sort, and its bootstrap over
 * rounds on data whose ratio is known.
 */
import { describe, expect, it } from 'vitest';
import { percentile } from '../bench/measure.ts';
import { nearestRank, ratioIntervals } from '../bench/noise.ts';
import { Prng } from '../src/synth/prng.ts';

describe('bench noise band', () => {
  it('selects the nearest-rank percentile that a full sort gives, with ties and tiny arrays', () => {
    const rng = new Prng(5, 1);
    for (const n of [1, 2, 3, 10, 101, 1000]) {
      for (const distinct of [3, 1_000_000]) {
        const values = Float64Array.from({ length: n }, () => rng.uint32() % distinct);
        const sorted = Float64Array.from(values).sort();
        for (const p of [0, 1, 25, 50, 90, 99, 99.9, 100]) {
          expect(nearestRank(Float64Array.from(values), n, p), `n ${n}, p ${p}`).toBe(percentile(sorted, p));
        }
      }
    }
    expect(nearestRank(new Float64Array(4), 0, 50)).toBeNaN();
  });

  it('keeps the two engines of a round together: a fixed ratio gives a zero-width interval however the rounds vary', () => {
    const rng = new Prng(9, 2);
    const rounds = 40;
    const a: Float64Array[] = [];
    const b: Float64Array[] = [];
    for (let r = 0; r < rounds; r++) {
      // Whole rounds slower or faster (load on the machine), queries of very different cost.
      const load = 1 + (rng.uint32() % 10);
      a.push(Float64Array.from({ length: 30 }, (_, i) => load * (1 + i) * (1 + (rng.uint32() % 100) / 100)));
      b.push(a[r].map((v) => 2 * v));
    }
    const idx = Array.from({ length: 30 }, (_, i) => i);
    expect(ratioIntervals(a, b, idx, [50, 99], 200)).toEqual([
      { lo: 2, hi: 2 },
      { lo: 2, hi: 2 },
    ]);
    // Only the queries asked for, refused ones (NaN) left out.
    b[3][0] = NaN;
    expect(ratioIntervals(a, b, [5, 6, 7], [50], 200)).toEqual([{ lo: 2, hi: 2 }]);
  });

  it('brackets 1 for the same distribution on both sides, and stays below 1 where one side is 10% slower', () => {
    const rng = new Prng(11, 3);
    const draw = () => 1 + rng.uint32() / 2 ** 32;
    const rounds = 60;
    const idx = Array.from({ length: 50 }, (_, i) => i);
    const make = (scale: number) => Array.from({ length: rounds }, () => Float64Array.from(idx, () => scale * draw()));
    const [same50, same99] = ratioIntervals(make(1), make(1), idx, [50, 99], 500);
    expect(same50.lo).toBeLessThan(1);
    expect(same50.hi).toBeGreaterThan(1);
    expect(same99.lo).toBeLessThan(1);
    expect(same99.hi).toBeGreaterThan(1);
    const [slow50] = ratioIntervals(make(1.1), make(1), idx, [50], 500);
    expect(slow50.hi).toBeLessThan(1);
    expect(slow50.lo).toBeGreaterThan(0.85);
  });
});
