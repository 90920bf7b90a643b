/**
 * Node summaries (src/catalog/summaries.ts) against the rows they summarise: for every node of
 * the row tree, flags, enum codes and nulls are exact; numeric bounds and sort-key maxima hold
 * the true least and greatest value within one Float32 step outward.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NULL_I32 } from '../src/catalog/arrow.ts';
import { Catalog } from '../src/catalog/catalog.ts';
import { HOT_ENUM, HOT_NUM } from '../src/catalog/columns.ts';
import { numberAt } from '../src/catalog/numeric.ts';
import type { Snapshot } from '../src/catalog/snapshot.ts';
import { CATEGORY, ROOF_SHAPE, SOLAR_PRESENCE } from '../src/snapshot/schema.ts';
import { CodesProof, NONE, countOf, emptyAmong, verdictOf } from '../src/query/proofs.ts';
import { boundAt, compile } from '../src/query/plan.ts';
import type { BuildingsQuery } from '../src/query/types.ts';
import { FLOOR_STEPS, FLOORS_KEYS, ROOF_KEYS, ceil32, codeBit, floor32 } from '../src/catalog/summaries.ts';
import { randomCountry, writeCountry } from './reference/fixtures.ts';

let dir: string;
let s: Snapshot;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'edifice-summaries-'));
  // 3 levels of nodes and a last leaf that is not full.
  await writeCountry(
    dir,
    'XA',
    randomCountry({
      country: 'XA',
      seed: 77,
      lon0: 20,
      lon1: 21,
      lat0: 44,
      lat1: 45,
      clusters: 12,
      perCluster: 300,
      background: 1037,
      sourcePrefix: 'sum',
    }),
  );
  const catalog = Catalog.open(dir, { log: () => {} });
  s = catalog.view().snapshots[0];
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Each node as [flat index, first row, end row]. */
function nodes(): [number, number, number][] {
  const out: [number, number, number][] = [];
  const t = s.tree;
  for (let level = 0; level < t.levelStart.length; level++) {
    for (let i = 0; i < t.levelCount[level]; i++) {
      const lo = i * t.levelSpan[level];
      out.push([t.levelStart[level] + i, lo, Math.min(s.rows, lo + t.levelSpan[level])]);
    }
  }
  return out;
}

/** v rounded outward to Float32 is `got`: got is on the right side of v and one Float32 step at most away. */
function outward(got: number, v: number, side: 'down' | 'up'): boolean {
  return side === 'down' ? got === floor32(v) && got <= v : got === ceil32(v) && got >= v;
}

function nextFloat32(v: number): number {
  const f = new Float32Array([v]);
  const u = new Int32Array(f.buffer);
  if (v === 0) return 1.401298464324817e-45;
  u[0] += v > 0 ? 1 : -1;
  return f[0];
}

