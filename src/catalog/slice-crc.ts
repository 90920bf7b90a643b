/**
 * The CRC-32s of a prepared file's shared arrays, cut into slices that two threads take from one
 * counter: this one and a second (crc-thread.mjs). Each slice gets its own CRC; an array's is
 * then joined from its slices' (`crc32Combine`, as zlib's crc32_combine). On a 1.6 GB file the CRCs
 * take about as long as mapping or reading it, so halving them halves the check.
 *
 * Slices are taken only once in memory: all at once for a mapped file, one by one as a read
 * goes. Should the second thread not start or stall, this one computes what it left: slower,
 * never wrong.
 */
import { Worker } from 'node:worker_threads';
import { crc32 } from 'node:zlib';

/** How long this thread waits for the second one to make progress before computing its slices itself. */
const THREAD_PATIENCE_MS = 2_000;
const CRC_THREAD = new URL('./crc-thread.mjs', import.meta.url);

/** One slice: its array's number, its first byte in that array, its length. */
export type Slice = [array: number, from: number, length: number];

// control[0]: slices in memory; [1]: the next slice to take; [2]: slices finished by the second
// thread; [3]: 1 stops it.
const AVAILABLE = 0;
const NEXT = 1;
const DONE = 2;
const STOP = 3;

export class SliceCrc {
  private readonly control = new Int32Array(new SharedArrayBuffer(16));
  private readonly sums: Uint32Array;
  private readonly finished: Uint8Array;
  private readonly views: (Uint8Array | null)[];
  /** Slices this thread computed. */
  private mine = 0;
  private thread: Worker | null = null;

  /** `helper`: whether to start the second thread (not worth it for a small file). */
  constructor(
    buffers: (SharedArrayBuffer | null)[],
    private readonly slices: readonly Slice[],
    helper: boolean,
  ) {
    this.sums = new Uint32Array(new SharedArrayBuffer(4 * Math.max(1, slices.length)));
    this.finished = new Uint8Array(new SharedArrayBuffer(Math.max(1, slices.length)));
    this.views = buffers.map((b) => (b === null ? null : new Uint8Array(b)));
    if (!helper) return;
    try {
      const { control, sums, finished } = this;
      this.thread = new Worker(CRC_THREAD, { workerData: { control, sums, finished, buffers, slices }, execArgv: [] });
      // Its failure is seen as a stall (finish): an error event left unheard would end the process.
      this.thread.on('error', () => undefined);
      this.thread.unref();
    } catch {
      this.thread = null;
    }
  }

  /** The first `n` slices (in `slices` order) are in their buffers. */
  available(n: number): void {
    Atomics.store(this.control, AVAILABLE, n);
    Atomics.notify(this.control, AVAILABLE);
  }

  /** Each array's CRC-32 (0 for arrays without slices), once every slice is available; stops the second thread. */
  finish(arrays: number): Uint32Array {
    this.available(this.slices.length);
    for (let k = Atomics.add(this.control, NEXT, 1); k < this.slices.length; k = Atomics.add(this.control, NEXT, 1)) {
      this.compute(k);
      this.mine++;
    }
    // Every slice is taken now: those not taken here are the second thread's.
    const theirs = this.slices.length - this.mine;
    for (let done = Atomics.load(this.control, DONE); done < theirs;) {
      const outcome = Atomics.wait(this.control, DONE, done, THREAD_PATIENCE_MS);
      const now = Atomics.load(this.control, DONE);
      if (outcome === 'timed-out' && now === done) {
        for (let k = 0; k < this.slices.length; k++) if (Atomics.load(this.finished, k) === 0) this.compute(k);
        break;
      }
      done = now;
    }
    this.stop();
    const out = new Uint32Array(arrays);
    this.slices.forEach(([array, , length], k) => {
      out[array] = crc32Combine(out[array], this.sums[k], length);
    });
    return out;
  }

  stop(): void {
    Atomics.store(this.control, STOP, 1);
    Atomics.notify(this.control, AVAILABLE);
  }

  private compute(k: number): void {
    const [array, from, length] = this.slices[k];
    this.sums[k] = crc32(this.views[array]!.subarray(from, from + length));
    Atomics.store(this.finished, k, 1);
  }
}

// crc32Combine: zlib's crc32_combine, which appends `length` zero bits to the first CRC by
// squaring the CRC's shift operator over GF(2), then adds the second.

function gf2Times(matrix: Uint32Array, vector: number): number {
  let sum = 0;
  for (let i = 0; vector !== 0; i++, vector >>>= 1) if (vector & 1) sum ^= matrix[i];
  return sum >>> 0;
}

function gf2Square(square: Uint32Array, matrix: Uint32Array): void {
  for (let n = 0; n < 32; n++) square[n] = gf2Times(matrix, matrix[n]);
}

/** The CRC-32 of A followed by B, from the CRC-32s of A and of B and B's length in bytes. */
export function crc32Combine(crcA: number, crcB: number, lengthB: number): number {
  if (lengthB <= 0) return crcA >>> 0;
  const even = new Uint32Array(32);
  const odd = new Uint32Array(32);
  odd[0] = 0xedb88320; // the CRC-32 polynomial, reflected: the operator for one zero bit
  for (let n = 1, row = 1; n < 32; n++, row <<= 1) odd[n] = row;
  gf2Square(even, odd); // two zero bits
  gf2Square(odd, even); // four
  let crc = crcA >>> 0;
  let length = lengthB;
  for (;;) {
    gf2Square(even, odd); // the first round: one zero byte
    if (length % 2 === 1) crc = gf2Times(even, crc);
    length = Math.floor(length / 2);
    if (length === 0) break;
    gf2Square(odd, even);
    if (length % 2 === 1) crc = gf2Times(odd, crc);
    length = Math.floor(length / 2);
    if (length === 0) break;
  }
  return (crc ^ crcB) >>> 0;
}
