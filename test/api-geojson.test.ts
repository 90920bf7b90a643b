/**
 * GeoJSON answers and `fields=` over real HTTP, on a snapshot built from a real OpenStreetMap
 * extract (Monaco: outlines drawn either way round, courtyards as holes). The footprints are held
 * against the snapshot's own rings and turned as RFC 7946 asks, and GDAL reads a saved answer.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { unpack } from 'msgpackr';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSnapshot } from '../src/build/builder.ts';
import { exportPbf } from '../src/build/osmium.ts';
import type { Snapshot } from '../src/catalog/catalog.ts';
import { BUILDING_KEYS } from '../src/api/fields.ts';
import { ResponseValidator, removeDir, startTestServer, workspaceWithKey, type TestServer } from './http-helpers.ts';

type J = Record<string, any>;

const PBF = fileURLToPath(new URL('./fixtures/osm/monaco-2021-04-21.osm.pbf', import.meta.url));

let dir: string;
let t: TestServer;
let key: string;
let snapshot: Snapshot;
let bbox: string;
let validator: ResponseValidator;

/** Twice the signed area of a closed ring of [lon, lat] positions: positive when counter-clockwise. */
function shoelace(ring: number[][]): number {
  let sum = 0;
  for (let i = 0; i + 1 < ring.length; i++) sum += ring[i][0] * ring[i + 1][1] - ring[i + 1][0] * ring[i][1];
  return sum;
}

/** A stored ring (interleaved, closed) as positions. */
const positions = (ring: ArrayLike<number>): number[][] => {
  const out: number[][] = [];
  for (let k = 0; k < ring.length; k += 2) out.push([ring[k], ring[k + 1]]);
  return out;
};

async function get(
  template: string,
  path: string,
  headers: Record<string, string> = {},
  k = key,
): Promise<{ status: number; headers: Headers; body: J; text: string }> {
  const res = await fetch(`${t.base}${path}`, { headers: { Authorization: `Bearer ${k}`, ...headers } });
  const raw = Buffer.from(await res.arrayBuffer());
  const type = res.headers.get('content-type') ?? '';
  const body = (type.includes('msgpack') ? unpack(raw) : JSON.parse(raw.toString('utf8'))) as J;
  if (!type.includes('geo+json')) expect(validator.problems(template, res.status, res.headers, body)).toEqual([]);
  return { status: res.status, headers: res.headers, body, text: raw.toString('utf8') };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'edifice-geojson-'));
  const exported = await exportPbf(PBF, dir);
  // osmium draws every outline counter-clockwise; a GeoJSON source need not: every other polygon
  // is turned round before the build, so that the snapshot keeps rings both ways.
  const turned = join(dir, 'turned.geojsonseq');
  writeFileSync(
    turned,
    readFileSync(exported, 'utf8')
      .split('\n')
      .map((line, i) => {
        const start = line.indexOf('{');
        if (start < 0 || i % 2 === 0) return line;
        const feature = JSON.parse(line.slice(start)) as J;
        const g = feature.geometry;
        if (g?.type === 'Polygon') g.coordinates = g.coordinates.map((r: number[][]) => r.reverse());
        if (g?.type === 'MultiPolygon') g.coordinates = g.coordinates.map((p: number[][][]) => p.map((r) => r.reverse()));
        return line.slice(0, start) + JSON.stringify(feature);
      })
      .join('\n'),
  );
  await buildSnapshot({
    country: 'MC',
    snapshotDate: '2021-04-21',
    buildings: turned,
    out: join(dir, 'snapshots', 'MC', '2021-04-21.arrow'),
  });
  t = await startTestServer(dir, { perKeyPerMinute: 1_000_000, dailyQuota: 1_000_000 });
  validator = new ResponseValidator((await (await fetch(`${t.base}/openapi.json`)).json()) as J);
  key = workspaceWithKey(t.ledger, 1_000_000).key;
  snapshot = t.catalog.view().snapshots[0];
  const e = snapshot.extent!;
  bbox = [e.minLon, e.minLat, e.maxLon, e.maxLat].join(',');
}, 120_000);

afterAll(() => {
  t?.close();
  if (dir) removeDir(dir);
});

/** A row whose stored outline has a clockwise exterior, and one with a counter-clockwise hole: both to be turned. */
function rowsWith(): { clockwise: number; holed: number } {
  let clockwise = -1;
  let holed = -1;
  for (let row = 0; row < snapshot.rows && (clockwise < 0 || holed < 0); row++) {
    const polygons = snapshot.record(row).footprint;
    if (clockwise < 0 && polygons.some((p) => shoelace(positions(p[0])) < 0)) clockwise = row;
    if (holed < 0 && polygons.some((p) => p.slice(1).some((r) => shoelace(positions(r)) > 0))) holed = row;
  }
  return { clockwise, holed };
}

