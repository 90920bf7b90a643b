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
import { SnapshotError } from '../snapshot/reader.ts';
import { threadArgv } from '../thread-argv.mjs';
import { batchColumns } from './arrow.ts';
import { ColdCodec } from './cold.ts';
import { filePartsFromTransfer, type FileParts, type FilePartsTransfer } from './file-parts.ts';
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
  { blob: Uint8Array; offsets: Uint32Array | Float64Array; codec: ColdCodecTransfer; nice: number } | { error: string; mismatch?: true };

// control[STATUS]: RUNNING, then DONE or FAILED once the thread's message is on the port;
// control[ROWS]: rows encoded so far; control[STOP]: 1 asks the thread to end;
// control[PARTS]: when asked to build the file parts, DONE or FAILED once its message is on the
// parts' port; control[CHECK]: when asked to check the checksum (after the parts, before the
// blob), MATCHED, or MISMATCHED once its message is on the port; control[CHECK_MS]: how long it took.
export const STATUS = 0;
export const ROWS = 1;
export const STOP = 2;
export const CHECK = 3;
export const CHECK_MS = 4;
export const PARTS = 5;
export const RUNNING = 0;
export const DONE = 1;
export const FAILED = 2;
export const MATCHED = 1;
export const MISMATCHED = 2;

/** What the thread sends on the parts' port. */
export type FilePartsMessage = { parts: FilePartsTransfer } | { error: string };

export function coldBlobMessage(blob: ColdBlob): ColdBlobMessage {
  return { blob: blob.blob, offsets: blob.offsets, codec: coldCodecToTransfer(blob.codec), nice: blob.nice };
}

/** How a cold thread starts: its bundle, or its TypeScript through tsx's loader (thread-boot.mjs). */
export type ColdThreadCode = URL | 'typescript';

const BOOT = new URL('../http/thread-boot.mjs', import.meta.url);
export const COLD_THREAD_ENTRY = new URL('./cold-thread.ts', import.meta.url);

/** How long the thread may go without encoding a batch before this one takes the work back. */
const PATIENCE_MS = 15_000;

/** How often `encoded` looks at the thread's progress. */
const POLL_MS = 100;

/**
 * The thread encoding a file's cold blob while this one builds the rest of the store; asked to,
 * it first builds the file parts (file-parts.ts), then checks the file's checksum, each of which
 * this thread waits for where it needs it.
 */
export class ColdBlobThread {
  private readonly control = new Int32Array(new SharedArrayBuffer(24));
  private readonly partsPort: MessagePort;
  private readonly partsAsked: boolean;
  private poller: NodeJS.Timeout | null = null;
  /** Settles the promise `encoded` handed out, while it waits: a stop settles it with null. */
  private pending: ((blob: ColdBlob | null) => void) | null = null;
  private stopped = false;
  private readonly port: MessagePort;
  private readonly thread: Worker;

  private constructor(
    buffer: SharedArrayBuffer,
    schemaVersion: number,
    code: ColdThreadCode,
    private readonly patienceMs: number,
    nice: number,
    private readonly checkPath: string | null,
    parts: boolean,
  ) {
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    const partsChannel = new MessageChannel();
    this.partsPort = partsChannel.port1;
    this.partsAsked = parts;
    const partsPort = parts ? partsChannel.port2 : null;
    const workerData = {
      buffer,
      schemaVersion,
      control: this.control,
      port: port2,
      nice,
      checkPath,
      partsPort,
      entry: COLD_THREAD_ENTRY.href,
    };
    const transferList = partsPort ? [port2, partsPort] : [port2];
    this.thread =
      code === 'typescript'
        ? new Worker(BOOT, { workerData, transferList })
        : new Worker(code, { workerData, transferList, execArgv: threadArgv() });
    // A thread that fails to load is seen as a stall (finish): an error event left unheard would end the process.
    this.thread.on('error', () => undefined);
    this.thread.unref();
  }

  /**
   * Starts the thread over the file's mapped bytes; null if it cannot start (tsx, which the
   * TypeScript needs, is a development dependency). `patienceMs`: how long it may go without
   * encoding a batch before this thread takes the work back; `nice`: steps below the process it
   * runs at (Linux) once the checksum is checked and the parts built; `checkPath`: the file's
   * path, to check its checksum before the blob (`checked`), or null; `parts`: to build the file
   * parts (file-parts.ts) before all else, for `fileParts`.
   */
  static start(
    buffer: SharedArrayBuffer,
    schemaVersion: number,
    code: ColdThreadCode,
    patienceMs = PATIENCE_MS,
    nice = 0,
    checkPath: string | null = null,
    parts = false,
  ): ColdBlobThread | null {
    try {
      if (code === 'typescript') createRequire(import.meta.url).resolve('tsx/esm/api');
      return new ColdBlobThread(buffer, schemaVersion, code, patienceMs, nice, checkPath, parts);
    } catch {
      return null;
    }
  }

