/**
 * GET /buildings/at: the engine against the brute-force reference on varied outlines
 * (rectangles, concave stars, courtyards with holes, two-part multipolygons, L shapes, exact
 * twins), in two neighbouring countries, a third around 0°N 0°E (negative coordinates, and
 * the Float32 boxes of the index at their finest, where the engine's distance bounds are tightest)
 * and a fourth at 78°N. The reference measures with GeographicLib's geodesics (reference.ts).
 *
 * Replay: FC_SEED=<n> changes the seeds and the data, FC_PATH replays one counterexample,
 * FC_SHRINK=1 shrinks a failure.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blankRecord } from '../src/snapshot/record.ts';
import { loadEngine, type EngineView } from './reference/engine.ts';
import { randomPointCountry, writeCountry } from './reference/fixtures.ts';
import { assertProperty, checkPoint, seedFor } from './reference/queries.ts';
import { decodeSnapshotDir, refQueryPoint, type RefPointQuery, type RefSnapshot } from './reference/reference.ts';

const engine = loadEngine();

const RUNS = Number(process.env.DIFF_RUNS_POINT ?? 2000);
const M_PER_DEG_LAT = 111_320;

describe('GET /buildings/at: engine against the brute-force reference', () => {
  const e = engine;
  let dir: string;
  let view: EngineView;
  let ref: RefSnapshot[];
  let queries = 0;
  const started = Date.now();

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'edifice-diff-point-'));
    // PA and PB meet at 10.6°E; PB's clusters sit on the border.
    const a = randomPointCountry({
      country: 'PA',
      seed: seedFor(4000),
      lon0: 10,
      lon1: 10.6,
      lat0: 47,
      lat1: 47.5,
      clusters: 50,
      perCluster: 160,
      background: 0,
      sourcePrefix: 'diffp-pa',
    });
    const b = randomPointCountry({
      country: 'PB',
      seed: seedFor(5000),
      lon0: 10.6,
      lon1: 10.61,
      lat0: 47.1,
      lat1: 47.3,
      clusters: 8,
      perCluster: 120,
      background: 0,
      sourcePrefix: 'diffp-pb',
    });
    // Outlines that both countries list (a building on the border in both sources): ties across snapshots.
    for (let i = 0; i < b.length; i += Math.ceil(b.length / 40)) {
      a.push(blankRecord(`diffp-border:${i}`, b[i].longitude, b[i].latitude, { footprint: b[i].footprint }));
    }
    const c = randomPointCountry({
      country: 'PC',
      seed: seedFor(6000),
      lon0: -0.02,
      lon1: 0.02,
      lat0: -0.02,
      lat1: 0.02,
      clusters: 6,
      perCluster: 120,
      background: 0,
      sourcePrefix: 'diffp-pc',
    });
    // Svalbard's latitude, where the frame leaves its expansion for the exact tangent plane.
    const d = randomPointCountry({
      country: 'PD',
      seed: seedFor(7000),
      lon0: 15.5,
      lon1: 15.7,
      lat0: 78.1,
      lat1: 78.3,
      clusters: 6,
      perCluster: 120,
      background: 0,
      sourcePrefix: 'diffp-pd',
    });
    await writeCountry(dir, 'PA', a);
    await writeCountry(dir, 'PB', b);
    await writeCountry(dir, 'PC', c);
    await writeCountry(dir, 'PD', d);
    const catalog = e.openCatalog(dir);
    expect(catalog.log.filter((entry) => entry.level !== 'info')).toEqual([]);
    view = catalog.view();
    expect(view.snapshots.length).toBe(4);
    ref = decodeSnapshotDir(dir);
  });

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
    console.info(
      `query-differential-point: ${queries} GET /buildings/at queries compared in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
  });

  function pointArbitrary(): fc.Arbitrary<RefPointQuery> {
    const all = ref.flatMap((s) => s.buildings);
    const building = fc.nat({ max: all.length - 1 }).map((i) => all[i]);
    const at = fc.oneof(
      // a representative point: inside its own outline, often near others
      { weight: 3, arbitrary: building.map((b) => [b.longitude, b.latitude] as const) },
      // exactly on a vertex
      {
        weight: 2,
        arbitrary: fc.tuple(building, fc.nat()).map(([b, k]) => {
          const ring = b.footprint[k % b.footprint.length][0];
          const v = (k >> 3) % (ring.length / 2);
          return [ring[2 * v], ring[2 * v + 1]] as const;
        }),
      },
      // the middle of the outline's box: inside a courtyard's hole, between two parts, in a star's notch
      {
        weight: 2,
        arbitrary: building.map((b) => {
          const xs = b.footprint.flatMap((p) => p[0].filter((_, i) => i % 2 === 0));
          const ys = b.footprint.flatMap((p) => p[0].filter((_, i) => i % 2 === 1));
          return [(Math.min(...xs) + Math.max(...xs)) / 2, (Math.min(...ys) + Math.max(...ys)) / 2] as const;
        }),
      },
      // some metres away in some direction
      {
        weight: 4,
        arbitrary: fc
          .tuple(building, fc.double({ min: 0, max: 260, noNaN: true }), fc.double({ min: 0, max: 2 * Math.PI, noNaN: true }))
          .map(([b, d, a]) => {
            const mPerDegLon = M_PER_DEG_LAT * Math.cos((b.latitude * Math.PI) / 180);
            return [b.longitude + (d * Math.cos(a)) / mPerDegLon, b.latitude + (d * Math.sin(a)) / M_PER_DEG_LAT] as const;
          }),
      },
      // on the border of the two countries
      { weight: 1, arbitrary: fc.double({ min: 47.1, max: 47.3, noNaN: true }).map((lat) => [10.6, lat] as const) },
      // anywhere in the area, mostly empty
      {
        weight: 1,
        arbitrary: fc
          .tuple(fc.double({ min: 10, max: 10.61, noNaN: true }), fc.double({ min: 47, max: 47.5, noNaN: true }))
          .map(([lon, lat]) => [lon, lat] as const),
      },
      // far from everything
      {
        weight: 1,
        arbitrary: fc
          .tuple(fc.double({ min: -180, max: 180, noNaN: true }), fc.double({ min: -80, max: 80, noNaN: true }))
          .map(([lon, lat]) => [lon, lat] as const),
      },
    );
    const radius = fc.oneof(
      fc.constant(1),
      fc.constant(200),
      fc.constant(25),
      fc.integer({ min: 1, max: 200 }),
      fc.double({ min: 1, max: 200, noNaN: true }),
      fc.double({ min: 1, max: 5, noNaN: true }),
    );
    const limit = fc.oneof(fc.integer({ min: 1, max: 25 }), fc.constant(25), fc.constant(1), fc.constant(10));
    return fc.tuple(at, radius, limit).map(([[lon, lat], radiusM, lim]) => ({ lon, lat, radiusM, limit: lim }));
  }

  it('random points, radii and limits', async () => {
    let nonEmpty = 0;
    let full = 0;
    await assertProperty(
      pointArbitrary(),
      (q) => {
        queries++;
        const r = refQueryPoint(ref, q);
        if (r.rows.length > 0) nonEmpty++;
        if (r.all.length > q.limit) full++;
        checkPoint(e, view, ref, q);
      },
      seedFor(60),
      RUNS,
    );
    // The property exercised both sparse answers and answers cut by the limit.
    expect(nonEmpty).toBeGreaterThan(RUNS / 2);
    expect(full).toBeGreaterThan(RUNS / 10);
  });

  it('twins at equal distance are ordered by building_id, across countries too', () => {
    const all = ref.flatMap((s) => s.buildings);
    const byOutline = new Map<string, string[]>();
    for (const b of all) {
      const key = JSON.stringify(b.footprint);
      byOutline.set(key, [...(byOutline.get(key) ?? []), b.building_id]);
    }
    const twins = all.filter((b) => byOutline.get(JSON.stringify(b.footprint))!.length > 1);
    expect(twins.length).toBeGreaterThan(20);
    for (const b of twins.slice(0, 200)) {
      for (const q of [
        { lon: b.longitude, lat: b.latitude, radiusM: 1, limit: 2 },
        { lon: b.longitude + 0.0004, lat: b.latitude, radiusM: 200, limit: 25 },
      ]) {
        queries++;
        checkPoint(e, view, ref, q);
      }
    }
  });
});
