/**
 * Worker for ledger-shared-openings.test.ts: reads a SharedOpenings that another thread writes,
 * until told to stop, and reports what it saw. Key i is (workspace i, building i), added once at
 * second T0 + i; the keys that cross them, (workspace i, building j) for j ≠ i, are never added: a
 * slot rewritten for key i over key j, read half-way, would hold one.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { SharedOpenings } from '../../src/ledger/shared-openings.ts';
import { openingKey, T0 } from './openings-keys.ts';

const { buffer, control } = workerData as { buffer: SharedArrayBuffer; control: SharedArrayBuffer };
const table = new SharedOpenings(buffer);
// [0]: keys added so far (the writer counts after each add), [1]: 1 once the writer is done.
const state = new Int32Array(control);
let found = 0;
let wrong = 0;
let crossed = 0;
const firstWrong: string[] = [];
parentPort!.postMessage('ready');
for (let round = 0; Atomics.load(state, 1) === 0; round++) {
  const added = Atomics.load(state, 0);
  // The latest keys (the table holds about the last 11 to 22 of them) and a few not added yet.
  const i = Math.max(0, added - 24) + (round % 30);
  const [w, b] = openingKey(i);
  const at = table.openedAt(w, b);
  if (at > 0) {
    found++;
    if (at !== (T0 + i) * 1000 || i > Atomics.load(state, 0)) {
      wrong++;
      if (firstWrong.length < 5) firstWrong.push(`key ${i}: ${at}`);
    }
  }
  const [, other] = openingKey(Math.max(0, i - 1 - (round % 24)));
  if (i > 0 && table.openedAt(w, other) !== 0) {
    crossed++;
    if (firstWrong.length < 5) firstWrong.push(`crossed key ${i}`);
  }
}
parentPort!.postMessage({ found, wrong, crossed, firstWrong });