describe('GeoJSON', () => {
  it('f=geojson and Accept: application/geo+json answer the JSON page as a FeatureCollection of points', async () => {
    const json = await get('/buildings', `/buildings?bbox=${bbox}&limit=50`);
    for (const [path, headers] of [
      [`/buildings?bbox=${bbox}&limit=50&f=geojson`, {}],
      [`/buildings?bbox=${bbox}&limit=50`, { Accept: 'application/geo+json' }],
      // Media types are case-insensitive.
      [`/buildings?bbox=${bbox}&limit=50`, { Accept: 'Application/GEO+JSON' }],
    ] as const) {
      const geo = await get('/buildings', path, headers);
      expect(geo.status).toBe(200);
      expect(geo.headers.get('content-type')).toBe('application/geo+json');
      expect(geo.body.type).toBe('FeatureCollection');
      expect(geo.body.meta).toEqual(json.body.meta);
      expect(json.body.links.next).toBe(`${t.base}/buildings?bbox=${bbox}&limit=50&offset=50`);
      expect(geo.body.links.next).toBe(`${t.base}${path}&offset=50`);
      expect(geo.body.features).toHaveLength(50);
      geo.body.features.forEach((f: J, i: number) => {
        const b = json.body.data[i];
        expect(f).toEqual({
          type: 'Feature',
          id: b.building_id,
          geometry: { type: 'Point', coordinates: [b.longitude, b.latitude] },
          properties: b,
        });
      });
    }
    // The JSON answer is the same as ever: an Accept that lists JSON first, or none, gets JSON.
    expect(
      (await get('/buildings', `/buildings?bbox=${bbox}&limit=50`, { Accept: 'application/json, application/geo+json;q=0.5' })).body.data,
    ).toEqual(json.body.data);
  });

  it('links.next of a GeoJSON page keeps f=geojson, so the walk stays GeoJSON', async () => {
    const geo = await get('/buildings', `/buildings?bbox=${bbox}&limit=10&f=geojson&geometry=footprint`);
    expect(geo.body.links.next).toBe(`${t.base}/buildings?bbox=${bbox}&limit=10&f=geojson&geometry=footprint&offset=10`);
  });

  it("geometry=footprint: the snapshot's rings, exterior counter-clockwise and holes clockwise (RFC 7946)", async () => {
    const { clockwise, holed } = rowsWith();
    expect(clockwise).toBeGreaterThanOrEqual(0); // some outlines are stored clockwise: turning is exercised
    expect(holed).toBeGreaterThanOrEqual(0);
    for (const row of [clockwise, holed]) {
      const id = snapshot.buildingId(row);
      const r = await get(
        '/buildings/at',
        `/buildings/at?lat=${snapshot.lat[row]}&lon=${snapshot.lon[row]}&radius_m=1&limit=25&f=geojson&geometry=footprint`,
      );
      const feature = r.body.features.find((f: J) => f.id === id);
      expect(feature.geometry.type).toBe('MultiPolygon');
      const stored = snapshot.record(row).footprint;
      expect(feature.geometry.coordinates).toHaveLength(stored.length);
      feature.geometry.coordinates.forEach((polygon: number[][][], p: number) => {
        expect(polygon).toHaveLength(stored[p].length);
        polygon.forEach((ring, k) => {
          const want = positions(stored[p][k]);
          // The same closed ring from the same first vertex, as stored or reversed.
          const turned = shoelace(want) > 0 === (k === 0) ? want : [...want].reverse();
          expect(ring).toEqual(turned);
          if (k === 0) expect(shoelace(ring)).toBeGreaterThan(0);
          else expect(shoelace(ring)).toBeLessThan(0);
        });
      });
    }
  });

  it('GDAL reads a saved answer: the features, their ids, and rings already in RFC 7946 order', () => {
    return (async () => {
      const r = await get('/buildings', `/buildings?bbox=${bbox}&limit=100&sort=area&f=geojson&geometry=footprint`);
      const saved = join(dir, 'page.geojson');
      writeFileSync(saved, r.text);
      const summary = execFileSync('ogrinfo', ['-ro', '-al', '-so', saved], { encoding: 'utf8' });
      expect(summary).toContain('Feature Count: 100');
      expect(summary).toMatch(/Geometry: Multi Polygon/);
      expect(summary).toMatch(/building_id: String/);
      // GDAL's RFC 7946 writer turns rings that are not in order; ours come out as they went in.
      const out = join(dir, 'rewritten.geojson');
      execFileSync('ogr2ogr', ['-f', 'GeoJSON', '-lco', 'RFC7946=YES', '-lco', 'COORDINATE_PRECISION=15', out, saved]);
      const rewritten = JSON.parse(readFileSync(out, 'utf8')) as J;
      expect(rewritten.features.map((f: J) => f.properties.building_id)).toEqual(r.body.features.map((f: J) => f.id));
      rewritten.features.forEach((f: J, i: number) => {
        const ours = r.body.features[i].geometry.coordinates.flat(3) as number[];
        const gdal = f.geometry.coordinates.flat(3) as number[];
        expect(gdal).toHaveLength(ours.length);
        for (let k = 0; k < ours.length; k++) expect(Math.abs(gdal[k] - ours[k])).toBeLessThan(1e-9);
      });
    })();
  });

  it('charges as the JSON page: once per building, all or nothing', async () => {
    const w = workspaceWithKey(t.ledger, 0, 'geo'); // 5 welcome credits
    const refused = await get('/buildings', `/buildings?bbox=${bbox}&limit=6&f=geojson&geometry=footprint`, {}, w.key);
    expect(refused.status).toBe(402);
    expect(refused.body.error.code).toBe('insufficient_credits');
    const paid = await get('/buildings', `/buildings?bbox=${bbox}&limit=5&f=geojson&geometry=footprint`, {}, w.key);
    expect(paid.headers.get('X-Credits-Charged')).toBe('5');
    const again = await get('/buildings', `/buildings?bbox=${bbox}&limit=5&fields=height`, {}, w.key);
    expect([again.status, again.headers.get('X-Credits-Charged')]).toEqual([200, '0']);
    expect(again.body.data.map((b: J) => b.building_id)).toEqual(paid.body.features.map((f: J) => f.id));
  });

  it('geometry without GeoJSON is refused, naming it', async () => {
    const r = await get('/buildings', `/buildings?bbox=${bbox}&geometry=footprint`);
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: 'invalid_parameter', parameter: 'geometry' });
  });
});

