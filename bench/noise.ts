/**
 * How far a ratio of two engines' class percentiles moves between runs of the same code on this
 * machine: a bootstrap over the rounds that timed them side by side (runPairPass). Each resample
 * draws as many rounds as were run, with replacement, and keeps a round's times of both engines
 * together, as they ran; the ratio's 2.5th and 97.5th percentiles over the resamples bound it.
 *
 * A class the planner sends to the plain scan runs the same code on both sides, so its ratio is
 * 1 give or take noise, and the least of a dozen such readings sits below 1 more often than
 * not. The interval covers the noise between the rounds of one run only: what stays the same
 * through a run (compiled code, where memory landed) moves a ratio too, beyond the interval
 * (the A/A run in bench/README.md, bench:query).
 */
import { kthLargest } from '../src/catalog/selection.ts';
import { Prng } from '../src/synth/prng.ts';

export interface RatioInterval {
  lo: number;
  hi: number;
}

/**
 * The 95% interval of percentile(b) / percentile(a) at each of `ps` over the queries `idx`,
 * where a[r][i] and b[r][i] are the times of query i in round r (NaN: refused, left out).
 */
export function ratioIntervals(
  a: readonly Float64Array[],
  b: readonly Float64Array[],
  idx: readonly number[],
  ps: readonly number[],
  resamples = 1000,
  seed = 1,
): RatioInterval[] {
  const rounds = Math.min(a.length, b.length);
  const rng = new Prng(seed, 0xb007);
  const bufA = new Float64Array(rounds * idx.length);
  const bufB = new Float64Array(rounds * idx.length);
  const ratios = ps.map(() => new Float64Array(resamples));
  for (let s = 0; s < resamples; s++) {
    let na = 0;
    let nb = 0;
    for (let d = 0; d < rounds; d++) {
      const r = rng.uint32() % rounds;
      const ta = a[r];
      const tb = b[r];
      for (const i of idx) {
        if (ta[i] === ta[i]) bufA[na++] = ta[i];
        if (tb[i] === tb[i]) bufB[nb++] = tb[i];
      }
    }
    ps.forEach((p, k) => {
      ratios[k][s] = nearestRank(bufB, nb, p) / nearestRank(bufA, na, p);
    });
  }
  return ratios.map((r) => {
    r.sort();
    return { lo: r[Math.floor(0.025 * (resamples - 1))], hi: r[Math.ceil(0.975 * (resamples - 1))] };
  });
}

/** The nearest-rank p-th percentile of buf[0, n) (as measure.ts percentile), found by selection: buf is reordered. */
export function nearestRank(buf: Float64Array, n: number, p: number): number {
  if (n === 0) return NaN;
  const k = Math.min(n - 1, Math.max(0, Math.ceil((p / 100) * n) - 1));
  // The (k+1)-th least is the (n-k)-th greatest.
  return kthLargest(buf, n, n - k);
}
