/**
 * The authenticated API over real HTTP: a real server on 127.0.0.1, a real ledger file, a
 * snapshot written by the real generator. Every response is checked against the OpenAPI
 * document the server serves; answers are checked against the query engine called directly.
 */
import { connect, type Socket } from 'node:net';
import SwaggerParser from '@apidevtools/swagger-parser';
import { unpack } from 'msgpackr';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ledger } from '../src/ledger/index.ts';
import { PARAMETERS, parametersOf } from '../src/api/params.ts';
import { OPERATIONS, type OperationId } from '../src/api/operations.ts';
import { parseBuildingsQuery, parsePointQuery } from '../src/api/validate.ts';
import { queryBuildings } from '../src/query/buildings.ts';
import { queryPoint } from '../src/query/point.ts';
import type { Snapshot } from '../src/catalog/catalog.ts';
import { ResponseValidator, removeDir, startTestServer, syntheticSnapshots, workspaceWithKey, type TestServer } from './http-helpers.ts';

type J = Record<string, any>;

let dir: string;
let t: TestServer;
let validator: ResponseValidator;
let key: string;
let snapshot: Snapshot;
let bbox: string;

const SPEC_HEADERS = [
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'X-Daily-Quota-Limit',
  'X-Daily-Quota-Remaining',
  'X-Credits-Charged',
  'X-Credits-Remaining',
  'RateLimit-Policy',
  'RateLimit',
];

interface Got {
  status: number;
  headers: Headers;
  body: J;
}

/** GET a path (template names the OpenAPI path) and check the answer against the served document. */
async function get(template: string, pathAndQuery: string, headers: Record<string, string> = {}): Promise<Got> {
  const res = await fetch(`${t.base}${pathAndQuery}`, { headers });
  const type = res.headers.get('content-type') ?? '';
  const raw = Buffer.from(await res.arrayBuffer());
  const body = (type.includes('msgpack') ? unpack(raw) : JSON.parse(raw.toString('utf8'))) as J;
  expect(validator.problems(template, res.status, res.headers, body)).toEqual([]);
  return { status: res.status, headers: res.headers, body };
}

const auth = (k = key) => ({ Authorization: `Bearer ${k}` });

beforeAll(async () => {
  dir = await syntheticSnapshots(4000);
  t = await startTestServer(dir, { perKeyPerMinute: 1_000_000, dailyQuota: 1_000_000 });
  const doc = await (await fetch(`${t.base}/openapi.json`)).json();
  validator = new ResponseValidator(doc as J);
  key = workspaceWithKey(t.ledger, 1_000_000).key;
  snapshot = t.catalog.view().snapshots[0];
  // A box around the middle row: rows are in Hilbert order, so the middle is in some settlement.
  const row = snapshot.rows >> 1;
  const [lon, lat] = [snapshot.lon[row], snapshot.lat[row]];
  bbox = [lon - 0.03, lat - 0.03, lon + 0.03, lat + 0.03].map((v) => v.toFixed(4)).join(',');
});

afterAll(() => {
  t?.close();
  if (dir) removeDir(dir);
});

