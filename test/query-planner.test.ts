/**
 * The planner's choice of path for GET /buildings (src/query/choose.ts) on a synthetic country
 * large enough for bboxes on both sides of its size thresholds: a page with no filter takes the
 * best-first search from BEST_FIRST_UNFILTERED_MIN_ROWS candidates, a filtered one only from
 * BEST_FIRST_MIN_ROWS. The choice is only about time, so every page is also held against the
 * brute-force reference on every path. A walk with few matches over nodes the summaries decide
 * nothing of turns into the plain scan for the rest of its bbox (src/query/plain-rest.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BEST_FIRST_MIN_ROWS, BEST_FIRST_UNFILTERED_MIN_ROWS, choosePath, type Path } from '../src/query/choose.ts';
import { candidateRows, fitsInOneNode } from '../src/query/estimate.ts';
import { compile } from '../src/query/plan.ts';
import { SearchState } from '../src/query/search-state.ts';
import { withEveryField, type BBox, type BuildingsQuery } from '../src/query/types.ts';
import { writeSyntheticCountry } from '../src/synth/generate.ts';
import { loadEngine, type EngineView } from './reference/engine.ts';
import { capSides, checkBuildings } from './reference/queries.ts';
import { Rng } from './reference/random.ts';
import { decodeSnapshotDir, type RefBuildingsQuery, type RefSnapshot } from './reference/reference.ts';

const engine = loadEngine();
const st = new SearchState();
let dir: string;
let view: EngineView;
let ref: RefSnapshot[];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'edifice-planner-'));
  await writeSyntheticCountry({ seed: 11, buildings: 120_000, outDir: dir });
  view = engine.openCatalog(dir).view();
  ref = decodeSnapshotDir(dir);
}, 120_000);

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

function pathOf(q: RefBuildingsQuery): Path {
  const query = withEveryField(q as unknown as BuildingsQuery);
  st.start(
    query.offset + query.limit,
    view.snapshots.map((s) => s.ids),
  );
  const plans = view.snapshots.map((s) => compile(s, query));
  return choosePath(st, view.snapshots, plans, query);
}

/** A square bbox of `side` degrees around a building drawn at random (so on the settlements), capped to the world. */
function boxAround(rng: Rng, side: number): BBox {
  const b = ref[0].buildings[Math.floor(rng.next() * ref[0].buildings.length)];
  return capSides({
    minLon: b.longitude - side / 2,
    minLat: b.latitude - side / 2,
    maxLon: b.longitude + side / 2,
    maxLat: b.latitude + side / 2,
  });
}

describe('the planner: best-first from fewer candidates when the page has no filter', () => {
  it('an unfiltered page goes best-first from 49,152 candidates, a filtered one from 131,072; every page is exact', () => {
    expect(BEST_FIRST_UNFILTERED_MIN_ROWS).toBeLessThan(BEST_FIRST_MIN_ROWS);
    const rng = new Rng(7);
    const seen = new Map<string, number>();
    for (let n = 0; n < 60; n++) {
      const bbox = boxAround(rng, 0.05 + 3.5 * rng.next());
      const rows = candidateRows(st, view.snapshots, bbox);
      const limit = rng.pick([25, 100]);
      const sort = rng.pick(['volume', 'height', 'registered_business_employees'] as const);
      const bare: RefBuildingsQuery = { bbox, sort, limit, offset: 0 };
      const filtered: RefBuildingsQuery = { ...bare, minAreaM2: 40 };
      const one = fitsInOneNode(view.snapshots, bbox);
      // The rule, from the candidate count (held to the rows in the box by query-search.test.ts).
      expect(pathOf(bare), `${JSON.stringify(bare)}: ${rows} candidates`).toBe(
        !one && rows >= BEST_FIRST_UNFILTERED_MIN_ROWS ? 'best-first' : 'scan',
      );
      expect(pathOf(filtered), `${JSON.stringify(filtered)}: ${rows} candidates`).toBe(
        !one && rows >= BEST_FIRST_MIN_ROWS ? 'best-first' : 'walk',
      );
      const band = rows < BEST_FIRST_UNFILTERED_MIN_ROWS ? 'below' : rows < BEST_FIRST_MIN_ROWS ? 'between' : 'above';
      seen.set(band, (seen.get(band) ?? 0) + 1);
      checkBuildings(engine, view, ref, bare);
      checkBuildings(engine, view, ref, filtered);
    }
    // Bboxes on every side of both thresholds (the country holds fewer than 131,072 rows in all, so 'above' never).
    expect(seen.get('below')).toBeGreaterThan(5);
    expect(seen.get('between')).toBeGreaterThan(5);
  }, 120_000);
});

