import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { getPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ColdBlobThread } from '../src/catalog/cold-blob.ts';
import { Catalog, type LogEntry } from '../src/catalog/catalog.ts';
import { loadSnapshot, type LoadOptions, type LoadWatch } from '../src/catalog/load.ts';
import type { Snapshot } from '../src/catalog/snapshot.ts';
import { SnapshotError, openSnapshot, readSnapshot } from '../src/snapshot/reader.ts';
import { writeSyntheticCountry } from '../src/synth/generate.ts';

let dir: string;
let synthetic: string;
const v1 = new URL('./fixtures/snapshot-v1/XA/2026-01-01.arrow', import.meta.url).pathname;
/** A thread that loads and then never encodes a batch. */
let stalling: URL;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'edifice-cold-thread-'));
  await writeSyntheticCountry({ seed: 5, buildings: 12_000, outDir: dir });
  const country = readdirSync(dir).find((d) => /^[A-Z]{2}$/.test(d))!;
  synthetic = join(
    dir,
    country,
    readdirSync(join(dir, country)).find((f) => f.endsWith('.arrow'))!,
  );
  const stall = join(dir, 'stall.mjs');
  writeFileSync(stall, 'setInterval(() => {}, 1000);\n');
  stalling = pathToFileURL(stall);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function load(path: string, options: LoadOptions): { snapshot: Snapshot; watch: LoadWatch } {
  const watch: LoadWatch = {};
  return { snapshot: loadSnapshot(readSnapshot(path), watch, options), watch };
}

/** The cold part of a store, and every record it rebuilds. */
function coldOf(s: Snapshot): unknown {
  const cold = s.parts.cold;
  if ('file' in cold) throw new Error('the cold blob is not encoded');
  const records = [];
  for (let r = 0; r < s.rows; r++) records.push(s.record(r));
  return {
    blob: Buffer.from(cold.blob).toString('base64'),
    offsets: [...cold.offsets],
    dictionaries: [...cold.codec.tables].map(([name, t]) => [name, t.values]),
    strings: Object.entries(cold.codec.strings).map(([name, t]) => [name, t.toArray()]),
    records,
  };
}

