/**
 * Seismic-risk lists joined onto outlines. The outlines are synthetic 10 m squares drawn
 * around real rows of three lists with three column layouts (Bucharest snake_case, the county
 * Title Case layout of Iași, Dolj); the snapshot is built by the CLI and read back.
 *
 * The rows were picked with Python's csv module so that no other row of those lists lies
 * within 40 m of them; the expected values are the rows' cells as the files state them.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSnapshot } from '../src/snapshot/reader.ts';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const LISTS = fileURLToPath(new URL('./fixtures/ro-seismic/', import.meta.url));

function cli(args: string[]) {
  return spawnSync(process.execPath, ['--import', 'tsx', 'tools/build-snapshot.ts', ...args], { cwd: REPO, encoding: 'utf8' });
}

/** A square of `size` metres centred `eastM` metres east of (lon, lat), as a GeoJSON ring. */
function square(lon: number, lat: number, size = 10, eastM = 0): number[][] {
  const dLat = size / 2 / 111_132;
  const mPerLon = 111_320 * Math.cos((lat * Math.PI) / 180);
  const cx = lon + eastM / mPerLon;
  const dLon = size / 2 / mPerLon;
  return [
    [cx - dLon, lat - dLat],
    [cx + dLon, lat - dLat],
    [cx + dLon, lat + dLat],
    [cx - dLon, lat + dLat],
    [cx - dLon, lat - dLat],
  ];
}

// [outline id, lon, lat, metres east of the row's point]
const OUTLINES: [string, number, number, number][] = [
  ['w1', 26.100066, 44.445136, 0], // bucuresti.csv line 8
  ['w2', 26.1034023, 44.4381416, 0], // line 29
  ['w3', 26.0954791, 44.4356228, 0], // line 430, a record spanning three lines
  ['w4', 26.1032968, 44.4314415, 0], // line 863, consolidated
  ['w5', 26.1154497, 44.4517736, 0], // line 1314, demolished
  ['w6', 26.077852, 44.440991, 0], // line 1328, class U4
  ['w7', 26.14797164, 44.443101, 0], // line 1610, class N/A
  ['w8', 26.0894497, 44.434709, 10], // line 642: the point is 5 m west of this outline
  ['w9', 26.086823, 44.458903, 25], // line 1002: 20 m away, too far
  ['w10', 27.5802418, 47.1539002, 0], // iasi.csv line 2
  ['w11', 23.8534718, 44.312532, 0], // dolj.csv line 2
  ['w12', 26.0888272, 44.4573047, 0], // bucuresti.csv line 591: class N/A, no year of any kind
];

const COUNTY_MAPPING = JSON.stringify({
  lat: 'Lat',
  lon: 'Lng',
  class: 'Risk Category',
  year_built: 'Year Built',
  height_regime: 'Height Regime',
  apartments: 'Apartment Count',
  exam_year: 'Examination Year',
  address: 'Address',
  number: 'Street Number',
  locality: 'Locality',
});

let dir: string;
let rows: Map<string, Record<string, any>>;
let stdout: string;
let sources: unknown[];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'edifice-build-seismic-'));
  const outlines = join(dir, 'outlines.geojsonseq');
  writeFileSync(
    outlines,
    OUTLINES.map(
      ([id, lon, lat, east]) =>
        `\x1e${JSON.stringify({
          type: 'Feature',
          id,
          geometry: { type: 'Polygon', coordinates: [square(lon, lat, 10, east)] },
          properties: { building: 'yes' },
        })}\n`,
    ).join(''),
  );
  const out = join(dir, 'RO.arrow');
  const run = cli([
    '--country',
    'RO',
    '--date',
    '2026-11-21',
    '--buildings',
    outlines,
    '--out',
    out,
    '--seismic',
    join(LISTS, 'expertiza-bucuresti.csv'),
    '--seismic',
    join(LISTS, 'expertiza-iasi.csv'),
    '--seismic',
    join(LISTS, 'expertiza-dolj.csv'),
    '--seismic-columns',
    'auto',
    '--seismic-columns',
    COUNTY_MAPPING,
    '--seismic-columns',
    'dolj',
  ]);
  // Only progress lines and the closing line: no warning, no error.
  expect(run.stderr.split('\n').filter((l) => l !== '' && !/^build-snapshot: ([\d.]+ s |built \d+ buildings)/.test(l))).toEqual([]);
  expect(run.status).toBe(0);
  stdout = run.stdout;
  const { table, metadata } = readSnapshot(out);
  sources = metadata.sources;
  rows = new Map();
  for (let i = 0; i < table.numRows; i++) {
    const r = table.get(i)!.toJSON() as Record<string, any>;
    rows.set(r.source_id, { ...r, entrances: [...r.entrances].map((e: any) => e.toJSON()) });
  }
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const seismic = (id: string) => {
  const r = rows.get(`osm:way/${id.slice(1)}`)!;
  return {
    class: r.seismic_risk_class,
    examined: r.seismic_risk_assessment_year,
    built: r.construction_year,
    floors: r.floors,
    all: r.floors_including_underground,
    dwellings: r.dwellings,
  };
};

