/**
 * The catalog: which file each country serves, refusals (checksum, country or date that
 * differ from the path), retries, hot swap under queries that are still running, SIGHUP, and
 * the per-country report.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as tick } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog, type CatalogView, type LogEntry } from '../src/catalog/catalog.ts';
import { queryBuildings } from '../src/query/buildings.ts';
import { findBuilding } from '../src/query/children.ts';
import { queryPoint } from '../src/query/point.ts';
import { buildingId } from '../src/snapshot/building-id.ts';
import { blankRecord } from '../src/snapshot/record.ts';
import { SnapshotWriter } from '../src/snapshot/writer.ts';

const SOURCES = [{ name: 'catalog-tests', licence: 'CC0-1.0', attribution: 'Edifice tests', retrieved: '2026-11-21' }];
const BBOX = { minLon: 20, minLat: 45, maxLon: 21, maxLat: 46 };
const root = mkdtempSync(join(tmpdir(), 'edifice-catalog-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let dirs = 0;
const freshDir = (): string => join(root, `d${dirs++}`);

/**
 * Writes `count` buildings `<tag>-<i>` to <dir>/<CC>/<date>.arrow. The metadata may claim
 * another country or date than the path. Building 0 has the area 12345.678 m².
 */
async function write(
  dir: string,
  cc: string,
  date: string,
  tag: string,
  count: number,
  metadata: { country?: string; date?: string } = {},
): Promise<string> {
  const writer = new SnapshotWriter({ country: metadata.country ?? cc, snapshotDate: metadata.date ?? date, sources: SOURCES });
  for (let i = 0; i < count; i++) {
    writer.add(
      blankRecord(`${tag}-${i}`, 20.1 + (i % 40) * 0.02, 45.1 + Math.floor(i / 40) * 0.02, {
        volume_m3: (i * 37) % 101,
        footprint_area_m2: i === 0 ? 12345.678 : 100 + i,
      }),
    );
  }
  const path = join(dir, cc, `${date}.arrow`);
  await writer.finish(path);
  return path;
}

/** Changes the 8 bytes of the Float64 12345.678 in a file: still Arrow, but not its checksum. */
function corrupt(path: string): void {
  const bytes = readFileSync(path);
  const needle = Buffer.alloc(8);
  needle.writeDoubleLE(12345.678);
  const at = bytes.indexOf(needle);
  expect(at).toBeGreaterThan(0);
  bytes.writeDoubleLE(12345.679, at);
  writeFileSync(path, bytes);
}

function logged(): { log: (e: LogEntry) => void; entries: LogEntry[] } {
  const entries: LogEntry[] = [];
  return { log: (e) => entries.push(e), entries };
}

const dates = (view: CatalogView): string[] => view.snapshots.map((s) => `${s.country} ${s.date}`);

