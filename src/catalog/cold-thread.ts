/**
 * The thread that encodes a snapshot's cold blob (cold-blob.ts) while the main thread builds the
 * rest of its store: it reads the same mapped file, encodes, and hands back the blob (shared
 * memory) and the codec's tables on its port, then sets its status.
 *
 * Asked to (`nice` steps), it runs below the process: while a server swaps in a snapshot built
 * from its Arrow file, the workers answering meanwhile come first and this thread takes what they
 * leave. Linux keeps a nice value per thread (elsewhere it would lower the whole process, so it is
 * left alone).
 */
import { getPriority, setPriority } from 'node:os';
import type { MessagePort } from 'node:worker_threads';
import { workerData } from 'node:worker_threads';
import { tableFromIPC } from 'apache-arrow';
import { upgradeV1 } from '../snapshot/upgrade.ts';
import { DONE, FAILED, ROWS, STATUS, STOP, coldBlobMessage, encodeColdBlob, type ColdBlobMessage } from './cold-blob.ts';

const { buffer, schemaVersion, control, port, nice } = workerData as {
  buffer: SharedArrayBuffer;
  schemaVersion: number;
  control: Int32Array;
  port: MessagePort;
  nice: number;
};

if (nice > 0 && process.platform === 'linux') {
  try {
    setPriority(0, Math.min(19, getPriority(0) + nice));
  } catch {
    // Lowering a priority is always allowed; should it fail, the thread runs at the process's.
  }
}

let message: ColdBlobMessage | null;
try {
  let table = tableFromIPC(new Uint8Array(buffer));
  if (schemaVersion === 1) table = upgradeV1(table);
  const blob = encodeColdBlob(
    table,
    buffer.byteLength,
    (rows) => Atomics.store(control, ROWS, rows),
    () => Atomics.load(control, STOP) === 1,
  );
  message = blob === null ? null : coldBlobMessage(blob);
} catch (err) {
  message = { error: (err as Error).message };
}
if (message !== null) {
  // The message first: the main thread reads it as soon as it sees the status.
  port.postMessage(message);
  Atomics.store(control, STATUS, 'error' in message ? FAILED : DONE);
  Atomics.notify(control, STATUS);
}
port.close();
