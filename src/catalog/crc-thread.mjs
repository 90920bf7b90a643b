// The second thread of slice-crc.ts: claims slices of a prepared file's shared arrays one at a time
// (control[1], shared with the reading thread, which claims from the same counter), but only
// slices already in memory (control[0]); writes each slice's own CRC-32, marks it finished,
// counts it in control[2]. control[3] set to 1 stops it. Plain JavaScript: it starts in a few
// milliseconds.
import process from 'node:process';
import { workerData } from 'node:worker_threads';
import { crc32 } from 'node:zlib';

/**
 * @type {{ control: Int32Array; sums: Uint32Array; finished: Uint8Array; buffers: (SharedArrayBuffer | null)[];
 *   slices: [number, number, number][] }}
 */
const { control, sums, finished, buffers, slices } = workerData;
const views = buffers.map((b) => (b === null ? null : new Uint8Array(b)));
for (;;) {
  if (Atomics.load(control, 3) === 1) process.exit(0);
  const next = Atomics.load(control, 1);
  if (next >= slices.length) process.exit(0);
  const available = Atomics.load(control, 0);
  if (next >= available) {
    Atomics.wait(control, 0, available, 1000);
    continue;
  }
  if (Atomics.compareExchange(control, 1, next, next + 1) !== next) continue;
  const [array, from, length] = slices[next];
  sums[next] = crc32(views[array].subarray(from, from + length));
  Atomics.store(finished, next, 1);
  Atomics.add(control, 2, 1);
  Atomics.notify(control, 2);
}
