/**
 * A store that serves before its cold blob is encoded (load.ts `loadSnapshotEarly`): its cold
 * columns are read from the Arrow file (cold-rows.ts) with the values the blob gives, the
 * checksum is checked by the cold blob's thread while this one builds, and the catalog swaps in
 * the store with its blob once encoded. (A worker thread serving such a store: catalog-transfer.test.ts.)
 */
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { tableFromIPC } from 'apache-arrow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Catalog, type LogEntry } from '../src/catalog/catalog.ts';
import { BlobRows, FileRows, type ColdRows } from '../src/catalog/cold-rows.ts';
import { COLD_COLUMNS } from '../src/catalog/columns.ts';
import { loadSnapshot, loadSnapshotEarly, type LoadWatch } from '../src/catalog/load.ts';
import { writePrepared } from '../src/catalog/prepared.ts';
import type { Snapshot } from '../src/catalog/snapshot.ts';
import type { BuildingRecord } from '../src/snapshot/schema.ts';
import { fromTransfer, toTransfer } from '../src/catalog/transfer.ts';
import { SnapshotError, fileTable, openSnapshot, readSnapshot } from '../src/snapshot/reader.ts';
import { SnapshotWriter } from '../src/snapshot/writer.ts';
import { writeSyntheticCountry } from '../src/synth/generate.ts';

let dir: string;
let synthetic: string;
const v1 = new URL('./fixtures/snapshot-v1/XA/2026-01-01.arrow', import.meta.url).pathname;
/** A cold thread that loads and then does nothing: the store serves from its file for its patience. */
let stalling: URL;
const early = { coldThread: 'typescript', coldThreadMinRows: 0 } as const;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'edifice-serve-early-'));
  synthetic = (await writeSyntheticCountry({ seed: 5, buildings: 12_000, outDir: join(dir, 'synthetic') })).path;
  const stall = join(dir, 'stall.mjs');
  writeFileSync(stall, 'setInterval(() => {}, 1000);\n');
  stalling = pathToFileURL(stall);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The cold rows of a store built with its blob, and of the same file read directly. */
function bothRows(path: string): { blob: ColdRows; file: ColdRows; rows: number } {
  const built = loadSnapshot(readSnapshot(path)).parts.cold;
  if ('file' in built) throw new Error('expected a blob');
  const bytes = new Uint8Array(readFileSync(path));
  const version = readSnapshot(path).metadata.schemaVersion;
  const table = fileTable(bytes, version);
  return { blob: new BlobRows(built.codec, built.blob, built.offsets), file: new FileRows(table, COLD_COLUMNS), rows: table.numRows };
}

