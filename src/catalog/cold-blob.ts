/**
 * The cold blob of a table (cold.ts): every row's cold columns, encoded one row after the other.
 * On a large table it is the longest part of building a store, and it reads nothing the rest of
 * the build writes, so a second thread encodes it (cold-thread.ts) from the same mapped file
 * while this one builds the rest. Should that thread not start or stall, this one encodes the
 * blob itself: slower, never different.
 */
import { createRequire } from 'node:module';
import { getPriority } from 'node:os';
import { performance } from 'node:perf_hooks';
import { MessageChannel, Worker, receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import type { Table } from 'apache-arrow';
import { batchColumns } from './arrow.ts';
import { ColdCodec } from './cold.ts';
import { COLD_COLUMNS } from './columns.ts';
import { ByteSink, sharedF64, sharedU32 } from './shared.ts';
import { coldCodecFromTransfer, coldCodecToTransfer, type ColdCodecTransfer } from './transfer.ts';

export interface ColdBlob {
  /** Where it was encoded: by the second thread, or here (small store, no thread, or one that stalled). */
  by: 'thread' | 'here';
  /** The nice value of the thread that encoded it (Linux). */
  nice: number;
  codec: ColdCodec;
  blob: Uint8Array;
  /** Row r's bytes are blob[offsets[r], offsets[r + 1]). */
  offsets: Uint32Array | Float64Array;
}

/** The cold blob's size, from the file's: a quarter (a sixth in the synthetic countries), doubled if short. */
const BLOB_PER_FILE_BYTE = 0.25;

/**
 * Encodes the cold columns of every row of a file of `fileBytes`. `rowsDone` hears the rows
 * encoded after each batch; when `stopped` turns true the encoding ends early and returns null.
 */
export function encodeColdBlob(
  table: Table,
  fileBytes: number,
  rowsDone?: (rows: number) => void,
  stopped?: () => boolean,
): ColdBlob | null {
  const n = table.numRows;
  const codec = new ColdCodec(COLD_COLUMNS);
  const sink = new ByteSink(Math.max(1 << 16, Math.ceil(fileBytes * BLOB_PER_FILE_BYTE)));
  const starts = new Float64Array(n + 1);
  let row = 0;
  for (let b = 0; b < table.batches.length; b++) {
    if (stopped?.()) return null;
    const encode = codec.batchEncoder(batchColumns(table, b));
    const len = table.batches[b].numRows;
    for (let i = 0; i < len; i++) {
      starts[row + i] = sink.pos;
      encode(i, sink);
    }
    row += len;
    rowsDone?.(row);
  }
  starts[n] = sink.pos;
  codec.release();
  const offsets = sink.pos < 2 ** 32 ? sharedU32(n + 1) : sharedF64(n + 1);
  offsets.set(starts);
  return { by: 'here', nice: getPriority(0), codec, blob: sink.toShared(), offsets };
}

/** What the thread sends back: the blob and offsets (shared) and the codec's tables, or why it failed. */
export type ColdBlobMessage =
  { blob: Uint8Array; offsets: Uint32Array | Float64Array; codec: ColdCodecTransfer; nice: number } | { error: string };

// control[STATUS]: RUNNING, then DONE or FAILED once the thread's message is on the port;
// control[ROWS]: rows encoded so far; control[STOP]: 1 asks the thread to end.
export const STATUS = 0;
export const ROWS = 1;
export const STOP = 2;
export const RUNNING = 0;
export const DONE = 1;
export const FAILED = 2;

export function coldBlobMessage(blob: ColdBlob): ColdBlobMessage {
  return { blob: blob.blob, offsets: blob.offsets, codec: coldCodecToTransfer(blob.codec), nice: blob.nice };
}

/** How a cold thread starts: its bundle, or its TypeScript through tsx's loader (thread-boot.mjs). */
export type ColdThreadCode = URL | 'typescript';

const BOOT = new URL('../http/thread-boot.mjs', import.meta.url);
export const COLD_THREAD_ENTRY = new URL('./cold-thread.ts', import.meta.url);

/** How long the thread may go without encoding a batch before this one takes the work back. */
const PATIENCE_MS = 15_000;

/** The thread encoding a file's cold blob while this one builds the rest of the store. */
export class ColdBlobThread {
  private readonly control = new Int32Array(new SharedArrayBuffer(12));
  private readonly port: MessagePort;
  private readonly thread: Worker;

  private constructor(
    buffer: SharedArrayBuffer,
    schemaVersion: number,
    code: ColdThreadCode,
    private readonly patienceMs: number,
    nice: number,
  ) {
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    const workerData = { buffer, schemaVersion, control: this.control, port: port2, nice, entry: COLD_THREAD_ENTRY.href };
    this.thread =
      code === 'typescript'
        ? new Worker(BOOT, { workerData, transferList: [port2] })
        : new Worker(code, { workerData, transferList: [port2], execArgv: [] });
    // A thread that fails to load is seen as a stall (finish): an error event left unheard would end the process.
    this.thread.on('error', () => undefined);
    this.thread.unref();
  }

  /**
   * Starts the thread over the file's mapped bytes; null if it cannot start (tsx, which the
   * TypeScript needs, is a development dependency). `patienceMs`: how long it may go without
   * encoding a batch before this thread takes the work back; `nice`: steps below the process it
   * runs at (Linux).
   */
  static start(
    buffer: SharedArrayBuffer,
    schemaVersion: number,
    code: ColdThreadCode,
    patienceMs = PATIENCE_MS,
    nice = 0,
  ): ColdBlobThread | null {
    try {
      if (code === 'typescript') createRequire(import.meta.url).resolve('tsx/esm/api');
      return new ColdBlobThread(buffer, schemaVersion, code, patienceMs, nice);
    } catch {
      return null;
    }
  }

  /**
   * Waits for the blob. Throws the thread's error when the file's data is at fault; returns null
   * when the thread did not start or stalled, having stopped it (the caller encodes the blob).
   * `rowsDone` hears the thread's progress while this one waits.
   */
  finish(rowsDone?: (rows: number) => void): ColdBlob | null {
    const control = this.control;
    let rows = Atomics.load(control, ROWS);
    let progressed = performance.now();
    while (Atomics.load(control, STATUS) === RUNNING) {
      Atomics.wait(control, STATUS, RUNNING, Math.min(1_000, this.patienceMs));
      const now = Atomics.load(control, ROWS);
      if (now !== rows) {
        rows = now;
        progressed = performance.now();
        rowsDone?.(rows);
      } else if (performance.now() - progressed > this.patienceMs) {
        this.stop();
        return null;
      }
    }
    const received = receiveMessageOnPort(this.port)?.message as ColdBlobMessage | undefined;
    this.stop();
    if (received === undefined) return null;
    if ('error' in received) throw new Error(received.error);
    const { blob, offsets, nice } = received;
    return { by: 'thread', nice, codec: coldCodecFromTransfer(received.codec), blob, offsets };
  }

  /** Ends the thread (its work, if any, is dropped). */
  stop(): void {
    Atomics.store(this.control, STOP, 1);
    this.port.close();
    void this.thread.terminate();
  }
}