  /**
   * Waits for the thread's check of the checksum (started with `checkPath`): its milliseconds when
   * the file matched; throws a SnapshotError naming the mismatch; null when the thread could not
   * tell (it failed or stalled: the caller checks the file itself).
   */
  checked(): number | null {
    const control = this.control;
    if (!this.waitFor(CHECK)) return null;
    const check = Atomics.load(control, CHECK);
    if (check === MATCHED) return Atomics.load(control, CHECK_MS);
    if (check === MISMATCHED) {
      const received = receiveMessageOnPort(this.port)?.message as ColdBlobMessage | undefined;
      this.stop();
      if (received !== undefined && 'error' in received) throw new SnapshotError(this.checkPath!, received.error);
    }
    return null;
  }

  /**
   * Waits for the file parts (started with `parts`). Throws the thread's error when the file's
   * data is at fault; null when the thread was not asked, failed otherwise or stalled (the caller
   * builds them).
   */
  fileParts(): FileParts | null {
    if (!this.partsAsked || !this.waitFor(PARTS)) return null;
    if (Atomics.load(this.control, PARTS) === RUNNING) return null;
    const received = receiveMessageOnPort(this.partsPort)?.message as FilePartsMessage | undefined;
    if (received === undefined) return null;
    if ('error' in received) throw new Error(received.error);
    return filePartsFromTransfer(received.parts);
  }

  /**
   * Waits until the thread sets control[slot] or ends; false when it stalls that long (it is then
   * stopped, and every later wait gives up at once).
   */
  private waitFor(slot: number): boolean {
    const control = this.control;
    const since = performance.now();
    while (Atomics.load(control, slot) === 0 && Atomics.load(control, STATUS) === RUNNING) {
      if (this.stopped) return false;
      if (performance.now() - since > this.patienceMs) {
        this.stop();
        return false;
      }
      Atomics.wait(control, slot, 0, Math.min(1_000, this.patienceMs));
    }
    return true;
  }

  /**
   * Waits for the blob. Throws the thread's error when the file's data is at fault; returns null
   * when the thread did not start or stalled, having stopped it (the caller encodes the blob).
   * `rowsDone` hears the thread's progress while this one waits.
   */
  finish(rowsDone?: (rows: number) => void): ColdBlob | null {
    if (this.stopped) return null;
    const progress = this.progress(rowsDone);
    while (Atomics.load(this.control, STATUS) === RUNNING) {
      Atomics.wait(this.control, STATUS, RUNNING, Math.min(1_000, this.patienceMs));
      if (!progress()) return null;
    }
    return this.received();
  }

  /**
   * `finish` without blocking this thread: settles with the blob (null when the thread stalled or
   * was stopped meanwhile, having stopped it), or rejects with the thread's error.
   */
  encoded(rowsDone?: (rows: number) => void): Promise<ColdBlob | null> {
    if (this.stopped) return Promise.resolve(null);
    const progress = this.progress(rowsDone);
    return new Promise((resolve, reject) => {
      this.pending = resolve;
      const poll = (): void => {
        this.poller = null;
        if (Atomics.load(this.control, STATUS) !== RUNNING) {
          this.pending = null;
          try {
            resolve(this.received());
          } catch (err) {
            reject(err as Error);
          }
        } else if (!progress()) resolve(null);
        else this.poller = setTimeout(poll, POLL_MS);
      };
      poll();
    });
  }

  /**
   * A check of the thread's progress, to call while waiting for it: passes the rows encoded to
   * `rowsDone` when they changed; false once none changed for the patience (the thread stopped).
   */
  private progress(rowsDone?: (rows: number) => void): () => boolean {
    let rows = Atomics.load(this.control, ROWS);
    let progressed = performance.now();
    return () => {
      const now = Atomics.load(this.control, ROWS);
      if (now !== rows) {
        rows = now;
        progressed = performance.now();
        rowsDone?.(rows);
      } else if (performance.now() - progressed > this.patienceMs) {
        this.stop();
        return false;
      }
      return true;
    };
  }

  /** The thread's message, once its status is set; the thread is stopped. */
  private received(): ColdBlob | null {
    const received = receiveMessageOnPort(this.port)?.message as ColdBlobMessage | undefined;
    this.stop();
    if (received === undefined) return null;
    if ('error' in received) throw new Error(received.error);
    const { blob, offsets, nice } = received;
    return { by: 'thread', nice, codec: coldCodecFromTransfer(received.codec), blob, offsets };
  }

  /** Ends the thread (its work, if any, is dropped); a wait for `encoded` settles with null. */
  stop(): void {
    this.stopped = true;
    if (this.poller !== null) clearTimeout(this.poller);
    this.poller = null;
    const pending = this.pending;
    this.pending = null;
    pending?.(null);
    Atomics.store(this.control, STOP, 1);
    this.port.close();
    this.partsPort.close();
    void this.thread.terminate();
  }
}