describe('cold columns read from the file', () => {
  it('are, row for row and column for column, what the blob gives (a synthetic country, a v1 file)', () => {
    for (const path of [synthetic, v1]) {
      const { blob, file, rows } = bothRows(path);
      expect(rows).toBeGreaterThan(0);
      let lists = 0;
      for (let r = 0; r < rows; r++) {
        const a: Record<string, unknown> = {};
        const b: Record<string, unknown> = {};
        blob.decodeInto(r, a);
        file.decodeInto(r, b);
        // toEqual tells -0 from 0 and null from a missing key; the key order is what serialisers write.
        expect(b, `${path} row ${r}`).toEqual(a);
        expect(Object.keys(b)).toEqual(Object.keys(a));
        if (Object.values(a).some((v) => Array.isArray(v) && v.length > 0)) lists++;
      }
      if (path === synthetic) expect(lists).toBeGreaterThan(0);
    }
  });

  it('keep a string as the file holds it: a leading byte order mark, characters outside the BMP', async () => {
    const source = loadSnapshot(readSnapshot(synthetic));
    const writer = new SnapshotWriter({ country: 'XA', snapshotDate: '2026-11-21', sources: [...source.sources] });
    const odd = ['\uFEFFStrada Unirii 3', 'Calea 𝔙ictoriei 12', '\uFEFF', 'Ştefan cel Mare 4\u0000'];
    const written = new Map<string, BuildingRecord>();
    for (let r = 0; r < 40; r++) {
      const record = source.record(r);
      const text = odd[(r >> 1) % odd.length];
      const units = record.units.map((u) => ({ ...u, label: text }));
      const businesses = record.businesses.map((b) => ({ ...b, name: text }));
      const odder = { ...record, address: text, locality: text, building_type: text, units, businesses };
      written.set(record.building_id, r % 2 === 0 ? odder : record);
      writer.add(written.get(record.building_id)!);
    }
    const path = join(dir, 'odd-strings', 'XA', '2026-11-21.arrow');
    mkdirSync(join(dir, 'odd-strings', 'XA'), { recursive: true });
    await writer.finish(path);
    // Strings the store keeps apart from the blob (building types, business names) and in it (the rest), each as written.
    const loaded = loadSnapshot(readSnapshot(path));
    for (let r = 0; r < loaded.rows; r++) expect(loaded.record(r)).toEqual(written.get(loaded.buildingId(r)));
    const { blob, file, rows } = bothRows(path);
    const seen = new Set<unknown>();
    for (let r = 0; r < rows; r++) {
      const a: Record<string, unknown> = {};
      const b: Record<string, unknown> = {};
      blob.decodeInto(r, a);
      file.decodeInto(r, b);
      expect(b).toEqual(a);
      seen.add(a.address);
    }
    for (const s of odd) expect(seen.has(s), JSON.stringify(s)).toBe(true);
  });

  it('give the same few columns to a picker, in schema order, and one column alone', () => {
    const { blob, file, rows } = bothRows(synthetic);
    const names = COLD_COLUMNS.map((c) => c.name);
    const kinds = new Set(COLD_COLUMNS.map((c) => c.kind));
    // Every kind of cold column among the picks: the last of each kind, asked in reverse order.
    const picked = [...kinds].map((k) => COLD_COLUMNS.filter((c) => c.kind === k).at(-1)!.name).reverse();
    expect(picked.length).toBeGreaterThanOrEqual(6);
    const pickBlob = blob.picker(picked);
    const pickFile = file.picker(picked);
    for (let r = 0; r < rows; r += 7) {
      const a: Record<string, unknown> = {};
      const b: Record<string, unknown> = {};
      pickBlob(r, a);
      pickFile(r, b);
      expect(b).toEqual(a);
      expect(Object.keys(b)).toEqual(names.filter((n) => picked.includes(n)));
      expect(file.decodeOne(r, 'units')).toEqual(blob.decodeOne(r, 'units'));
    }
    expect(() => file.picker(['height_m'])).toThrow(RangeError);
    expect(() => blob.picker(['height_m'])).toThrow(RangeError);
    expect(() => file.decodeOne(0, 'no_such_column')).toThrow(RangeError);
  });
});

/** Every record of a store. */
const recordsOf = (s: Snapshot): unknown[] => Array.from({ length: s.rows }, (_, r) => s.record(r));

