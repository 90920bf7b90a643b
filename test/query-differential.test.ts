/**
 * GET /buildings, units and businesses: the engine against the brute-force reference
 * (test/reference/reference.ts) on targeted random countries, thousands of random queries.
 *
 * Replay: fast-check's seeds are fixed (see `seedFor`); FC_SEED=<n> changes them and the data
 * together, FC_PATH replays one counterexample, FC_SHRINK=1 shrinks a failure.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SearchState } from '../src/query/search-state.ts';
import { QueryError, SORT_KEYS, type BuildingsQuery } from '../src/query/types.ts';
import type { BuildingRecord } from '../src/snapshot/schema.ts';
import { loadEngine, type Engine, type EngineView } from './reference/engine.ts';
import { generateCountry } from '../src/synth/generate.ts';
import { randomCountry, writeCountry } from './reference/fixtures.ts';
import { Rng } from './reference/random.ts';
import {
  assertProperty,
  bboxArbitrary,
  buildingsQueryArbitrary,
  capSides,
  checkBuildings,
  filterArbitraries,
  makeValid,
  pageArbitrary,
  breathe,
  poolOf,
  seedFor,
  type Pool,
} from './reference/queries.ts';
import {
  decodeSnapshotDir,
  refListBusinesses,
  refListUnits,
  refQueryBuildings,
  type RefBuildingsQuery,
  type RefSnapshot,
} from './reference/reference.ts';

const engine = loadEngine();

// The reference declares its own query type; it must be the engine's, field for field.
type ReferenceOnlyFields = Exclude<keyof RefBuildingsQuery, keyof BuildingsQuery>;
const sameFields: [ReferenceOnlyFields] extends [never] ? true : false = true;
const engineQueryFitsReference = (q: BuildingsQuery): RefBuildingsQuery => q;
void sameFields;
void engineQueryFitsReference;

/** Random queries per sort key, and for the other properties. */
const RUNS_PER_SORT = Number(process.env.DIFF_RUNS_PER_SORT ?? 500);
const RUNS_BORDER = Number(process.env.DIFF_RUNS_BORDER ?? 300);
const RUNS_SYNTHETIC = Number(process.env.DIFF_RUNS_SYNTHETIC ?? 300);

const asEngineQuery = (q: RefBuildingsQuery): BuildingsQuery => q as unknown as BuildingsQuery;

let queriesRun = 0;
const started = Date.now();

function check(e: Engine, view: EngineView, ref: readonly RefSnapshot[], q: RefBuildingsQuery): void {
  queriesRun++;
  checkBuildings(e, view, ref, q);
}

