/**
 * The rate limiter shared by the threads of one server: worker threads taking from the same
 * buckets at once let through exactly the limit, never the limit per thread, and a table full of
 * live keys drops the bucket closest to full rather than refusing anyone.
 */
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WindowLimiter, Ledger } from '../src/ledger/index.ts';
import { SharedQuota } from '../src/ledger/shared-quota.ts';

const BOOT = new URL('../src/http/thread-boot.mjs', import.meta.url);
const ENTRY = new URL('./workers/window-taker.ts', import.meta.url).href;

const QUOTA_ENTRY = new URL('./workers/quota-taker.ts', import.meta.url).href;

/** A worker on `entry`: `ready` once it has set up, `passed` with the count it reports when done. */
function startWorker(entry: string, data: object): { ready: Promise<void>; passed: Promise<number> } {
  const w = new Worker(BOOT, { workerData: { entry, ...data } });
  const ready = new Promise<void>((resolve, reject) => {
    w.once('message', () => resolve());
    w.once('error', reject);
  });
  const passed = ready.then(
    () =>
      new Promise<number>((resolve, reject) => {
        w.once('message', resolve);
        w.once('error', reject);
      }),
  );
  return { ready, passed };
}

/** A worker counting `n` requests per workspace in a shared quota table, once GO is set. */
const runQuotaWorker = (table: SharedArrayBuffer, workspaces: string[], n: number, limit: number, go: SharedArrayBuffer) =>
  startWorker(QUOTA_ENTRY, { table, workspaces, n, limit, go });

/** A worker taking `n` requests for each key from a limiter on `table`, at a frozen time, once GO is set. */
const runWorker = (table: SharedArrayBuffer, keys: string[], n: number, now: number) => startWorker(ENTRY, { table, keys, n, now, go: GO });

const GO = new SharedArrayBuffer(4);

describe('the sliding-window limiter shared by threads', () => {
  it('threads hammering the same keys let through exactly 60 each key, not 60 per thread', async () => {
    const limiter = new WindowLimiter({ limit: 60, periodMs: 60_000, maxKeys: 4000 });
    // Many keys, taken in the same order by every thread, keep the threads racing on one key at a time.
    const keys = Array.from({ length: 1500 }, (_, i) => `key-${i}`);
    const workers = [0, 1, 2].map(() => runWorker(limiter.table, keys, 70, 1_000_000));
    await Promise.all(workers.map((w) => w.ready));
    Atomics.store(new Int32Array(GO), 0, 1);
    Atomics.notify(new Int32Array(GO), 0);
    const passed = await Promise.all(workers.map((w) => w.passed));
    expect(passed.reduce((a, b) => a + b, 0)).toBe(60 * keys.length);
    // This thread sees the same rings: full now, empty once the minute has passed.
    for (const k of keys) {
      expect(limiter.take(k, 1_059_999).ok).toBe(false);
      expect(limiter.take(k, 1_060_000)).toMatchObject({ ok: true, remaining: 59 });
    }
  });

  it('a table full of live keys drops the ring with the fewest requests, and attaches only to a table of its size', () => {
    const limiter = new WindowLimiter({ limit: 2, periodMs: 1_000, maxKeys: 3 });
    for (const k of ['a', 'b', 'c']) limiter.take(k, 0);
    limiter.take('a', 0); // a is now full, b and c half full
    expect(limiter.take('d', 0).ok).toBe(true); // evicts b or c, never refuses d
    expect(limiter.size).toBe(3);
    expect(limiter.take('a', 0).ok).toBe(false); // a kept its state
    expect(() => new WindowLimiter({ limit: 2, periodMs: 1_000, maxKeys: 4, table: limiter.table })).toThrow(/needs/);
  });
});

describe('the daily quota shared by threads', () => {
  it('threads counting the same workspaces let through exactly the quota, and nothing more', async () => {
    const quota = new SharedQuota(4096);
    const workspaces = Array.from({ length: 2000 }, (_, i) => `ws_${String(i).padStart(14, '0')}`);
    const go = new SharedArrayBuffer(4);
    const workers = [0, 1, 2].map(() => runQuotaWorker(quota.buffer, workspaces, 60, 50, go));
    await Promise.all(workers.map((w) => w.ready));
    Atomics.store(new Int32Array(go), 0, 1);
    Atomics.notify(new Int32Array(go), 0);
    const passed = await Promise.all(workers.map((w) => w.passed));
    expect(passed.reduce((a, b) => a + b, 0)).toBe(50 * workspaces.length);
    for (const w of workspaces) expect(quota.used(w, 20_000, () => 0)).toBe(50);
  });

  it('counts reach the ledger file within a quarter second and survive a restart; a full table counts in the file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'edifice-quota-'));
    try {
      const path = join(dir, 'ledger.db');
      const a = Ledger.open(path, { dailyQuota: 3 });
      const { workspaceId } = a.createWorkspace('q', { createdBy: 'q@example.com' });
      const { keyId } = a.createKey(workspaceId, 'q@example.com');
      for (let i = 0; i < 2; i++) expect(a.checkLimits({ keyId, workspaceId }).ok).toBe(true);
      // Another connection to the file, as the admin CLI: it sees the counts once written.
      const reader = Ledger.open(path, { persistQuota: false });
      for (let i = 0; i < 40 && reader.usage(workspaceId).at(-1)!.requests < 2; i++) await new Promise((r) => setTimeout(r, 25));
      expect(reader.usage(workspaceId).at(-1)!.requests).toBe(2);
      reader.close();
      a.close();
      const b = Ledger.open(path, { dailyQuota: 3 });
      expect(b.checkLimits({ keyId, workspaceId }).ok).toBe(true);
      const refused = b.checkLimits({ keyId, workspaceId });
      expect(refused).toMatchObject({ ok: false, code: 'quota_exceeded' });
      b.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    // A table with no room left: take() hands the count back to the caller (which counts in the file).
    const tiny = new SharedQuota(1);
    expect(tiny.take('ws_a', 1, 10, () => 0)).toEqual({ ok: true, used: 1 });
    expect(tiny.take('ws_b', 1, 10, () => 0)).toBeNull();
  });
});