describe('a store loaded early', () => {
  it('serves from its file, its checksum checked by the thread, then gives the store with the blob loadSnapshot builds', async () => {
    const watch: LoadWatch = {};
    const { snapshot, encoded } = loadSnapshotEarly(openSnapshot(synthetic), watch, early);
    expect(snapshot.coldEncoded).toBe(false);
    expect(watch.verifiedBy).toBe('thread');
    expect(watch.verifyMs).toBeGreaterThanOrEqual(0);
    expect(watch.coldMs).toBeUndefined();
    const reference = loadSnapshot(readSnapshot(synthetic));
    expect(recordsOf(snapshot)).toEqual(recordsOf(reference));
    // A worker rebuilds it from its transfer, reading the same file.
    expect(recordsOf(fromTransfer(toTransfer(snapshot)))).toEqual(recordsOf(reference));
    // Its memory counts the file it reads from.
    expect(snapshot.memory().cold).toBe(readFileSync(synthetic).byteLength);
    await expect(writePrepared(join(dir, 'never.edifice'), snapshot)).rejects.toThrow(/not encoded yet/);

    const full = await encoded!;
    expect(full.coldEncoded).toBe(true);
    expect([watch.coldBy, watch.coldMs! >= 0]).toEqual(['thread', true]);
    const [a, b] = [full.parts.cold, reference.parts.cold] as { blob: Uint8Array; offsets: Uint32Array }[];
    expect(Buffer.from(a.blob).equals(Buffer.from(b.blob))).toBe(true);
    expect([...a.offsets]).toEqual([...b.offsets]);
    expect(recordsOf(full)).toEqual(recordsOf(reference));
    // Everything else is the same store.
    expect(full.ids).toBe(snapshot.ids);
  });

  it('takes the hot numbers, the ids, their ranks, the footprints and the point index from the thread, as this thread builds them', () => {
    const watch: LoadWatch = {};
    const { snapshot } = loadSnapshotEarly(openSnapshot(synthetic), watch, early);
    const reference = loadSnapshot(readSnapshot(synthetic), {}, {});
    expect(watch.partsBy).toBe('thread');
    for (const name of ['ids', 'rank', 'byRank'] as const) {
      expect(snapshot[name].buffer, name).toBeInstanceOf(SharedArrayBuffer);
      expect(Buffer.from(snapshot[name].buffer).equals(Buffer.from(reference[name].buffer)), name).toBe(true);
    }
    const footprints = (f: Snapshot['footprints']): unknown =>
      Object.entries(f).map(([k, v]) => [
        k,
        ArrayBuffer.isView(v) ? Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64') : v,
      ]);
    expect(footprints(snapshot.footprints)).toEqual(footprints(reference.footprints));
    expect(Buffer.from(snapshot.index!.data).equals(Buffer.from(reference.index!.data))).toBe(true);
    const kinds = new Set<string>();
    for (const [name, col] of Object.entries(snapshot.num)) {
      const ref = reference.num[name as keyof typeof reference.num];
      kinds.add(col.kind);
      expect([col.kind, 'scale' in col ? col.scale : 1], name).toEqual([ref.kind, 'scale' in ref ? ref.scale : 1]);
      expect(col.values.buffer, name).toBeInstanceOf(SharedArrayBuffer);
      expect(Buffer.from(col.values.buffer).equals(Buffer.from(ref.values.buffer)), name).toBe(true);
    }
    // The synthetic country's numbers are all decimal: Int32 and Int16 codes among them.
    expect([...kinds].sort()).toEqual(['i16', 'i32']);
    // Methods of the rebuilt objects answer as the originals.
    const [a, b] = [new Float64Array(4), new Float64Array(4)];
    snapshot.footprints.bbox(123, a);
    reference.footprints.bbox(123, b);
    expect([...a]).toEqual([...b]);
    expect(snapshot.index!.search(20, 40, 30, 50).length).toBe(reference.index!.search(20, 40, 30, 50).length);
    expect(snapshot.findRow(reference.buildingId(4_321))).toBe(4_321);
  });

  it("refuses a file whose building_id is not a lowercase UUID, with the thread's reason as this thread's", async () => {
    const source = loadSnapshot(readSnapshot(synthetic));
    const writer = new SnapshotWriter({ country: 'XA', snapshotDate: '2026-11-21', sources: [...source.sources] });
    for (let r = 0; r < 300; r++) {
      const record = source.record(r);
      writer.add(r === 250 ? { ...record, building_id: record.building_id.toUpperCase() } : record);
    }
    const path = join(dir, 'bad-id', 'XA', '2026-11-21.arrow');
    mkdirSync(join(dir, 'bad-id', 'XA'), { recursive: true });
    await writer.finish(path);
    const reason = (load: () => unknown): string => {
      try {
        load();
      } catch (err) {
        return (err as Error).message;
      }
      return 'loaded';
    };
    const here = reason(() => loadSnapshot(readSnapshot(path)));
    expect(here).toMatch(/^building_id at row \d+ is not a lowercase UUID \("[0-9A-F-]{36}"\)$/);
    const watch: LoadWatch = {};
    expect(reason(() => loadSnapshotEarly(openSnapshot(path), watch, early))).toBe(here);
    expect(watch.verifiedBy).toBe('thread');
  });

  it('waits for the blob when the thread is not started (a small store) and encodes it here', () => {
    const watch: LoadWatch = {};
    const { snapshot, encoded } = loadSnapshotEarly(openSnapshot(synthetic), watch, { ...early, coldThreadMinRows: 12_001 });
    expect([snapshot.coldEncoded, encoded, watch.coldBy, watch.verifiedBy]).toEqual([true, null, 'here', 'here']);
  });

  it('checks the checksum here when the thread stalls, then encodes the blob here', async () => {
    const watch: LoadWatch = {};
    const { snapshot, encoded } = loadSnapshotEarly(openSnapshot(synthetic), watch, {
      coldThread: stalling,
      coldThreadMinRows: 0,
      coldThreadPatienceMs: 300,
    });
    expect([snapshot.coldEncoded, watch.verifiedBy]).toEqual([false, 'here']);
    const full = await encoded!;
    expect([full.coldEncoded, watch.coldBy]).toEqual([true, 'here']);
    expect(recordsOf(full)).toEqual(recordsOf(snapshot));
  });

  it('refuses a damaged file for its checksum, even when the damage would send the build astray', () => {
    const bytes = readFileSync(synthetic);
    const table = tableFromIPC(bytes);
    const field = table.schema.fields.findIndex((f) => f.name === 'footprint');
    // An offset of the footprints' polygons made huge: sized by it, the build would allocate gigabytes.
    const offsets = table.batches[0].data.children[field].valueOffsets;
    const at = offsets.byteOffset - bytes.byteOffset + 4 * 100 + 3;
    const hugeOffset = Buffer.from(bytes);
    hugeOffset[at] = 0x7f;
    const flipped = Buffer.from(bytes);
    flipped[Math.floor(bytes.length / 2)] ^= 0x01;
    for (const [what, damaged] of [
      ['an offset', hugeOffset],
      ['a byte of content', flipped],
    ] as const) {
      const path = join(dir, 'damaged.arrow');
      writeFileSync(path, damaged);
      const watch: LoadWatch = {};
      let thrown: unknown;
      try {
        loadSnapshotEarly(openSnapshot(path), watch, early);
      } catch (err) {
        thrown = err;
      }
      expect(thrown, what).toBeInstanceOf(SnapshotError);
      expect((thrown as SnapshotError).reason, what).toMatch(
        /^checksum mismatch: the file says sha256:[0-9a-f]{64}, its content and metadata give/,
      );
      expect(watch.verifiedBy, what).toBe('thread');
    }
  });
});

