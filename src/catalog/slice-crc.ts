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
import { threadArgv } from '../thread-argv.mjs';

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
      this.thread = new Worker(CRC_THREAD, { workerData: { control, sums, finished, buffers, slices }, execArgv: threadArgv() });
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
    // Slices all have one length but an array's last: one operator per length, not per slice.
    const operators = new Map<number, Uint32Array>();
    this.slices.forEach(([array, , length], k) => {
      let operator = operators.get(length);
      if (operator === undefined) operators.set(length, (operator = zeroBytesOperator(length)));
      out[array] = (gf2Times(operator, out[array]) ^ this.sums[k]) >>> 0;
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

// crc32Combine: zlib's crc32_combine. Appending n zero bytes to a message is a linear map of its
// CRC over GF(2): a 32x32 bit matrix, built by squaring the one-zero-bit operator.

function gf2Times(matrix: Uint32Array, vector: number): number {
  let sum = 0;
  for (let i = 0; vector !== 0; i++, vector >>>= 1) if (vector & 1) sum ^= matrix[i];
  return sum >>> 0;
}

/** a after b, as matrices: (a ∘ b)[n] = a · b[n]. */
function gf2Compose(a: Uint32Array, b: Uint32Array): Uint32Array<ArrayBuffer> {
  const out = new Uint32Array(32);
  for (let n = 0; n < 32; n++) out[n] = gf2Times(a, b[n]);
  return out;
}

/** The operator that turns the CRC-32 of A into that of A followed by `length` zero bytes. */
function zeroBytesOperator(length: number): Uint32Array {
  let power = new Uint32Array(32);
  power[0] = 0xedb88320; // the CRC-32 polynomial, reflected: the operator for one zero bit
  for (let n = 1, row = 1; n < 32; n++, row <<= 1) power[n] = row;
  for (let bits = 0; bits < 3; bits++) power = gf2Compose(power, power); // one zero byte
  let operator = new Uint32Array(32);
  for (let n = 0; n < 32; n++) operator[n] = (1 << n) >>> 0; // the identity
  for (let rest = length; rest > 0; rest = Math.floor(rest / 2)) {
    if (rest % 2 === 1) operator = gf2Compose(power, operator);
    power = gf2Compose(power, power);
  }
  return operator;
}

/** The CRC-32 of A followed by B, from the CRC-32s of A and of B and B's length in bytes. */
export function crc32Combine(crcA: number, crcB: number, lengthB: number): number {
  if (lengthB <= 0) return crcA >>> 0;
  return (gf2Times(zeroBytesOperator(lengthB), crcA >>> 0) ^ crcB) >>> 0;
}
