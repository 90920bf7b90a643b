/**
 * Snapshots handed to worker threads: the store travels in SharedArrayBuffers (nothing big is
 * copied), and a worker's rebuilt snapshot answers every query exactly as the loading thread's.
 */
import { Worker } from 'node:worker_threads';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Catalog, type Snapshot } from '../src/catalog/catalog.ts';
import type { PublishedView } from '../src/catalog/replica.ts';
import { loadSnapshot, loadSnapshotEarly } from '../src/catalog/load.ts';
import { fromTransfer, toTransfer } from '../src/catalog/transfer.ts';
import { sliceView, ViewAssembly } from '../src/catalog/view-slices.ts';
import { queryBuildings } from '../src/query/buildings.ts';
import { queryPoint } from '../src/query/point.ts';
import { SORT_KEYS, type BuildingsQuery, type PointQuery } from '../src/query/types.ts';
import { openSnapshot, readSnapshot } from '../src/snapshot/reader.ts';
import { writeSyntheticCountry } from '../src/synth/generate.ts';
import { Rng } from './reference/random.ts';

const BOOT = new URL('../src/http/thread-boot.mjs', import.meta.url);
const ENTRY = new URL('./workers/snapshot-replica.ts', import.meta.url).href;
let dir: string;
let snapshot: Snapshot;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'edifice-transfer-'));
  await writeSyntheticCountry({ seed: 4, buildings: 12_000, outDir: dir });
  const catalog = Catalog.open(dir, { log: () => {} });
  catalog.setRemovals({ businessIds: new Set(['synthetic:4:business/3', 'synthetic:4:business/40']), registrationNumbers: new Set() });
  snapshot = catalog.view().snapshots[0];
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Every typed array reachable from `value`, with its path. */
function typedArrays(
  value: unknown,
  path = '',
  out: [string, ArrayBufferView][] = [],
  seen = new Set<unknown>(),
): [string, ArrayBufferView][] {
  if (value === null || typeof value !== 'object' || seen.has(value)) return out;
  seen.add(value);
  if (ArrayBuffer.isView(value)) {
    out.push([path, value]);
    return out;
  }
  const entries = value instanceof Map ? [...value.entries()] : Object.entries(value);
  for (const [k, v] of entries) typedArrays(v, `${path}.${String(k)}`, out, seen);
  return out;
}

describe('snapshots handed to worker threads', () => {
  it('carry every column in shared memory: only scratch buffers of a few KB are copied', () => {
    const arrays = typedArrays(toTransfer(snapshot));
    expect(arrays.length).toBeGreaterThan(40);
    const copied = arrays.filter(([, a]) => !(a.buffer instanceof SharedArrayBuffer));
    expect(copied.map(([path, a]) => [path, a.byteLength]).filter(([, bytes]) => (bytes as number) > 4096)).toEqual([]);
    const shared = arrays.filter(([, a]) => a.buffer instanceof SharedArrayBuffer).reduce((n, [, a]) => n + a.byteLength, 0);
    expect(shared).toBeGreaterThan(0.9 * snapshot.bytesHeld - 4096 * copied.length - 2_000_000);
  });

  it('rebuilt in a worker, answer every query as the loading thread does', async () => {
    await answersInAWorker(snapshot);
  });

  it('rebuilt in a worker while reading their cold columns from the file, answer as the store with its blob', async () => {
    const early = loadSnapshotEarly(openSnapshot(snapshot.path), {}, { coldThread: 'typescript', coldThreadMinRows: 0 });
    expect(early.snapshot.coldEncoded).toBe(false);
    await answersInAWorker(early.snapshot, loadSnapshot(readSnapshot(snapshot.path)));
    expect((await early.encoded!).coldEncoded).toBe(true);
  });
});

/**
 * Sends `sent` to a worker thread that rebuilds it from its transfer, and checks its answers
 * against the loading thread's on `reference` (the same store).
 */
