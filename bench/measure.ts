/**
 * Timing, memory and percentiles. Every timed span is one engine call (`performance.now()`
 * around it); results feed a sink so the optimiser cannot drop the work.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Engine, MixQuery } from './engine.ts';

/** A full garbage collection, with --expose-gc or without it (through V8's flag at run time). */
export function gcFunction(): (() => void) | null {
  const g = (globalThis as { gc?: () => void }).gc;
  if (typeof g === 'function') return g;
  try {
    setFlagsFromString('--expose-gc');
    return runInNewContext('gc') as () => void;
  } catch {
    return null;
  }
}

const gc = gcFunction();
export const hasGc = gc !== null;

/** Collects twice with a pause between, so freed backing stores are really returned. */
export async function settle(): Promise<void> {
  if (!gc) return;
  gc();
  await new Promise((r) => setTimeout(r, 50));
  gc();
  await new Promise((r) => setTimeout(r, 50));
}

export interface Memory {
  rss: number;
  arrayBuffers: number;
  heapUsed: number;
  external: number;
}

export async function memory(): Promise<Memory> {
  await settle();
  const m = process.memoryUsage();
  return { rss: m.rss, arrayBuffers: m.arrayBuffers, heapUsed: m.heapUsed, external: m.external };
}

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

/** Summed into, and printed at the end, so no engine call is dead code. */
export let sink = 0;

/**
 * Runs every query of `order` once on `engine` and returns the milliseconds of each (NaN for a
 * query the engine refused), indexed like `queries`. `onAnswer` sees raw results (answers).
 */
export async function runPass<R>(
  engine: Engine<R>,
  queries: readonly MixQuery[],
  order: readonly number[],
  onAnswer?: (index: number, raw: R | Error) => void,
  progress?: (done: number) => void,
): Promise<Float64Array> {
  const ms = new Float64Array(queries.length).fill(NaN);
  let done = 0;
  for (const i of order) {
    let raw: R | Error;
    const t0 = performance.now();
    try {
      raw = engine.async ? await engine.run(queries[i]) : (engine.run(queries[i]) as R);
      ms[i] = performance.now() - t0;
    } catch (err) {
      raw = err instanceof Error ? err : new Error(String(err));
    }
    if (!(raw instanceof Error))
      sink +=
        (raw as { rows?: ArrayLike<unknown>; ids?: ArrayLike<unknown> }).rows?.length ??
        (raw as { ids?: ArrayLike<unknown> }).ids?.length ??
        1;
    onAnswer?.(i, raw);
    if (progress && ++done % 50 === 0) progress(done);
  }
  return ms;
}

/**
 * Runs every query of `order` once on each of two engines, back to back, and returns each
 * engine's milliseconds indexed like `queries`. Two engines timed this way meet the same state
 * of the machine for each query: a burst of load or a cold cache falls on both, not on whichever
 * pass it happened in, so their ratio per class holds still from run to run.
 *
 * Which engine goes first depends on the query and the round (`round`): over an even number of
 * rounds each query runs first on each engine equally often. It matters: the second run finds
 * the rows in the CPU caches the first left (bench/README.md, bench:query), and an uneven share
 * of first runs moves a query's median and its class's tail.
 */
export async function runPairPass(
  a: Engine,
  b: Engine,
  queries: readonly MixQuery[],
  order: readonly number[],
  round: number,
  progress?: (done: number) => void,
): Promise<[Float64Array, Float64Array]> {
  const msA = new Float64Array(queries.length).fill(NaN);
  const msB = new Float64Array(queries.length).fill(NaN);
  let done = 0;
  for (const i of order) {
    done++;
    const aFirst = (i + round) % 2 === 0;
    for (const [engine, ms] of aFirst
      ? ([
          [a, msA],
          [b, msB],
        ] as const)
      : ([
          [b, msB],
          [a, msA],
        ] as const)) {
      const t0 = performance.now();
      try {
        const raw = engine.async ? await engine.run(queries[i]) : engine.run(queries[i]);
        ms[i] = performance.now() - t0;
        sink += (raw as { rows?: ArrayLike<unknown> }).rows?.length ?? 1;
      } catch {
        // Refused: NaN, as in runPass (the warm-up pass has recorded the error).
      }
    }
    if (progress && done % 50 === 0) progress(done);
  }
  return [msA, msB];
}

/** A seeded Fisher-Yates order of 0..n-1. */
export function shuffled(n: number, next: () => number): number[] {
  const a = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a;
}