describe('which snapshot serves', () => {
  it('the newest file of each country', async () => {
    const dir = freshDir();
    await write(dir, 'XA', '2026-01-01', 'a', 5);
    await write(dir, 'XA', '2026-02-01', 'a', 6);
    await write(dir, 'XB', '2025-12-31', 'b', 3);
    writeFileSync(join(dir, 'XA', 'notes.txt'), 'not a snapshot');
    writeFileSync(join(dir, 'XA', '.2026-03-01.arrow.123.tmp'), 'half written');
    const catalog = Catalog.open(dir, { log: () => {} });
    expect(dates(catalog.view())).toEqual(['XA 2026-02-01', 'XB 2025-12-31']);
    expect(catalog.view().snapshots[0].rows).toBe(6);
  });

  it('an empty country loads, and answers nothing', async () => {
    const dir = freshDir();
    await write(dir, 'XA', '2026-01-01', 'a', 0);
    const catalog = Catalog.open(dir, { log: () => {} });
    expect(catalog.report()).toMatchObject([{ country: 'XA', date: '2026-01-01', buildings: 0 }]);
    const view = catalog.view();
    expect(queryBuildings(view, { bbox: BBOX, sort: 'volume', limit: 10, offset: 0 })).toEqual({
      rows: [],
      total: 0,
      totalIsCapped: false,
    });
    expect(queryPoint(view, { lon: 20.1, lat: 45.1, radiusM: 200, limit: 10 })).toEqual({ rows: [] });
    expect(findBuilding(view, buildingId('a-0'))).toBeUndefined();
  });

  it('a missing directory is an empty catalog, and a snapshot that appears later is loaded by rescan', async () => {
    const dir = freshDir();
    const { log, entries } = logged();
    const catalog = Catalog.open(dir, { log });
    expect(catalog.view().snapshots).toEqual([]);
    expect(entries[0]).toMatchObject({ event: 'snapshot_dir_unreadable' });
    await write(dir, 'XA', '2026-01-01', 'a', 4);
    expect(catalog.rescan()).toMatchObject([{ country: 'XA', date: '2026-01-01', status: 'loaded', previous: null, buildings: 4 }]);
    expect(dates(catalog.view())).toEqual(['XA 2026-01-01']);
  });

  it('at open, a bad newest file is refused and the newest valid one serves', async () => {
    const dir = freshDir();
    await write(dir, 'XA', '2026-01-01', 'a', 5);
    corrupt(await write(dir, 'XA', '2026-02-01', 'a', 6));
    const { log, entries } = logged();
    const catalog = Catalog.open(dir, { log });
    expect(dates(catalog.view())).toEqual(['XA 2026-01-01']);
    const refused = entries.find((e) => e.event === 'snapshot_refused');
    expect(refused).toMatchObject({ level: 'warn', country: 'XA', date: '2026-02-01', path: join(dir, 'XA', '2026-02-01.arrow') });
    expect(String(refused!.reason)).toMatch(/checksum mismatch/);
  });
});

