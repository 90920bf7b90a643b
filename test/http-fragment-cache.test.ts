// The fragment cache, a ring of encoded buildings (src/http/fragment-cache.ts), against each building encoded afresh.
import { pack } from 'msgpackr';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { BUILDING_FIELDS, ByteWriter, serializeBuilding } from '../src/api/index.ts';
import { Catalog, type Snapshot } from '../src/catalog/catalog.ts';
import { FragmentCache } from '../src/http/fragment-cache.ts';
import { removeDir, syntheticSnapshots } from './http-helpers.ts';

const APP = 'https://app.example';
let dir: string;
let snapshot: Snapshot;

beforeAll(async () => {
  dir = await syntheticSnapshots(3000, 11);
  snapshot = Catalog.open(join(dir, 'snapshots')).view().snapshots[0];
});

afterAll(() => {
  if (dir) removeDir(dir);
});

function expected(row: number, encoding: 'json' | 'msgpack', turnoverCurrency?: string): Buffer {
  const context = { country: snapshot.country, appUrl: APP, turnoverCurrency };
  return encoding === 'json'
    ? Buffer.from(JSON.stringify(serializeBuilding(snapshot.record(row), context)))
    : pack(serializeBuilding(snapshot.fields(row, BUILDING_FIELDS), context));
}

/** xorshift32: the same pages on every run. */
function random(seed: number): () => number {
  let x = seed;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 0x100000000;
  };
}

describe('FragmentCache', () => {
  it('writes every building as encoded afresh, over many laps of a small ring, pages of 100 in both encodings and any turnover currency', () => {
    // 3,000 buildings are ~6 MB in the two encodings: a 256 KiB ring goes round dozens of times.
    const cache = new FragmentCache(APP, 256 * 1024);
    const next = random(5);
    const out = new ByteWriter(1024);
    let lookups = 0;
    for (let page = 0; page < 300; page++) {
      const encoding = page % 3 === 0 ? 'msgpack' : 'json';
      // The turnover a building shows depends on the request's currency (none, stated, or stated by no business).
      const currency = [undefined, 'RON', 'EUR', 'USD'][page % 4];
      // Rows from a window that slides and repeats, so that some pages hit what the last ones wrote.
      const start = Math.floor(next() * 400) + (page % 50) * 50;
      const rows = Array.from({ length: 100 }, () => Math.min(snapshot.rows - 1, start + Math.floor(next() * 150)));
      out.reset();
      const want: Buffer[] = [];
      for (const row of rows) {
        cache.write(out, snapshot, row, encoding, currency);
        want.push(expected(row, encoding, currency));
      }
      lookups += rows.length;
      expect(out.take().equals(Buffer.concat(want))).toBe(true);
    }
    expect(cache.hits + cache.misses).toBe(lookups);
    expect(cache.hits).toBeGreaterThan(lookups / 10);
    expect(cache.misses).toBeGreaterThan(lookups / 10);
    expect(cache.size).toBe(256 * 1024);
  });

  it('a building asked for again is a hit until a lap of other buildings has overwritten it', () => {
    const cache = new FragmentCache(APP, 256 * 1024);
    const out = new ByteWriter();
    cache.write(out, snapshot, 7, 'json');
    cache.write(out, snapshot, 7, 'json');
    expect([cache.hits, cache.misses]).toEqual([1, 1]);
    // The same row in the other encoding is another entry.
    cache.write(out, snapshot, 7, 'msgpack');
    expect([cache.hits, cache.misses]).toEqual([1, 2]);
    let written = 0;
    for (let row = 100; written < 256 * 1024; row++) {
      cache.write(out, snapshot, row, 'json');
      written += expected(row, 'json').length;
    }
    const misses = cache.misses;
    cache.write(out, snapshot, 7, 'json');
    expect(cache.misses).toBe(misses + 1);
  });

  it('a building asked for again late in its lap is copied to the head and outlives the buildings written after it once', () => {
    const cache = new FragmentCache(APP, 256 * 1024);
    const out = new ByteWriter();
    cache.write(out, snapshot, 7, 'json');
    // Others until row 7 sits in the oldest quarter of the ring, then 7 again: a hit, renewed.
    let written = expected(7, 'json').length;
    let row = 100;
    for (; written < 0.8 * 256 * 1024; row++) {
      cache.write(out, snapshot, row, 'json');
      written += expected(row, 'json').length;
    }
    out.reset();
    cache.write(out, snapshot, 7, 'json');
    expect(out.take().equals(expected(7, 'json'))).toBe(true);
    const hits = cache.hits;
    // Half a lap more: past where it first was, not past where it was copied to.
    for (const end = written + 0.5 * 256 * 1024; written < end; row++) {
      cache.write(out, snapshot, row, 'json');
      written += expected(row, 'json').length;
    }
    out.reset();
    cache.write(out, snapshot, 7, 'json');
    expect(cache.hits).toBe(hits + 1);
    expect(out.take().equals(expected(7, 'json'))).toBe(true);
  });

  it('a building too large for its ring is encoded for the page and not kept', () => {
    // A ring of 8 KiB keeps nothing over 512 bytes: every synthetic building is larger.
    const cache = new FragmentCache(APP, 8 * 1024);
    const out = new ByteWriter();
    for (const row of [3, 3, 3]) cache.write(out, snapshot, row, 'json');
    expect(out.take().equals(Buffer.concat([3, 3, 3].map((r) => expected(r, 'json'))))).toBe(true);
    expect([cache.hits, cache.misses, cache.size]).toEqual([0, 3, 0]);
  });
});

