/**
 * The bench's PostGIS peer (bench/postgis.ts): its load and its SQL for every class of the
 * bench's mix, on a small synthetic country in a throwaway PostgreSQL with the postgis
 * extension, against the brute-force reference (test/reference/reference.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeColumns, type BenchColumns } from '../bench/columns.ts';
import { snapshotFiles } from '../bench/dataset.ts';
import { CLASSES, makeMix } from '../bench/mix.ts';
import { PostgisEngine, loadPostgis } from '../bench/postgis.ts';
import { MAX_BBOX_SIDE_DEG } from '../src/query/types.ts';
import { writeSyntheticCountry } from '../src/synth/generate.ts';
import { decodeSnapshotDir, refQueryBuildings, refQueryPoint, type RefBuildingsQuery, type RefSnapshot } from './reference/reference.ts';
import { startPostgres, type TestPostgres } from './services/postgres.ts';

describe('bench: the PostGIS peer against the brute-force reference', () => {
  let dir: string;
  let pg: TestPostgres;
  let columns: BenchColumns;
  let ref: RefSnapshot[];
  let engine: PostgisEngine;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'edifice-bench-postgis-'));
    // 3x2 degrees, so that the widest box holds every building.
    await writeSyntheticCountry({ seed: 3, buildings: 20_000, bounds: [20, 44, 23, 46], outDir: dir });
    const [file] = snapshotFiles(dir);
    columns = decodeColumns(file);
    ref = decodeSnapshotDir(dir);
    pg = await startPostgres();
    const load = await loadPostgis(pg.url, columns, 'test country', () => {});
    expect(load).toMatchObject({ reused: false, businesses: columns.bizRow.length });
    engine = await PostgisEngine.connect(pg.url);
  }, 180_000);

  afterAll(async () => {
    await engine?.close();
    pg?.destroy();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('answers every class of the mix as the reference does: ids in order, the capped total', async () => {
    const { queries } = makeMix(columns, 7, 0.3);
    // And the widest box a query may ask for, over the whole country, no filter: a total past the cap.
    const bbox = { minLon: 20, minLat: 44, maxLon: 20 + MAX_BBOX_SIDE_DEG, maxLat: 44 + MAX_BBOX_SIDE_DEG };
    queries.push({ cls: 'heavy-3x3', kind: 'buildings', q: { bbox, sort: 'volume', limit: 25, offset: 9_975 } });
    let capped = 0;
    let pointRows = 0;
    const seen = new Set<string>();
    for (const [i, m] of queries.entries()) {
      seen.add(m.cls);
      const got = engine.answer(await engine.run(m));
      if (m.kind === 'buildings') {
        const want = refQueryBuildings(ref, m.q as unknown as RefBuildingsQuery);
        expect(got, `#${i} ${m.cls} ${JSON.stringify(m.q)}`).toEqual({ ids: want.ids, total: want.total, capped: want.totalIsCapped });
        if (want.totalIsCapped) capped++;
      } else {
        const want = refQueryPoint(ref, m.q).rows.map((r) => r.id);
        expect(got.ids, `#${i} ${m.cls} ${JSON.stringify(m.q)}`).toEqual(want);
        pointRows += want.length;
      }
    }
    // The mix reached what it is meant to: every class, totals past the cap, points with answers.
    expect([...seen].sort()).toEqual(CLASSES.map((c) => c.name).sort());
    expect(capped).toBeGreaterThan(0);
    expect(pointRows).toBeGreaterThan(0);
  }, 180_000);

  it('reuses a load of the same snapshot instead of loading it again', async () => {
    const again = await loadPostgis(pg.url, columns, 'test country', () => {});
    expect(again).toMatchObject({ reused: true, seconds: 0, businesses: columns.bizRow.length });
    expect(again.bytes).toBeGreaterThan(0);
  });
});