async function answersInAWorker(sent: Snapshot, reference = sent): Promise<void> {
  {
    const snapshot = reference;
    const rng = new Rng(9);
    const e = snapshot.extent!;
    const buildings: BuildingsQuery[] = Array.from({ length: 60 }, (_, i) => {
      const lon = rng.real(e.minLon, e.maxLon);
      const lat = rng.real(e.minLat, e.maxLat);
      const half = [0.01, 0.2, 1.4][i % 3];
      const q: BuildingsQuery = {
        bbox: { minLon: lon - half, minLat: lat - half, maxLon: lon + half, maxLat: lat + half },
        sort: SORT_KEYS[i % 5],
        limit: 50,
        offset: i % 4 === 0 ? 200 : 0,
      };
      if (q.sort === 'registered_business_turnover') q.registeredBusinessTurnoverCurrency = 'RON';
      if (i % 2) q.hasRegisteredBusiness = true;
      if (i % 3 === 2) q.roofShape = ['gabled', 'hipped', 'flat', 'skillion'];
      return q;
    });
    const points: PointQuery[] = Array.from({ length: 40 }, () => {
      const row = rng.int(0, snapshot.rows - 1);
      return { lat: snapshot.lat[row], lon: snapshot.lon[row], radiusM: 200, limit: 25 };
    });
    const rows = Array.from({ length: 200 }, () => rng.int(0, snapshot.rows - 1));
    const worker = new Worker(BOOT, { workerData: { entry: ENTRY } });
    try {
      const answer = await new Promise<any>((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
        worker.postMessage({ transfers: [toTransfer(sent)], buildings, points, rows });
      });
      const view = { snapshots: [snapshot] };
      expect(answer.buildings).toEqual(
        buildings.map((q) => {
          const r = queryBuildings(view, q);
          return { ids: r.rows.map((x) => x.snapshot.buildingId(x.row)), total: r.total, capped: r.totalIsCapped };
        }),
      );
      expect(answer.buildings.some((b: { ids: string[] }) => b.ids.length === 50)).toBe(true);
      expect(answer.points).toEqual(points.map((q) => queryPoint(view, q).rows.map((x) => x.snapshot.buildingId(x.row))));
      expect(answer.records).toEqual(rows.map((row) => JSON.stringify(snapshot.record(row))));
      expect(answer.units).toEqual(rows.map((row) => JSON.stringify(snapshot.units(row))));
      expect(answer.places).toEqual(JSON.stringify(snapshot.places.list()));
      const sums = Object.entries(snapshot.summaries.codeCounts).map(([name, a]) => [name, a.length, a.reduce((x, y) => x + y, 0)]);
      expect(answer.codeCounts).toEqual({ from: snapshot.summaries.countsFrom, sums });
      expect(sums.every(([, length]) => (length as number) > 0)).toBe(true);
    } finally {
      await worker.terminate();
    }
  }
}

describe('a view posted in slices', () => {
  /** The largest array or map reachable from `value`, typed arrays aside. */
  function largest(value: unknown, seen = new Set<unknown>()): number {
    if (value === null || typeof value !== 'object' || seen.has(value) || ArrayBuffer.isView(value)) return 0;
    seen.add(value);
    const entries = value instanceof Map ? [...value.values()] : Object.values(value);
    const own = Array.isArray(value) ? value.length : value instanceof Map ? value.size : 0;
    return Math.max(own, ...entries.map((v) => largest(v, seen)));
  }

  it('goes as a skeleton without large arrays or maps and slices of at most the size asked, and is whole again once joined', () => {
    const view: PublishedView = {
      snapshots: [{ serial: 1, transfer: toTransfer(snapshot) }],
      report: [],
      removals: { businessIds: new Set(['synthetic:4:business/3']), registrationNumbers: new Set() },
    };
    expect(largest(view)).toBeGreaterThan(256);
    const { skeleton, slices } = sliceView(view, 32);
    expect(largest(skeleton)).toBeLessThanOrEqual(32);
    expect(slices.length).toBeGreaterThan(8);
    expect(Math.max(...slices.map((s) => s.items.length))).toBeLessThanOrEqual(32);
    // As postMessage hands them over: each one cloned on its own.
    const assembly = new ViewAssembly();
    for (const slice of slices) assembly.add(structuredClone(slice));
    const joined = assembly.join(structuredClone(skeleton));
    expect(joined).toEqual(structuredClone(view));
    const rebuilt = fromTransfer(joined.snapshots[0].transfer!);
    const rng = new Rng(3);
    const rows = Array.from({ length: 100 }, () => rng.int(0, snapshot.rows - 1));
    expect(rows.map((row) => JSON.stringify(rebuilt.record(row)))).toEqual(rows.map((row) => JSON.stringify(snapshot.record(row))));
    expect(rebuilt.places.list()).toEqual(snapshot.places.list());
    expect(() => new ViewAssembly().join(structuredClone(skeleton))).toThrow(/without its slices/);
  });

  it('carries a store that reads its cold columns from the file, the file shared', () => {
    const early = loadSnapshotEarly(openSnapshot(snapshot.path), {}, { coldThread: 'typescript', coldThreadMinRows: 0 }).snapshot;
    const view: PublishedView = {
      snapshots: [{ serial: 1, transfer: toTransfer(early) }],
      report: [],
      removals: { businessIds: new Set(), registrationNumbers: new Set() },
    };
    const { skeleton, slices } = sliceView(view, 32);
    const assembly = new ViewAssembly();
    for (const slice of slices) assembly.add(structuredClone(slice));
    const transfer = assembly.join(structuredClone(skeleton)).snapshots[0].transfer!;
    expect((transfer.cold as { file: SharedArrayBuffer }).file).toBeInstanceOf(SharedArrayBuffer);
    const rebuilt = fromTransfer(transfer);
    expect(rebuilt.coldEncoded).toBe(false);
    const rows = Array.from({ length: 100 }, (_, k) => k * 97);
    expect(rows.map((row) => JSON.stringify(rebuilt.record(row)))).toEqual(rows.map((row) => JSON.stringify(early.record(row))));
  });
});