describe('the machine-readable description', () => {
  it('GET /v1/openapi.json needs no key and is valid OpenAPI 3.1, version 1.0.0, served at this address', async () => {
    const res = await fetch(`${t.base}/openapi.json`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as J;
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1.0.0');
    expect(doc.servers[0].url).toBe(t.base);
    await expect(SwaggerParser.validate(doc as any)).resolves.toBeTruthy();
  });
});

describe('authentication (401, 403)', () => {
  // The challenge of RFC 6750 section 3: none asked for, a header that is not one bearer token, a token refused.
  const challenges = { missing: 'Bearer', request: 'Bearer error="invalid_request"', token: 'Bearer error="invalid_token"' };
  const refused = async (
    headers: Record<string, string>,
    message: RegExp,
    status = 401,
    code = 'unauthorized',
    challenge = challenges.token,
  ) => {
    const r = await get('/buildings', `/buildings?bbox=${bbox}`, headers);
    expect(r.status).toBe(status);
    expect(r.body.error.code).toBe(code);
    expect(r.body.error.message).toMatch(message);
    // Without a valid key there is no workspace whose limits and credits could be told.
    if (status === 401) expect(r.headers.get('X-Credits-Charged')).toBeNull();
    expect(r.headers.get('WWW-Authenticate')).toBe(status === 401 ? challenge : null);
    return r;
  };
  const notBearer = /holds no API key in the form Bearer <API_KEY>/;

  it('no Authorization header', () => refused({}, /Missing API key/, 401, 'unauthorized', challenges.missing));
  it('a key in a cookie is ignored', () =>
    refused({ Cookie: `api_key=${key}` }, /Missing API key/, 401, 'unauthorized', challenges.missing));
  it('another scheme is not a key', () =>
    refused({ Authorization: `Basic ${Buffer.from(`x:${key}`).toString('base64')}` }, notBearer, 401, 'unauthorized', challenges.request));
  it('a header that is not one bearer token says so', async () => {
    for (const value of [key, `Token ${key}`, 'Bearer', `Bearer ${key} x`, `Bearer ${key}, Bearer ${key}`]) {
      await refused({ Authorization: value }, notBearer, 401, 'unauthorized', challenges.request);
    }
  });
  it('a malformed key', () => refused(auth('edf_nope'), /Malformed/));
  it('a key with a broken checksum', () => refused(auth(key.slice(0, -1) + (key.endsWith('A') ? 'B' : 'A')), /Malformed|Unknown/));
  it('a well-formed key of another ledger', () => {
    const other = Ledger.open(':memory:');
    try {
      return refused(auth(workspaceWithKey(other, 0).key), /Unknown API key/);
    } finally {
      other.close();
    }
  });
  it('a revoked key', () => {
    const k = workspaceWithKey(t.ledger, 10);
    t.ledger.revokeKey(k.keyId);
    return refused(auth(k.key), /revoked/);
  });
  it('an expired key', async () => {
    const email = `exp-${Date.now()}@example.com`;
    const { workspaceId } = t.ledger.createWorkspace('exp', { createdBy: email });
    // An expiry must lie ahead when the key is made; then wait until it has passed.
    const expiresAt = Date.now() + 500;
    const k = t.ledger.createKey(workspaceId, email, { expiresAt });
    while (Date.now() <= expiresAt) await new Promise((r) => setTimeout(r, 20));
    await refused(auth(k.key), /expired/);
  });
  it('a key whose creator left the workspace', () => {
    const email = `left-${Date.now()}@example.com`;
    const { workspaceId } = t.ledger.createWorkspace('left', { createdBy: email });
    t.ledger.addMember(workspaceId, `stays-${Date.now()}@example.com`);
    const k = t.ledger.createKey(workspaceId, email);
    t.ledger.removeMember(workspaceId, email);
    return refused(auth(k.key), /left the workspace/);
  });
  it('a suspended workspace answers 403 forbidden, with the headers of spec 8 and nothing counted or charged', async () => {
    const k = workspaceWithKey(t.ledger, 10);
    t.ledger.suspendWorkspace(k.workspaceId, 'test');
    const r = await refused(auth(k.key), /suspended/, 403, 'forbidden');
    for (const h of SPEC_HEADERS) expect(r.headers.get(h), h).not.toBeNull();
    expect([r.headers.get('X-Credits-Charged'), r.headers.get('X-Credits-Remaining')]).toEqual(['0', '15']);
    expect(r.headers.get('X-Daily-Quota-Remaining')).toBe(String(1_000_000));
  });
});

describe('GET /buildings', () => {
  it("answers the engine's page with every header of spec 8, charging new buildings once", async () => {
    const k = workspaceWithKey(t.ledger, 1000);
    const query = `bbox=${bbox}&sort=height&limit=7&min_floors=1`;
    const expected = queryBuildings(t.catalog.view(), parseBuildingsQuery(query));
    expect(expected.rows.length).toBeGreaterThan(0);
    const before = t.ledger.balance(k.workspaceId);

    const first = await get('/buildings', `/buildings?${query}`, auth(k.key));
    expect(first.status).toBe(200);
    for (const h of SPEC_HEADERS) expect(first.headers.has(h), h).toBe(true);
    expect(first.body.data.map((b: J) => b.building_id)).toEqual(expected.rows.map((r) => r.snapshot.buildingId(r.row)));
    expect(first.body.meta).toEqual({
      total: expected.total,
      total_is_capped: expected.totalIsCapped,
      limit: 7,
      offset: 0,
      sort: 'height',
    });
    expect(Number(first.headers.get('X-Credits-Charged'))).toBe(expected.rows.length);
    expect(Number(first.headers.get('X-Credits-Remaining'))).toBe(before - expected.rows.length);
    expect(t.ledger.balance(k.workspaceId)).toBe(before - expected.rows.length);

    const again = await get('/buildings', `/buildings?${query}`, auth(k.key));
    expect(again.body.data).toEqual(first.body.data);
    expect(again.headers.get('X-Credits-Charged')).toBe('0');
    expect(Number(again.headers.get('X-Credits-Remaining'))).toBe(before - expected.rows.length);
  });

  it('links.next keeps every parameter and walks the ranking without overlap', async () => {
    const query = `bbox=${bbox}&limit=5&category=residential_house,apartment_block&sort=volume`;
    const all = queryBuildings(t.catalog.view(), { ...parseBuildingsQuery(query), limit: 15 });
    let url: string | null = `${t.base}/buildings?${query}`;
    const ids: string[] = [];
    for (let page = 0; page < 3 && url; page++) {
      const r = await get('/buildings', url.slice(t.base.length), auth());
      ids.push(...r.body.data.map((b: J) => b.building_id));
      url = r.body.links.next;
      if (url) {
        expect(
          url.startsWith(`${t.base}/buildings?bbox=${bbox}&limit=5&category=residential_house,apartment_block&sort=volume&offset=`),
        ).toBe(true);
      }
    }
    expect(ids).toEqual(all.rows.map((r) => r.snapshot.buildingId(r.row)));
  });

  it('a long walk by links.next: each page as the engine ranks it alone; /metrics counts the pages the kept rankings answered', async () => {
    const rankings = async () => {
      const text = await (await fetch(`${t.metricsUrl}/metrics`)).text();
      const value = (result: string) =>
        Number(new RegExp(`^edifice_ranking_cache_pages_total\\{result="${result}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
      return { hits: value('hit'), misses: value('miss') };
    };
    const before = await rankings();
    const query = `bbox=9.4,47.0,9.7,47.3&limit=40&sort=height`; // the whole country
    const view = t.catalog.view();
    let url: string | null = `${t.base}/buildings?${query}`;
    let pages = 0;
    for (; pages < 25 && url; pages++) {
      const r = await get('/buildings', url.slice(t.base.length), auth());
      const alone = queryBuildings(view, parseBuildingsQuery(url.slice(url.indexOf('?') + 1)));
      expect(r.body.data.map((b: J) => b.building_id)).toEqual(alone.rows.map((x) => x.snapshot.buildingId(x.row)));
      expect(r.body.meta.total).toBe(alone.total);
      url = r.body.links.next;
    }
    expect(pages).toBe(25);
    const after = await rankings();
    // The first page does not use them; of the 24 after it, a thread ranks at offsets 40, 80, 240,
    // 560: with the pages spread over two workers, at most twice that.
    expect(after.hits + after.misses - before.hits - before.misses).toBe(24);
    expect(after.misses - before.misses).toBeGreaterThanOrEqual(4);
    expect(after.misses - before.misses).toBeLessThanOrEqual(8);
  });

  it('the last page has links.next null', async () => {
    const query = `bbox=${bbox}&limit=100&min_floors=5`;
    const expected = queryBuildings(t.catalog.view(), parseBuildingsQuery(query));
    expect(expected.total).toBeLessThanOrEqual(100);
    const r = await get('/buildings', `/buildings?${query}`, auth());
    expect(r.body.links.next).toBeNull();
  });

  it('an area outside every covered country is an empty page, not an error', async () => {
    const r = await get('/buildings', '/buildings?bbox=-60.0,-30.0,-59.0,-29.0', auth());
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ data: [], meta: { total: 0, total_is_capped: false }, links: { next: null } });
    expect(r.headers.get('X-Credits-Charged')).toBe('0');
  });

  it('Accept: application/msgpack gets the same document in MessagePack', async () => {
    const query = `/buildings?bbox=${bbox}&limit=4`;
    const json = await get('/buildings', query, auth());
    const packed = await get('/buildings', query, { ...auth(), Accept: 'application/msgpack' });
    expect(packed.headers.get('content-type')).toBe('application/msgpack');
    expect(packed.body).toEqual(json.body);
  });

  it('pages answered at once, each waiting for its charge, come out whole: no body is written over by the next', async () => {
    // Every page costs credits, so each waits for the ledger's commit while the others are written.
    const k = workspaceWithKey(t.ledger, 1_000_000).key;
    const queries = Array.from({ length: 40 }, (_, i) => [
      `/buildings?bbox=9.4,47.0,9.7,47.3&limit=100&offset=${100 * i}&sort=${i % 2 ? 'height' : 'area'}`,
      i % 3 ? 'application/json' : 'application/msgpack',
    ]);
    const fetchPage = async ([query, accept]: string[]) => {
      const res = await fetch(`${t.base}${query}`, { headers: { ...auth(k), Accept: accept } });
      expect(res.status).toBe(200);
      return { charged: Number(res.headers.get('X-Credits-Charged')), raw: Buffer.from(await res.arrayBuffer()) };
    };
    const together = await Promise.all(queries.map(fetchPage));
    expect(together.reduce((n, p) => n + p.charged, 0)).toBeGreaterThan(1000);
    for (let i = 0; i < queries.length; i++) {
      // Asked again one at a time: free now, and the same bytes.
      const again = await fetchPage(queries[i]);
      expect(again.charged).toBe(0);
      expect(again.raw.equals(together[i].raw)).toBe(true);
      const doc = (queries[i][1] === 'application/msgpack' ? unpack(together[i].raw) : JSON.parse(together[i].raw.toString('utf8'))) as J;
      expect(doc.meta.offset).toBe(100 * i);
    }
  });

  it('pages answered to clients that read nothing yet arrive whole once they do: uWS keeps its own copy of what it could not send', async () => {
    // 120 connections, each asking for a page of 100 buildings (~16 MB in all) and reading
    // nothing until every page has been answered: what the sockets' buffers cannot hold waits
    // in uWS, while the server's writers go on to the next pages.
    const k = workspaceWithKey(t.ledger, 1_000_000).key;
    const paths: string[] = [];
    for (const sort of ['area', 'height', 'volume']) {
      for (let offset = 0; offset < snapshot.rows; offset += 100)
        paths.push(`/v1/buildings?bbox=9.4,47.0,9.7,47.3&limit=100&offset=${offset}&sort=${sort}`);
    }
    const answered = async () => {
      const text = await (await fetch(`${t.metricsUrl}/metrics`)).text();
      return Number(/^edifice_http_requests_total\{route="\/buildings",status="200"\} (\d+)$/m.exec(text)?.[1] ?? 0);
    };
    const before = await answered();
    const clients = await Promise.all(
      paths.map(
        (path) =>
          new Promise<{ socket: Socket; chunks: Buffer[] }>((resolve) => {
            const socket = connect(t.server.port, '127.0.0.1');
            const chunks: Buffer[] = [];
            socket.pause();
            socket.on('data', (d: Buffer) => chunks.push(d));
            socket.once('connect', () => {
              socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${k}\r\n\r\n`);
              resolve({ socket, chunks });
            });
          }),
      ),
    );
    for (let i = 0; i < 200 && (await answered()) < before + paths.length; i++) await new Promise((r) => setTimeout(r, 50));
    expect(await answered()).toBe(before + paths.length);
    for (const c of clients) c.socket.resume();
    // Read until each response is whole (Content-Length), for at most 20 s.
    const body = (chunks: Buffer[]): Buffer | null => {
      const all = Buffer.concat(chunks);
      const headEnd = all.indexOf('\r\n\r\n');
      if (headEnd < 0) return null;
      const length = Number(/content-length: (\d+)/i.exec(all.subarray(0, headEnd).toString('latin1'))?.[1]);
      return all.length >= headEnd + 4 + length ? all.subarray(headEnd + 4, headEnd + 4 + length) : null;
    };
    const deadline = Date.now() + 20_000;
    while (clients.some((c) => body(c.chunks) === null) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    for (const c of clients) c.socket.destroy();
    const bodies = clients.map((c) => body(c.chunks));
    expect(bodies.reduce((n, b) => n + (b?.length ?? 0), 0)).toBeGreaterThan(12 * 1024 * 1024);
    for (let i = 0; i < paths.length; i++) {
      const again = await fetch(`${t.url}${paths[i]}`, { headers: auth(k) });
      expect(again.headers.get('X-Credits-Charged')).toBe('0');
      expect(Buffer.from(await again.arrayBuffer()).equals(bodies[i]!)).toBe(true);
    }
  });

  it('a fragment cache far smaller than what is served (EDIFICE_FRAGMENT_CACHE_MB=1) evicts and still answers every page as the default one', async () => {
    // 4,000 buildings in JSON and MessagePack are ~9 MB of fragments: the 1 MiB cache evicts most of them on each pass.
    const small = await startTestServer(dir, { perKeyPerMinute: 1_000_000, dailyQuota: 1_000_000 }, 'small-cache.db', {
      EDIFICE_FRAGMENT_CACHE_MB: '1',
    });
    try {
      const smallKey = workspaceWithKey(small.ledger, 1_000_000).key;
      const page = async (server: TestServer, k: string, offset: number, accept: string) => {
        const res = await fetch(`${server.base}/buildings?bbox=9.4,47.0,9.7,47.3&limit=100&offset=${offset}`, {
          headers: { Authorization: `Bearer ${k}`, Accept: accept },
        });
        expect(res.status).toBe(200);
        const raw = Buffer.from(await res.arrayBuffer());
        return (accept === 'application/msgpack' ? unpack(raw) : JSON.parse(raw.toString('utf8'))).data as J[];
      };
      const cacheMetrics = async (server: TestServer) => {
        const text = await (await fetch(`${server.metricsUrl}/metrics`)).text();
        const value = (re: RegExp) => Number(re.exec(text)?.[1] ?? NaN);
        return {
          bytes: value(/^edifice_fragment_cache_bytes (\d+)$/m),
          hits: value(/^edifice_fragment_cache_lookups_total\{result="hit"\} (\d+)$/m),
          misses: value(/^edifice_fragment_cache_lookups_total\{result="miss"\} (\d+)$/m),
        };
      };
      let compared = 0;
      const expected = new Map<number, J[]>();
      for (let offset = 0; offset < snapshot.rows; offset += 100) expected.set(offset, await page(t, key, offset, 'application/json'));
      // Two passes over the whole country: by the second, the first pass's buildings are long evicted.
      for (let pass = 0; pass < 2; pass++) {
        for (const [offset, want] of expected) {
          for (const accept of ['application/json', 'application/msgpack']) {
            expect(await page(small, smallKey, offset, accept)).toEqual(want);
            compared += want.length;
          }
        }
      }
      expect(compared).toBe(4 * snapshot.rows);
      // The small server held at most its MiB and so encoded nearly every building again on the
      // second pass; the default one keeps every JSON fragment of the country it was asked for.
      const smallCache = await cacheMetrics(small);
      expect(smallCache.bytes).toBeLessThanOrEqual(1024 * 1024);
      expect(smallCache.bytes).toBeGreaterThan(512 * 1024);
      expect(smallCache.hits + smallCache.misses).toBe(4 * snapshot.rows);
      expect(smallCache.misses).toBeGreaterThan(3.5 * snapshot.rows);
      const defaultCache = await cacheMetrics(t);
      expect(defaultCache.bytes).toBeGreaterThan(2 * 1024 * 1024);
      expect(defaultCache.misses).toBeGreaterThanOrEqual(snapshot.rows);
    } finally {
      small.close();
    }
  });
});

