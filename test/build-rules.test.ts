/**
 * What the builder makes of OpenStreetMap as other countries map it: a postcode and city stated
 * without a street, one locality spelt several ways, shops that are not registered businesses,
 * a business register, outlines drawn inside others, roof shapes the spec has no word for.
 *
 * Small hand-made inputs near Andorra; every expected value is worked out from them by hand.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSnapshot, type BuildResult } from '../src/build/builder.ts';
import { buildingId } from '../src/snapshot/building-id.ts';
import { readSnapshot } from '../src/snapshot/reader.ts';

/** 0.0001° of longitude or latitude. */
const U = 0.0001;

/** An axis-aligned rectangle from (x0, y0) to (x1, y1) in units of U from (lon, lat). */
function rect(lon: number, lat: number, x0: number, y0: number, x1: number, y1: number): number[][][] {
  const [a, b, c, d] = [lon + x0 * U, lat + y0 * U, lon + x1 * U, lat + y1 * U];
  return [
    [
      [a, b],
      [c, b],
      [c, d],
      [a, d],
      [a, b],
    ],
  ];
}

const way = (id: number, coordinates: number[][][], tags: Record<string, string>) =>
  JSON.stringify({ type: 'Feature', geometry: { type: 'Polygon', coordinates }, properties: { '@type': 'way', '@id': id, ...tags } });
const node = (id: number, lon: number, lat: number, tags: Record<string, string>) =>
  JSON.stringify({
    type: 'Feature',
    geometry: { type: 'Point', coordinates: [lon, lat] },
    properties: { '@type': 'node', '@id': id, ...tags },
  });

let dir: string;
let input: string;
let result: BuildResult;
let rows: Map<string, Record<string, any>>;

