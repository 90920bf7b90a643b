/**
 * The rate limiter shared by the threads of one server: worker threads taking from the same
 * buckets at once let through exactly the limit, never the limit per thread, and a table full of
 * live keys drops the bucket closest to full rather than refusing anyone.
 */
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { GcraLimiter } from '../src/ledger/index.ts';


const BOOT = new URL('../src/http/thread-boot.mjs', import.meta.url);
const ENTRY = new URL('./workers/gcra-taker.ts', import.meta.url).href;

/** A worker taking `n` requests for each key from a limiter on `table`, at a frozen time, once GO is set. */
function runWorker(table: SharedArrayBuffer, keys: string[], n: number, now: number): { ready: Promise<void>; passed: Promise<number> } {
  const w = new Worker(BOOT, { workerData: { entry: ENTRY, table, keys, n, now, go: GO } });
  const ready = new Promise<void>((resolve, reject) => {
    w.once('message', () => resolve());
    w.once('error', reject);
  });
  const passed = ready.then(() => new Promise<number>((resolve, reject) => {
    w.once('message', resolve);
    w.once('error', reject);
  }));
  return { ready, passed };
}

const GO = new SharedArrayBuffer(4);

describe('GCRA shared by threads', () => {
  it('threads hammering the same keys let through exactly 60 each key, not 60 per thread', async () => {
    const limiter = new GcraLimiter({ limit: 60, periodMs: 60_000, maxKeys: 4000 });
    // Many keys, taken in the same order by every thread, keep the threads racing on one key at a time.
    const keys = Array.from({ length: 1500 }, (_, i) => `key-${i}`);
    const workers = [0, 1, 2].map(() => runWorker(limiter.table, keys, 70, 1_000_000));
    await Promise.all(workers.map((w) => w.ready));
    Atomics.store(new Int32Array(GO), 0, 1);
    Atomics.notify(new Int32Array(GO), 0);
    const passed = await Promise.all(workers.map((w) => w.passed));
    expect(passed.reduce((a, b) => a + b, 0)).toBe(60 * keys.length);
    // This thread sees the same buckets: empty now, a token back after a second.
    for (const k of keys) {
      expect(limiter.take(k, 1_000_000).ok).toBe(false);
      expect(limiter.take(k, 1_001_000).ok).toBe(true);
    }
  });

  it('a table full of live keys drops the bucket closest to full, and attaches only to a table of its size', () => {
    const limiter = new GcraLimiter({ limit: 2, periodMs: 1_000, maxKeys: 3 });
    for (const k of ['a', 'b', 'c']) limiter.take(k, 0);
    limiter.take('a', 0); // a is now empty, b and c half full
    expect(limiter.take('d', 0).ok).toBe(true); // evicts b or c, never refuses d
    expect(limiter.size).toBe(3);
    expect(limiter.take('a', 0).ok).toBe(false); // a kept its state
    expect(() => new GcraLimiter({ limit: 2, periodMs: 1_000, maxKeys: 4, table: limiter.table })).toThrow(/needs/);
  });
});