describe('GET /buildings/at', () => {
  it("answers the engine's nearest buildings and charges them", async () => {
    const row = (snapshot.rows >> 1) + 3;
    const query = `lat=${snapshot.lat[row].toFixed(6)}&lon=${snapshot.lon[row].toFixed(6)}&radius_m=120&limit=25`;
    const expected = queryPoint(t.catalog.view(), parsePointQuery(query));
    expect(expected.rows.length).toBeGreaterThan(0);
    const k = workspaceWithKey(t.ledger, 100);
    const r = await get('/buildings/at', `/buildings/at?${query}`, auth(k.key));
    expect(r.status).toBe(200);
    expect(r.body.data.map((b: J) => b.building_id)).toEqual(expected.rows.map((x) => x.snapshot.buildingId(x.row)));
    expect(Number(r.headers.get('X-Credits-Charged'))).toBe(expected.rows.length);
  });
});

describe('units and registered businesses of a building', () => {
  function buildingWith(pred: (row: number) => boolean): string {
    for (let row = 0; row < snapshot.rows; row++) if (pred(row)) return snapshot.buildingId(row);
    throw new Error('no such building in the test snapshot');
  }

  it('pages units, opening the building once', async () => {
    const id = buildingWith((row) => snapshot.units(row).length > 3);
    const units = snapshot.units(snapshot.findRow(id));
    const k = workspaceWithKey(t.ledger, 10);
    const r = await get('/buildings/{building_id}/units', `/buildings/${id}/units?limit=2`, auth(k.key));
    expect(r.status).toBe(200);
    expect(r.body.meta).toEqual({ total: units.length, limit: 2, offset: 0 });
    expect(r.body.data.map((u: J) => u.unit_id)).toEqual(units.slice(0, 2).map((u) => u.unit_id));
    expect(r.body.links.next).toBe(`${t.base}/buildings/${id}/units?limit=2&offset=2`);
    expect(r.headers.get('X-Credits-Charged')).toBe('1');
    const next = await get('/buildings/{building_id}/units', r.body.links.next.slice(t.base.length), auth(k.key));
    expect(next.body.data.map((u: J) => u.unit_id)).toEqual(units.slice(2, 4).map((u) => u.unit_id));
    expect(next.headers.get('X-Credits-Charged')).toBe('0');
  });

  it('pages registered businesses', async () => {
    const id = buildingWith((row) => snapshot.businessCount(row) > 0);
    const businesses = snapshot.businesses(snapshot.findRow(id));
    const r = await get('/buildings/{building_id}/registered-businesses', `/buildings/${id}/registered-businesses`, auth());
    expect(r.status).toBe(200);
    expect(r.body.meta.total).toBe(businesses.length);
    expect(r.body.data.map((b: J) => b.business_id)).toEqual(businesses.slice(0, 25).map((b) => b.business_id));
  });

  it('a broken percent-escape in the path is refused on building_id, not a 500', async () => {
    for (const path of ['/buildings/%ZZ/units', '/buildings/%E0%A4%A/registered-businesses']) {
      const r = await get(
        path.endsWith('units') ? '/buildings/{building_id}/units' : '/buildings/{building_id}/registered-businesses',
        path,
        auth(),
      );
      expect(r.status).toBe(400);
      expect(r.body.error).toMatchObject({ code: 'invalid_parameter', parameter: 'building_id' });
      expect(r.headers.get('X-Credits-Charged')).toBe('0');
    }
  });

  it('an unknown building is refused on building_id', async () => {
    const r = await get('/buildings/{building_id}/units', '/buildings/00000000-0000-5000-8000-000000000000/units', auth());
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: 'invalid_parameter', parameter: 'building_id' });
    expect(r.headers.get('X-Credits-Charged')).toBe('0');
  });
});