describe('the cold blob encoded on a second thread', () => {
  it('is the blob this thread encodes, for a current file and for a v1 file read as the current format', () => {
    expect(readSnapshot(v1).metadata.schemaVersion).toBe(1);
    for (const path of [synthetic, v1]) {
      // The thread reads the file's mapped bytes (the addon builds with npm install).
      expect(readSnapshot(path).mapped).toBeInstanceOf(SharedArrayBuffer);
      const here = load(path, {});
      const there = load(path, { coldThread: 'typescript', coldThreadMinRows: 0 });
      expect(here.snapshot.rows).toBeGreaterThan(0);
      expect(coldOf(there.snapshot)).toEqual(coldOf(here.snapshot));
      expect((there.snapshot.parts.cold as { blob: Uint8Array }).blob.buffer).toBeInstanceOf(SharedArrayBuffer);
      expect([here.watch.coldBy, there.watch.coldBy]).toEqual(['here', 'thread']);
    }
  });

  it('is encoded here when the thread stalls or does not load, and the store is the same', () => {
    const here = coldOf(load(synthetic, {}).snapshot);
    const stalled = load(synthetic, { coldThread: stalling, coldThreadMinRows: 0, coldThreadPatienceMs: 300 });
    expect(coldOf(stalled.snapshot)).toEqual(here);
    // Waited out its patience, then encoded.
    expect(stalled.watch.coldMs).toBeGreaterThanOrEqual(300);
    expect(stalled.watch.coldBy).toBe('here');
    const missing = pathToFileURL(join(dir, 'no-such-thread.mjs'));
    expect(coldOf(load(synthetic, { coldThread: missing, coldThreadMinRows: 0, coldThreadPatienceMs: 300 }).snapshot)).toEqual(here);
  });

  it('starts before the checksum is checked, and a file that fails it is refused for that, whatever the thread read', () => {
    const bytes = readFileSync(synthetic);
    for (const [what, at] of [
      ['metadata', bytes.indexOf('CC0-1.0') + 6],
      ['content', Math.floor(bytes.length / 2)],
    ] as const) {
      const bad = join(dir, `bad-${what}.arrow`);
      copyFileSync(synthetic, bad);
      const flipped = Buffer.from(bytes);
      flipped[at] ^= 0x01;
      writeFileSync(bad, flipped);
      const watch: LoadWatch = {};
      let thrown: unknown;
      try {
        loadSnapshot(openSnapshot(bad), watch, { coldThread: 'typescript', coldThreadMinRows: 0 });
      } catch (err) {
        thrown = err;
      }
      expect(thrown, what).toBeInstanceOf(SnapshotError);
      expect((thrown as SnapshotError).reason, what).toMatch(
        /^checksum mismatch: the file says sha256:[0-9a-f]{64}, its content and metadata give/,
      );
      expect(watch.coldBy, what).toBeUndefined();
    }
    // The same file unflipped, opened the same way, loads and is verified on the way.
    const watch: LoadWatch = {};
    expect(loadSnapshot(openSnapshot(synthetic), watch, { coldThread: 'typescript', coldThreadMinRows: 0 }).rows).toBe(12_000);
    expect(watch.verifyMs).toBeGreaterThanOrEqual(0);
    expect(watch.coldBy).toBe('thread');
  });

  it.runIf(process.platform === 'linux')("runs as many nice steps below the process as asked, a swap's ten", () => {
    const process0 = getPriority(0);
    const asked = load(synthetic, { coldThread: 'typescript', coldThreadMinRows: 0, coldThreadNice: 10 }).watch;
    expect([asked.coldBy, asked.coldNice]).toEqual(['thread', Math.min(19, process0 + 10)]);
    const plain = load(synthetic, { coldThread: 'typescript', coldThreadMinRows: 0 }).watch;
    expect([plain.coldBy, plain.coldNice]).toEqual(['thread', process0]);
    // This thread is left as it was.
    expect(getPriority(0)).toBe(process0);
  });

  it.runIf(process.platform === 'linux')('runs below the threads that serve in a catalog, at a start and in a swap', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'edifice-cold-swap-'));
    try {
      const first = await writeSyntheticCountry({ seed: 6, buildings: 3_000, outDir: folder, date: '2026-01-01' });
      const entries: LogEntry[] = [];
      const catalog = Catalog.open(folder, { log: (e) => entries.push(e), build: { coldThread: 'typescript', coldThreadMinRows: 0 } });
      await catalog.whenEncoded();
      await writeSyntheticCountry({ seed: 6, buildings: 3_000, outDir: folder, date: '2026-02-01' });
      expect(catalog.rescan()).toMatchObject([{ status: 'loaded', previous: '2026-01-01' }]);
      await catalog.whenEncoded();
      // The store serves from its file meanwhile: its cold blob is never what a request waits for.
      const encoded = entries.filter((e) => e.event === 'snapshot_cold_encoded').map((e) => [e.date, e.coldBy, e.coldNice]);
      const nice = Math.min(19, getPriority(0) + 10);
      expect(encoded).toEqual([
        ['2026-01-01', 'thread', nice],
        ['2026-02-01', 'thread', nice],
      ]);
      // A start checks the checksum on that thread while it builds; a swap, where a store serves
      // meanwhile, here before it builds: a damaged file is refused before a second store is built.
      const verified = entries.filter((e) => e.event === 'snapshot_loaded').map((e) => (e.phases as { verifiedBy: string }).verifiedBy);
      expect(verified).toEqual(['thread', 'here']);
      expect(first.rows).toBe(3_000);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('stops when a newer snapshot replaces the store first: its wait settles at once, nothing is encoded here', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'edifice-cold-replaced-'));
    try {
      // The first store's thread never encodes, and would be waited for a minute before this
      // thread encoded the blob itself; it is asked for nothing else (a v1 file has no file parts
      // to build, and the checksum is checked here). The second store is below the threshold.
      mkdirSync(join(folder, 'XA'));
      copyFileSync(v1, join(folder, 'XA', '2026-01-01.arrow'));
      const entries: LogEntry[] = [];
      const build = { coldThread: stalling, coldThreadMinRows: 6, coldThreadPatienceMs: 60_000, checkFirst: true };
      const catalog = Catalog.open(folder, { log: (e) => entries.push(e), build });
      expect(catalog.view().snapshots.map((s) => [s.rows, 'file' in s.parts.cold])).toEqual([[7, true]]);
      await writeSyntheticCountry({ seed: 7, buildings: 5, outDir: folder, date: '2026-02-01' });
      expect(catalog.rescan()).toMatchObject([{ status: 'loaded', previous: '2026-01-01' }]);
      let timer: NodeJS.Timeout | undefined;
      const waited = await Promise.race([
        catalog.whenEncoded().then(() => 'settled'),
        new Promise((resolve) => (timer = setTimeout(() => resolve('still waiting'), 10_000))),
      ]);
      clearTimeout(timer);
      expect(waited).toBe('settled');
      const cold = entries.filter((e) => String(e.event).startsWith('snapshot_cold')).map((e) => [e.event, e.date, e.level]);
      expect(cold).toEqual([['snapshot_cold_dropped', '2026-01-01', 'info']]);
      expect(catalog.view().snapshots.map((s) => [s.rows, 'file' in s.parts.cold])).toEqual([[5, false]]);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('hands back the reason a file cannot be encoded', () => {
    const garbage = new SharedArrayBuffer(4096);
    new Uint8Array(garbage).fill(7);
    const thread = ColdBlobThread.start(garbage, 2, 'typescript', 30_000)!;
    expect(thread).not.toBeNull();
    // apache-arrow's own reason, from the thread.
    expect(() => thread.finish()).toThrow(/metadata bytes/);
  });

  it('is started only for a store of at least the threshold', () => {
    // Too few rows: this thread encodes, and the stalling code is never started (no wait).
    const small = load(synthetic, { coldThread: stalling, coldThreadMinRows: 12_001, coldThreadPatienceMs: 60_000 });
    expect(small.snapshot.rows).toBe(12_000);
    expect(small.watch.coldMs).toBeLessThan(30_000);
    expect(small.watch.coldBy).toBe('here');
  });
});
