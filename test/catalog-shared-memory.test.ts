/**
 * The store's large arrays on huge pages (src/catalog/shared.ts sharedBuffer, native/mapped.cc
 * hugeShared): zeroed, shared with a worker thread like any SharedArrayBuffer, and, where the
 * kernel's transparent huge pages are not off, backed by them once written, as the process's own
 * memory map reports (/proc/self/smaps).
 */
import { readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { HUGE_PAGES_FROM, sharedBuffer, sharedU32 } from '../src/catalog/shared.ts';

/** The process's anonymous memory on huge pages, in KiB (/proc/self/smaps_rollup). */
const hugeKb = (): number => Number(/^AnonHugePages:\s+(\d+) kB/m.exec(readFileSync('/proc/self/smaps_rollup', 'utf8'))![1]);

describe('large shared arrays on huge pages', () => {
  it('are zeroed, of the size asked, and shared with a worker thread', async () => {
    const a = sharedU32(HUGE_PAGES_FROM / 4 + 3);
    expect(a.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(a.length).toBe(HUGE_PAGES_FROM / 4 + 3);
    expect(a.every((v) => v === 0)).toBe(true);
    const worker = new Worker(
      'const { parentPort } = require("node:worker_threads"); parentPort.on("message", (b) => { const u = new Uint32Array(b); u[u.length - 1] = 7; u[0] = 9; parentPort.postMessage("done"); });',
      {
        eval: true,
      },
    );
    try {
      const done = new Promise((resolve) => worker.once('message', resolve));
      worker.postMessage(a.buffer);
      expect(await done).toBe('done');
      expect([a[0], a[a.length - 1]]).toEqual([9, 7]);
    } finally {
      await worker.terminate();
    }
    expect(new Uint8Array(sharedBuffer(5)).length).toBe(5);
    expect(new Uint8Array(sharedBuffer(0)).length).toBe(0);
  });

  it('are backed by huge pages once written, where the kernel does not leave them off, unlike plain ones', () => {
    const bytes = 64 << 20;
    const write = (buffer: SharedArrayBuffer): number => {
      const before = hugeKb();
      const a = new Float64Array(buffer);
      for (let i = 0; i < a.length; i += 512) a[i] = i; // one write per 4 KiB page
      return hugeKb() - before;
    };
    const mode = /\[(\w+)\]/.exec(readFileSync('/sys/kernel/mm/transparent_hugepage/enabled', 'utf8'))![1];
    const ours = write(sharedBuffer(bytes));
    const plain = write(new SharedArrayBuffer(bytes));
    if (mode === 'never') expect(ours).toBe(0);
    // The range starts on a 2 MiB boundary; where free memory is too fragmented for some 2 MiB
    // pages the kernel falls back to small ones, so most of it, not all.
    else expect(ours).toBeGreaterThanOrEqual((bytes >> 10) / 2);
    // Asked for them only where `always` gives them to every mapping.
    if (mode === 'madvise') expect(plain).toBeLessThan(4096);
  });
});