describe('every parameter refuses a bad value with 400 invalid_parameter naming it', () => {
  const pathOf = (op: OperationId, id: string) => OPERATIONS[op].path.replace('{building_id}', id);
  const BAD: Record<string, string> = { integer: '1.5', number: 'abc', boolean: 'yes', enum: 'nope', string: '' };

  function badValue(p: (typeof PARAMETERS)[number]): string {
    if (p.name === 'bbox') return '1,2,3';
    if (p.name === 'registered_business_turnover_currency') return 'eur';
    if (p.name === 'building_type') return 'Not-A-Type';
    if (p.name === 'registered_business_name') return 'x';
    return BAD[p.type] ?? '%%%';
  }

  for (const op of Object.keys(OPERATIONS) as OperationId[]) {
    if (op === 'getOpenApi' || !OPERATIONS[op].path.startsWith('/buildings')) continue;
    for (const p of parametersOf(op)) {
      it(`${OPERATIONS[op].path} ${p.name}`, async () => {
        const id = snapshot.buildingId(0);
        const base: Record<string, string> =
          op === 'listBuildings' || op === 'exportBuildings'
            ? { bbox }
            : op === 'listBuildingsAtPoint'
              ? { lat: String(snapshot.lat[0]), lon: String(snapshot.lon[0]) }
              : {};
        let path = pathOf(op, id);
        if (p.in === 'path') path = pathOf(op, 'not-a-uuid');
        else base[p.name] = badValue(p);
        const query = Object.entries(base)
          .map(([k, v]) => `${k}=${encodeURIComponent(v)}`)
          .join('&');
        const r = await get(OPERATIONS[op].path, `${path}${query ? `?${query}` : ''}`, auth());
        expect(r.status).toBe(400);
        expect(r.body.error.code).toBe('invalid_parameter');
        expect(r.body.error.parameter).toBe(p.name);
        expect(r.body.error.message.length).toBeGreaterThan(10);
        for (const h of SPEC_HEADERS) expect(r.headers.has(h), h).toBe(true);
        expect(r.headers.get('X-Credits-Charged')).toBe('0');
      });
    }
    it(`${OPERATIONS[op].path} refuses an unknown parameter`, async () => {
      const base =
        op === 'listBuildings' || op === 'exportBuildings'
          ? `bbox=${bbox}&`
          : op === 'listBuildingsAtPoint'
            ? `lat=${snapshot.lat[0]}&lon=${snapshot.lon[0]}&`
            : '';
      const r = await get(OPERATIONS[op].path, `${pathOf(op, snapshot.buildingId(0))}?${base}colour=red`, auth());
      expect(r.status).toBe(400);
      expect(r.body.error).toMatchObject({ code: 'invalid_parameter', parameter: 'colour' });
    });
    it(`${OPERATIONS[op].path} refuses a value that is not percent-encoded UTF-8, or holds a control character`, async () => {
      const base =
        op === 'listBuildings' || op === 'exportBuildings'
          ? `bbox=${bbox}&`
          : op === 'listBuildingsAtPoint'
            ? `lat=${snapshot.lat[0]}&lon=${snapshot.lon[0]}&`
            : '';
      for (const value of ['%zz', '%ED%A0%80', '1%00']) {
        const r = await get(OPERATIONS[op].path, `${pathOf(op, snapshot.buildingId(0))}?${base}limit=${value}`, auth());
        expect(r.status, value).toBe(400);
        expect(r.body.error, value).toMatchObject({ code: 'invalid_parameter', parameter: 'limit' });
        expect(r.headers.get('X-Credits-Charged')).toBe('0');
      }
    });
  }
});