describe('the walk turns into the plain scan where it reads every row either way', () => {
  type Filters = Partial<RefBuildingsQuery>;
  const plainAfter = (q: RefBuildingsQuery, path: 'walk' | 'best-first'): string => {
    engine.queryBuildings(view, q as unknown as BuildingsQuery, { path, state: st });
    return st.plain;
  };

  it('few matches and no node of 4,096 rows decided: the rest is scanned, on both walks, and every page is exact', () => {
    const rng = new Rng(13);
    // Filters the summaries of 4,096 rows cannot decide (each keeps some rows of every such node)
    // that together keep few; one that keeps most rows (the count caps in most of these boxes);
    // a list the summaries rule out.
    const few: Filters[] = [{ minAreaM2: 200 }, { minAreaM2: 300, minHeightM: 15 }];
    const many: Filters[] = [{ minAreaM2: 40 }];
    const decided: Filters[] = [{ floodZone: ['high'] }];
    const scanned = { few: 0, many: 0, decided: 0 };
    for (let n = 0; n < 24; n++) {
      const bbox = boxAround(rng, 2.5 + rng.next());
      const sort = rng.pick(['volume', 'height', 'area'] as const);
      for (const [kind, sets] of [
        ['few', few],
        ['many', many],
        ['decided', decided],
      ] as const) {
        for (const f of sets) {
          const q: RefBuildingsQuery = { bbox, sort, limit: rng.pick([25, 100]), offset: rng.pick([0, 50]), ...f };
          for (const path of ['walk', 'best-first'] as const) if (plainAfter(q, path) === 'scanned') scanned[kind]++;
          checkBuildings(engine, view, ref, q);
        }
      }
    }
    expect(scanned.few).toBeGreaterThan(10);
    expect(scanned.many).toBeLessThan(scanned.few / 2);
    expect(scanned.decided).toBe(0);
  }, 120_000);

  it('a rest scanned plainly that passes 10,000 matches after the switch still ranks every row it reads, and every page is exact', () => {
    // An area floor keeping 15,000 of the box's 60,000 rows or more: the walk projects fewer than
    // FEW_MATCHES, goes plain while its count is open, and the count caps in the rest, which no
    // queue of nodes holds for a ranking.
    const rng = new Rng(19);
    let boxes = 0;
    let cappedAfter = 0;
    for (let tries = 0; boxes < 12 && tries < 200; tries++) {
      const bbox = boxAround(rng, 4 + rng.next());
      const areas = ref[0].buildings
        .filter((r) => r.longitude >= bbox.minLon && r.longitude <= bbox.maxLon && r.latitude >= bbox.minLat && r.latitude <= bbox.maxLat)
        .map((r) => r.footprint_area_m2)
        .sort((a, b) => b - a);
      if (areas.length < 60_000) continue;
      boxes++;
      const sort = rng.pick(['volume', 'height', 'area'] as const);
      const q: RefBuildingsQuery = { bbox, sort, limit: rng.pick([25, 100]), offset: rng.pick([0, 50]), minAreaM2: areas[15_000] };
      for (const path of ['walk', 'best-first'] as const) {
        const got = engine.queryBuildings(view, q as unknown as BuildingsQuery, { path, state: st });
        if (st.plain === 'scanned' && got.totalIsCapped) cappedAfter++;
      }
      checkBuildings(engine, view, ref, q);
    }
    expect(boxes).toBe(12);
    expect(cappedAfter).toBeGreaterThan(16);
  }, 120_000);
});

describe('the search finishes in row order where bounds cannot prune', () => {
  it('a height page under a volume cap that leaves out the tallest buildings is read in row order after its count, and every page is exact', () => {
    const rng = new Rng(17);
    const buildings = ref[0].buildings;
    let rowOrder = 0;
    for (let n = 0; n < 12; n++) {
      const bbox = boxAround(rng, 2 + rng.next());
      // A short page: the few matches that raise its threshold are what the blocks above it
      // seem to promise soonest, yet their bounds never fall below it.
      const q: RefBuildingsQuery = { bbox, sort: 'height', limit: 5, offset: 0, maxVolumeM3: rng.pick([300, 600]) };
      // The premise: every node's height bound covers its tallest building, which the cap leaves out.
      const inside = buildings.filter(
        (r) => r.longitude >= bbox.minLon && r.longitude <= bbox.maxLon && r.latitude >= bbox.minLat && r.latitude <= bbox.maxLat,
      );
      const tallest = Math.max(...inside.map((r) => r.height_m ?? -Infinity));
      const tallestKept = Math.max(
        ...inside.filter((r) => r.volume_m3 !== null && r.volume_m3 <= q.maxVolumeM3!).map((r) => r.height_m ?? -Infinity),
      );
      expect(tallestKept).toBeLessThan(tallest);
      const got = engine.queryBuildings(view, q as unknown as BuildingsQuery, { path: 'best-first', state: st });
      if (got.totalIsCapped && st.finish === 'row order') rowOrder++;
      checkBuildings(engine, view, ref, q);
    }
    expect(rowOrder).toBeGreaterThan(6);
  }, 120_000);
});
