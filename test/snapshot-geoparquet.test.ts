/**
 * GeoParquet export, read back by DuckDB (Parquet with no extension) and compared with the
 * snapshot as flechette, an independent Arrow reader, decodes it: counts, a sum of areas, child
 * records, and outlines coordinate for coordinate.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tableFromIPC } from '@uwdata/flechette';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { SnapshotWriter } from '../src/snapshot/writer.ts';
import { blankRecord } from '../src/snapshot/record.ts';
import { writeSyntheticCountry } from '../src/synth/generate.ts';
import { writeGeoParquet } from '../src/snapshot/geoparquet.ts';

const dir = mkdtempSync(join(tmpdir(), 'edifice-geoparquet-'));
let duck: DuckDBConnection;
beforeAll(async () => {
  duck = await (await DuckDBInstance.create(':memory:')).connect();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function rows(sql: string): Promise<unknown[][]> {
  return (await duck.runAndReadAll(sql)).getRowsJson() as unknown[][];
}

/** Every number of a WKT text, in order. */
function numbersOf(wkt: string): number[] {
  return (wkt.match(/-?\d+(\.\d+)?(e-?\d+)?/gi) ?? []).map(Number);
}

/** Every coordinate of a flechette footprint value (polygons of rings of [x, y]), in order. */
function coordinatesOf(footprint: unknown): number[] {
  const out: number[] = [];
  for (const polygon of footprint as unknown[][]) {
    for (const ring of polygon as unknown[][]) for (const p of ring as ArrayLike<number>[]) out.push(p[0], p[1]);
  }
  return out;
}

