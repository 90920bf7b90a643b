/**
 * Prepared files (src/catalog/prepared.ts): a store read back from one is the store built from
 * the Arrow file, array for array and answer for answer; one that does not belong to the snapshot
 * or is damaged is refused with its reason in the log, the store is built from the Arrow file and
 * the prepared file written again; one that cannot be written beside the snapshot goes to the cache.
 */
import {
  closeSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  truncateSync,
  writeSync,
  utimesSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Catalog, type LogEntry, type Snapshot } from '../src/catalog/catalog.ts';
import { PREPARED_FORMAT, preparedBeside, readPrepared, type PreparedBinding } from '../src/catalog/prepared.ts';
import { toTransfer } from '../src/catalog/transfer.ts';
import { listBusinesses, listUnits } from '../src/query/children.ts';
import { queryBuildings } from '../src/query/buildings.ts';
import { queryPoint } from '../src/query/point.ts';
import { SORT_KEYS, type BuildingsQuery } from '../src/query/types.ts';
import { writeSyntheticCountry } from '../src/synth/generate.ts';
import { Rng } from './reference/random.ts';

const DATE = '2026-11-21';
let root: string;
/** The Arrow file of a 6,000-building country, and of another country of the same code and date. */
let arrow: string;
let otherArrow: string;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'edifice-prepared-'));
  arrow = (await writeSyntheticCountry({ seed: 5, buildings: 6000, outDir: join(root, 'source') })).path;
  otherArrow = (await writeSyntheticCountry({ seed: 6, buildings: 3000, outDir: join(root, 'other') })).path;
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A snapshots folder holding a copy of `from` as XA/DATE.arrow. */
function folderWith(name: string, from = arrow): string {
  const dir = join(root, name);
  mkdirSync(join(dir, 'XA'), { recursive: true });
  copyFileSync(from, join(dir, 'XA', `${DATE}.arrow`));
  return dir;
}

/** Opens a catalog reading and writing prepared files; waits for its writes; returns its log. */
async function open(dir: string, cacheDir?: string): Promise<{ catalog: Catalog; log: LogEntry[]; snapshot: Snapshot }> {
  const log: LogEntry[] = [];
  const catalog = Catalog.open(dir, { log: (e) => log.push(e), prepared: { cacheDir } });
  await catalog.whenPrepared();
  return { catalog, log, snapshot: catalog.view().snapshots[0] };
}

const events = (log: LogEntry[]) => log.map((e) => e.event);
const loadedFrom = (log: LogEntry[]) => log.find((e) => e.event === 'snapshot_loaded')?.from;

/** Every leaf of a value: typed arrays by type, sharing and bytes; numbers by Object.is; with its path. */
function leaves(value: unknown, path = '', out = new Map<string, unknown>()): Map<string, unknown> {
  if (ArrayBuffer.isView(value)) {
    const bytes = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
    out.set(path, `${value.constructor.name} ${value.buffer instanceof SharedArrayBuffer} ${bytes.toString('base64')}`);
  } else if (value instanceof ArrayBuffer || value instanceof SharedArrayBuffer) {
    out.set(path, `${value.constructor.name} ${Buffer.from(value).toString('base64')}`);
  } else if (value instanceof Map) {
    for (const [k, v] of value) leaves(v, `${path}.get(${String(k)})`, out);
    out.set(`${path}.size`, value.size);
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) leaves(v, `${path}.${k}`, out);
    out.set(`${path}.keys`, Object.keys(value).join());
  } else {
    out.set(path, typeof value === 'number' ? (Object.is(value, -0) ? '-0' : String(value)) : value);
  }
  return out;
}

/** Overwrites bytes of a file at `at`. */
function poke(path: string, at: number, bytes: Uint8Array): void {
  const fd = openSync(path, 'r+');
  writeSync(fd, bytes, 0, bytes.length, at);
  closeSync(fd);
}