describe('credits', () => {
  it('402 insufficient_credits returns nothing and charges nothing; a page that fits is charged', async () => {
    const k = workspaceWithKey(t.ledger, 0); // the welcome grant only: 5 credits
    const refusedQuery = `/buildings?bbox=${bbox}&limit=10`;
    const r = await get('/buildings', refusedQuery, auth(k.key));
    expect(r.status).toBe(402);
    expect(r.body.error.code).toBe('insufficient_credits');
    expect(r.body.data).toBeUndefined();
    expect(r.headers.get('X-Credits-Charged')).toBe('0');
    expect(r.headers.get('X-Credits-Remaining')).toBe('5');
    expect(t.ledger.balance(k.workspaceId)).toBe(5);
    const ok = await get('/buildings', `/buildings?bbox=${bbox}&limit=5`, auth(k.key));
    expect(ok.status).toBe(200);
    expect(ok.headers.get('X-Credits-Charged')).toBe('5');
    expect(ok.headers.get('X-Credits-Remaining')).toBe('0');
    // The same five are free again; one more is not.
    expect((await get('/buildings', `/buildings?bbox=${bbox}&limit=5`, auth(k.key))).status).toBe(200);
    expect((await get('/buildings', `/buildings?bbox=${bbox}&limit=6`, auth(k.key))).status).toBe(402);
  });

  it('parallel requests near the end of the credits never overdraw; charged = new buildings returned', async () => {
    const credits = 37;
    const k = workspaceWithKey(t.ledger, credits - 5);
    const pages = Array.from({ length: 24 }, (_, i) => `/buildings?bbox=${bbox}&limit=5&offset=${(i % 12) * 3}`);
    const answers = await Promise.all(pages.map((p) => get('/buildings', p, auth(k.key))));
    let charged = 0;
    const returned = new Set<string>();
    for (const a of answers) {
      expect([200, 402]).toContain(a.status);
      if (a.status === 200) {
        charged += Number(a.headers.get('X-Credits-Charged'));
        for (const b of a.body.data) returned.add(b.building_id);
      }
    }
    const balance = t.ledger.balance(k.workspaceId);
    expect(balance).toBeGreaterThanOrEqual(0);
    expect(charged).toBe(credits - balance);
    expect(returned.size).toBe(charged);
    expect(answers.some((a) => a.status === 402)).toBe(true);
    expect(t.ledger.audit()).toEqual([]);
  });
});

