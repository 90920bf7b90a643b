/**
 * The builder's readers and value parsers on hand-made inputs and on the real files in
 * test/fixtures: CSV (RFC 4180), GeoJSON and GeoJSON Sequence streaming, OSM tag values,
 * ellipsoidal area, representative points, address settlement.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { CsvParser, parseCsv, readCsv, type CsvRecord } from '../src/build/csv.ts';
import { readFeatures, GeoJsonInputError, type FeatureRow } from '../src/build/geojsonseq.ts';
import { footprintArea, ringArea } from '../src/geo/area.ts';
import { representativePoint } from '../src/build/representative-point.ts';
import {
  classify,
  normaliseType,
  parseHeight,
  parseLevels,
  parseStartDate,
  roofShape,
  buildingFacts,
  type TagProblem,
} from '../src/build/osm-tags.ts';
import { settleAddress, type AddressRecord } from '../src/build/address-join.ts';
import { osmSourceId } from '../src/build/osmium.ts';

const DATA = fileURLToPath(new URL('./fixtures/', import.meta.url));
const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'edifice-build-parsers-'));
  dirs.push(d);
  return d;
}
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

describe('CSV (RFC 4180)', () => {
  const text = '\ufeffa,b,c\r\n1,"x, y","say ""hi"""\r\n2,"two\nlines",\r\n\r\n3,,"" \n';

  it('reads quoted commas, doubled quotes, line breaks inside quotes, CRLF, a BOM, empty fields', () => {
    const records = parseCsv(text);
    expect(records.map((r) => r.fields)).toEqual([
      ['a', 'b', 'c'],
      ['1', 'x, y', 'say "hi"'],
      ['2', 'two\nlines', ''],
      ['3', '', ' '],
    ]);
    // Each record names the line it starts on; the blank line 5 is skipped.
    expect(records.map((r) => r.line)).toEqual([1, 2, 3, 6]);
  });

  it('gives the same records whatever the chunk boundaries', () => {
    const whole = parseCsv(text);
    for (const size of [1, 2, 3, 7]) {
      const out: CsvRecord[] = [];
      const parser = new CsvParser();
      for (let i = 0; i < text.length; i += size) parser.push(text.slice(i, i + size), out);
      parser.end(out);
      expect(out).toEqual(whole);
    }
  });

  it('keeps a quote inside an unquoted field as it is', () => {
    expect(parseCsv('a,b\n12" pipe,x\n').map((r) => r.fields)).toEqual([
      ['a', 'b'],
      ['12" pipe', 'x'],
    ]);
  });

  it('refuses a file that ends inside a quoted field, naming the line', () => {
    expect(() => parseCsv('a,b\n1,"open\n')).toThrow(/line 2: the file ends inside a quoted field/);
  });

  it('streams the real Bucharest list, whose record at line 430 spans three lines', async () => {
    const records = await collect(readCsv(join(DATA, 'ro-seismic/expertiza-bucuresti.csv')));
    // Python's csv module reads 2,744 records (header included) from the file's 2,746 lines.
    expect(records.length).toBe(2744);
    expect(records.every((r) => r.fields.length === 14)).toBe(true);
    const spanning = records.find((r) => r.line === 430)!;
    expect(spanning.fields[2]).toBe('Strada CONSTANTIN MILLE ');
    expect(spanning.fields[13].split('\n').length).toBe(3);
    const next = records[records.indexOf(spanning) + 1];
    expect(next.line).toBe(433);
  });
});

describe('GeoJSON and GeoJSON Sequence reader', () => {
  const features = [1, 2, 3].map((i) => ({
    type: 'Feature',
    id: `n${i}`,
    geometry: { type: 'Point', coordinates: [9.5 + i / 1000, 47.1] },
    properties: { name: `p${i}` },
  }));
  const ids = (rows: FeatureRow[]) => rows.map((r) => r.feature?.id);

  it('reads RFC 8142 sequences (RS before each text), newline-delimited ones, and FeatureCollections of any layout', async () => {
    const dir = tempDir();
    const rs = join(dir, 'rs.geojsonseq');
    writeFileSync(rs, features.map((f) => `\x1e${JSON.stringify(f)}\n`).join(''));
    const lf = join(dir, 'lf.geojsonseq');
    writeFileSync(lf, features.map((f) => JSON.stringify(f)).join('\n'));
    const fc = join(dir, 'fc.geojson');
    writeFileSync(fc, JSON.stringify({ type: 'FeatureCollection', features }, null, 2));
    for (const path of [rs, lf, fc]) expect(ids(await collect(readFeatures(path)))).toEqual(['n1', 'n2', 'n3']);
    // Lines: one per text in the sequences; where each feature object opens in the pretty-printed collection.
    expect((await collect(readFeatures(rs))).map((r) => r.line)).toEqual([1, 2, 3]);
    const fcLines = (await collect(readFeatures(fc))).map((r) => r.line);
    expect(fcLines[0]).toBe(4);
    expect(fcLines[1]).toBeGreaterThan(fcLines[0]);
  });

  it('streams files larger than one read chunk, and reports how many bytes it read', async () => {
    const dir = tempDir();
    const path = join(dir, 'big.geojsonseq');
    const many = Array.from({ length: 5000 }, (_, i) => ({ ...features[0], id: `n${i}`, properties: { name: 'x'.repeat(i % 97) } }));
    const text = many.map((f) => `\x1e${JSON.stringify(f)}\n`).join('');
    writeFileSync(path, text);
    let bytes = 0;
    const rows = await collect(
      readFeatures(path, (n) => {
        bytes += n;
      }),
    );
    expect(rows.length).toBe(5000);
    expect(rows[4999].feature!.id).toBe('n4999');
    expect(bytes).toBe(Buffer.byteLength(text));
    const fc = join(dir, 'big.geojson');
    writeFileSync(fc, JSON.stringify({ type: 'FeatureCollection', features: many }));
    expect((await collect(readFeatures(fc))).length).toBe(5000);
    // One text far longer than a read chunk (a country boundary can be megabytes on one line).
    const long = { ...features[1], properties: { name: 'é'.repeat(400_000) } };
    const longPath = join(dir, 'long.geojsonseq');
    writeFileSync(longPath, [features[0], long, features[2]].map((f) => JSON.stringify(f)).join('\n'));
    const longRows = await collect(readFeatures(longPath));
    expect(longRows.map((r) => [r.line, r.feature!.id])).toEqual([
      [1, 'n1'],
      [2, 'n2'],
      [3, 'n3'],
    ]);
    expect(longRows[1].feature!.properties!.name).toBe(long.properties.name);
  });

  it('hands out a damaged text as a bad row and goes on', async () => {
    const dir = tempDir();
    const path = join(dir, 'damaged.geojsonseq');
    writeFileSync(
      path,
      [JSON.stringify(features[0]), '{"type":"Feature",', '{"type":"Point","coordinates":[1,2]}', JSON.stringify(features[2]), ''].join(
        '\n',
      ),
    );
    const rows = await collect(readFeatures(path));
    expect(rows.map((r) => [r.line, r.feature?.id ?? r.error])).toEqual([
      [1, 'n1'],
      [2, expect.stringMatching(/^not JSON/)],
      [3, 'not a GeoJSON Feature'],
      [4, 'n3'],
    ]);
    // Even when the damaged text is the first one.
    const first = join(dir, 'damaged-first.geojsonseq');
    writeFileSync(first, ['{"type":"Feature","geometry":', JSON.stringify(features[1]), ''].join('\n'));
    expect((await collect(readFeatures(first))).map((r) => [r.line, r.feature?.id ?? r.error])).toEqual([
      [1, expect.stringMatching(/^not JSON/)],
      [2, 'n2'],
    ]);
  });

  it('refuses a file cut off inside its last text, an empty file, a non-GeoJSON file and a missing one', async () => {
    const dir = tempDir();
    const cut = join(dir, 'cut.geojsonseq');
    const whole = features.map((f) => `\x1e${JSON.stringify(f)}\n`).join('');
    writeFileSync(cut, whole.slice(0, whole.length - 25));
    await expect(collect(readFeatures(cut))).rejects.toThrow(/truncated: the text starting at line 3/);
    const cutFc = join(dir, 'cut.geojson');
    const fcText = JSON.stringify({ type: 'FeatureCollection', features }, null, 1);
    writeFileSync(cutFc, fcText.slice(0, fcText.length - 40));
    await expect(collect(readFeatures(cutFc))).rejects.toThrow(/truncated: the file ends inside the feature starting at line/);
    const empty = join(dir, 'empty.geojson');
    writeFileSync(empty, '\n\n');
    await expect(collect(readFeatures(empty))).rejects.toThrow(/is empty/);
    const csv = join(dir, 'list.geojson');
    writeFileSync(csv, 'lat,lng\n1,2\n');
    await expect(collect(readFeatures(csv))).rejects.toThrow(GeoJsonInputError);
    const array = join(dir, 'array.geojson');
    writeFileSync(array, '{"type":"Topology","objects":{}}\n');
    await expect(collect(readFeatures(array))).rejects.toThrow(/neither a Feature nor a FeatureCollection/);
    await expect(collect(readFeatures(join(dir, 'missing.geojsonseq')))).rejects.toThrow(/cannot read \(ENOENT\)/);
  });

  it('derives stable OSM source ids from osmium attributes or unique ids', () => {
    const f = (id: unknown, properties: Record<string, unknown> = {}) => ({
      type: 'Feature' as const,
      id: id as string,
      geometry: null,
      properties,
    });
    expect(osmSourceId(f(undefined, { '@type': 'way', '@id': 1917 }))).toBe('osm:way/1917');
    expect(osmSourceId(f('w1917'))).toBe('osm:way/1917');
    expect(osmSourceId(f('n67'))).toBe('osm:node/67');
    // osmium's area ids: 2 × way id for closed ways, 2 × relation id + 1 for multipolygons.
    expect(osmSourceId(f('a3834'))).toBe('osm:way/1917');
    expect(osmSourceId(f('a105'))).toBe('osm:relation/52');
    expect(osmSourceId(f(17))).toBeNull();
  });
});

describe('OSM tag values', () => {
  it('parses heights in metres and feet, and refuses the rest', () => {
    const cases: [string, number | null][] = [
      ['12', 12],
      ['12 m', 12],
      ['12.5m', 12.5],
      ['12,5', 12.5],
      ['7 metres', 7],
      ["40'", 12.192],
      ['40\'6"', 12.344],
      ['40 ft', 12.192],
      ['tall', null],
      ['12;14', null],
      ['-3', null],
      ['0', null],
      ['2000', null],
      ['', null],
    ];
    for (const [text, metres] of cases) {
      const got = parseHeight(text);
      if (metres === null) expect(got, text).toBeNull();
      else expect(got, text).toBeCloseTo(metres, 3);
    }
  });

  it('parses level counts; a half level is a storey', () => {
    expect(['3', '0', '2.5', ' 4 ', 'three', '3;4', '-1', '501'].map(parseLevels)).toEqual([3, 0, 3, 4, null, null, null, null]);
  });

  it('parses start_date: exact years, approximations as estimates, "before" as completed_by_year', () => {
    const cases: [string, number | null, boolean, number | null][] = [
      ['1923', 1923, false, null],
      ['1923-05-01', 1923, false, null],
      ['1923-05', 1923, false, null],
      ['~1923', 1923, true, null],
      ['ca. 1900', 1900, true, null],
      ['1920s', 1925, true, null],
      ['1920..1930', 1925, true, null],
      ['C19', 1850, true, null],
      ['early C19', 1815, true, null],
      ['late C18', 1785, true, null],
      ['before 1900', null, false, 1900],
    ];
    for (const [text, year, estimate, by] of cases) {
      expect(parseStartDate(text), text).toEqual({
        construction_year: year,
        construction_year_is_estimate: estimate,
        completed_by_year: by,
      });
    }
    expect(parseStartDate('medieval')).toBeNull();
    expect(parseStartDate('9999')).toBeNull();
  });

  it('maps roof shapes, normalising spelling; unknown ones are null', () => {
    expect(['gabled', 'Hipped', 'half-hipped', 'onion', 'lean_to', 'banana'].map(roofShape)).toEqual([
      'gabled',
      'hipped',
      'half_hipped',
      'dome',
      'skillion',
      null,
    ]);
  });

  it('classifies buildings: stated values confirmed, yes and residential inferred, unknown values counted', () => {
    const problems: TagProblem[] = [];
    expect(classify({ building: 'house' }, null, problems)).toEqual({
      category: 'residential_house',
      category_evidence: 'confirmed',
      building_type: 'house',
    });
    expect(classify({ building: 'apartments' }, null, problems).category).toBe('apartment_block');
    expect(classify({ building: 'yes' }, null, problems)).toEqual({
      category: 'unknown',
      category_evidence: 'inferred',
      building_type: 'unspecified',
    });
    expect(classify({ building: 'yes', amenity: 'school' }, null, problems)).toEqual({
      category: 'public',
      category_evidence: 'inferred',
      building_type: 'unspecified',
    });
    expect(classify({ building: 'residential' }, 2, problems).category).toBe('residential_house');
    expect(classify({ building: 'residential' }, 8, problems).category).toBe('apartment_block');
    expect(classify({ building: 'Farm Auxiliary' }, null, problems)).toEqual({
      category: 'agricultural',
      category_evidence: 'confirmed',
      building_type: 'farm_auxiliary',
    });
    expect(problems).toEqual([]);
    expect(classify({ building: 'spaceport' }, null, problems)).toEqual({
      category: 'unknown',
      category_evidence: 'inferred',
      building_type: 'spaceport',
    });
    expect(problems).toEqual([{ reason: 'unknown_building_value', detail: 'building=spaceport' }]);
    expect(normaliseType('Semi-Detached House')).toBe('semi_detached_house');
    expect(normaliseType('x'.repeat(80))).toHaveLength(64);
  });

  it('collects every tag of a building with its problems', () => {
    const problems: TagProblem[] = [];
    const facts = buildingFacts(
      {
        building: 'apartments',
        'building:levels': '5',
        'building:levels:underground': '2',
        height: 'about 20',
        'roof:shape': 'banana',
        start_date: '~1965',
        'addr:street': 'Landstrasse',
        'addr:housenumber': '12',
        'addr:postcode': '9490',
        'addr:city': 'Vaduz',
      },
      problems,
    );
    expect(facts).toMatchObject({
      category: 'apartment_block',
      floors: 5,
      floors_including_underground: 7,
      stated_height_m: null,
      roof_shape: null,
      construction_year: 1965,
      construction_year_is_estimate: true,
      address: { text: 'Landstrasse 12', house_number: '12', postal_code: '9490', city: 'Vaduz' },
    });
    expect(problems.map((p) => p.reason).sort()).toEqual(['unknown_roof_shape', 'unparseable_height']);
  });
});

describe('ellipsoidal area', () => {
  const RAD = Math.PI / 180;
  const A = 6_378_137;
  const E2 = (1 / 298.257223563) * (2 - 1 / 298.257223563);

  it('gives one eighth of the WGS84 ellipsoid for the octant between equator, pole and two meridians', () => {
    // The whole ellipsoid is 510,065,621.724 km² (GeographicLib, Karney 2013).
    const octant = [0, 0, 90, 0, 90, 90, 0, 90, 0, 0];
    expect(ringArea(octant) / 1e6).toBeCloseTo(510_065_621.724 / 8, 2);
  });

  it('matches a numerical integral of M·N·cos φ over a 1° cell, either winding', () => {
    // Area element on the ellipsoid: M(φ)·N(φ)·cos φ dφ dλ; Simpson's rule over 47°..48°.
    const f = (phi: number) => {
      const w = 1 - E2 * Math.sin(phi) ** 2;
      return ((A * (1 - E2)) / w ** 1.5) * (A / Math.sqrt(w)) * Math.cos(phi);
    };
    const n = 1000;
    const a = 47 * RAD;
    const h = RAD / n;
    let s = f(a) + f(a + n * h);
    for (let i = 1; i < n; i++) s += (i % 2 ? 4 : 2) * f(a + i * h);
    const expected = ((s * h) / 3) * RAD;
    const ccw = [9, 47, 10, 47, 10, 48, 9, 48, 9, 47];
    const cw = [9, 47, 9, 48, 10, 48, 10, 47, 9, 47];
    expect(ringArea(ccw) / expected).toBeCloseTo(1, 9);
    expect(ringArea(cw)).toBeCloseTo(-ringArea(ccw), 3);
    expect(footprintArea([[cw]])).toBeCloseTo(expected, 0);
  });

  it('subtracts holes whatever their winding', () => {
    const outer = [9, 47, 9.001, 47, 9.001, 47.001, 9, 47.001, 9, 47];
    const hole = [9.0004, 47.0004, 9.0006, 47.0004, 9.0006, 47.0006, 9.0004, 47.0006, 9.0004, 47.0004];
    const expected = Math.abs(ringArea(outer)) - Math.abs(ringArea(hole));
    expect(footprintArea([[outer, hole]])).toBeCloseTo(expected, 6);
    const reversed = hole.flatMap((_, i) => (i % 2 ? [] : [hole[hole.length - 2 - i], hole[hole.length - 1 - i]]));
    expect(footprintArea([[outer, reversed]])).toBeCloseTo(expected, 6);
  });
});

describe('representative point', () => {
  // Even-odd ray casting written for the test, independent of the builder's.
  function inside(rings: number[][], x: number, y: number): boolean {
    let c = false;
    for (const r of rings) {
      for (let i = 0; i + 3 < r.length; i += 2) {
        const [x1, y1, x2, y2] = [r[i], r[i + 1], r[i + 2], r[i + 3]];
        if (y1 > y !== y2 > y && x < x1 + ((y - y1) * (x2 - x1)) / (y2 - y1)) c = !c;
      }
    }
    return c;
  }
  const scale = (pts: number[]) => pts.map((v, i) => (i % 2 ? 47.1 + v * 1e-4 : 9.5 + v * 1e-4));

  it('uses the centroid of a convex outline', () => {
    const square = scale([0, 0, 2, 0, 2, 2, 0, 2, 0, 0]);
    const [x, y] = representativePoint([[square]]);
    expect(x).toBeCloseTo(9.5001, 9);
    expect(y).toBeCloseTo(47.1001, 9);
  });

  it('falls inside a U whose centroid lies in the notch, and inside a ring whose centroid lies in the hole', () => {
    const u = scale([0, 0, 3, 0, 3, 3, 2, 3, 2, 1, 1, 1, 1, 3, 0, 3, 0, 0]);
    const [ux, uy] = representativePoint([[u]]);
    expect(inside([u], ux, uy)).toBe(true);
    const outer = scale([0, 0, 4, 0, 4, 4, 0, 4, 0, 0]);
    const hole = scale([1, 1, 3, 1, 3, 3, 1, 3, 1, 1]);
    const [rx, ry] = representativePoint([[outer, hole]]);
    expect(inside([outer, hole], rx, ry)).toBe(true);
  });

  it('picks the largest part of a multipolygon', () => {
    const small = scale([0, 0, 1, 0, 1, 1, 0, 1, 0, 0]);
    const large = scale([5, 5, 9, 5, 9, 9, 5, 9, 5, 5]);
    const [x, y] = representativePoint([[small], [large]]);
    expect(inside([large], x, y)).toBe(true);
  });
});

describe('address settlement', () => {
  const rec = (source: string, street: string, number: string | null, extra: Partial<AddressRecord['address']> = {}): AddressRecord => ({
    source,
    address: { text: number ? `${street} ${number}` : street, street, house_number: number, postal_code: null, city: null, ...extra },
  });

  it('single_source with one record; corroborated when another gives the same number; conflicting when one gives another', () => {
    expect(settleAddress([rec('osm:way/1', 'Landstrasse', '12')], [])).toMatchObject({
      address: 'Landstrasse 12',
      address_evidence: 'address_record',
      address_corroboration: 'single_source',
    });
    expect(settleAddress([rec('osm:way/1', 'Landstrasse', '12'), rec('osm:node/2', 'Landstrasse', '12 ')], []).address_corroboration).toBe(
      'corroborated',
    );
    expect(settleAddress([rec('osm:way/1', 'Landstrasse', '12a')], [rec('osm:node/3', 'Landstrasse', '12 A')]).address_corroboration).toBe(
      'corroborated',
    );
    expect(
      settleAddress(
        [rec('osm:way/1', 'Landstrasse', '12'), rec('osm:node/2', 'Landstrasse', '12'), rec('osm:node/3', 'Landstrasse', '14')],
        [],
      ).address_corroboration,
    ).toBe('conflicting');
  });

  it('has no corroboration without a house number, and one entrance per distinct address', () => {
    const s = settleAddress([rec('osm:way/1', 'Landstrasse', null), rec('osm:node/2', 'Landstrasse', null)], []);
    expect(s.address_corroboration).toBeNull();
    expect(s.entrances).toEqual([{ address: 'Landstrasse', house_number: null, postal_code: null, source: 'osm:way/1' }]);
  });

  it('takes a business listing only when no address record exists', () => {
    const listing = rec('osm:node/9', 'Im Rösle', '2', { city: 'Schaan' });
    expect(settleAddress([], [listing])).toMatchObject({
      address: 'Im Rösle 2',
      address_evidence: 'business_listing',
      city: 'Schaan',
      entrances: [],
    });
    expect(settleAddress([], [])).toMatchObject({ address: null, address_evidence: 'none', address_corroboration: null, city: null });
  });
});
