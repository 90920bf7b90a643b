/**
 * OGC API – Features over real HTTP, and Debian's GDAL reading it: `ogrinfo` lists the layer,
 * `ogr2ogr` copies a bbox's buildings to a GeoPackage whose features are the API's for the same
 * bbox, and the workspace pays for exactly the buildings GDAL received.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import SwaggerParser from '@apidevtools/swagger-parser';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Snapshot } from '../src/catalog/catalog.ts';
import { ResponseValidator, removeDir, startTestServer, syntheticSnapshots, workspaceWithKey, type TestServer } from './http-helpers.ts';

type J = Record<string, any>;

const run = promisify(execFile);

let dir: string;
let t: TestServer;
let key: string;
let snapshot: Snapshot;
let validator: ResponseValidator;
// Binary fractions: GDAL writes them back into the URL exactly as given here.
const BBOX = [9.5, 47.125, 9.625, 47.25];

async function get(
  path: string,
  headers: Record<string, string> = {},
  template?: string,
): Promise<{ status: number; headers: Headers; body: J }> {
  const res = await fetch(path.startsWith('http') ? path : `${t.base}${path}`, { headers });
  const body = (await res.json()) as J;
  if (template) expect(validator.problems(template, res.status, res.headers, body)).toEqual([]);
  return { status: res.status, headers: res.headers, body };
}
const auth = (k = key) => ({ Authorization: `Bearer ${k}` });

/** Every building_id GET /buildings returns for the bbox, page by page. */
async function idsOfBbox(bbox: number[]): Promise<string[]> {
  const ids: string[] = [];
  let next: string | null = `${t.base}/buildings?bbox=${bbox.join(',')}&limit=100&fields=building_id`;
  for (let pages = 0; next !== null && pages < 100; pages++) {
    const r = await get(next, auth());
    ids.push(...r.body.data.map((b: J) => b.building_id));
    next = r.body.links.next;
  }
  return ids;
}

beforeAll(async () => {
  dir = await syntheticSnapshots(4000);
  t = await startTestServer(dir, { perKeyPerMinute: 1_000_000, dailyQuota: 1_000_000 });
  validator = new ResponseValidator((await (await fetch(`${t.base}/openapi.json`)).json()) as J);
  key = workspaceWithKey(t.ledger, 1_000_000).key;
  snapshot = t.catalog.view().snapshots[0];
});

afterAll(() => {
  t?.close();
  if (dir) removeDir(dir);
});