describe('GeoParquet export', () => {
  it('holds a synthetic country as the Arrow file does: count, areas, child records, outlines', async () => {
    const written = await writeSyntheticCountry({ seed: 7, buildings: 3000, outDir: dir });
    const out = join(dir, 'XA.parquet');
    const result = writeGeoParquet(written.path, out);
    const arrow = tableFromIPC(readFileSync(written.path), { useDate: false });
    const file = `'${out}'`;

    expect(result.rows).toBe(3000);
    const areas = arrow.getChild('footprint_area_m2').toArray() as Float64Array;
    const [[count, area]] = await rows(`select count(*), sum(footprint_area_m2) from read_parquet(${file})`);
    expect(Number(count)).toBe(3000);
    expect(Number(area)).toBeCloseTo(
      areas.reduce((a, b) => a + b, 0),
      6,
    );

    // Child records: the units of every building, counted both ways.
    const units = arrow.getChild('units').toArray() as unknown[][];
    const [[unitCount]] = await rows(`select sum(len(units)) from read_parquet(${file})`);
    expect(Number(unitCount)).toBe(units.reduce((n, u) => n + u.length, 0));

    // A few rows in full: id, dictionary values, nullable numbers, the outline.
    const ids = arrow.getChild('building_id').toArray() as string[];
    const category = arrow.getChild('category').toArray() as string[];
    const height = arrow.getChild('height_m').toArray() as (number | null)[];
    const footprint = arrow.getChild('footprint');
    for (const i of [0, 1, 1499, 2999]) {
      const [[cat, h, wkt]] = await rows(
        `select category, height_m, geometry::varchar from read_parquet(${file}) where building_id = '${ids[i]}'`,
      );
      expect(cat).toBe(category[i]);
      expect(h === null ? null : Number(h)).toBe(height[i]);
      expect(String(wkt)).toMatch(/^MULTIPOLYGON \(\(\(/);
      expect(numbersOf(String(wkt))).toEqual(coordinatesOf(footprint.at(i)));
    }
  });

  it('writes many batches, outlines with holes and several parts, and the geo and source metadata', async () => {
    // A ring as records hold it: interleaved x, y, closed.
    const square = (x: number, y: number, s: number) => [x, y, x + s, y, x + s, y + s, x, y + s, x, y];
    const records = [];
    for (let i = 0; i < 25; i++) {
      const lon = 9.5 + (i % 5) * 0.001;
      const lat = 47.1 + Math.floor(i / 5) * 0.001;
      records.push(
        blankRecord(`test:${i}`, lon + 0.00005, lat + 0.00005, {
          footprint:
            i === 7
              ? [[square(lon, lat, 0.0002), square(lon + 0.00005, lat + 0.00005, 0.00005)], [square(lon + 0.0003, lat, 0.0001)]]
              : [[square(lon, lat, 0.0001)]],
        }),
      );
    }
    const sources = [{ name: 'OpenStreetMap', licence: 'ODbL-1.0', attribution: '© OpenStreetMap contributors', retrieved: '2026-11-21' }];
    const w = new SnapshotWriter({ country: 'LI', snapshotDate: '2026-11-21', sources, batchRows: 4 });
    for (const r of records) w.add(r);
    const written = await w.finish(join(dir, 'LI', '2026-11-21.arrow'));
    const out = join(dir, 'LI.parquet');
    const result = writeGeoParquet(written.path, out);
    const file = `'${out}'`;

    const [[wkt]] = await rows(`select geometry::varchar from read_parquet(${file}) where source_id = 'test:7'`);
    const lon = 9.5 + 2 * 0.001,
      lat = 47.1 + 1 * 0.001;
    // Two polygons, the first with a hole: written out by hand from the record above.
    const expected = [...square(lon, lat, 0.0002), ...square(lon + 0.00005, lat + 0.00005, 0.00005), ...square(lon + 0.0003, lat, 0.0001)];
    // The structure with each point written as p: the first polygon's exterior and hole, then the second.
    const p5 = 'p, p, p, p, p';
    expect(String(wkt).replace(/-?[\d.]+(e-?\d+)? -?[\d.]+(e-?\d+)?/g, 'p')).toBe(`MULTIPOLYGON (((${p5}), (${p5})), ((${p5})))`);
    expect(numbersOf(String(wkt))).toEqual(expected);
    expect(Number((await rows(`select count(*) from read_parquet(${file})`))[0][0])).toBe(25);

    const meta = new Map(
      (await rows(`select key::varchar, decode(value) from parquet_kv_metadata(${file})`)).map(([k, v]) => [String(k), String(v)]),
    );
    const geo = JSON.parse(meta.get('geo')!);
    expect(geo).toMatchObject({
      version: '1.1.0',
      primary_column: 'geometry',
      columns: { geometry: { encoding: 'WKB', geometry_types: ['MultiPolygon'] } },
    });
    // The extent of every coordinate: the first square's corner to the last square's far corner.
    expect(geo.columns.geometry.bbox).toEqual([9.5, 47.1, 9.5 + 4 * 0.001 + 0.0001, 47.1 + 4 * 0.001 + 0.0001]);
    expect(result.bbox).toEqual(geo.columns.geometry.bbox);
    expect(JSON.parse(meta.get('edifice.sources')!)).toEqual(sources);
    expect(meta.get('edifice.country')).toBe('LI');
    // DuckDB itself recognises the column as a geometry in CRS84 from the geo metadata.
    const [[type]] = await rows(`select typeof(geometry) from read_parquet(${file}) limit 1`);
    expect(String(type)).toMatch(/GEOMETRY/);
  });

  it('npm run export:geoparquet writes the file beside the snapshot, and refuses with exit 1 or 2', async () => {
    const written = await writeSyntheticCountry({ seed: 3, buildings: 1000, outDir: join(dir, 'cli') });
    const run = (...args: string[]) =>
      spawnSync(process.execPath, ['--import', 'tsx', 'tools/export-geoparquet.ts', ...args], { encoding: 'utf8' });
    const ok = run(written.path);
    expect(ok.status).toBe(0);
    const out = written.path.replace(/\.arrow$/, '.parquet');
    expect(ok.stdout).toBe(`${out}: 1,000 buildings, ${readFileSync(out).length.toLocaleString('en')} bytes\n`);
    expect(Number((await rows(`select count(*) from read_parquet('${out}')`))[0][0])).toBe(1000);
    const missing = run(join(dir, 'XA', '1999-01-01.arrow'));
    expect([missing.status, missing.stderr]).toEqual([1, expect.stringMatching(/refused: cannot read file/)]);
    expect(run().status).toBe(2);
    expect(run('a.parquet').stderr).toMatch(/not a snapshot file/);
  });

  it('refuses a snapshot the server would refuse, and writes nothing', async () => {
    const out = join(dir, 'missing.parquet');
    expect(() => writeGeoParquet(join(dir, 'nope.arrow'), out)).toThrow(/cannot read file/);
    expect(existsSync(out)).toBe(false);
  });
});