describe('node summaries', () => {
  it('cover every node of the tree', () => {
    expect(s.tree.levelStart.length).toBeGreaterThanOrEqual(3);
    expect(s.rows % 64).not.toBe(0);
    expect(s.summaries.nodes).toBe(s.tree.boxes.length / 4);
    expect(s.memory().summaries).toBe(s.summaries.byteLength);
  });

  it('flags, enum codes and nulls are exact; numeric bounds are the true ones rounded outward', () => {
    const sum = s.summaries;
    for (const [node, lo, hi] of nodes()) {
      let any = 0,
        all = -1,
        nulls = 0;
      for (let r = lo; r < hi; r++) {
        any |= s.flags[r];
        all &= s.flags[r];
      }
      expect(sum.flagsAny[node]).toBe(any >>> 0);
      expect(sum.flagsAll[node]).toBe(all >>> 0);
      for (const name of HOT_ENUM) {
        let bits = 0;
        for (let r = lo; r < hi; r++) bits |= codeBit(s.enums[name][r]);
        expect(sum.codes[name][node], name).toBe(bits >>> 0);
      }
      HOT_NUM.forEach((name, j) => {
        let mn = Infinity,
          mx = -Infinity;
        for (let r = lo; r < hi; r++) {
          const v = numberAt(s.num[name], r);
          if (v !== v) nulls |= 1 << j;
          else {
            mn = Math.min(mn, v);
            mx = Math.max(mx, v);
          }
        }
        expect(outward(sum.min[name][node], mn, 'down'), `${name} min of node ${node}`).toBe(true);
        expect(outward(sum.max[name][node], mx, 'up'), `${name} max of node ${node}`).toBe(true);
      });
      expect(sum.nulls[node]).toBe(nulls);
    }
  });

  it('hold the greatest height and volume among rows of at most t floors, for each step t', () => {
    const sum = s.summaries;
    let bounded = 0;
    for (const [node, lo, hi] of nodes()) {
      for (const name of FLOORS_KEYS) {
        FLOOR_STEPS.forEach((t, k) => {
          let mx = -Infinity;
          for (let r = lo; r < hi; r++) {
            const floors = numberAt(s.num.floors, r);
            const v = numberAt(s.num[name], r);
            if (!Number.isNaN(floors) && !Number.isNaN(v) && floors <= t) mx = Math.max(mx, v);
          }
          expect(outward(sum.floorsMax[name][k][node], mx, 'up'), `${name} at <= ${t} floors, node ${node}`).toBe(true);
          if (sum.floorsMax[name][k][node] < sum.max[name][node]) bounded++; // tighter than the node's maximum
        });
      }
    }
    expect(bounded).toBeGreaterThan(0);
  });

  it('hold the greatest height, volume and area among the rows of each roof shape (rows of unknown shape in none)', () => {
    const sum = s.summaries;
    let bounded = 0;
    let unknownShape = 0;
    for (let r = 0; r < s.rows; r++) if (s.enums.roof_shape[r] >= ROOF_SHAPE.length) unknownShape++;
    expect(unknownShape).toBeGreaterThan(0);
    for (const [node, lo, hi] of nodes()) {
      for (const name of ROOF_KEYS) {
        expect(sum.roofMax[name].length).toBe(ROOF_SHAPE.length);
        ROOF_SHAPE.forEach((_, code) => {
          let mx = -Infinity;
          for (let r = lo; r < hi; r++) {
            const v = numberAt(s.num[name], r);
            if (s.enums.roof_shape[r] === code && !Number.isNaN(v)) mx = Math.max(mx, v);
          }
          expect(outward(sum.roofMax[name][code][node], mx, 'up'), `${name} of roof shape ${code}, node ${node}`).toBe(true);
          if (sum.roofMax[name][code][node] < sum.max[name][node]) bounded++;
        });
      }
    }
    expect(bounded).toBeGreaterThan(0);
  });

  it('bound the sort key under a roof_shape list by the listed shapes, and under max_floors as well by the lower of the two', () => {
    const lists = [[ROOF_SHAPE[0]], [ROOF_SHAPE[2], ROOF_SHAPE[5]], ROOF_SHAPE.slice(0, 7)];
    for (const [sort, name] of [
      ['height', 'height_m'],
      ['volume', 'volume_m3'],
      ['area', 'footprint_area_m2'],
    ] as const) {
      for (const roofShape of lists) {
        for (const maxFloors of sort === 'area' ? [undefined] : [undefined, 2]) {
          const q = {
            bbox: { minLon: -180, minLat: -90, maxLon: 180, maxLat: 90 },
            sort,
            limit: 1,
            offset: 0,
            roofShape: [...roofShape],
            maxFloors,
          } as BuildingsQuery;
          const bound = compile(s, q)!.bound!;
          const codes = roofShape.map((shape) => ROOF_SHAPE.indexOf(shape));
          for (const [node, lo, hi] of nodes()) {
            // By brute force: the greatest key among the node's rows of a listed shape, among
            // those of at most maxFloors floors, and among those of both (what can match).
            let listed = -Infinity;
            let low = -Infinity;
            let both = -Infinity;
            for (let r = lo; r < hi; r++) {
              const v = numberAt(s.num[name], r);
              if (Number.isNaN(v)) continue;
              const shapeOk = codes.includes(s.enums.roof_shape[r]);
              const floorsOk = maxFloors === undefined || numberAt(s.num.floors, r) <= maxFloors;
              if (shapeOk) listed = Math.max(listed, v);
              if (floorsOk) low = Math.max(low, v);
              if (shapeOk && floorsOk) both = Math.max(both, v);
            }
            const b = boundAt(bound, node);
            expect(b, `${sort} ${roofShape.join('|')} floors <= ${maxFloors}, node ${node}`).toBeGreaterThanOrEqual(both);
            // The lower of the two summaries (at max_floors 2, a floors step): each one Float32 step up at most.
            expect(b).toBe(Math.min(ceil32(listed), ceil32(low)));
          }
        }
      }
    }
  });

  it('count the rows of every enum code over the snapshot, and the share a list filter keeps', () => {
    const sum = s.summaries;
    for (const name of HOT_ENUM) {
      const counts = new Map<number, number>();
      for (let r = 0; r < s.rows; r++) counts.set(s.enums[name][r], (counts.get(s.enums[name][r]) ?? 0) + 1);
      for (let code = 0; code < 256; code++) expect(sum.codeRows[name][code], `${name} code ${code}`).toBe(counts.get(code) ?? 0);
      const table = new Uint8Array(256);
      table[0] = table[2] = 1;
      expect(sum.share(name, table)).toBeCloseTo(((counts.get(0) ?? 0) + (counts.get(2) ?? 0)) / s.rows, 12);
    }
  });

  it("count the rows of every code bit of every node from level 1 up; a list proof counts a node's passing rows where its bits tell", () => {
    const sum = s.summaries;
    const t = s.tree;
    expect(sum.countsFrom).toBe(t.levelStart[1]);
    const tables: Uint8Array[] = [];
    for (let k = 0; k < 12; k++) {
      const table = new Uint8Array(256);
      for (let code = 0; code < 31; code++) table[code] = (code * 7 + k * 3) % 5 < 2 ? 1 : 0;
      // Bit 31 (null and codes above 30): all failing, all passing, or only the null code passing (undecidable).
      if (k % 3 === 1) table.fill(1, 31);
      if (k % 3 === 2) table[0xff] = 1;
      tables.push(table);
    }
    let counted = 0,
      undecidable = 0;
    for (const [node, lo, hi] of nodes()) {
      for (const name of HOT_ENUM) {
        const col = s.enums[name];
        if (node >= sum.countsFrom) {
          const perBit = new Array(32).fill(0);
          for (let r = lo; r < hi; r++) perBit[col[r] < 31 ? col[r] : 31]++;
          expect(
            Array.from(sum.codeCounts[name].subarray(32 * (node - sum.countsFrom), 32 * (node - sum.countsFrom + 1))),
            `${name} node ${node}`,
          ).toEqual(perBit);
        }
        for (const table of tables) {
          const proof = new CodesProof(sum.codes[name], table, sum.codeCounts[name], sum.countsFrom);
          let passing = 0,
            high = false;
          for (let r = lo; r < hi; r++) {
            passing += table[col[r]];
            if (col[r] >= 31) high = true;
          }
          let mixedHigh = false;
          for (let code = 31; code < 256; code++) if (table[code] !== table[31]) mixedHigh = true;
          const want = node < sum.countsFrom || (high && mixedHigh) ? -1 : passing;
          expect(proof.count(node), `${name} node ${node}`).toBe(want);
          if (node >= sum.countsFrom && want < 0) undecidable++;
          if (want >= 0) counted++;
        }
      }
    }
    expect(counted).toBeGreaterThan(500);
    expect(undecidable).toBeGreaterThan(20);
    // Without counts, nothing is counted.
    expect(new CodesProof(sum.codes.roof_shape, tables[0]).count(t.levelStart[t.levelStart.length - 1])).toBe(-1);
  });

  it("count a node's matches only when every filter but one list is proven for all its rows (countOf), and then exactly", () => {
    const t = s.tree;
    const sum = s.summaries;
    const roof = ['gabled', 'flat', 'hipped'] as const;
    const roofCodes = new Set(roof.map((v) => ROOF_SHAPE.indexOf(v)));
    // Every solar presence but the most frequent: most nodes hold rows of both kinds.
    const solarRows = sum.codeRows.solar_presence;
    const commonest = SOLAR_PRESENCE.reduce((best, _, code) => (solarRows[code] > solarRows[best] ? code : best), 0);
    const solar = SOLAR_PRESENCE.filter((_, code) => code !== commonest);
    const solarCodes = new Set(solar.map((v) => SOLAR_PRESENCE.indexOf(v)));
    const areas = Array.from({ length: s.rows }, (_, r) => numberAt(s.num.footprint_area_m2, r))
      .filter((v) => v === v)
      .sort((a, b) => a - b);
    const minArea = areas[areas.length >> 3];
    // Above a quarter of the leaves' greatest areas: a bound that rules those leaves out.
    const leafMax: number[] = [];
    for (let lo = 0; lo < s.rows; lo += t.levelSpan[0]) {
      let mx = -Infinity;
      for (let r = lo; r < Math.min(s.rows, lo + t.levelSpan[0]); r++) mx = Math.max(mx, numberAt(s.num.footprint_area_m2, r) || -Infinity);
      leafMax.push(mx);
    }
    const tightArea = leafMax.sort((a, b) => a - b)[leafMax.length >> 2] + 1;
    const base = { bbox: { minLon: -180, minLat: -90, maxLon: 180, maxLat: 90 }, sort: 'volume', limit: 1, offset: 0 } as const;
    const roofOk = (r: number) => roofCodes.has(s.enums.roof_shape[r]);
    // listed: some node the proofs leave undecided can still be counted, from a list's rows per code (plan.countable).
    const cases = [
      { name: 'one list', q: { roofShape: [...roof] }, pass: roofOk, listed: true },
      {
        name: 'two lists',
        q: { roofShape: [...roof], solarPresence: [...solar] },
        pass: (r: number) => roofOk(r) && solarCodes.has(s.enums.solar_presence[r]),
        listed: true,
      },
      {
        name: 'two lists, one proven for every row',
        q: { roofShape: [...roof], solarPresence: [...SOLAR_PRESENCE] },
        pass: roofOk,
        listed: true,
      },
      {
        name: 'a list and a bound',
        q: { roofShape: [...roof], minAreaM2: minArea },
        pass: (r: number) => roofOk(r) && numberAt(s.num.footprint_area_m2, r) >= minArea,
        listed: true,
      },
      {
        name: 'a bound alone',
        q: { minAreaM2: minArea },
        pass: (r: number) => numberAt(s.num.footprint_area_m2, r) >= minArea,
        listed: false,
      },
      {
        name: 'category or building type',
        q: { category: [...CATEGORY.slice(0, 3)], buildingType: [s.buildingTypes[0]] },
        pass: null,
        listed: false,
      },
      { name: 'a list and entrances (no summary: not complete)', q: { roofShape: [...roof], minEntrances: 1 }, pass: null, listed: false },
      {
        name: 'two lists and a bound above a quarter of the leaves',
        q: { roofShape: [...roof], solarPresence: [...solar], minAreaM2: tightArea },
        pass: (r: number) => roofOk(r) && solarCodes.has(s.enums.solar_presence[r]) && numberAt(s.num.footprint_area_m2, r) >= tightArea,
        listed: true,
      },
    ];
    let noneAfterUndecided = 0;
    for (const c of cases) {
      const plan = compile(s, { ...base, ...c.q } as BuildingsQuery)!;
      // The walk asks countOf of undecided nodes only where the plan says it can count one.
      expect(plan.countable, c.name).toBe(c.listed);
      let counted = 0,
        unknown = 0,
        undecidedCounted = 0;
      for (const [node, lo, hi] of nodes()) {
        const got = countOf(plan.proofs, plan.complete, node, hi - lo);
        const undecided = plan.proofs.filter((p) => p.verdict(node) === 1);
        const none = plan.proofs.some((p) => p.verdict(node) === 0);
        if (none) {
          // Whatever its place among the proofs, and at every level: the walk asks countOf instead of verdictOf.
          expect(got, `${c.name}: node ${node}`).toBe(0);
          if (undecided.length >= 2) noneAfterUndecided++;
        }
        if (node < sum.countsFrom) continue;
        const countable =
          none || (plan.complete && (undecided.length === 0 || (undecided.length === 1 && undecided[0] instanceof CodesProof)));
        expect(got >= 0, `${c.name}: node ${node}`).toBe(countable);
        if (got < 0) {
          unknown++;
          continue;
        }
        counted++;
        if (undecided.length > 0) undecidedCounted++;
        let want = 0;
        for (let r = lo; r < hi; r++) if (c.pass!(r)) want++;
        expect(got, `${c.name}: node ${node}`).toBe(want);
      }
      if (c.name.startsWith('one list') || c.name.startsWith('two lists, one')) expect([unknown, counted > 0], c.name).toEqual([0, true]);
      else if (!c.name.startsWith('two lists and a bound')) expect(unknown, c.name).toBeGreaterThan(0);
      // Where the plan says it cannot, no undecided node is counted; where it can, one list alone shows it.
      if (!c.listed) expect(undecidedCounted, c.name).toBe(0);
      if (c.name === 'one list') expect(undecidedCounted, c.name).toBeGreaterThan(0);
    }
    expect(noneAfterUndecided).toBeGreaterThan(0);
    expect(t.levelStart.length).toBeGreaterThanOrEqual(3);
  });

  it('rule out, in one pass over a run of up to 32 nodes, exactly the nodes whose verdict is NONE (emptyAmong)', () => {
    const t = s.tree;
    const solarRows = s.summaries.codeRows.solar_presence;
    // The rarest stated solar presence: most leaves hold none of it, most blocks of 8 leaves some.
    const rarest = SOLAR_PRESENCE.reduce(
      (best, _, code) => (solarRows[code] > 0 && (solarRows[best] === 0 || solarRows[code] < solarRows[best]) ? code : best),
      0,
    );
    const areas = Array.from({ length: s.rows }, (_, r) => numberAt(s.num.footprint_area_m2, r))
      .filter((v) => v === v)
      .sort((a, b) => a - b);
    const base = { bbox: { minLon: -180, minLat: -90, maxLon: 180, maxLat: 90 }, sort: 'volume', limit: 1, offset: 0 } as const;
    const queries: Record<string, object> = {
      'a rare list value': { solarPresence: [SOLAR_PRESENCE[rarest]] },
      'a bound most leaves straddle': { minAreaM2: areas[areas.length >> 1] },
      'a bound above most leaves': { minAreaM2: areas[areas.length - (areas.length >> 4)] },
      flags: { has3dModel: true, measuredHeightOnly: true },
      'category or building type (never ruled out)': { category: [CATEGORY[0]], buildingType: [s.buildingTypes[0]] },
      'all of them': { solarPresence: [SOLAR_PRESENCE[rarest]], minAreaM2: areas[areas.length >> 1], has3dModel: true },
    };
    let leavesOutOfLiveBlocks = 0;
    for (const [name, q] of Object.entries(queries)) {
      const plan = compile(s, { ...base, ...q } as BuildingsQuery)!;
      expect(plan.proofs.length, name).toBeGreaterThan(0);
      for (let level = 0; level < t.levelStart.length; level++) {
        const start = t.levelStart[level];
        const count = t.levelCount[level];
        for (const width of [8, 32, 3]) {
          for (let i = 0; i < count; i += width) {
            const n = Math.min(width, count - i);
            const got = emptyAmong(plan.proofs, start + i, n);
            for (let j = 0; j < 32; j++) {
              const node = start + i + j;
              const want = j < n && verdictOf(plan.proofs, plan.complete, node) === NONE;
              expect(((got >>> j) & 1) === 1, `${name}: level ${level} node ${node}`).toBe(want);
              for (const p of plan.proofs) if (j < n) expect(((p.emptyAmong(start + i, n) >>> j) & 1) === 1).toBe(p.verdict(node) === NONE);
            }
            // Leaves ruled out in a block (8 leaves) that is not: what the walk skips inside blocks.
            if (level === 0 && width === 8 && got !== 0 && verdictOf(plan.proofs, plan.complete, t.levelStart[1] + i / 8) !== NONE)
              leavesOutOfLiveBlocks++;
          }
        }
      }
      if (name.startsWith('category')) expect(emptyAmong(plan.proofs, 0, Math.min(32, t.levelCount[0])), name).toBe(0);
    }
    expect(leavesOutOfLiveBlocks).toBeGreaterThan(0);
  });

  it('hold the greatest employees band start (overall and per category) and the greatest turnover of the most stated currencies', () => {
    const sum = s.summaries;
    const b = s.business;
    expect(sum.turnoverCurrencies.length).toBe(Math.min(4, b.currencies.length));
    const stated = (c: number) => Array.from(b.turnover).filter((t, j) => t === t && b.currency[j] === c).length;
    for (let k = 1; k < sum.turnoverCurrencies.length; k++)
      expect(stated(sum.turnoverCurrencies[k - 1])).toBeGreaterThanOrEqual(stated(sum.turnoverCurrencies[k]));
    for (const [node, lo, hi] of nodes()) {
      let employees = -Infinity;
      const turnover = sum.turnoverCurrencies.map(() => -Infinity);
      for (let j = b.offsets[lo]; j < b.offsets[hi]; j++) {
        if (b.employeesMin[j] !== NULL_I32) employees = Math.max(employees, b.employeesMin[j]);
        sum.turnoverCurrencies.forEach((c, k) => {
          if (b.currency[j] === c && b.turnover[j] === b.turnover[j]) turnover[k] = Math.max(turnover[k], b.turnover[j]);
        });
      }
      expect(outward(sum.employeesMax[node], employees, 'up')).toBe(true);
      CATEGORY.forEach((_, code) => {
        let inCategory = -Infinity;
        for (let j = b.offsets[lo]; j < b.offsets[hi]; j++) {
          if (b.employeesMin[j] !== NULL_I32 && s.enums.category[b.row[j]] === code) inCategory = Math.max(inCategory, b.employeesMin[j]);
        }
        expect(outward(sum.employeesMaxByCategory[code][node], inCategory, 'up'), `employees of category ${code}, node ${node}`).toBe(true);
      });
      sum.turnoverCurrencies.forEach((c, k) => expect(outward(sum.turnoverMaxOf(c)![node], turnover[k], 'up')).toBe(true));
    }
    expect(sum.turnoverMaxOf(0xfffe)).toBeNull();
  });

  it('round to Float32 outward, through zero and infinity', () => {
    for (const v of [
      0,
      -0,
      1,
      -1,
      0.1,
      -0.1,
      1 / 3,
      -1 / 3,
      1e-50,
      -1e-50,
      1e39,
      -1e39,
      2 ** 24 + 1,
      123_456_789.123,
      Infinity,
      -Infinity,
    ]) {
      const lo = floor32(v),
        hi = ceil32(v);
      expect(Math.fround(lo)).toBe(lo);
      expect(Math.fround(hi)).toBe(hi);
      expect(lo <= v && hi >= v).toBe(true);
      // v a Float32: itself both ways; else lo and hi are neighbouring Float32s around it.
      if (Math.fround(v) === v) expect([lo, hi]).toEqual([v, v]);
      else expect(nextFloat32(lo)).toBe(hi);
    }
    expect(floor32(0.1)).toBeLessThan(0.1);
    expect(ceil32(0.1)).toBeGreaterThan(0.1);
    expect(floor32(1e39)).toBe(3.4028234663852886e38);
    expect(ceil32(-1e39)).toBe(-3.4028234663852886e38);
    expect(floor32(-1e-50)).toBeLessThan(0);
    expect(ceil32(1e-50)).toBeGreaterThan(0);
  });
});
