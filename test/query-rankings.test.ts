/**
 * Rankings kept for paging walks (src/query/rankings.ts) against the brute-force reference:
 * every page of random walks (forward, back, repeated, jumping past the kept depth) is the page
 * the reference cuts from its whole order, with the same total; refusals are the engine's own;
 * a ranking never answers for another view.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Catalog, type CatalogView } from '../src/catalog/catalog.ts';
import { queryBuildings } from '../src/query/buildings.ts';
import { RankingCache } from '../src/query/rankings.ts';
import { SearchState } from '../src/query/search-state.ts';
import { QueryError, SORT_KEYS, type BuildingsQuery } from '../src/query/types.ts';
import { randomCountry, writeCountry } from './reference/fixtures.ts';
import { Rng } from './reference/random.ts';
import { breathe, buildingsQueryArbitrary, pageOf, poolOf, seedFor, type Pool } from './reference/queries.ts';
import { decodeSnapshotDir, refQueryBuildings, type RefBuildingsQuery, type RefSnapshot } from './reference/reference.ts';

/** One search state for every ranked query here, as a serving thread has. */
const search = new SearchState();

const WALKS = Number(process.env.RANKING_WALKS ?? 120);

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

async function country(seed: number): Promise<{ view: CatalogView; ref: RefSnapshot[]; pool: Pool }> {
  const dir = mkdtempSync(join(tmpdir(), 'edifice-rankings-'));
  dirs.push(dir);
  const records = randomCountry({
    country: 'XA',
    seed,
    lon0: 20,
    lon1: 23,
    lat0: 44,
    lat1: 47,
    clusters: 50,
    perCluster: 400,
    background: 4000,
    sourcePrefix: `rank-${seed}`,
  });
  await writeCountry(dir, 'XA', records);
  const view = Catalog.open(dir, { log: () => {} }).view();
  const ref = decodeSnapshotDir(dir);
  return { view, ref, pool: poolOf(ref) };
}

/** The ids, total and cap flag of an answer, to compare with the reference's page. */
function answer(result: ReturnType<typeof queryBuildings>) {
  return { ids: result.rows.map((r) => r.snapshot.buildingId(r.row)), total: result.total, capped: result.totalIsCapped };
}