describe('a prepared file', () => {
  let fromArrow: Snapshot;
  let fromPrepared: Snapshot;
  let firstLog: LogEntry[];
  let secondLog: LogEntry[];

  beforeAll(async () => {
    const dir = folderWith('round-trip');
    const first = await open(dir);
    firstLog = first.log;
    fromArrow = first.snapshot;
    const second = await open(dir);
    secondLog = second.log;
    fromPrepared = second.snapshot;
  });

  it('is written beside the snapshot after a build from the Arrow file, and read by the next start', () => {
    expect(loadedFrom(firstLog)).toBe('arrow');
    const written = firstLog.find((e) => e.event === 'prepared_written')!;
    expect(written.path).toBe(preparedBeside(fromArrow.path));
    expect(existsSync(written.path as string)).toBe(true);
    expect(loadedFrom(secondLog)).toBe('prepared');
    expect(events(secondLog)).toEqual(['snapshot_loaded']);
    // Its phases are in the log: read, verify (and where), build, index and cold blob (with where it was encoded:
    // here, for a store under the thread's threshold) from the Arrow file; read, verify and map from the prepared one.
    expect(Object.keys(firstLog.find((e) => e.event === 'snapshot_loaded')!.phases as object)).toEqual([
      'readMs',
      'verifyMs',
      'verifiedBy',
      'buildMs',
      'indexMs',
      'partsBy',
      'coldMs',
      'coldBy',
      'coldNice',
    ]);
    expect((firstLog.find((e) => e.event === 'snapshot_loaded')!.phases as { coldBy: string }).coldBy).toBe('here');
    expect(Object.keys(secondLog[0].phases as object)).toEqual(['readMs', 'verifyMs', 'mapMs']);
  });

  it('gives the very store the Arrow file gives: every array byte for byte, every other field equal', () => {
    const { serial: _a, ...a } = toTransfer(fromArrow);
    const { serial: _b, ...b } = toTransfer(fromPrepared);
    const left = leaves(a);
    const right = leaves(b);
    expect(left.size).toBeGreaterThan(100);
    expect([...right.keys()]).toEqual([...left.keys()]);
    for (const [path, v] of left) expect(right.get(path), path).toBe(v);
    expect(fromPrepared.bytesHeld).toBe(fromArrow.bytesHeld);
    expect(fromPrepared.checksum).toBe(fromArrow.checksum);
    expect(fromPrepared.revision).toBe(fromArrow.revision);
  });

  it('answers every query as the store built from the Arrow file does', () => {
    const rng = new Rng(11);
    const e = fromArrow.extent!;
    const arrowView = { snapshots: [fromArrow] };
    const preparedView = { snapshots: [fromPrepared] };
    for (let i = 0; i < 150; i++) {
      const lon = rng.real(e.minLon, e.maxLon);
      const lat = rng.real(e.minLat, e.maxLat);
      const half = [0.005, 0.05, 0.5][i % 3];
      const q: BuildingsQuery = {
        bbox: { minLon: lon - half, minLat: lat - half, maxLon: lon + half, maxLat: lat + half },
        sort: SORT_KEYS[i % SORT_KEYS.length],
        limit: 40,
        offset: i % 5 === 0 ? 60 : 0,
      };
      if (q.sort === 'registered_business_turnover') q.registeredBusinessTurnoverCurrency = 'RON';
      if (i % 2) q.hasRegisteredBusiness = true;
      if (i % 3 === 2) q.roofShape = ['gabled', 'hipped', 'flat'];
      if (i % 4 === 1) q.minHeightM = 6;
      const answer = (view: typeof arrowView) => {
        const r = queryBuildings(view, q);
        return { rows: r.rows.map((x) => x.snapshot.buildingId(x.row)), total: r.total, capped: r.totalIsCapped };
      };
      expect(answer(preparedView)).toEqual(answer(arrowView));
      const row = rng.int(0, fromArrow.rows - 1);
      const p = { lat: fromArrow.lat[row], lon: fromArrow.lon[row], radiusM: 150, limit: 25 };
      expect(queryPoint(preparedView, p).rows.map((x) => x.row)).toEqual(queryPoint(arrowView, p).rows.map((x) => x.row));
    }
    for (let row = 0; row < fromArrow.rows; row++) {
      expect(fromPrepared.record(row)).toEqual(fromArrow.record(row));
      const id = fromArrow.buildingId(row);
      expect(fromPrepared.findRow(id)).toBe(fromArrow.findRow(id));
      if (row % 50 === 0) {
        expect(JSON.stringify(listUnits(preparedView, id, 100, 0))).toBe(JSON.stringify(listUnits(arrowView, id, 100, 0)));
        expect(JSON.stringify(listBusinesses(preparedView, id, 100, 0))).toBe(JSON.stringify(listBusinesses(arrowView, id, 100, 0)));
      }
    }
    expect(JSON.stringify(fromPrepared.places.list())).toBe(JSON.stringify(fromArrow.places.list()));
  });
});