describe('GET /buildings: engine against the brute-force reference', () => {
  const e = engine;
  const dirs: string[] = [];
  let view: EngineView;
  let ref: RefSnapshot[];
  let pool: Pool;

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'edifice-diff-'));
    dirs.push(dir);
    // XA: ~4x4 degrees of clusters from a street to a county; XB: a small neighbour east of
    // it whose clusters hug the shared meridian 24°E (many of its points sit exactly on it).
    const a = randomCountry({
      country: 'XA',
      seed: seedFor(1000),
      lon0: 20,
      lon1: 24,
      lat0: 44,
      lat1: 48,
      clusters: 70,
      perCluster: 500,
      background: 5000,
      sourcePrefix: 'diff-xa',
    });
    const b = randomCountry({
      country: 'XB',
      seed: seedFor(2000),
      lon0: 24,
      lon1: 24.5,
      lat0: 45,
      lat1: 46.5,
      clusters: 8,
      perCluster: 250,
      background: 500,
      sourcePrefix: 'diff-xb',
    });
    await writeCountry(dir, 'XA', a);
    await writeCountry(dir, 'XB', b);
    await breathe();
    const catalog = e.openCatalog(dir);
    view = catalog.view();
    expect(catalog.log.filter((entry) => entry.level !== 'info')).toEqual([]);
    expect(view.snapshots.length).toBe(2);
    await breathe();
    ref = decodeSnapshotDir(dir);
    pool = poolOf(ref);
    expect(ref.map((s) => s.buildings.length)).toEqual([a.length, b.length]);
  });

  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    console.info(`query-differential: ${queriesRun} GET /buildings queries compared in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  });

  SORT_KEYS.forEach((sort, i) => {
    it(`sort=${sort}: random bbox, page and 0-6 filters`, async () => {
      await assertProperty(buildingsQueryArbitrary(pool, [sort]), (q) => check(e, view, ref, q), seedFor(10 + i), RUNS_PER_SORT);
    });
  });

  it('several countries: bboxes across the shared border merge both snapshots by one order', async () => {
    const border = fc
      .tuple(
        fc.double({ min: 23.9, max: 24.1, noNaN: true }),
        fc.double({ min: 45, max: 46.5, noNaN: true }),
        fc.double({ min: 0.001, max: 3, noNaN: true }),
        fc.constantFrom(0, 0.5, 1),
      )
      .map(([lon, lat, w, f]) => ({
        minLon: Math.min(lon, 24) - w * f,
        minLat: lat - w / 2,
        maxLon: Math.max(lon, 24) - w * f + w,
        maxLat: lat + w / 2,
      }))
      .map(capSides);
    const filters = filterArbitraries(pool);
    const names = Object.keys(filters);
    const arb = fc
      .tuple(
        border,
        fc.constantFrom(...SORT_KEYS),
        pageArbitrary,
        fc
          .uniqueArray(fc.constantFrom(...names), { maxLength: 2 })
          .chain((picked) =>
            fc.tuple(...picked.map((n) => filters[n])).map((parts) => Object.assign({}, ...parts) as Partial<RefBuildingsQuery>),
          ),
      )
      .map(([bbox, sort, page, f]) =>
        makeValid({ ...f, bbox, sort, ...page }, [f.registeredBusinessTurnoverCurrency ?? pool.currencies[0]]),
      );
    let both = 0;
    await assertProperty(
      arb,
      (q) => {
        const r = refQueryBuildings(ref, q);
        if (r.buildings.some((x) => x.country === 'XA') && r.buildings.some((x) => x.country === 'XB')) both++;
        check(e, view, ref, q);
      },
      seedFor(20),
      RUNS_BORDER,
    );
    expect(both).toBeGreaterThan(RUNS_BORDER / 20); // the property really mixed countries on a page
  });

  it("several countries: a deep page counting the rows before its guessed top merges both snapshots' rows by one order", async () => {
    // Boxes over XB and a strip of XA on either side of 24°E, pages past the 1,000 a heap keeps:
    // the walk guesses a cut and a top (src/query/guess.ts), and rows of either snapshot are
    // counted before the top or kept, compared with the other's by building_id where keys tie.
    const rng = new Rng(seedFor(21));
    const st = new SearchState();
    let counted = 0;
    let mixed = 0;
    for (let n = 0; n < 40; n++) {
      const w = 0.6 + rng.next();
      const bbox = { minLon: 24.25 - w, minLat: 45 + 0.5 * rng.next(), maxLon: 24.5, maxLat: 46.5 };
      const sort = rng.pick(SORT_KEYS);
      const k = rng.int(1_500, 4_000);
      const limit = rng.pick([1, 25, 100]);
      const q = makeValid({ bbox, sort, limit, offset: k - limit }, [pool.currencies[0]]);
      engine.queryBuildings(view, asEngineQuery(q), { path: 'walk', state: st });
      if (st.heap.above > 0) counted++;
      const want = refQueryBuildings(ref, q);
      if (new Set(want.buildings.map((x) => x.country)).size === 2) mixed++;
      check(engine, view, ref, q);
    }
    expect(counted).toBeGreaterThan(10);
    expect(mixed).toBeGreaterThan(10);
  });

  it('more than 10,000 matches: total stops at 10,000 and deep pages still come from the full order', async () => {
    const bbox = { minLon: 20.5, minLat: 44.5, maxLon: 23.5, maxLat: 47.5 };
    const currency = pool.currencies[0];
    let capped = 0;
    for (const sort of SORT_KEYS) {
      for (const filters of [{}, { excludeSolarPresence: ['unknown' as const] }, { maxHeightM: 1000 }] as Partial<RefBuildingsQuery>[]) {
        for (const [offset, limit] of [
          [0, 100],
          [4_321, 17],
          [9_900, 100],
          [9_999, 1],
          [9_950, 50],
        ]) {
          const q: RefBuildingsQuery = { bbox, sort, offset, limit, registeredBusinessTurnoverCurrency: currency, ...filters };
          if (refQueryBuildings(ref, q).totalIsCapped) capped++;
          check(e, view, ref, q);
          await breathe();
        }
      }
    }
    expect(capped).toBeGreaterThanOrEqual(SORT_KEYS.length * 5 * 2); // the fixture really exceeds the cap
    // Exactly at the cap and one past it, by shrinking a bbox until the count is 10,000 or 10,001.
    const all = refQueryBuildings(ref, { bbox, sort: 'volume', offset: 0, limit: 1 });
    expect(all.matches).toBeGreaterThan(10_001);
    const lons = ref
      .flatMap((s) => s.buildings)
      .filter((b) => b.latitude >= bbox.minLat && b.latitude <= bbox.maxLat && b.longitude >= bbox.minLon)
      .map((b) => b.longitude)
      .sort((x, y) => x - y);
    for (const n of [9_999, 10_000, 10_001]) {
      const edge = { ...bbox, maxLon: lons[n - 1] };
      const q: RefBuildingsQuery = { bbox: edge, sort: 'area', offset: 9_900, limit: 100 };
      const r = refQueryBuildings(ref, q);
      if (lons[n - 1] !== lons[n]) expect(r.matches).toBe(n);
      check(e, view, ref, q);
    }
  });

  it('registered_business_name: every name in several casings, non-ASCII folds (ß, İ, Greek final sigma)', async () => {
    const bbox = { minLon: 20.5, minLat: 44.5, maxLon: 23.5, maxLat: 47.5 };
    const texts = new Set<string>(['ß', 'SS', 'ss', 'İ', 'i̇', 'Σ', 'ς', 'σ', 'ΤΑΒΈΡΝΑ', 'ταβέρνα', 'æøå', 'ÆØÅ', '& k', 'R.', ' &']);
    for (const name of pool.businessNames) {
      texts.add(name).add(name.toLowerCase()).add(name.toUpperCase()).add(name.slice(1, 5)).add(name.slice(-4).toUpperCase());
    }
    for (const text of texts) {
      if (text.length < 2 && text !== 'ß' && text !== 'İ' && text !== 'Σ' && text !== 'ς' && text !== 'σ') continue;
      for (const sort of ['volume', 'registered_business_employees'] as const)
        check(e, view, ref, { bbox, sort, limit: 100, offset: 0, registeredBusinessName: text });
      await breathe();
    }
  });

  it('refuses offset + limit over 10,000 with QueryError; a bbox of any size is ranked (3 degrees are rule 2 of the API)', () => {
    const ok = { minLon: 20, minLat: 44, maxLon: 23, maxLat: 47 };
    const base: RefBuildingsQuery = { bbox: ok, sort: 'volume', limit: 10, offset: 0 };
    const refused = (q: RefBuildingsQuery) => {
      try {
        e.queryBuildings(view, asEngineQuery(q));
      } catch (err) {
        return err instanceof QueryError;
      }
      return false;
    };
    expect(refused({ ...base, offset: 9_991, limit: 10 })).toBe(true);
    expect(refused({ ...base, offset: 10_000, limit: 1 })).toBe(true);
    check(e, view, ref, { ...base, offset: 9_990, limit: 10 });
    check(e, view, ref, base);
    // OGC API items take any size: the whole country, the world, one across the antimeridian.
    for (const bbox of [
      { minLon: 19, minLat: 43, maxLon: 27, maxLat: 49 },
      { minLon: -180, minLat: -90, maxLon: 180, maxLat: 90 },
      { minLon: 23, minLat: 40, maxLon: 22, maxLat: 50 },
    ]) {
      check(e, view, ref, { ...base, bbox, limit: 100 });
      check(e, view, ref, { ...base, bbox, sort: 'height', offset: 4_000, limit: 100 });
    }
  });

  it('units and businesses: file order, pages, totals, unknown buildings', () => {
    const rng = new Rng(seedFor(30));
    const all = ref.flatMap((s) => s.buildings);
    const withUnits = all.filter((b) => b.units.length > 0);
    const withBusinesses = all.filter((b) => b.businesses.length > 1);
    const unknown = ['00000000-0000-5000-8000-000000000000', 'not-a-building', ''];
    let cases = 0;
    for (let i = 0; i < 300; i++) {
      const pick = rng.next();
      const id =
        pick < 0.4
          ? rng.pick(withUnits).building_id
          : pick < 0.8
            ? rng.pick(withBusinesses).building_id
            : pick < 0.95
              ? rng.pick(all).building_id
              : rng.pick(unknown);
      const limit = rng.pick([1, 2, 3, 5, 10, 25, 100]);
      const offset = rng.pick([0, 0, 1, 2, 5, 10, 29, 30, 31, 1000]);
      const what = `${id} limit=${limit} offset=${offset}`;
      const wantUnits = refListUnits(ref, id, limit, offset);
      const gotUnits = e.listUnits(view, id, limit, offset);
      if (wantUnits === undefined) expect(gotUnits, `units of ${what}`).toBeUndefined();
      else {
        expect(gotUnits, `units of ${what}`).toBeDefined();
        expect(gotUnits!.total, `units total of ${what}`).toBe(wantUnits.total);
        expect(gotUnits!.units.map(unitId), `unit ids of ${what}`).toEqual(wantUnits.units.map((u) => u.unit_id));
        expect(gotUnits!.units.map(plainChild), `units of ${what}`).toEqual(wantUnits.units);
      }
      const wantBusinesses = refListBusinesses(ref, id, limit, offset);
      const gotBusinesses = e.listBusinesses(view, id, limit, offset);
      if (wantBusinesses === undefined) expect(gotBusinesses, `businesses of ${what}`).toBeUndefined();
      else {
        expect(gotBusinesses, `businesses of ${what}`).toBeDefined();
        expect(gotBusinesses!.total, `businesses total of ${what}`).toBe(wantBusinesses.total);
        expect(gotBusinesses!.businesses.map(businessId), `business ids of ${what}`).toEqual(
          wantBusinesses.businesses.map((x) => x.business_id),
        );
        expect(gotBusinesses!.businesses.map(plainChild), `businesses of ${what}`).toEqual(wantBusinesses.businesses);
      }
      cases++;
    }
    expect(cases).toBe(300);
  });
});

/** A child record as the engine returns it, as a plain object with the snapshot's field names. */
function plainChild(x: unknown): unknown {
  const o = x as { toJSON?: () => unknown };
  return typeof o?.toJSON === 'function' ? o.toJSON() : { ...(x as object) };
}
const unitId = (x: any): unknown => x?.unit_id ?? x?.unitId;
const businessId = (x: any): unknown => x?.business_id ?? x?.businessId;

describe('GET /buildings on a synthetic country', () => {
  const e = engine;
  let dir: string | undefined;
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('agrees with the reference on random queries', async () => {
    dir = mkdtempSync(join(tmpdir(), 'edifice-diff-synth-'));
    const records: BuildingRecord[] = [];
    for await (const r of generateCountry({ seed: seedFor(3000) >>> 0, buildings: 15_000 })) records.push(r as BuildingRecord);
    await writeCountry(dir, 'XS', records);
    const catalog = e.openCatalog(dir);
    expect(catalog.log.filter((entry) => entry.level !== 'info')).toEqual([]);
    const view = catalog.view();
    expect(view.snapshots.length).toBe(1);
    const ref = decodeSnapshotDir(dir);
    const pool = poolOf(ref);
    await assertProperty(buildingsQueryArbitrary(pool, SORT_KEYS), (q) => check(e, view, ref, q), seedFor(40), RUNS_SYNTHETIC);
  });
});

// Keep the bbox arbitrary honest: it must produce every kind of box it promises.
describe('query arbitraries', () => {
  it('draw bboxes within 3 degrees and pages within the 10,000 window', () => {
    const pool = poolOf([
      {
        country: 'XA',
        snapshotDate: '2026-11-21',
        buildings: randomCountry({
          country: 'XA',
          seed: 1,
          lon0: 20,
          lon1: 24,
          lat0: 44,
          lat1: 48,
          clusters: 3,
          perCluster: 20,
          background: 20,
          sourcePrefix: 'arb',
        }).map((r) => ({ ...r, country: 'XA', footprint: [] })),
      },
    ]);
    fc.assert(
      fc.property(bboxArbitrary(pool), pageArbitrary, (b, p) => {
        expect(b.maxLon - b.minLon).toBeLessThanOrEqual(3);
        expect(b.maxLat - b.minLat).toBeLessThanOrEqual(3);
        expect(b.minLon).toBeLessThanOrEqual(b.maxLon);
        expect(p.offset + p.limit).toBeLessThanOrEqual(10_000);
        expect(p.limit).toBeGreaterThanOrEqual(1);
        expect(p.limit).toBeLessThanOrEqual(100);
        expect(p.offset).toBeGreaterThanOrEqual(0);
      }),
      { seed: seedFor(50), numRuns: 500 },
    );
  });
});