describe('ByteWriter', () => {
  it('grows as it is written and hands out a copy of its own', () => {
    const w = new ByteWriter(4);
    w.text('{"é":"名"}');
    w.byte(0x2c);
    w.bytes(Uint8Array.of(0x61, 0x62, 0x63), 1, 3);
    w.bytes(Buffer.from('xyz'), 0, 2);
    const first = w.take();
    expect(first.toString('utf8')).toBe('{"é":"名"},bcxy');
    w.reset();
    w.text('later');
    expect(first.toString('utf8')).toBe('{"é":"名"},bcxy');
    expect(w.take().toString()).toBe('later');
  });

  it('writes integers as String writes them, and ASCII a byte a character, across its growth', () => {
    const edges = [
      0,
      -0,
      1,
      -1,
      9,
      10,
      11,
      99,
      100,
      101,
      2 ** 31 - 1,
      2 ** 31,
      -(2 ** 31),
      2 ** 32,
      1e15,
      1e15 - 1,
      999_999_999_999_999,
      2 ** 53 - 1,
      -(2 ** 53 - 1),
      4_503_599_627_370_496,
    ];
    const next = random(7);
    const values = [...edges];
    for (let i = 0; i < 2000; i++) values.push(Math.round((next() - 0.5) * 2 ** (1 + Math.floor(next() * 53))));
    const w = new ByteWriter(1);
    let want = '';
    for (const v of values) {
      w.integer(v);
      w.ascii(',');
      want += String(v) + ',';
    }
    expect(w.take().toString('latin1')).toBe(want);
  });

  it('writes k / scale of a scaled column (k an Int32, scale 1 to 10^4) as String writes the double', () => {
    const next = random(11);
    const w = new ByteWriter(1);
    let want = '';
    for (let d = 0; d <= 4; d++) {
      const scale = 10 ** d;
      const ks = [
        0,
        1,
        -1,
        5,
        -5,
        9,
        10,
        11,
        99,
        100,
        101,
        1000,
        10_000,
        10_001,
        12_300,
        -12_300,
        32_767,
        -32_767,
        2 ** 31 - 1,
        -(2 ** 31) + 1,
        1_000_000_000,
        -999_999_999,
      ];
      for (let i = 0; i < 3000; i++) ks.push(Math.round((next() - 0.5) * 2 ** (1 + Math.floor(next() * 31))));
      for (const k of ks) {
        w.decimal(k, scale);
        w.ascii(',');
        want += String(k / scale) + ',';
      }
    }
    expect(w.take().toString('latin1')).toBe(want);
  });

  it('copies constant pieces whole, across its growth', () => {
    const pieces = ['{"a":', ',"bb":', '"é"', ''].map((t) => Buffer.from(t));
    const w = new ByteWriter(1);
    for (let i = 0; i < 100; i++) w.raw(pieces[i % pieces.length]);
    expect(w.take().toString()).toBe('{"a":,"bb":"é"'.repeat(25));
  });
});