describe('the documents (no key)', () => {
  it('GET /v1 is the landing page: service-desc, conformance and data links', async () => {
    for (const path of ['', '/']) {
      const r = await get(path, {}, '/');
      expect(r.status).toBe(200);
      const rels = Object.fromEntries(r.body.links.map((l: J) => [l.rel, l.href]));
      expect(rels).toMatchObject({ self: t.base, conformance: `${t.base}/conformance`, data: `${t.base}/collections` });
      expect(r.body.links.filter((l: J) => l.rel === 'service-desc').map((l: J) => [l.href, l.type])).toEqual([
        [`${t.base}/openapi.json`, 'application/vnd.oai.openapi+json;version=3.1'],
        [`${t.base}/openapi.json?version=3.0`, 'application/vnd.oai.openapi+json;version=3.0'],
      ]);
    }
  });

  it('the API definition in OpenAPI 3.0, which the OGC test suite and GDAL ask for, is valid 3.0 with every operation of the 3.1', async () => {
    const landing = await get('', {});
    const link = landing.body.links.find((l: J) => l.type === 'application/vnd.oai.openapi+json;version=3.0');
    const res = await fetch(link.href, { headers: { Accept: link.type } });
    expect(res.status).toBe(200);
    const v30 = (await res.json()) as J;
    const v31 = (await (await fetch(`${t.base}/openapi.json`)).json()) as J;
    expect([v30.openapi, v31.openapi]).toEqual(['3.0.3', '3.1.0']);
    // swagger-parser validates against the schema of the version the document names.
    await expect(SwaggerParser.validate(structuredClone(v30) as any)).resolves.toBeTruthy();
    const operations = (d: J) =>
      Object.entries(d.paths).flatMap(([path, item]) => Object.values(item as J).map((op: J) => `${path} ${op.operationId}`));
    expect(operations(v30)).toEqual(operations(v31));
    // What 3.0 cannot write is written as 3.0 means it.
    const text = JSON.stringify(v30);
    expect(text).not.toMatch(/"type":\[|"const":|"prefixItems":|"exclusiveMinimum":\d/);
    const building = v30.components.schemas.Building.properties;
    expect(building.address).toMatchObject({ nullable: true });
    expect(v30.components.schemas.BuildingFeature.properties.type).toEqual({ type: 'string', enum: ['Feature'] });
    for (const query of ['version=2.0', 'version=', 'foo=1']) {
      const bad = await get(`/openapi.json?${query}`, {});
      expect([query, bad.status, bad.body.error.parameter]).toEqual([query, 400, query.split('=')[0]]);
    }
  });

  it('/conformance: Core and GeoJSON', async () => {
    const r = await get('/conformance', {}, '/conformance');
    expect(r.body.conformsTo).toEqual([
      'http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/core',
      'http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/geojson',
    ]);
  });

  it("/collections and /collections/buildings: one collection, the snapshots' extent, an items link", async () => {
    const list = await get('/collections', {}, '/collections');
    expect(list.body.collections.map((c: J) => c.id)).toEqual(['buildings']);
    const one = await get('/collections/buildings', {}, '/collections/{collectionId}');
    expect(one.body).toEqual(list.body.collections[0]);
    const e = snapshot.extent!;
    expect(one.body.extent.spatial.bbox).toEqual([[e.minLon, e.minLat, e.maxLon, e.maxLat]]);
    expect(one.body.links.find((l: J) => l.rel === 'items')).toMatchObject({
      href: `${t.base}/collections/buildings/items`,
      type: 'application/geo+json',
    });
  });

  it('another collection is 404, with or without a key', async () => {
    for (const path of ['/collections/houses', '/collections/houses/items', `/collections/houses/items/${snapshot.buildingId(0)}`]) {
      const r = await get(path);
      expect([r.status, r.body.error.code]).toEqual([404, 'not_found']);
    }
  });
});

describe('items', () => {
  it('need a key, and answer 401 without one', async () => {
    const r = await get(`/collections/buildings/items?bbox=${BBOX.join(',')}`);
    expect([r.status, r.body.error.code]).toEqual([401, 'unauthorized']);
  });

  it("with bbox: GET /buildings' buildings in its order, footprints, numberMatched, next links to the end", async () => {
    const want = await idsOfBbox(BBOX);
    expect(want.length).toBeGreaterThan(150);
    const got: string[] = [];
    let next: string | null = `${t.base}/collections/buildings/items?bbox=${BBOX.join(',')}&limit=70`;
    let first = true;
    for (let pages = 0; next !== null && pages < 100; pages++) {
      const r = await get(next, auth(), '/collections/{collectionId}/items');
      expect(r.headers.get('content-type')).toBe('application/geo+json');
      if (first) {
        expect(r.body.numberMatched).toBe(want.length);
        expect(r.body.numberReturned).toBe(70);
        expect(r.body.features[0].geometry.type).toBe('MultiPolygon');
        first = false;
      }
      got.push(...r.body.features.map((f: J) => f.id));
      next = r.body.links.find((l: J) => l.rel === 'next')?.href ?? null;
    }
    expect(got).toEqual(want);
  });

  it('a limit above 100 reads as 100; filters apply as on GET /buildings', async () => {
    const r = await get(`/collections/buildings/items?bbox=${BBOX.join(',')}&limit=1000`, auth(), '/collections/{collectionId}/items');
    expect(r.body.numberReturned).toBe(100);
    const filtered = await get(`/collections/buildings/items?bbox=${BBOX.join(',')}&limit=100&category=commercial&geometry=point`, auth());
    const same = await get(`/buildings?bbox=${BBOX.join(',')}&limit=100&category=commercial`, auth());
    expect(filtered.body.features.map((f: J) => f.id)).toEqual(same.body.data.map((b: J) => b.building_id));
    expect(filtered.body.features[0].geometry.type).toBe('Point');
    const bad = await get(`/collections/buildings/items?bbox=${BBOX.join(',')}&category=castle`, auth());
    expect([bad.status, bad.body.error.parameter]).toEqual([400, 'category']);
  });

  it('without bbox: every building in storage order, no filter', async () => {
    const r = await get('/collections/buildings/items?limit=5&offset=3', auth(), '/collections/{collectionId}/items');
    expect(r.body.numberMatched).toBe(snapshot.rows);
    expect(r.body.features.map((f: J) => f.id)).toEqual([3, 4, 5, 6, 7].map((row) => snapshot.buildingId(row)));
    expect(r.body.links.find((l: J) => l.rel === 'next').href).toBe(`${t.base}/collections/buildings/items?limit=5&offset=8`);
    const refused = await get('/collections/buildings/items?limit=5&min_floors=2', auth());
    expect([refused.status, refused.body.error.parameter]).toEqual([400, 'min_floors']);
  });

  it('one feature by id, with its footprint; an unknown id is 404', async () => {
    const id = snapshot.buildingId(42);
    const r = await get(`/collections/buildings/items/${id}`, auth(), '/collections/{collectionId}/items/{featureId}');
    expect(r.body).toMatchObject({ type: 'Feature', id, geometry: { type: 'MultiPolygon' }, properties: { building_id: id } });
    expect(r.body.links.map((l: J) => l.rel)).toEqual(['self', 'collection']);
    const unknown = await get('/collections/buildings/items/00000000-0000-4000-8000-000000000000', auth());
    expect([unknown.status, unknown.body.error.code]).toEqual([404, 'not_found']);
  });

  it('take a bbox of any size, and six numbers with heights, which footprints lack, as OGC API Features Core has it', async () => {
    // The country lies in 9.4..9.7, 47.0..47.3: a 3-degree box around it holds every building, as the world does.
    const whole = await idsOfBbox([8, 46, 11, 49]);
    expect(whole.length).toBe(snapshot.rows);
    for (const bbox of ['-180,-90,180,90', '0,40,20,55', '9.4,47,179,47.3']) {
      const r = await get(`/collections/buildings/items?bbox=${bbox}&limit=100&offset=100`, auth(), '/collections/{collectionId}/items');
      expect([bbox, r.status, r.body.numberMatched]).toEqual([bbox, 200, snapshot.rows]);
      expect(r.body.features.map((f: J) => f.id)).toEqual(whole.slice(100, 200));
    }
    const empty = await get('/collections/buildings/items?bbox=-180,85,180,90', auth());
    expect([empty.status, empty.body.numberMatched, empty.body.features]).toEqual([200, 0, []]);
    const four = await get(`/collections/buildings/items?bbox=${BBOX.join(',')}&limit=100`, auth());
    const six = await get(`/collections/buildings/items?bbox=${BBOX[0]},${BBOX[1]},-10,${BBOX[2]},${BBOX[3]},500.5&limit=100`, auth());
    expect(six.status).toBe(200);
    expect(six.body.features.map((f: J) => f.id)).toEqual(four.body.features.map((f: J) => f.id));
    for (const bbox of [
      '9.5,47.1,9.6,47.2,1',
      '9.5,47.1,500,9.6,47.2,-10',
      '9.5,47.1,low,9.6,47.2,10',
      '9.5,47.1,9.6,47.2,1,2,3',
      '9.5,47.1,0,9.6,91,1',
    ]) {
      const r = await get(`/collections/buildings/items?bbox=${bbox}`, auth());
      expect([bbox, r.status, r.body.error.parameter]).toEqual([bbox, 400, 'bbox']);
    }
    // GET /buildings keeps spec rule 2: four numbers, each side at most 3 degrees.
    for (const bbox of ['0,40,20,55', `${BBOX[0]},${BBOX[1]},0,${BBOX[2]},${BBOX[3]},1`]) {
      const r = await get(`/buildings?bbox=${bbox}`, auth());
      expect([bbox, r.status, r.body.error.parameter]).toEqual([bbox, 400, 'bbox']);
    }
    // The parameters as the OGC test suite reads them from the API definition.
    const api = (await (await fetch(`${t.base}/openapi.json`)).json()) as J;
    const params = Object.fromEntries(api.paths['/collections/{collectionId}/items'].get.parameters.map((p: J) => [p.name, p]));
    expect(params.bbox.schema.oneOf).toEqual([
      { minItems: 4, maxItems: 4 },
      { minItems: 6, maxItems: 6 },
    ]);
    for (const name of ['bbox', 'limit', 'offset', 'datetime'])
      expect([name, params[name].style, params[name].explode]).toEqual([name, 'form', false]);
  });

  it('take datetime, which every building matches (they carry no time), in the syntax OGC API Features Core gives it', async () => {
    const plain = await get(`/collections/buildings/items?bbox=${BBOX.join(',')}&limit=100`, auth());
    const stored = await get('/collections/buildings/items?limit=7&offset=2', auth());
    for (const value of [
      '2018-02-12T23:20:50Z',
      '2018-02-12t23:20:50.25%2B02:00',
      '2018-02-12',
      '2018-01-01T00:00:00Z/2019-01-01T00:00:00Z',
      '../2018-02-12T00:00:00Z',
      '2018-02-12T00:00:00Z/..',
      '/2018-02-12T00:00:00Z',
      '2016-12-31T23:59:60Z', // a leap second
    ]) {
      const r = await get(
        `/collections/buildings/items?bbox=${BBOX.join(',')}&limit=100&datetime=${value}`,
        auth(),
        '/collections/{collectionId}/items',
      );
      expect([value, r.status, r.body.numberMatched]).toEqual([value, 200, plain.body.numberMatched]);
      expect(r.body.features.map((f: J) => f.id)).toEqual(plain.body.features.map((f: J) => f.id));
      expect(r.body.links.find((l: J) => l.rel === 'next').href).toContain(`datetime=${value}`);
      const s = await get(`/collections/buildings/items?limit=7&offset=2&datetime=${value}`, auth());
      expect(s.body.features.map((f: J) => f.id)).toEqual(stored.body.features.map((f: J) => f.id));
    }
    for (const value of [
      '',
      'yesterday',
      '../..',
      '2018-02-30',
      '2018-13-01',
      '2018-02-12T24:00:00Z',
      '2018-02-12T23:20:50',
      '2018/2019/2020',
    ]) {
      const r = await get(`/collections/buildings/items?bbox=${BBOX.join(',')}&datetime=${value}`, auth());
      expect([value, r.status, r.body.error.parameter]).toEqual([value, 400, 'datetime']);
    }
    const twice = await get(`/collections/buildings/items?bbox=${BBOX.join(',')}&datetime=2018-02-12&datetime=2018-02-12`, auth());
    expect([twice.status, twice.body.error.parameter]).toEqual([400, 'datetime']);
    const api = (await (await fetch(`${t.base}/openapi.json`)).json()) as J;
    const param = api.paths['/collections/{collectionId}/items'].get.parameters.find((p: J) => p.name === 'datetime');
    expect(param).toMatchObject({ in: 'query', style: 'form', explode: false, schema: { type: 'string' } });
  });

  it('name an unknown parameter as such, with or without bbox, and as a parameter of the items', async () => {
    for (const query of ['foo=1', `bbox=${BBOX.join(',')}&foo=1`, 'limit=5&properties=height']) {
      const r = await get(`/collections/buildings/items?${query}`, auth());
      const name = query.includes('foo') ? 'foo' : 'properties';
      expect([r.status, r.body.error.parameter]).toEqual([400, name]);
      expect(r.body.error.message).toMatch(new RegExp(`^${name}: not a parameter of GET /collections/buildings/items`));
    }
    // A known filter without a bbox is refused for want of one.
    const sorted = await get('/collections/buildings/items?sort=height', auth());
    expect([sorted.status, sorted.body.error.parameter]).toEqual([400, 'sort']);
    expect(sorted.body.error.message).toMatch(/need a bbox/);
  });

  it('one feature takes f=json or f=geojson and nothing else, wherever it stands in the query', async () => {
    const path = `/collections/buildings/items/${snapshot.buildingId(7)}`;
    for (const query of ['', '?f=json', '?f=geojson', '?%66=json', '?&f=json&']) {
      const r = await get(`${path}${query}`, auth());
      expect([query, r.status, r.body.id]).toEqual([query, 200, snapshot.buildingId(7)]);
    }
    for (const [query, parameter] of [
      ['?f=xml', 'f'],
      ['?f', 'f'],
      ['?f=json&foo=1', 'foo'],
      ['?foo=1&f=json', 'foo'],
      ['?bbox=1,2,3,4', 'bbox'],
    ]) {
      const r = await get(`${path}${query}`, auth());
      expect([query, r.status, r.body.error.parameter]).toEqual([query, 400, parameter]);
    }
  });

  it('answer errors in JSON whatever the Accept header asks, where GET /buildings answers in MessagePack', async () => {
    const msgpack = { Accept: 'application/msgpack' };
    const feature = `/collections/buildings/items/${snapshot.buildingId(7)}`;
    for (const [path, headers, status, code] of [
      [`/collections/buildings/items?bbox=${BBOX.join(',')}`, msgpack, 401, 'unauthorized'],
      [`/collections/buildings/items?bbox=${BBOX.join(',')}&foo=1`, { ...msgpack, ...auth() }, 400, 'invalid_parameter'],
      [`${feature}?f=xml`, { ...msgpack, ...auth() }, 400, 'invalid_parameter'],
      ['/collections/buildings/items/b-nothing-here', { ...msgpack, ...auth() }, 404, 'not_found'],
    ] as const) {
      const r = await get(path, headers);
      expect([path, r.status, r.headers.get('Content-Type'), r.body.error.code]).toEqual([
        path,
        status,
        'application/json; charset=utf-8',
        code,
      ]);
    }
    const res = await fetch(`${t.base}/buildings?bbox=${BBOX.join(',')}&foo=1`, { headers: { ...msgpack, ...auth() } });
    expect([res.status, res.headers.get('Content-Type')]).toEqual([400, 'application/msgpack']);
  });

  it('are charged as GET /buildings: 402 before anything is sent, then once per building', async () => {
    const w = workspaceWithKey(t.ledger, 0, 'oapif'); // 5 welcome credits
    const refused = await get(`/collections/buildings/items?bbox=${BBOX.join(',')}&limit=6`, auth(w.key));
    expect([refused.status, refused.body.error.code]).toEqual([402, 'insufficient_credits']);
    const paid = await get(`/collections/buildings/items?bbox=${BBOX.join(',')}&limit=5`, auth(w.key));
    expect(paid.headers.get('X-Credits-Charged')).toBe('5');
    const again = await get(`/buildings?bbox=${BBOX.join(',')}&limit=5`, auth(w.key));
    expect(again.headers.get('X-Credits-Charged')).toBe('0');
  });
});

describe("GDAL (Debian's ogrinfo and ogr2ogr, OAPIF driver)", () => {
  it("ogrinfo lists the layer; ogr2ogr copies a bbox's buildings, the same as the API's, and the workspace pays for what GDAL read", async () => {
    const w = workspaceWithKey(t.ledger, 100_000, 'gdal');
    const env = { ...process.env, GDAL_HTTP_HEADERS: `Authorization: Bearer ${w.key}` };
    const before = t.ledger.balance(w.workspaceId);

    const info = await run('ogrinfo', ['-ro', `OAPIF:${t.base}`], { env, encoding: 'utf8' });
    expect(info.stdout).toMatch(/1: buildings \(title: Buildings\) \(Multi Polygon\)/);

    const gpkg = join(dir, 'buildings.gpkg');
    await run('ogr2ogr', ['-f', 'GPKG', gpkg, `OAPIF:${t.base}`, 'buildings', '-spat', ...BBOX.map(String), '-oo', 'PAGE_SIZE=100'], {
      env,
      encoding: 'utf8',
    });
    const db = new Database(gpkg, { readonly: true });
    const copied = db.prepare('SELECT building_id, id FROM buildings ORDER BY fid').all() as { building_id: string; id: string }[];
    const geometryType = (
      db.prepare('SELECT geometry_type_name FROM gpkg_geometry_columns WHERE table_name = ?').get('buildings') as {
        geometry_type_name: string;
      }
    ).geometry_type_name;
    db.close();

    const want = await idsOfBbox(BBOX);
    expect(copied.length).toBe(want.length);
    expect(copied.map((r) => r.building_id)).toEqual(want);
    expect(copied.map((r) => r.id)).toEqual(want);
    expect(geometryType).toBe('MULTIPOLYGON');

    // GDAL read the first features of the layer (no bbox) to learn its fields, a page of them
    // (10 for ogrinfo, PAGE_SIZE for ogr2ogr), then the bbox's.
    const probe = (await get('/collections/buildings/items?limit=100', auth())).body.features.map((f: J) => f.id) as string[];
    const paid = new Set([...want, ...probe]).size;
    expect(before - t.ledger.balance(w.workspaceId)).toBe(paid);
  }, 120_000);
});
