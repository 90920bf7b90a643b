/** Worker for limits-threads.test.ts: counts requests in a shared quota table once told to go. */
import { parentPort, workerData } from 'node:worker_threads';
import { SharedQuota } from '../../src/ledger/shared-quota.ts';

const { table, workspaces, n, limit, go } = workerData as {
  table: SharedArrayBuffer;
  workspaces: string[];
  n: number;
  limit: number;
  go: SharedArrayBuffer;
};
const quota = new SharedQuota(4096, table);
parentPort!.postMessage('ready');
Atomics.wait(new Int32Array(go), 0, 0);
let passed = 0;
for (let i = 0; i < n; i++) for (const w of workspaces) if (quota.take(w, 20_000, limit, () => 0)?.ok) passed++;
parentPort!.postMessage(passed);
