/**
 * The openings shared by a server's threads (shared-openings.ts): against a plain Map, through the
 * turning over of its two tables, and read by another thread while it is written.
 */
import { randomUUID } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { newId } from '../src/ledger/base62.ts';
import { SEGMENTS, SharedOpenings } from '../src/ledger/shared-openings.ts';
import { Rng } from './reference/random.ts';
import { openingKey, T0 } from './workers/openings-keys.ts';

const BOOT = new URL('../src/http/thread-boot.mjs', import.meta.url);
const READER = new URL('./workers/openings-reader.ts', import.meta.url).href;

const at = (seconds: number): number => seconds * 1000;

describe('SharedOpenings', () => {
  it('answers as a Map of the latest opening per workspace and building, rounded down to the second', () => {
    const rng = new Rng(11);
    const workspaces = Array.from({ length: 20 }, () => newId('ws'));
    const buildings = Array.from({ length: 400 }, () => randomUUID());
    const table = new SharedOpenings(8192);
    const expected = new Map<string, number>();
    for (let n = 0; n < 5000; n++) {
      const w = rng.pick(workspaces);
      const b = rng.pick(buildings);
      const ms = 1_700_000_000_000 + rng.int(0, 400 * 86_400_000);
      table.add(w, b, ms);
      const k = `${w} ${b}`;
      expected.set(k, Math.max(expected.get(k) ?? 0, Math.floor(ms / 1000) * 1000));
    }
    expect(expected.size).toBeLessThan(8192 * 0.7); // one table's worth: nothing turned over
    for (const w of workspaces) {
      for (const b of buildings) expect(table.openedAt(w, b)).toBe(expected.get(`${w} ${b}`) ?? 0);
    }
    // Another thread's view of the same buffer answers the same.
    const other = new SharedOpenings(table.buffer);
    for (const [k, v] of expected) expect(other.openedAt(...(k.split(' ') as [string, string]))).toBe(v);
  });

  it('keeps only ids of the forms it packs exactly, and times it can hold', () => {
    const table = new SharedOpenings(64);
    const w = newId('ws');
    const b = randomUUID();
    table.add('ws_short', b, at(T0));
    table.add(`${w}x`, b, at(T0));
    table.add('wx_' + w.slice(3), b, at(T0));
    table.add(w.slice(0, 16) + '-', b, at(T0));
    table.add(w, b.toUpperCase(), at(T0));
    table.add(w, `${b.slice(0, 35)}g`, at(T0));
    table.add(w, 'b-1', at(T0));
    table.add(w, b, 999); // before the first second
    table.add(w, b, at(2 ** 32)); // past what 32 bits of seconds hold
    table.add(w, b, Number.NaN);
    // An id that is not a workspace's, after one that is: not read as the one before.
    const [w2, b2] = [newId('ws'), randomUUID()];
    table.add(w2, b2, at(T0));
    for (const bad of ['', 'ws_bad']) {
      expect(table.openedAt(bad, b2)).toBe(0);
      table.add(bad, b, at(T0));
      expect(table.openedAt(w2, b)).toBe(0);
    }
    expect(table.openedAt(w2, b2)).toBe(at(T0));
    for (const [x, y] of [
      ['ws_short', b],
      [w, b.toUpperCase()],
      [w, 'b-1'],
      [w, b],
    ])
      expect(table.openedAt(x, y)).toBe(0);
    table.add(w, b, at(T0) + 999);
    expect(table.openedAt(w, b)).toBe(at(T0));
    table.add(w, b, at(T0) - 5000); // earlier: the later time stays
    expect(table.openedAt(w, b)).toBe(at(T0));
  });

  it('refuses a table size that is not a power of two and a buffer that is not a table', () => {
    expect(() => new SharedOpenings(1000)).toThrow(RangeError);
    expect(() => new SharedOpenings(8)).toThrow(RangeError);
    expect(() => new SharedOpenings(new SharedArrayBuffer(1000))).toThrow(/Not the buffer/);
    // The most that fits in a size given in bytes: SEGMENTS (4) tables of 36 bytes a slot.
    expect(SEGMENTS).toBe(4);
    expect(SharedOpenings.slotsWithin(144 * 2 ** 20)).toBe(2 ** 20);
    expect(SharedOpenings.slotsWithin(144 * 2 ** 20 - 1)).toBe(2 ** 19);
    expect(SharedOpenings.slotsWithin(1)).toBe(16);
    expect(new SharedOpenings(2 ** 20).capacity).toBe(4 * 734_003);
    expect(new SharedOpenings(2 ** 20).buffer.byteLength).toBe(144 * 2 ** 20 + 9 * 4);
  });

  it("turns over when a table is 70% full: the latest three tables' openings are kept, the oldest forgotten", () => {
    const table = new SharedOpenings(1024); // 716 openings a table
    const batch = (n: number, second: number): [string, string, number][] =>
      Array.from({ length: n }, (_, i) => [newId('ws'), randomUUID(), at(second + i)]);
    const full = Array.from({ length: SEGMENTS }, (_, t) => batch(716, T0 + 1000 * t));
    const next = batch(10, T0 + 9000);
    const known = (list: [string, string, number][]): number => list.filter(([w, b, t]) => table.openedAt(w, b) === t).length;
    // Each 717th goes into the next table; the earlier ones stay readable.
    for (let t = 0; t < SEGMENTS; t++) {
      for (const [w, b, at] of full[t]) table.add(w, b, at);
      expect(full.slice(0, t + 1).map(known)).toEqual(full.slice(0, t + 1).map(() => 716));
    }
    // An opening of the first table made again goes into the current one, and so outlives its table.
    const [w0, b0] = full[0][0];
    table.add(w0, b0, at(T0 + 8000));
    // The last is full too: the next turns the first (oldest) table over, emptied; only it is forgotten.
    for (const [w, b, t] of next) table.add(w, b, t);
    expect([...full.map(known), known(next)]).toEqual([0, 716, 716, 716, 10]);
    expect(table.openedAt(w0, b0)).toBe(at(T0 + 8000));
    // Round again: the second table goes next.
    for (const [w, b, t] of batch(716, T0 + 10_000)) table.add(w, b, t);
    expect(full.map(known)).toEqual([0, 0, 716, 716]);
  });

  it(
    'a thread reading while another writes and turns the tables over never sees an opening that was not written',
    { timeout: 60_000 },
    async () => {
      const table = new SharedOpenings(16); // 11 openings a table: turned over every 11 adds
      const control = new SharedArrayBuffer(8);
      const state = new Int32Array(control);
      const reader = new Worker(BOOT, { workerData: { entry: READER, buffer: table.buffer, control } });
      const report = new Promise<{ found: number; wrong: number; crossed: number; firstWrong: string[] }>((resolve, reject) => {
        reader.once('message', () => reader.once('message', resolve));
        reader.once('error', reject);
      });
      await new Promise<void>((resolve, reject) => {
        reader.once('message', () => resolve());
        reader.once('error', reject);
      });
      const keys = Array.from({ length: 300_000 }, (_, i) => openingKey(i));
      const end = performance.now() + 1500;
      let i = 0;
      while (performance.now() < end) {
        for (let n = 0; n < 1000; n++, i++) {
          const [w, b] = keys[i % keys.length];
          if (i >= keys.length) break;
          table.add(w, b, at(T0 + i));
          Atomics.store(state, 0, i + 1);
        }
        if (i >= keys.length) break;
        await new Promise((resolve) => setImmediate(resolve));
      }
      Atomics.store(state, 1, 1);
      const seen = await report;
      await reader.terminate();
      expect(seen.firstWrong).toEqual([]);
      expect([seen.wrong, seen.crossed]).toEqual([0, 0]);
      expect(seen.found).toBeGreaterThan(0); // it did read openings as they were written
    },
  );
});
