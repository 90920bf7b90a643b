// The CRC-32s of a prepared file's shared arrays, computed beside the thread that reads them
// (prepared.ts, ParallelCrc): that thread counts each slice it has read in control[0]; this one
// takes the slices in the same order, adds each to its array's CRC, and counts those done in
// control[1]. control[2] set to 1 stops it. Plain JavaScript: it starts in a few milliseconds.
import process from 'node:process';
import { workerData } from 'node:worker_threads';
import { crc32 } from 'node:zlib';

/** @type {{ control: Int32Array; sums: Uint32Array; buffers: (SharedArrayBuffer | null)[]; slices: [number, number, number][] }} */
const { control, sums, buffers, slices } = workerData;
const views = buffers.map((b) => (b === null ? null : new Uint8Array(b)));
for (let done = 0; done < slices.length; done++) {
  while (Atomics.load(control, 0) <= done) {
    if (Atomics.load(control, 2) === 1) process.exit(0);
    Atomics.wait(control, 0, done, 1000);
  }
  if (Atomics.load(control, 2) === 1) process.exit(0);
  const [array, from, length] = slices[done];
  sums[array] = crc32(views[array].subarray(from, from + length), sums[array]);
  Atomics.store(control, 1, done + 1);
  Atomics.notify(control, 1);
}