describe('rescan', () => {
  it('loads a newer file, publishes a new view, and leaves the old view answering from the old snapshot', async () => {
    const dir = freshDir();
    await write(dir, 'XA', '2026-01-01', 'old', 10);
    const catalog = Catalog.open(dir, { log: () => {} });
    const before = catalog.view();
    expect(catalog.rescan()).toEqual([]); // nothing newer
    await write(dir, 'XA', '2026-02-01', 'new', 12);
    const reports = catalog.rescan();
    expect(reports).toMatchObject([{ country: 'XA', date: '2026-02-01', status: 'loaded', previous: '2026-01-01', buildings: 12 }]);
    const after = catalog.view();
    expect(after).not.toBe(before);
    expect(dates(before)).toEqual(['XA 2026-01-01']);
    expect(dates(after)).toEqual(['XA 2026-02-01']);
    const q = { bbox: BBOX, sort: 'volume' as const, limit: 100, offset: 0 };
    expect(queryBuildings(before, q).total).toBe(10);
    expect(queryBuildings(after, q).total).toBe(12);
    expect(findBuilding(before, buildingId('old-3'))).toBeDefined();
    expect(findBuilding(after, buildingId('old-3'))).toBeUndefined();
    expect(before.snapshots[0].record(0).source_id).toMatch(/^old-/);
  });

  it('refuses a bad checksum, a wrong country and a wrong date with a log entry; the country keeps its snapshot', async () => {
    const dir = freshDir();
    await write(dir, 'XA', '2026-01-01', 'a', 5);
    const { log, entries } = logged();
    const catalog = Catalog.open(dir, { log });
    const serving = catalog.view();

    corrupt(await write(dir, 'XA', '2026-02-01', 'a', 5));
    let reports = catalog.rescan();
    expect(reports).toMatchObject([{ country: 'XA', date: '2026-02-01', status: 'refused', previous: '2026-01-01' }]);
    expect(reports[0].reason).toMatch(/checksum mismatch/);
    expect(catalog.view()).toBe(serving);

    rmSync(join(dir, 'XA', '2026-02-01.arrow'));
    await write(dir, 'XA', '2026-03-01', 'a', 5, { country: 'XB' });
    reports = catalog.rescan();
    expect(reports).toMatchObject([{ date: '2026-03-01', status: 'refused' }]);
    expect(reports[0].reason).toMatch(/metadata country XB does not match the path's XA/);

    rmSync(join(dir, 'XA', '2026-03-01.arrow'));
    await write(dir, 'XA', '2026-04-01', 'a', 5, { date: '2026-03-31' });
    reports = catalog.rescan();
    expect(reports).toMatchObject([{ date: '2026-04-01', status: 'refused' }]);
    expect(reports[0].reason).toMatch(/metadata snapshot date 2026-03-31 does not match the path's 2026-04-01/);

    writeFileSync(join(dir, 'XA', '2026-05-01.arrow'), 'not arrow at all');
    expect(catalog.rescan()).toMatchObject([{ date: '2026-05-01', status: 'refused' }]);

    expect(catalog.view()).toBe(serving);
    expect(dates(catalog.view())).toEqual(['XA 2026-01-01']);
    const refusals = entries.filter((e) => e.event === 'snapshot_refused');
    expect(refusals.map((e) => e.date)).toEqual(['2026-02-01', '2026-03-01', '2026-04-01', '2026-05-01']);
    for (const e of refusals) expect(e).toMatchObject({ level: 'warn', country: 'XA', serving: '2026-01-01', reason: expect.any(String) });
  });

  it('refuses a file with one byte of its licence text flipped on disk; the previous snapshot keeps serving', async () => {
    const dir = freshDir();
    await write(dir, 'XA', '2026-01-01', 'a', 5);
    const { log, entries } = logged();
    const catalog = Catalog.open(dir, { log });
    const serving = catalog.view();
    const path = await write(dir, 'XA', '2026-02-01', 'b', 6);
    const bytes = readFileSync(path);
    const at = bytes.indexOf('CC0-1.0');
    expect(at).toBeGreaterThan(0);
    expect(bytes.indexOf('CC0-1.0', at + 1)).toBe(-1);
    bytes[at + 6] ^= 0x01; // CC0-1.0 -> CC0-1.1
    writeFileSync(path, bytes);

    const reports = catalog.rescan();
    expect(reports).toMatchObject([{ country: 'XA', date: '2026-02-01', status: 'refused', previous: '2026-01-01' }]);
    const refused = entries.find((e) => e.event === 'snapshot_refused');
    expect(refused).toMatchObject({ level: 'warn', country: 'XA', date: '2026-02-01', path, serving: '2026-01-01' });
    expect(String(refused!.reason)).toMatch(
      /^checksum mismatch: the file says sha256:[0-9a-f]{64}, its content and metadata give sha256:[0-9a-f]{64}$/,
    );
    expect(catalog.view()).toBe(serving);
    expect(catalog.view().snapshots[0].sources).toEqual(SOURCES);
    expect(queryBuildings(catalog.view(), { bbox: BBOX, sort: 'volume', limit: 100, offset: 0 }).total).toBe(5);
  });

  it('serves a v1 file (written by the v1 writer) and then a v2 file, logging the schema version of each', async () => {
    const dir = freshDir();
    mkdirSync(join(dir, 'XA'), { recursive: true });
    copyFileSync(new URL('./fixtures/snapshot-v1/XA/2026-01-01.arrow', import.meta.url), join(dir, 'XA', '2026-01-01.arrow'));
    const { log, entries } = logged();
    const catalog = Catalog.open(dir, { log });
    expect(dates(catalog.view())).toEqual(['XA 2026-01-01']);
    const v1 = catalog.view().snapshots[0];
    const listed = (id: string) => v1.record(findBuilding(catalog.view(), buildingId(id))!.row);
    expect([listed('v1:1').seismic_listed, listed('v1:1').locality_basis, listed('v1:2').seismic_listed]).toEqual([true, null, false]);
    await write(dir, 'XA', '2026-02-01', 'b', 6);
    expect(catalog.rescan()).toMatchObject([{ date: '2026-02-01', status: 'loaded', previous: '2026-01-01' }]);
    expect(entries.filter((e) => e.event === 'snapshot_loaded').map((e) => [e.date, e.schemaVersion])).toEqual([
      ['2026-01-01', 1],
      ['2026-02-01', 2],
    ]);
  });

  it('does not retry a refused file until it changes; an older valid file behind it still loads', async () => {
    const dir = freshDir();
    await write(dir, 'XA', '2026-01-01', 'a', 5);
    const catalog = Catalog.open(dir, { log: () => {} });
    const bad = await write(dir, 'XA', '2026-03-01', 'a', 5);
    corrupt(bad);
    await write(dir, 'XA', '2026-02-01', 'b', 7);
    // The newest is refused; the next newer than what serves is loaded.
    expect(catalog.rescan().map((r) => `${r.date} ${r.status}`)).toEqual(['2026-03-01 refused', '2026-02-01 loaded']);
    expect(dates(catalog.view())).toEqual(['XA 2026-02-01']);
    expect(catalog.rescan()).toEqual([]); // refused file unchanged: not tried again
    utimesSync(bad, new Date(), new Date(Date.now() + 5000));
    expect(catalog.rescan().map((r) => `${r.date} ${r.status}`)).toEqual(['2026-03-01 refused']); // changed: tried, still bad
    await write(dir, 'XA', '2026-03-01', 'c', 9); // rewritten correctly
    expect(catalog.rescan().map((r) => `${r.date} ${r.status}`)).toEqual(['2026-03-01 loaded']);
    expect(catalog.view().snapshots[0].rows).toBe(9);
  });

  it('hot swap: queries that captured a view finish on it while rescan publishes another; none throws or mixes snapshots', async () => {
    const dir = freshDir();
    await write(dir, 'XA', '2026-01-01', 'old', 300);
    const catalog = Catalog.open(dir, { log: () => {} });
    await write(dir, 'XA', '2026-02-01', 'new', 280);

    /** A bulk caller: captures the view once, then walks every page, yielding between pages. */
    const walk = async (): Promise<{ dates: Set<string>; ids: string[]; total: number }> => {
      const view = catalog.view();
      const seen = new Set<string>();
      const ids: string[] = [];
      let total: number;
      for (let offset = 0; ; offset += 25) {
        const page = queryBuildings(view, { bbox: BBOX, sort: 'volume', limit: 25, offset });
        total = page.total;
        for (const r of page.rows) {
          seen.add(r.snapshot.date);
          ids.push(r.snapshot.buildingId(r.row));
        }
        if (page.rows.length < 25) break;
        await tick();
      }
      return { dates: seen, ids, total };
    };
    const running: Promise<{ dates: Set<string>; ids: string[]; total: number }>[] = [];
    for (let i = 0; i < 40; i++) {
      running.push(walk());
      await tick();
      if (i === 20) catalog.rescan();
    }
    const results = await Promise.all(running);
    for (const r of results) {
      expect(r.dates.size).toBe(1);
      const date = [...r.dates][0];
      expect(r.total).toBe(date === '2026-01-01' ? 300 : 280);
      expect(r.ids).toHaveLength(r.total);
      expect(new Set(r.ids).size).toBe(r.total); // pages neither overlap nor skip
    }
    const seenDates = new Set(results.flatMap((r) => [...r.dates]));
    expect(seenDates).toEqual(new Set(['2026-01-01', '2026-02-01']));
  });

  it('rescans on SIGHUP once watchSignal() is called', async () => {
    const dir = freshDir();
    await write(dir, 'XA', '2026-01-01', 'a', 3);
    const catalog = Catalog.open(dir, { log: () => {} });
    const stop = catalog.watchSignal();
    try {
      await write(dir, 'XA', '2026-02-01', 'a', 4);
      process.kill(process.pid, 'SIGHUP');
      for (let i = 0; i < 100 && catalog.view().snapshots[0].date !== '2026-02-01'; i++) await new Promise((r) => setTimeout(r, 20));
      expect(dates(catalog.view())).toEqual(['XA 2026-02-01']);
    } finally {
      stop();
    }
  });
});

describe('report()', () => {
  it('per country: date, buildings, bytes held, load time', async () => {
    const dir = freshDir();
    await write(dir, 'XB', '2026-01-01', 'b', 30);
    await write(dir, 'XA', '2026-01-02', 'a', 20);
    const catalog = Catalog.open(dir, { log: () => {} });
    const report = catalog.report();
    expect(report.map((r) => [r.country, r.date, r.buildings])).toEqual([
      ['XA', '2026-01-02', 20],
      ['XB', '2026-01-01', 30],
    ]);
    const [xa, xb] = catalog.view().snapshots;
    expect(report[0].bytesHeld).toBe(xa.bytesHeld);
    expect(report[1].bytesHeld).toBe(xb.bytesHeld);
    for (const r of report) {
      expect(r.bytesHeld).toBeGreaterThan(r.buildings * 50);
      expect(r.loadMs).toBeGreaterThanOrEqual(0);
      expect(Number.isInteger(r.loadMs)).toBe(true);
    }
  });
});
