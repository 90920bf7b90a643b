/**
 * The thread that encodes a snapshot's cold blob (cold-blob.ts) while the main thread builds the
 * rest of its store: it reads the same mapped file, encodes, and hands back the blob (shared
 * memory) and the codec's tables on its port, then sets its status. Asked to, it first builds the
 * file parts (file-parts.ts) and hands them back on their port, then checks the file's checksum:
 * the main thread waits for both before it serves, for the blob only after.
 *
 * Asked to (`nice` steps), it encodes below the process: the store serves meanwhile, so the
 * workers answering come first and this thread takes what they leave. Linux keeps a nice value
 * per thread (elsewhere it would lower the whole process, so it is left alone).
 */
import { getPriority, setPriority } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { MessagePort } from 'node:worker_threads';
import { workerData } from 'node:worker_threads';
import { tableFromIPC, type Table } from 'apache-arrow';
import { SnapshotError, checkChecksum, currentFormat, parseMetadata } from '../snapshot/reader.ts';
import {
  CHECK,
  CHECK_MS,
  DONE,
  FAILED,
  MATCHED,
  MISMATCHED,
  PARTS,
  ROWS,
  STATUS,
  STOP,
  coldBlobMessage,
  encodeColdBlob,
  type ColdBlobMessage,
  type FilePartsMessage,
} from './cold-blob.ts';
import { buildFileParts, filePartsToTransfer } from './file-parts.ts';

const { buffer, schemaVersion, control, port, nice, checkPath, partsPort } = workerData as {
  buffer: SharedArrayBuffer;
  schemaVersion: number;
  control: Int32Array;
  port: MessagePort;
  nice: number;
  checkPath: string | null;
  partsPort: MessagePort | null;
};

function lowerPriority(): void {
  if (nice > 0 && process.platform === 'linux') {
    try {
      setPriority(0, Math.min(19, getPriority(0) + nice));
    } catch {
      // Lowering a priority is always allowed; should it fail, the thread runs at the process's.
    }
  }
}

/** Checks the file's checksum when asked: the loading thread waits for it, so it runs at the process's priority. */
function check(table: Table): ColdBlobMessage | null {
  if (checkPath === null) return null;
  const started = performance.now();
  try {
    checkChecksum(checkPath, table, parseMetadata(checkPath, table.schema.metadata));
  } catch (err) {
    return { error: err instanceof SnapshotError ? err.reason : (err as Error).message, mismatch: true };
  }
  Atomics.store(control, CHECK_MS, Math.round(performance.now() - started));
  Atomics.store(control, CHECK, MATCHED);
  Atomics.notify(control, CHECK);
  return null;
}

/** Builds the file parts when asked, and hands them over; the loading thread waits for them too. */
function buildParts(table: Table): void {
  if (partsPort === null) return;
  let parts: FilePartsMessage;
  try {
    parts = { parts: filePartsToTransfer(buildFileParts(table)) };
  } catch (err) {
    parts = { error: (err as Error).message };
  }
  partsPort.postMessage(parts);
  partsPort.close();
  Atomics.store(control, PARTS, 'error' in parts ? FAILED : DONE);
  Atomics.notify(control, PARTS);
}

let message: ColdBlobMessage | null;
try {
  const raw = tableFromIPC(new Uint8Array(buffer));
  // The parts first: the main thread needs them before its node summaries, the checksum's verdict only at the end.
  buildParts(raw);
  message = check(raw);
  if (message === null) {
    lowerPriority();
    const blob = encodeColdBlob(
      currentFormat(raw, schemaVersion),
      buffer.byteLength,
      (rows) => Atomics.store(control, ROWS, rows),
      () => Atomics.load(control, STOP) === 1,
    );
    message = blob === null ? null : coldBlobMessage(blob);
  }
} catch (err) {
  message = { error: (err as Error).message };
}
if (message !== null) {
  // The message first: the main thread reads it as soon as it sees the status.
  port.postMessage(message);
  if ('mismatch' in message) {
    Atomics.store(control, CHECK, MISMATCHED);
    Atomics.notify(control, CHECK);
  }
  Atomics.store(control, STATUS, 'error' in message ? FAILED : DONE);
  Atomics.notify(control, STATUS);
}
port.close();