describe('a prepared file that does not match is refused, the store built from the Arrow file and the file written again', () => {
  /** A folder whose prepared file was written and then damaged by `damage`; opens it and checks the refusal, rebuild and rewrite. */
  async function refusedAfter(name: string, damage: (prepared: string) => void, reason: RegExp): Promise<void> {
    const dir = folderWith(name);
    const { snapshot: built } = await open(dir);
    const prepared = preparedBeside(built.path);
    damage(prepared);
    const { log, snapshot } = await open(dir);
    const refusal = log.find((e) => e.event === 'prepared_refused')!;
    expect(refusal, JSON.stringify(log)).toBeDefined();
    expect(refusal.level).toBe('warn');
    expect(refusal.path).toBe(prepared);
    expect(refusal.reason).toMatch(reason);
    expect(refusal.then).toBe('building the store from the Arrow file');
    expect(loadedFrom(log)).toBe('arrow');
    expect(events(log)).toContain('prepared_written');
    expect(snapshot.rows).toBe(built.rows);
    expect(snapshot.buildingId(17)).toBe(built.buildingId(17));
    // The rewritten file is whole again: the next start reads it.
    const again = await open(dir);
    expect(loadedFrom(again.log)).toBe('prepared');
  }

  it('of another snapshot (another checksum)', async () => {
    const other = folderWith('other-source', otherArrow);
    const { snapshot } = await open(other);
    await refusedAfter(
      'other-checksum',
      (prepared) => copyFileSync(preparedBeside(snapshot.path), prepared),
      /^prepared from snapshot checksum sha256:[0-9a-f]{64}, the snapshot's is sha256:[0-9a-f]{64}$/,
    );
  });

  it('of another format version', async () => {
    const version = Buffer.alloc(4);
    version.writeUInt32LE(PREPARED_FORMAT + 1);
    await refusedAfter(
      'other-version',
      (prepared) => poke(prepared, 8, version),
      new RegExp(`^format version ${PREPARED_FORMAT + 1}, this program reads ${PREPARED_FORMAT}$`),
    );
  });

  it('written by other store code', async () => {
    await refusedAfter(
      'other-code',
      (prepared) => {
        const bytes = readFileSync(prepared);
        const length = bytes.readUInt32LE(12);
        const header = bytes.toString('utf8', 24, 24 + length);
        const code = /"code":"([0-9a-f]+)"/.exec(header)![1];
        const changed = Buffer.from(
          header.replace(
            code,
            code.replace(/^./, (c) => (c === '0' ? '1' : '0')),
          ),
        );
        poke(prepared, 24, changed);
        const crc = Buffer.alloc(4);
        crc.writeUInt32LE(crc32(changed));
        poke(prepared, 16, crc);
      },
      /^written by other store code \([0-9a-f]+, this program's is [0-9a-f]+\)$/,
    );
  });

  it('truncated', async () => {
    await refusedAfter(
      'truncated',
      (prepared) => truncateSync(prepared, readFileSync(prepared).length - 1000),
      /^truncated: \d+ bytes, the header says \d+$/,
    );
  });

  it('with a flipped byte among the arrays', async () => {
    await refusedAfter(
      'flipped-array',
      (prepared) => {
        const bytes = readFileSync(prepared);
        const at = Math.floor(bytes.length * 0.6);
        poke(prepared, at, Uint8Array.of(bytes[at] ^ 0x10));
      },
      /^CRC mismatch in array \d+ \(\w+, \d+ bytes at offset \d+\): a changed byte$/,
    );
  });

  it('with a flipped byte in the header', async () => {
    await refusedAfter(
      'flipped-header',
      (prepared) => {
        const bytes = readFileSync(prepared);
        poke(prepared, 60, Uint8Array.of(bytes[60] ^ 0x01));
      },
      /^header CRC mismatch \(a changed byte in the header\)$/,
    );
  });

  it('that is not a prepared file at all', async () => {
    await refusedAfter('garbage', (prepared) => poke(prepared, 0, Buffer.from('NOTAFILE')), /^not a prepared file/);
  });
});

describe('where the prepared file cannot be written beside the snapshot', () => {
  it('goes to the cache folder, with a log line saying so, and is read from there; the start never fails for it', async () => {
    const dir = folderWith('unwritable');
    const cache = join(root, 'cache');
    // A folder standing at the prepared file's path: it can be neither written nor read there.
    const beside = join(dir, 'XA', `${DATE}.edifice`);
    mkdirSync(join(beside, 'occupied'), { recursive: true });
    const first = await open(dir, cache);
    expect(loadedFrom(first.log)).toBe('arrow');
    const notWritten = first.log.find((e) => e.event === 'prepared_not_written')!;
    expect(notWritten.path).toBe(beside);
    expect(notWritten.then).toBe(`writing it to ${join(cache, 'XA', `${DATE}.edifice`)}`);
    expect(first.log.find((e) => e.event === 'prepared_written')!.path).toBe(join(cache, 'XA', `${DATE}.edifice`));

    const second = await open(dir, cache);
    expect(loadedFrom(second.log)).toBe('prepared');
    expect(second.snapshot.buildingId(5)).toBe(first.snapshot.buildingId(5));
    // The folder in the way is refused (it cannot be read) before the cache's file is read.
    expect(second.log.find((e) => e.event === 'prepared_refused')?.path).toBe(beside);

    // Without a cache folder, the load still succeeds: only the write is given up.
    const third = await open(dir);
    expect(third.snapshot.rows).toBe(first.snapshot.rows);
    expect(third.log.find((e) => e.event === 'prepared_not_written')!.then).toBe(
      'none written: the next start builds the store from the Arrow file again',
    );
  });
});

describe('prepared files no start will read', () => {
  it('are removed once a snapshot is served: beside it those whose Arrow file is gone, in the cache those and older ones', async () => {
    const dir = folderWith('stale');
    const cache = join(root, 'stale-cache');
    const xa = join(dir, 'XA');
    const cached = join(cache, 'XA');
    mkdirSync(cached, { recursive: true });
    // An older snapshot still in the folder (never loaded: the newest is), and files standing for prepared ones.
    copyFileSync(arrow, join(xa, '2026-11-20.arrow'));
    const put = (path: string) => copyFileSync(arrow, path);
    const gone = [join(xa, '2026-11-19.edifice'), join(cached, '2026-11-18.edifice'), join(cached, '2026-11-20.edifice')];
    const kept = [join(xa, '2026-11-20.edifice'), join(xa, 'notes.edifice'), join(cached, `${DATE}.edifice.tmp-1-1`)];
    // A newer date whose Arrow file has not arrived: its cache file is not one of an older snapshot, but its snapshot is gone.
    const newerOrphan = join(cached, '2026-11-23.edifice');
    // Writes abandoned over an hour ago (their writer died), one in each place; the one above is recent.
    const abandoned = [join(xa, `${DATE}.edifice.tmp-4242-1`), join(cached, '2026-11-20.edifice.tmp-4242-2')];
    for (const path of [...gone, ...kept, newerOrphan, ...abandoned]) put(path);
    const twoHoursAgo = (Date.now() - 2 * 3600_000) / 1000;
    for (const path of abandoned) utimesSync(path, twoHoursAgo, twoHoursAgo);
    utimesSync(kept[2], (Date.now() - 50 * 60_000) / 1000, (Date.now() - 50 * 60_000) / 1000);

    const { log, snapshot } = await open(dir, cache);
    expect(snapshot.date).toBe(DATE);
    for (const path of [...gone, newerOrphan, ...abandoned]) expect(existsSync(path), path).toBe(false);
    for (const path of kept) expect(existsSync(path), path).toBe(true);
    // The served snapshot's own prepared file, written beside it, stays.
    expect(existsSync(preparedBeside(join(xa, `${DATE}.arrow`)))).toBe(true);
    const removed = log.filter((e) => e.event === 'prepared_removed').map((e) => [e.path, e.reason]);
    expect(removed.sort()).toEqual(
      [
        [gone[0], 'its snapshot is gone'],
        [gone[1], 'its snapshot is gone'],
        [gone[2], `older than the snapshot served (${DATE})`],
        [newerOrphan, 'its snapshot is gone'],
        [abandoned[0], 'a write abandoned over an hour ago'],
        [abandoned[1], 'a write abandoned over an hour ago'],
      ].sort(),
    );

    // Without prepared files the catalog touches none.
    put(gone[0]);
    const plain = Catalog.open(dir, { log: () => undefined });
    expect(plain.view().snapshots[0].date).toBe(DATE);
    expect(existsSync(gone[0])).toBe(true);
  });
});

describe('the arrays, mapped or read, their CRCs checked here or with a second thread', () => {
  let dir: string;
  let prepared: string;
  let binding: PreparedBinding;
  let arrays: { shared: boolean; offset: number; bytes: number }[];

  beforeAll(async () => {
    dir = folderWith('crc-threads');
    const { snapshot } = await open(dir);
    prepared = preparedBeside(snapshot.path);
    binding = { checksum: snapshot.checksum, country: snapshot.country, date: snapshot.date, rows: snapshot.rows };
    // The arrays' places, from the header as the layout in prepared.ts gives them.
    const bytes = readFileSync(prepared);
    const headerLength = bytes.readUInt32LE(12);
    const header = JSON.parse(bytes.toString('utf8', 24, 24 + headerLength)) as { arrays: [string, 0 | 1, number, number][] };
    let at = Math.ceil((24 + headerLength) / 8) * 8;
    arrays = header.arrays.map(([, shared, n]) => {
      const entry = { shared: shared === 1, offset: at, bytes: n };
      at += Math.ceil(n / 8) * 8;
      return entry;
    });
  });

  const ways = [
    { parallelCrcFrom: Infinity, map: false },
    { parallelCrcFrom: 0, map: false },
    { parallelCrcFrom: Infinity, map: true },
    { parallelCrcFrom: 0, map: true },
  ];

  it('give the same store every way, mapped when asked (npm install builds the addon)', () => {
    const [first, ...others] = ways.map((way) => readPrepared(prepared, binding, arrow, way));
    expect(ways.map((w, k) => [first, ...others][k].timings.mapped === w.map)).toEqual(ways.map(() => true));
    const { serial: _a, ...a } = toTransfer(first.snapshot);
    for (const other of others) {
      const { serial: _b, ...b } = toTransfer(other.snapshot);
      expect(leaves(b)).toEqual(leaves(a));
    }
  });

  it('leave the file as it was when a mapped array is written to', () => {
    const before = readFileSync(prepared);
    const { snapshot } = readPrepared(prepared, binding, arrow);
    const index = toTransfer(snapshot).index;
    expect(index).toBeInstanceOf(SharedArrayBuffer);
    new Uint8Array(index!).fill(0xa5);
    expect(new Uint8Array(index!)[0]).toBe(0xa5);
    expect(readFileSync(prepared).equals(before)).toBe(true);
  });

  it('catch a flipped byte in every array, shared or not, naming the array', () => {
    expect(arrays.some((a) => a.shared)).toBe(true);
    expect(arrays.some((a) => !a.shared)).toBe(true);
    const original = readFileSync(prepared);
    try {
      arrays.forEach((a, k) => {
        if (a.bytes === 0) return;
        const at = a.offset + Math.floor(a.bytes / 2);
        poke(prepared, at, Uint8Array.of(original[at] ^ 0x04));
        // The serving way for every array, and one other way in turn.
        for (const way of [ways[3], ways[k % 3]]) {
          expect(() => readPrepared(prepared, binding, arrow, way), `array ${k}, ${JSON.stringify(way)}`).toThrow(
            new RegExp(`^CRC mismatch in array ${k} \\(`),
          );
        }
        poke(prepared, at, original.subarray(at, at + 1));
      });
    } finally {
      poke(prepared, 0, original);
    }
    expect(() => readPrepared(prepared, binding, arrow, { parallelCrcFrom: 0 })).not.toThrow();
  });
});
