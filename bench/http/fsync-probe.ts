/**
 * What the ledger's disk itself takes to make a small write durable, measured beside the server:
 * `node fsync-probe.ts <folder> <per-second>` writes a 4 KiB block (at the next of 256 offsets of
 * a 1 MiB file, as a write-ahead log reuses its pages) and fdatasyncs it, at a steady rate, until
 * SIGTERM; then prints one JSON line of the write+fdatasync times in ms. A charge cannot be
 * answered sooner than such a sync on the same disk (the ledger runs `synchronous = FULL`), so
 * its p99 is the floor of the charged pages' tail. The probe runs at the ledger thread's priority
 * (EDIFICE_LEDGER_PRIORITY nice steps up, as far as it is permitted), so that, as for the ledger
 * thread, a sync that has ended waits little for a core: what it measures is the disk.
 */
import { closeSync, fdatasyncSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { raiseThreadPriority } from '../../src/http/thread-priority.ts';

const [folder, perSecond] = process.argv.slice(2);
const rate = Number(perSecond);
if (!folder || !(rate > 0)) throw new Error('usage: fsync-probe.ts <folder> <syncs per second>');

// The server's default (src/config.ts), or what the bench's environment gives it.
const priority = raiseThreadPriority(Number(process.env.EDIFICE_LEDGER_PRIORITY ?? 10));

const BLOCK = 4096;
const SLOTS = 256;
const path = join(folder, `fsync-probe-${process.pid}.bin`);
const fd = openSync(path, 'w+');
const block = Buffer.alloc(BLOCK, 0x5a);
for (let i = 0; i < SLOTS; i++) writeSync(fd, block, 0, BLOCK, i * BLOCK);
fdatasyncSync(fd);

const samples: number[] = [];
let slot = 0;
const period = 1000 / rate;
const t0 = performance.now();
let n = 0;
let stopping = false;

function tick(): void {
  if (stopping) return;
  const a = performance.now();
  block.writeUInt32LE(n, 0);
  writeSync(fd, block, 0, BLOCK, slot * BLOCK);
  fdatasyncSync(fd);
  samples.push(performance.now() - a);
  slot = (slot + 1) % SLOTS;
  n++;
  // The next sync at its own due time, not after this one's end: a slow sync does not slow the rate.
  setTimeout(tick, Math.max(0, t0 + n * period - performance.now()));
}

process.on('SIGTERM', () => {
  stopping = true;
  closeSync(fd);
  rmSync(path, { force: true });
  const sorted = samples.slice().sort((x, y) => x - y);
  const at = (q: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] : NaN);
  process.stdout.write(
    `${JSON.stringify({ nice: priority.nice, count: sorted.length, p50: at(0.5), p99: at(0.99), max: sorted.length ? sorted[sorted.length - 1] : NaN })}\n`,
  );
  process.exit(0);
});
process.stdout.write('ready\n');
tick();
