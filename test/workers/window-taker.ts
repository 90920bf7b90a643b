/** Worker for limits-threads.test.ts: takes from a shared limiter table once told to go. */
import { parentPort, workerData } from 'node:worker_threads';
import { WindowLimiter } from '../../src/ledger/limits.ts';

const { table, keys, n, now, go } = workerData as {
  table: SharedArrayBuffer;
  keys: string[];
  n: number;
  now: number;
  go: SharedArrayBuffer;
};
const limiter = new WindowLimiter({ limit: 60, periodMs: 60_000, maxKeys: 4000, table });
const flag = new Int32Array(go);
parentPort!.postMessage('ready');
Atomics.wait(flag, 0, 0);
let passed = 0;
for (let i = 0; i < n; i++) for (const k of keys) if (limiter.take(k, now).ok) passed++;
parentPort!.postMessage(passed);