describe('seismic lists joined to outlines', () => {
  it('writes every outline and names every list among the sources', () => {
    expect(rows.size).toBe(OUTLINES.length);
    expect(sources).toHaveLength(4);
  });

  it('takes class, examination year, year built, floors and dwellings from the row inside the outline', () => {
    expect(seismic('w1')).toEqual({ class: 'RsI', examined: 1997, built: 1935, floors: 8, all: 8, dwellings: 18 }); // P+7E
    expect(seismic('w2')).toEqual({ class: 'RsI', examined: 2015, built: 1934, floors: 4, all: 7, dwellings: 0 }); // 2S+Ds+P+3E+Pod
    expect(seismic('w3')).toEqual({ class: 'RsII', examined: 2017, built: 1925, floors: 4, all: 5, dwellings: 10 }); // S+P+2E S+P+Ma S+P+3E
    expect(seismic('w10')).toEqual({ class: 'U1', examined: 1993, built: 1964, floors: 5, all: 5, dwellings: 90 }); // P+4E
    expect(seismic('w11')).toEqual({ class: 'RsIII', examined: 2008, built: 1933, floors: 2, all: 2, dwellings: null }); // P+1E, no apartment column
  });

  it('maps consolidated, N/A and unknown classes, and drops demolished buildings', () => {
    expect(seismic('w4')).toEqual({ class: 'consolidated', examined: 1993, built: 1920, floors: 4, all: 5, dwellings: 0 });
    expect(seismic('w7')).toEqual({ class: null, examined: 1993, built: 1979, floors: 11, all: 12, dwellings: null });
    expect(seismic('w6')).toEqual({ class: null, examined: 1993, built: 1929, floors: 2, all: 3, dwellings: 0 });
    expect(seismic('w5')).toEqual({ class: null, examined: null, built: null, floors: null, all: null, dwellings: null });
    expect(stdout).toMatch(/unknown_risk_class: 1\n\s+e\.g\. expertiza-bucuresti\.csv:1328: risk class "U4"/);
    expect(stdout).toMatch(/seismic_demolished: 10\b/); // DEMOLISHED rows: 7 in the Bucharest list, 3 in Dolj's
  });

  it('joins a point just outside an outline (within 15 m) and not one farther away', () => {
    expect(seismic('w8')).toMatchObject({ class: 'U2', examined: 1993, built: 1900, floors: 5, all: 6 });
    expect(seismic('w9')).toMatchObject({ class: null, examined: null });
    const joined = /seismic rows (\d+)\/(\d+)/.exec(stdout)!;
    expect(Number(joined[1])).toBe(10);
    const unmatched = /seismic_unmatched: (\d+)/.exec(stdout)!;
    expect(Number(unmatched[1])).toBe(Number(joined[2]) - 10);
  });

  it('marks every building a list names as listed, even with class N/A and no year', () => {
    expect(seismic('w12')).toEqual({ class: null, examined: null, built: null, floors: null, all: null, dwellings: null });
    expect(rows.get('osm:way/12')).toMatchObject({ seismic_listed: true, address: 'Aleea MODROGAN 14 (tronson III)' });
    expect(rows.get('osm:way/7')!.seismic_listed).toBe(true);
    // Too far from its row (w9), demolished (w5): on no list.
    expect(rows.get('osm:way/9')!.seismic_listed).toBe(false);
    expect(rows.get('osm:way/5')!.seismic_listed).toBe(false);
  });

  it("gives the listed address as an address record and the list's locality", () => {
    const r = rows.get('osm:way/2')!;
    expect(r).toMatchObject({
      address: 'Strada BATISTE 14',
      address_evidence: 'address_record',
      address_corroboration: 'single_source',
      locality: 'Sector 2',
    });
    expect(r.entrances).toEqual([
      { address: 'Strada BATISTE 14', house_number: '14', postal_code: null, source: 'ro-seismic:expertiza-bucuresti.csv:29' },
    ]);
    expect(rows.get('osm:way/10')).toMatchObject({ address: 'Soseaua Nationala 184, bl.A1', locality: 'Iasi' });
    // Dolj writes the number inside the address: no house number, so no corroboration.
    expect(rows.get('osm:way/11')).toMatchObject({
      address: 'Str. Calea Bucureşti, nr. 126',
      address_corroboration: null,
      locality: 'Craiova',
    });
    expect(rows.get('osm:way/5')).toMatchObject({ address: null, address_evidence: 'none', locality: '' });
  });

  it('estimates height, volume and floor area from the floors of the regime', () => {
    const r = rows.get('osm:way/1')!;
    expect(r.footprint_area_m2).toBeGreaterThan(99);
    expect(r.footprint_area_m2).toBeLessThan(101);
    expect(r).toMatchObject({
      height_basis: 'estimated',
      volume_basis: 'estimated',
      floor_area_basis: 'estimated',
      floor_area_scope: 'gross_above_ground',
    });
    expect(r.height_m).toBeCloseTo(8 * 3 + 1.5, 9); // 8 storeys of 3 m and a roof of unknown shape
    expect(r.volume_m3).toBeCloseTo(r.footprint_area_m2 * r.height_m, 6);
    expect(r.floor_area_m2).toBeCloseTo(r.footprint_area_m2 * 8, 6);
    expect(rows.get('osm:way/5')).toMatchObject({ height_m: null, height_basis: null, volume_m3: null, floor_area_m2: null });
  });
});