describe('the catalog', () => {
  it('publishes the store from its file, then the store with its blob, then writes its prepared file', async () => {
    const folder = join(dir, 'catalog');
    mkdirSync(join(folder, 'XA'), { recursive: true });
    copyFileSync(synthetic, join(folder, 'XA', '2026-11-21.arrow'));
    const log: LogEntry[] = [];
    const published: Snapshot[] = [];
    const catalog = Catalog.open(folder, { log: (e) => log.push(e), prepared: {}, build: early });
    catalog.onPublish((view) => published.push(view.snapshots[0]));
    const first = catalog.view().snapshots[0];
    expect(first.coldEncoded).toBe(false);
    const loaded = log.find((e) => e.event === 'snapshot_loaded')!;
    expect(loaded.phases).toMatchObject({ verifiedBy: 'thread', coldMs: 'encoding: read from the file meanwhile' });
    expect(readdirSync(join(folder, 'XA'))).toEqual(['2026-11-21.arrow']);

    await catalog.whenPrepared();
    expect(published.map((s) => s.coldEncoded)).toEqual([true]);
    const served = catalog.view().snapshots[0];
    expect([served.coldEncoded, served.revision]).toEqual([true, first.revision]);
    expect(recordsOf(served)).toEqual(recordsOf(first));
    expect(catalog.report()[0].bytesHeld).toBe(served.bytesHeld);
    expect(served.bytesHeld).toBeLessThan(first.bytesHeld);
    expect(log.map((e) => e.event)).toEqual(['snapshot_loading', 'snapshot_loaded', 'snapshot_cold_encoded', 'prepared_written']);
    expect(log[2]).toMatchObject({ coldBy: 'thread' });

    // The next start reads the prepared file: the store with its blob at once.
    const again = Catalog.open(folder, { log: () => {}, prepared: {}, build: early });
    expect(again.view().snapshots[0].coldEncoded).toBe(true);
    expect(recordsOf(again.view().snapshots[0])).toEqual(recordsOf(served));
  });

  it('keeps a newer snapshot loaded before the older one has its blob', async () => {
    const folder = join(dir, 'newer');
    mkdirSync(join(folder, 'XA'), { recursive: true });
    copyFileSync(synthetic, join(folder, 'XA', '2026-11-21.arrow'));
    const newer = await writeSyntheticCountry({ seed: 8, buildings: 2_000, outDir: join(dir, 'newer-source'), date: '2026-11-22' });
    const log: LogEntry[] = [];
    // The stalled thread leaves the blob to this thread, once the load has returned.
    const build = { coldThread: stalling, coldThreadMinRows: 0, coldThreadPatienceMs: 300 };
    const catalog = Catalog.open(folder, { log: (e) => log.push(e), build });
    expect(catalog.view().snapshots[0].coldEncoded).toBe(false);
    copyFileSync(newer.path, join(folder, 'XA', '2026-11-22.arrow'));
    expect(catalog.rescan()).toMatchObject([{ status: 'loaded', date: '2026-11-22' }]);
    await catalog.whenEncoded();
    const served = catalog.view().snapshots[0];
    expect([served.date, served.rows, served.coldEncoded]).toEqual(['2026-11-22', 2_000, true]);
    expect(log.filter((e) => e.event === 'snapshot_cold_encoded').map((e) => e.date)).toEqual(['2026-11-22']);
  });
});
