import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Flatbush from 'flatbush';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Catalog, type Snapshot } from '../src/catalog/catalog.ts';
import { writeSyntheticCountry } from '../src/synth/generate.ts';
import { Rng } from './reference/random.ts';

let dir: string;
const stores: Snapshot[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'edifice-point-index-'));
  // A country of many nodes, and one of fewer buildings than a node holds (the root alone).
  for (const [seed, buildings] of [
    [11, 9_000],
    [12, 12],
  ]) {
    const out = join(dir, String(seed));
    await writeSyntheticCountry({ seed, buildings, outDir: out });
    stores.push(Catalog.open(out, { log: () => {} }).view().snapshots[0]);
  }
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Rows whose outline box (as Float32, the index's precision) meets the box: every row tested. */
function bruteForce(s: Snapshot, minX: number, minY: number, maxX: number, maxY: number): number[] {
  const box = new Float64Array(4);
  const out: number[] = [];
  for (let r = 0; r < s.rows; r++) {
    s.footprints.bbox(r, box);
    const [x0, y0, x1, y1] = [Math.fround(box[0]), Math.fround(box[1]), Math.fround(box[2]), Math.fround(box[3])];
    if (x0 <= maxX && y0 <= maxY && x1 >= minX && y1 >= minY) out.push(r);
  }
  return out;
}

describe('the point index', () => {
  it('finds every outline box a search box meets, and nothing else, also once rebuilt from its buffer', () => {
    const rng = new Rng(5);
    for (const s of stores) {
      const index = s.index!;
      const again = Flatbush.from(index.data as ArrayBuffer);
      let found = 0;
      for (let q = 0; q < 300; q++) {
        const r = rng.int(0, s.rows - 1);
        const lon = s.lon[r] + (rng.next() - 0.5) * 0.01;
        const lat = s.lat[r] + (rng.next() - 0.5) * 0.01;
        const half = rng.next() * 0.003;
        const query = [Math.fround(lon - half), Math.fround(lat - half), Math.fround(lon + half), Math.fround(lat + half)] as const;
        const want = bruteForce(s, ...query);
        expect(index.search(...query).sort((a, b) => a - b)).toEqual(want);
        expect(again.search(...query).sort((a, b) => a - b)).toEqual(want);
        found += want.length;
      }
      // Searches near buildings: most meet some outline box.
      expect(found, `rows ${s.rows}`).toBeGreaterThan(150);
      // The whole extent holds every row once.
      expect(index.search(-180, -90, 180, 90).length).toBe(s.rows);
    }
    expect(stores.map((s) => s.rows)).toEqual([9_000, 12]);
  });
});