describe('fields=', () => {
  it("keeps the listed fields and building_id, in the Building object's order, values unchanged", async () => {
    const full = await get('/buildings', `/buildings?bbox=${bbox}&limit=100`);
    const slim = await get('/buildings', `/buildings?bbox=${bbox}&limit=100&fields=height,address,registered_solar&fields=app_url`);
    expect(slim.body.meta).toEqual(full.body.meta);
    slim.body.data.forEach((b: J, i: number) => {
      const f = full.body.data[i];
      expect(Object.keys(b)).toEqual(['building_id', 'address', 'height', 'registered_solar', 'app_url']);
      expect(b).toEqual({
        building_id: f.building_id,
        address: f.address,
        height: f.height,
        registered_solar: f.registered_solar,
        app_url: f.app_url,
      });
    });
  });

  it('every field alone, in JSON, MessagePack and GeoJSON properties', async () => {
    const full = await get('/buildings', `/buildings?bbox=${bbox}&limit=20`);
    for (const k of BUILDING_KEYS) {
      const json = await get('/buildings', `/buildings?bbox=${bbox}&limit=20&fields=${k}`);
      const msgpack = await get('/buildings', `/buildings?bbox=${bbox}&limit=20&fields=${k}`, { Accept: 'application/msgpack' });
      const geo = await get('/buildings', `/buildings?bbox=${bbox}&limit=20&fields=${k}&f=geojson`);
      const want = full.body.data.map((b: J) => ({ building_id: b.building_id, [k]: b[k] }));
      expect(json.body.data).toEqual(want);
      expect(msgpack.body.data).toEqual(want);
      expect(geo.body.features.map((f: J) => f.properties)).toEqual(want);
    }
  });

  it('on GET /buildings/at too', async () => {
    const row = snapshot.rows >> 1;
    const at = `/buildings/at?lat=${snapshot.lat[row]}&lon=${snapshot.lon[row]}&radius_m=50`;
    const full = await get('/buildings/at', at);
    const slim = await get('/buildings/at', `${at}&fields=locality`);
    expect(slim.body.data).toEqual(full.body.data.map((b: J) => ({ building_id: b.building_id, locality: b.locality })));
  });

  it('an unknown field is refused, naming it', async () => {
    const r = await get('/buildings', `/buildings?bbox=${bbox}&fields=height,heigth`);
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('invalid_parameter');
    expect(r.body.error.parameter).toBe('fields');
    expect(r.body.error.message).toMatch(/"heigth" is not a top-level field of the Building object .*; did you mean height\?/);
  });
});