describe('RankingCache', () => {
  let a: Awaited<ReturnType<typeof country>>;
  beforeAll(async () => {
    a = await country(seedFor(3100));
  });

  it("every page of random walks is the page of the reference's whole order, with its total", async () => {
    const queries = fc.sample(buildingsQueryArbitrary(a.pool, SORT_KEYS, 3), { seed: seedFor(3101), numRuns: WALKS });
    const rng = new Rng(seedFor(3102));
    const cache = new RankingCache(8 * 1024 * 1024);
    let pages = 0;
    let deepest = 0;
    for (const base of queries) {
      const all = refQueryBuildings(a.ref, { ...base, offset: 0, limit: Number.MAX_SAFE_INTEGER });
      const limit = rng.int(1, 100);
      let offset = 0;
      for (let step = 0; step < 40; step++) {
        const r = rng.next();
        if (r < 0.7)
          offset += limit; // the next page
        else if (r < 0.8)
          offset = Math.max(0, offset - rng.int(1, 3) * limit); // back
        else if (r < 0.9) offset += rng.int(5, 60) * limit; // far ahead, past what is kept
        // else: the same page again
        offset = Math.min(offset, 10_000 - limit);
        const q = { ...base, offset, limit } as RefBuildingsQuery;
        const want = pageOf(all, q);
        expect(answer(cache.query(a.view, q as unknown as BuildingsQuery, search)), JSON.stringify(q)).toEqual({
          ids: want.ids,
          total: want.total,
          capped: want.totalIsCapped,
        });
        pages++;
        deepest = Math.max(deepest, offset);
        if (offset >= Math.min(all.total, 10_000 - limit)) break;
      }
      await breathe();
    }
    expect(pages).toBeGreaterThan(WALKS * 5);
    expect(deepest).toBeGreaterThan(5_000);
    expect(cache.hits).toBeGreaterThan(pages / 3); // the kept rankings really answered
  });

  it('a walk of P pages ranks about log2(P) times, each page the same as a query of its own', () => {
    const cache = new RankingCache(8 * 1024 * 1024);
    const base: BuildingsQuery = { bbox: { minLon: 20, minLat: 44, maxLon: 23, maxLat: 47 }, sort: 'volume', offset: 0, limit: 100 };
    let pages = 0;
    for (let offset = 0; offset + 100 <= 10_000; offset += 100) {
      const q = { ...base, offset };
      expect(answer(cache.query(a.view, q, search))).toEqual(answer(queryBuildings(a.view, q)));
      pages++;
    }
    expect(pages).toBe(100);
    // Misses at offsets 100 (ranked to 200), 200 (to 600), 600 (1,400), 1,400 (3,000), 3,000 (6,200), 6,200 (10,000).
    expect(cache.misses).toBe(6);
    expect(cache.hits).toBe(pages - 1 - 6);
  });

  it('with no bytes (EDIFICE_RANKING_CACHE_MB=0) every page is ranked alone, and nothing is counted', () => {
    const none = new RankingCache(0);
    const bbox = { minLon: 20, minLat: 44, maxLon: 23, maxLat: 47 };
    for (const offset of [100, 200, 300, 200]) {
      const q: BuildingsQuery = { bbox, sort: 'volume', offset, limit: 100 };
      expect(answer(none.query(a.view, q, search))).toEqual(answer(queryBuildings(a.view, q)));
    }
    expect([none.hits, none.misses, none.size]).toEqual([0, 0, 0]);
  });

  it("refuses what the engine refuses, in its words, and never answers one view from another's ranking", async () => {
    const cache = new RankingCache(8 * 1024 * 1024);
    const bbox = { minLon: 20, minLat: 44, maxLon: 23, maxLat: 47 };
    const tooDeep: BuildingsQuery = { bbox, sort: 'height', offset: 9_950, limit: 100 };
    const message = (() => {
      try {
        queryBuildings(a.view, tooDeep);
      } catch (err) {
        return err;
      }
      return null;
    })();
    expect(message).toBeInstanceOf(QueryError);
    for (let i = 0; i < 2; i++) expect(() => cache.query(a.view, tooDeep, search)).toThrow((message as Error).message);
    expect(() => cache.query(a.view, { ...tooDeep, offset: 100, sort: 'nope' as never }, search)).toThrow(QueryError);

    // One bbox, walked in turn under every sort and two values of a filter: each its own ranking.
    const variants: BuildingsQuery[] = SORT_KEYS.flatMap((sort) =>
      [{}, { minHeightM: 6 }, { minHeightM: 7 }].map((f) => ({
        bbox,
        sort,
        offset: 0,
        limit: 50,
        registeredBusinessTurnoverCurrency: a.pool.currencies[0],
        ...f,
      })),
    );
    for (const offset of [50, 100, 150, 100]) {
      for (const v of variants) {
        const q = { ...v, offset };
        expect(answer(cache.query(a.view, q, search)), JSON.stringify(q)).toEqual(answer(queryBuildings(a.view, q)));
      }
    }

    // Another country with the same query: its own answers, though the first one's are kept.
    const b = await country(seedFor(3200));
    for (const offset of [100, 200, 300, 200]) {
      const q = { bbox, sort: 'area' as const, offset, limit: 100 };
      for (const c of [a, b]) {
        const want = pageOf(refQueryBuildings(c.ref, { ...q, offset: 0, limit: Number.MAX_SAFE_INTEGER }), q);
        expect(answer(cache.query(c.view, q, search))).toEqual({ ids: want.ids, total: want.total, capped: want.totalIsCapped });
      }
    }
  });
});