function read(path: string): Map<string, Record<string, any>> {
  const { table } = readSnapshot(path);
  return new Map(
    [...Array(table.numRows).keys()].map((i) => {
      const r = table.get(i)!.toJSON() as Record<string, any>;
      return [
        r.source_id,
        { ...r, businesses: [...r.businesses].map((b: any) => b.toJSON()), entrances: [...r.entrances].map((e: any) => e.toJSON()) },
      ];
    }),
  );
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'edifice-build-rules-'));
  input = join(dir, 'andorra.geojsonseq');
  writeFileSync(
    input,
    [
      // Settlements: each building below is nearer to one of them than 5 km.
      node(1, 1.533, 42.581, { place: 'village', name: 'Ordino' }),
      node(2, 1.653, 42.58, { place: 'hamlet', name: 'El Tarter' }),
      // Own postcode and city, no street (as way 467604668 of the Andorra extract).
      way(10, rect(1.534, 42.582, 0, 0, 2, 2), { building: 'yes', 'addr:city': 'La Cortinada', 'addr:postcode': 'AD300' }),
      // One locality, three spellings: El Tarter x2 (w21 states it, w22 takes the nearest place's), el Tarter x1.
      way(20, rect(1.654, 42.581, 0, 0, 2, 2), {
        building: 'yes',
        'addr:street': 'Carretera General',
        'addr:housenumber': '1',
        'addr:city': 'el Tarter',
      }),
      way(21, rect(1.6545, 42.581, 0, 0, 2, 2), {
        building: 'yes',
        'addr:street': 'Carretera General',
        'addr:housenumber': '3',
        'addr:city': 'El Tarter',
      }),
      way(22, rect(1.655, 42.581, 0, 0, 2, 2), { building: 'yes' }),
      // Sornás x2, Sornàs x1; a tie (Canillo x1, canillo x1) goes to the first in code-point order, Canillo.
      way(30, rect(1.54, 42.57, 0, 0, 2, 2), { building: 'yes', 'addr:street': 'Sornàs', 'addr:housenumber': '1', 'addr:city': 'Sornàs' }),
      way(31, rect(1.5405, 42.57, 0, 0, 2, 2), {
        building: 'yes',
        'addr:street': 'Sornàs',
        'addr:housenumber': '2',
        'addr:city': 'Sornás',
      }),
      way(32, rect(1.541, 42.57, 0, 0, 2, 2), { building: 'yes', 'addr:street': 'Sornàs', 'addr:housenumber': '3', 'addr:city': 'Sornás' }),
      way(40, rect(1.6, 42.57, 0, 0, 2, 2), { building: 'yes', 'addr:street': 'Plaça', 'addr:housenumber': '1', 'addr:city': 'canillo' }),
      way(41, rect(1.6005, 42.57, 0, 0, 2, 2), {
        building: 'yes',
        'addr:street': 'Plaça',
        'addr:housenumber': '2',
        'addr:city': 'Canillo',
      }),
      // A bakery mapped inside a building, and a supermarket mapped on its outline: listings, not registered businesses.
      way(50, rect(1.535, 42.583, 0, 0, 2, 2), { building: 'yes' }),
      node(51, 1.535 + U, 42.583 + U, { shop: 'bakery', name: 'Forn', 'addr:street': 'Carrer Major', 'addr:housenumber': '3' }),
      way(52, rect(1.5355, 42.583, 0, 0, 2, 2), {
        building: 'retail',
        shop: 'supermarket',
        name: 'Super',
        'addr:street': 'Carrer Major',
        'addr:housenumber': '5',
      }),
      // Register targets: by id, by position, by address; an address two buildings state.
      way(60, rect(1.536, 42.584, 0, 0, 2, 2), { building: 'office' }),
      way(61, rect(1.5365, 42.584, 0, 0, 2, 2), { building: 'office' }),
      way(62, rect(1.537, 42.584, 0, 0, 2, 2), {
        building: 'office',
        'addr:street': 'Avinguda Meritxell',
        'addr:housenumber': '5',
        'addr:postcode': 'AD300',
      }),
      way(63, rect(1.5375, 42.584, 0, 0, 2, 2), { building: 'yes', 'addr:street': 'Carrer Nou', 'addr:housenumber': '1' }),
      way(64, rect(1.538, 42.584, 0, 0, 2, 2), { building: 'yes', 'addr:street': 'Carrer Nou', 'addr:housenumber': '1' }),
      // Nested outlines in a 10 x 10 outer one: w71 lies 2.4 of its 2.5 units of width inside (96%), w72 1.5 of 1.6 (93.75%).
      way(70, rect(1.54, 42.585, 0, 0, 10, 10), { building: 'yes' }),
      way(71, rect(1.54, 42.585, -0.1, 2, 2.4, 4), {
        building: 'house',
        height: '9',
        'building:levels': '3',
        'roof:shape': 'gabled',
        start_date: '1890',
        'addr:street': 'Carrer Sol',
        'addr:housenumber': '2',
      }),
      way(72, rect(1.54, 42.585, 8.5, 2, 10.1, 4), { building: 'garage' }),
      // The same outline drawn twice: the one read first stays.
      way(80, rect(1.542, 42.585, 0, 0, 3, 3), { building: 'yes', name: 'first' }),
      way(81, rect(1.542, 42.585, 0, 0, 3, 3), { building: 'house', name: 'second' }),
      // A roof shape OpenStreetMap has and the spec has not.
      way(90, rect(1.543, 42.585, 0, 0, 2, 2), { building: 'house', 'roof:shape': 'quadruple_saltbox' }),
      // 20 km from every settlement: no locality.
      way(95, rect(1.7, 42.4, 0, 0, 2, 2), { building: 'yes' }),
    ].join('\n') + '\n',
  );
  const register = join(dir, 'register.csv');
  writeFileSync(
    register,
    [
      'registration_id,name,active,financial_year,turnover,currency,employees,building,lat,lon,street,house_number,postal_code,city',
      `AD-1,Oficina U,true,2022,1500000,EUR,10-19,osm:way/60,,,,,,`,
      `AD-2,Gestoria Dos,false,2021,,,250+,,${42.584 + U},${1.5365 + U},,,,`,
      `AD-3,Tres SA,true,,,,7,,,,avinguda  meritxell,5,AD300,`,
      `AD-4,Quatre SL,true,,,,,,,,Carrer Nou,1,,`,
      `AD-5,Cinc SL,true,,,,,,,,Avinguda Meritxell,5,AD700,`,
      `AD-6,Sis SL,maybe,,,,,osm:way/60,,,,,,`,
      `AD-7,Set SL,true,2020,100,,,osm:way/60,,,,,,`,
      `AD-8,Vuit SL,true,,,,,osm:way/71,,,,,,`,
      `AD-9,Nou SL,true,,,,,${buildingId('osm:way/61')},,,,,,`,
      `AD-1,Oficina U again,true,,,,,osm:way/61,,,,,,`,
    ].join('\n') + '\n',
  );
  result = await buildSnapshot({
    country: 'AD',
    snapshotDate: '2023-06-01',
    buildings: input,
    businesses: register,
    strict: false,
    out: join(dir, 'AD.arrow'),
  });
  rows = read(result.path);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('builder rules on hand-made OpenStreetMap data', () => {
  it("keeps a building's own postcode and city when it states no street or number", () => {
    expect(rows.get('osm:way/10')).toMatchObject({ address: null, postal_code: 'AD300', locality: 'La Cortinada' });
  });

  it("says whether a record states the locality or it is the nearest settlement's name", () => {
    expect(rows.get('osm:way/10')).toMatchObject({ locality: 'La Cortinada', locality_basis: 'stated' });
    expect(rows.get('osm:way/21')).toMatchObject({ locality: 'El Tarter', locality_basis: 'stated' });
    expect(rows.get('osm:way/22')).toMatchObject({ locality: 'El Tarter', locality_basis: 'inferred' });
    // The bakery's address names no city; Ordino is the nearest settlement.
    expect(rows.get('osm:way/50')).toMatchObject({ locality: 'Ordino', locality_basis: 'inferred' });
    expect(rows.get('osm:way/95')).toMatchObject({ locality: '', locality_basis: null });
    // Stated: w10, w20, w21, w30, w31, w32, w40, w41; no locality: w95; the other 12 inferred.
    expect(result.counts).toMatchObject({ locality_stated: 8, locality_inferred: 12 });
  });

  it('writes one locality one way: its most common spelling, a tie to the first in code-point order', () => {
    expect(['osm:way/20', 'osm:way/21', 'osm:way/22'].map((id) => rows.get(id)!.locality)).toEqual(['El Tarter', 'El Tarter', 'El Tarter']);
    expect(['osm:way/30', 'osm:way/31', 'osm:way/32'].map((id) => rows.get(id)!.locality)).toEqual(['Sornás', 'Sornás', 'Sornás']);
    expect(['osm:way/40', 'osm:way/41'].map((id) => rows.get(id)!.locality)).toEqual(['Canillo', 'Canillo']);
    // el Tarter, Sornàs and canillo written as another spelling.
    expect(result.counts.locality_spellings_merged).toBe(3);
  });

  it('takes shops mapped in OpenStreetMap as business listings, never as registered businesses', () => {
    expect(rows.get('osm:way/50')).toMatchObject({ businesses: [], address: 'Carrer Major 3', address_evidence: 'business_listing' });
    expect(rows.get('osm:way/52')).toMatchObject({ businesses: [], address: 'Carrer Major 5', address_evidence: 'address_record' });
  });

  it('joins a business register by building, position and address, and counts what it cannot join', () => {
    const business = (id: string, name: string, extra: Record<string, unknown> = {}) => ({
      business_id: `register:${id}`,
      registration_number: id,
      name,
      active: true,
      employees_min: null,
      employees_max: null,
      turnover: null,
      turnover_currency: null,
      turnover_financial_year: null,
      ...extra,
    });
    expect(rows.get('osm:way/60')!.businesses).toEqual([
      business('AD-1', 'Oficina U', {
        employees_min: 10,
        employees_max: 19,
        turnover: 1_500_000,
        turnover_currency: 'EUR',
        turnover_financial_year: 2022,
      }),
    ]);
    expect(rows.get('osm:way/61')!.businesses).toEqual([
      business('AD-2', 'Gestoria Dos', { active: false, employees_min: 250, turnover_financial_year: 2021 }),
      business('AD-9', 'Nou SL'),
    ]);
    // Case and spacing of the street do not matter; the postcode, stated on both sides, must agree (AD-5's does not).
    expect(rows.get('osm:way/62')!.businesses).toEqual([business('AD-3', 'Tres SA', { employees_min: 7, employees_max: 7 })]);
    expect(rows.get('osm:way/63')!.businesses).toEqual([]);
    expect(rows.get('osm:way/64')!.businesses).toEqual([]);
    // AD-8 names w71, which lies inside w70: it goes to the building w71 was merged into.
    expect(rows.get('osm:way/70')!.businesses).toEqual([business('AD-8', 'Vuit SL')]);
    expect(result.counts).toMatchObject({ register_rows: 7, register_joined: 5 });
    const bad = Object.fromEntries(result.bad.map((b) => [b.reason, b.count]));
    expect(bad).toEqual({ business_address_ambiguous: 1, business_bad_value: 2, business_duplicate: 1 });
    expect(result.notes.find((n) => n.reason === 'business_unmatched')?.count).toBe(1);
    expect(result.bad.find((b) => b.reason === 'business_address_ambiguous')!.examples[0]).toBe(
      'register.csv:5: AD-4: 2 buildings have the address Carrer Nou 1',
    );
  });

  it('merges an outline lying 95% or more inside another into it, filling what the outer one lacks', () => {
    expect(rows.has('osm:way/71')).toBe(false);
    expect(rows.has('osm:way/72')).toBe(true);
    expect(rows.get('osm:way/70')).toMatchObject({
      building_type: 'house',
      category: 'residential_house',
      category_evidence: 'confirmed',
      height_m: 9,
      height_basis: 'stated',
      floors: 3,
      roof_shape: 'gabled',
      construction_year: 1890,
      address: 'Carrer Sol 2',
      address_evidence: 'address_record',
    });
    expect(rows.get('osm:way/70')!.entrances).toEqual([
      { address: 'Carrer Sol 2', house_number: '2', postal_code: null, source: 'osm:way/71' },
    ]);
    // Drawn twice: w80 stays, with its own tags first (building=yes), then w81's (house).
    expect(rows.has('osm:way/81')).toBe(false);
    expect(rows.get('osm:way/80')!.building_type).toBe('house');
    const merged = result.merged.find((m) => m.reason === 'nested_outline')!;
    expect(merged.count).toBe(2);
    expect(merged.examples).toEqual([
      "andorra.geojsonseq:21: osm:way/71 lies 96.0% inside another building's outline; merged into osm:way/70",
      "andorra.geojsonseq:24: osm:way/81 lies 100.0% inside another building's outline; merged into osm:way/80",
    ]);
    // Every building counted once: 23 outlines read, 2 merged.
    expect(result.rows).toBe(21);
    expect(rows.size).toBe(21);
  });

  it("writes a roof shape outside the spec's ten as null and notes it, even under --strict", async () => {
    expect(rows.get('osm:way/90')!.roof_shape).toBeNull();
    expect(result.notes.find((n) => n.reason === 'unknown_roof_shape')?.count).toBe(1);
    expect(result.bad.find((b) => b.reason === 'unknown_roof_shape')).toBeUndefined();
    const lines = readFileSync(input, 'utf8')
      .split('\n')
      .filter((l) => l.includes('"@id":90,'));
    const roofOnly = join(dir, 'roof.geojsonseq');
    writeFileSync(roofOnly, `${lines[0]}\n`);
    const strict = await buildSnapshot({
      country: 'AD',
      snapshotDate: '2023-06-01',
      buildings: roofOnly,
      strict: true,
      out: join(dir, 'roof.arrow'),
    });
    expect(read(strict.path).get('osm:way/90')!.roof_shape).toBeNull();
  });

  it('counts, with stats:snapshot, the share of buildings with each field', () => {
    const repo = fileURLToPath(new URL('..', import.meta.url));
    const out = execFileSync(process.execPath, ['--import', 'tsx', 'tools/snapshot-stats.ts', result.path, '--json'], {
      cwd: repo,
      encoding: 'utf8',
    });
    const stats = JSON.parse(out);
    const column = (name: string) => stats.columns.find((c: any) => c.column === name);
    expect(stats.buildings).toBe(21);
    // Postal codes: w10 (AD300, own tags), w62 (AD300). Heights: w70 (9, from w71). Businesses: w60, w61, w62, w70.
    expect(column('postal_code')).toMatchObject({ with: 2, share: 2 / 21 });
    expect(column('height_m')).toMatchObject({ with: 1 });
    expect(column('businesses')).toMatchObject({ with: 4 });
    expect(column('locality_basis').values).toEqual({ stated: 8, inferred: 12 });
  });
});