describe('limits (429)', () => {
  let limited: TestServer;
  beforeAll(async () => {
    limited = await startTestServer(dir, { perKeyPerMinute: 3, dailyQuota: 5 }, 'limited.db');
  });
  afterAll(() => limited?.close());

  it('the per-key minute limit answers 429 rate_limited with Retry-After; the daily quota answers quota_exceeded', async () => {
    const k1 = workspaceWithKey(limited.ledger, 100);
    const url = `${limited.base}/buildings?bbox=${bbox}&limit=1`;
    const statuses: number[] = [];
    let last: Response | undefined;
    for (let i = 0; i < 4; i++) {
      last = await fetch(url, { headers: auth(k1.key) });
      statuses.push(last.status);
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
    const body = (await last!.json()) as J;
    expect(body.error.code).toBe('rate_limited');
    expect(Number(last!.headers.get('Retry-After'))).toBeGreaterThan(0);
    expect(last!.headers.get('RateLimit-Remaining')).toBe('0');
    expect([last!.headers.get('X-Credits-Charged'), last!.headers.get('X-Credits-Remaining')]).toEqual(['0', String(105 - 1)]);
    expect(validator.problems('/buildings', 429, last!.headers, body)).toEqual([]);

    // Same workspace, a second key: 2 more requests fit in the day's 5 (the 429 did not count).
    const email = `second-${Date.now()}@example.com`;
    limited.ledger.addMember(k1.workspaceId, email);
    const k2 = limited.ledger.createKey(k1.workspaceId, email);
    const more: number[] = [];
    let quota: Response | undefined;
    for (let i = 0; i < 3; i++) {
      quota = await fetch(url, { headers: auth(k2.key) });
      more.push(quota.status);
    }
    expect(more).toEqual([200, 200, 429]);
    const qb = (await quota!.json()) as J;
    expect(qb.error.code).toBe('quota_exceeded');
    expect(quota!.headers.get('X-Daily-Quota-Remaining')).toBe('0');
    expect(quota!.headers.get('X-Credits-Charged')).toBe('0');
    expect(quota!.headers.get('X-Credits-Remaining')).not.toBeNull();
    expect(Number(quota!.headers.get('Retry-After'))).toBeGreaterThan(0);
  });
});

describe('operator endpoints', () => {
  it('healthz, readyz and metrics', async () => {
    expect((await fetch(`${t.url}/healthz`)).status).toBe(200);
    const ready = await fetch(`${t.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: 'ready', snapshots: [{ country: snapshot.country, buildings: snapshot.rows }] });
    const metrics = await (await fetch(`${t.metricsUrl}/metrics`)).text();
    expect(metrics).toMatch(/edifice_http_requests_total\{route="\/buildings",status="200"\} \d+/);
    expect(metrics).toMatch(/edifice_credits_charged_total \d+/);
    expect(metrics).toContain(`edifice_snapshot_buildings{country="${snapshot.country}",date="${snapshot.date}"} ${snapshot.rows}`);
  });

  it('metrics time the pages that waited for their charge to commit, not those answered free at once', async () => {
    const waited = async (): Promise<[number, number]> => {
      const text = await (await fetch(`${t.metricsUrl}/metrics`)).text();
      return [
        Number(/^edifice_charge_wait_seconds_count (\d+)$/m.exec(text)![1]),
        Number(/^edifice_charge_wait_seconds_sum (\S+)$/m.exec(text)![1]),
      ];
    };
    const k = workspaceWithKey(t.ledger, 1000);
    const query = `/buildings?bbox=${bbox}&limit=3&sort=area`;
    const [count0, sum0] = await waited();
    const first = await get('/buildings', query, auth(k.key));
    expect(Number(first.headers.get('X-Credits-Charged'))).toBeGreaterThan(0);
    const [count1, sum1] = await waited();
    expect(count1).toBe(count0 + 1);
    expect(sum1).toBeGreaterThan(sum0);
    const again = await get('/buildings', query, auth(k.key));
    expect(again.headers.get('X-Credits-Charged')).toBe('0');
    expect((await waited())[0]).toBe(count1);
  });

  it('the documents without a key answer HEAD with their headers and no body; another method is 405', async () => {
    for (const url of [`${t.base}/openapi.json`, `${t.url}/healthz`, `${t.url}/readyz`]) {
      const [get, head] = [await fetch(url), await fetch(url, { method: 'HEAD' })];
      const body = Buffer.from(await get.arrayBuffer());
      expect([head.status, await head.text()], url).toEqual([200, '']);
      // The length the body would have (RFC 9110 9.3.2), not 0.
      expect(head.headers.get('content-length'), url).toBe(String(body.length));
      expect(head.headers.get('content-type'), url).toBe(get.headers.get('content-type'));
      const post = await fetch(url, { method: 'POST' });
      expect([post.status, post.headers.get('allow')], url).toEqual([405, 'GET, HEAD']);
    }
    // The operator port alone serves /metrics (GET and HEAD); on the API port it is no endpoint.
    expect((await fetch(`${t.metricsUrl}/metrics`, { method: 'HEAD' })).status).toBe(200);
    expect((await fetch(`${t.metricsUrl}/metrics`, { method: 'POST' })).headers.get('allow')).toBe('GET, HEAD');
    for (const method of ['GET', 'HEAD']) expect((await fetch(`${t.url}/metrics`, { method })).status).toBe(404);
  });

  it('an unknown path is 404 not_found', async () => {
    const r = await fetch(`${t.base}/nothing-here`);
    expect(r.status).toBe(404);
    expect(((await r.json()) as J).error).toEqual({ code: 'not_found', message: 'No endpoint GET /v1/nothing-here.', parameter: '' });
    // A huge path is not echoed back whole.
    const long = await fetch(`${t.base}/${'a'.repeat(20_000)}`);
    expect(long.status).toBe(404);
    const text = await long.text();
    expect(text.length).toBeLessThan(400);
    expect((JSON.parse(text) as J).error.message).toBe(`No endpoint GET /v1/${'a'.repeat(196)}….`);
  });
});
