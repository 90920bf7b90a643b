/**
 * Seeded random requests against a real server, every endpoint of the served OpenAPI document:
 * parameters drawn from their own schemas (enums, lists, bounds, booleans), mixed with hostile
 * values (empty, NaN, 1e309, overlong, repeated, unknown names, broken escapes, bad bodies).
 * Whatever comes in, the server answers: never a 5xx, never a hang (each request bounded in
 * time), every answer a status and body the document declares for that operation (authenticated
 * errors with code, message and parameter; /public errors flat), and the credits the responses
 * say they charged are exactly what the workspace's balance lost, with the ledger's invariants
 * intact. The workspace holds too few credits for every page, so 402s are among the answers.
 */
import { unpack } from 'msgpackr';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Prng } from '../src/synth/prng.ts';
import { ResponseValidator, removeDir, startTestServer, syntheticSnapshots, workspaceWithKey, type TestServer } from './http-helpers.ts';

type J = Record<string, any>;

// Enough that each of the document's operations (the OGC API and the export included) is drawn some 40 times.
const REQUESTS = 1600;
const CREDITS = 60;
const HOSTILE = [
  '',
  ' ',
  '-1',
  '0',
  '1',
  '-0',
  '1.5',
  '1e309',
  '-1e309',
  'NaN',
  'Infinity',
  '0x10',
  '9999999999999999999',
  ' 1',
  '1,2',
  'true',
  'false',
  'null',
  '[]',
  '{}',
  '%00',
  '%FF',
  '%E2%82',
  'é',
  'a'.repeat(3000),
  '1,2,3',
  '1,2,3,4,5',
  ',,,',
  '-180,-90,180,90',
  '9.7,47.3,9.4,47.0',
  'residential_house',
  'EUR',
  'RsI',
  '2024',
  '10000',
  '9990',
];
const BODIES = [
  '',
  '{}',
  '[]',
  'not json',
  '{"a":'.repeat(50),
  '{"country":"PT"}',
  '{"country":"ZZ","email":"x"}',
  '{"building_id":"b_0","reason":"mine"}',
  JSON.stringify({ building_id: 'x', kind: 'y', email: 'a@b.c' }),
  '{"country":"PT","email":"ana@example.pt"}',
];

let dir: string;
let t: TestServer;
let doc: J = {};
let validator: ResponseValidator;
let key: string;
let workspaceId: string;
let area: string[];
let buildingIds: string[];

beforeAll(async () => {
  dir = await syntheticSnapshots(4000);
  t = await startTestServer(dir, { perKeyPerMinute: 1_000_000, dailyQuota: 1_000_000 });
  doc = (await (await fetch(`${t.base}/openapi.json`)).json()) as J;
  validator = new ResponseValidator(doc);
  ({ key, workspaceId } = workspaceWithKey(t.ledger, CREDITS - 5, 'fuzz'));
  const s = t.catalog.view().snapshots[0];
  area = [s.extent!.minLon, s.extent!.minLat, s.extent!.maxLon, s.extent!.maxLat].map(String);
  buildingIds = [0, 1, s.rows >> 1, s.rows - 1].map((row) => s.buildingId(row));
});

afterAll(() => {
  t?.close();
  if (dir) removeDir(dir);
});

interface Operation {
  path: string;
  method: string;
  params: J[];
}

function operations(): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries<J>(doc.paths)) {
    for (const [method, op] of Object.entries<J>(item)) {
      if (['get', 'post'].includes(method)) out.push({ path, method, params: op.parameters ?? [] });
    }
  }
  return out;
}

/** A value a parameter's schema allows (lists of 1-3 enum values, numbers inside its bounds). */
function allowed(rng: Prng, schema: J): string {
  const pick = <T>(a: readonly T[]): T => a[Math.floor(rng.next() * a.length)];
  const within = (v: number) => Math.max(schema.minimum ?? -1e9, Math.min(schema.maximum ?? 1e9, v));
  if (schema.enum) return String(pick(schema.enum));
  if (schema.items?.enum) return Array.from({ length: 1 + Math.floor(rng.next() * 3) }, () => pick(schema.items.enum)).join(',');
  if (schema.type === 'boolean') return pick(['true', 'false']);
  if (schema.type === 'integer') return String(within(Math.round(rng.next() * (rng.next() < 0.5 ? 60 : 20_000)) - 5));
  if (schema.type === 'number') return String(within(rng.next() * (rng.next() < 0.5 ? 60 : 5_000) - 5));
  return pick(['EUR', 'acme', 'b', 'PT', '2023']);
}

describe('random requests to every endpoint', () => {
  it(`${REQUESTS} seeded requests: no 5xx, no hang, every answer as the document declares, credits charged exactly`, async () => {
    const rng = new Prng(20261124, 1);
    const pick = <T>(a: readonly T[]): T => a[Math.floor(rng.next() * a.length)];
    const ops = operations();
    expect(ops.length).toBeGreaterThanOrEqual(10);
    const before = t.ledger.balance(workspaceId);
    let charged = 0;
    const seen = new Map<string, number>();
    const problems: string[] = [];
    for (let n = 0; n < REQUESTS; n++) {
      // Half the draws go to the two engine endpoints, the rest to any.
      const r = rng.next();
      const op = r < 0.35 ? ops.find((o) => o.path === '/buildings')! : r < 0.5 ? ops.find((o) => o.path === '/buildings/at')! : pick(ops);
      let path = op.path;
      const query: string[] = [];
      for (const p of op.params) {
        const schema = (p.schema ?? {}) as J;
        if (p.in === 'path') {
          const v =
            rng.next() < 0.3
              ? pick(HOSTILE)
              : rng.next() < 0.5
                ? pick(buildingIds)
                : pick(['b_0000000000000000', 'XA', 'zz', 'XA-unknown', 'ord_1']);
          path = path.replace(`{${p.name}}`, encodeURIComponent(v));
          continue;
        }
        if (p.in !== 'query' || rng.next() >= (p.name === 'bbox' ? 0.95 : op.params.length > 10 ? 0.08 : 0.5)) continue;
        let v = rng.next() < 0.06 ? pick(HOSTILE) : allowed(rng, schema);
        if (p.name === 'bbox' && rng.next() < 0.8) {
          // Somewhere in the country: a corner inside, sides up to a fifth of it (now and then inverted).
          const [w, s, e, nn] = area.map(Number);
          const x = w + rng.next() * (e - w),
            y = s + rng.next() * (nn - s);
          v = [x, y, x + ((rng.next() - 0.05) * (e - w)) / 5, y + ((rng.next() - 0.05) * (nn - s)) / 5].map((c) => c.toFixed(5)).join(',');
        }
        query.push(`${p.name}=${v.startsWith('%') ? v : encodeURIComponent(v)}`);
        // geometry is for GeoJSON answers (refused otherwise): drawn, it asks for one, as a client would.
        if (p.name === 'geometry') query.push('f=geojson');
        if (rng.next() < 0.03) query.push(`${p.name}=${encodeURIComponent(pick(HOSTILE))}`);
      }
      if (rng.next() < 0.04) query.push(`${pick(['unknown', 'BBOX', 'bbox[]', ''])}=${encodeURIComponent(pick(HOSTILE))}`);
      const headers: Record<string, string> = {};
      if (rng.next() < 0.92) headers.Authorization = `Bearer ${rng.next() < 0.95 ? key : 'edf_not_a_key'}`;
      let body: string | undefined;
      if (op.method === 'post') {
        headers['Content-Type'] = pick(['application/json', 'application/json; charset=utf-8', 'text/plain']);
        body = pick(BODIES);
      }
      const url = `${t.base}${path}${query.length ? `?${query.join('&')}` : ''}`;
      const res = await fetch(url, { method: op.method.toUpperCase(), headers, body, signal: AbortSignal.timeout(10_000) });
      const bytes = Buffer.from(await res.arrayBuffer());
      const raw = bytes.toString('utf8');
      const label = `${op.method.toUpperCase()} ${url.slice(t.base.length, t.base.length + 200)}`;
      seen.set(`${op.method} ${op.path} ${res.status}`, (seen.get(`${op.method} ${op.path} ${res.status}`) ?? 0) + 1);
      if (res.status >= 500) {
        problems.push(`${res.status} on ${label}: ${raw.slice(0, 200)}`);
        continue;
      }
      // fetch folds "/../" away, and an empty segment ("//") is another path: such a request reaches another route, or none.
      if (path.includes('..') || path.includes('//')) continue;
      let parsed: unknown = null;
      const type = res.headers.get('content-type') ?? '';
      if (/^application\/x-ndjson|^text\/csv|^application\/geo\+json-seq/.test(type)) {
        // The export's text streams: one record a building, each as GET /buildings would have it.
        const records = type.startsWith('text/csv')
          ? raw.split('\r\n').slice(1, -1)
          : raw.split(type.includes('seq') ? '\x1e' : '\n').filter((r) => r !== '');
        if (!type.startsWith('text/csv')) for (const r of records) JSON.parse(r);
        if (records.length > 10_000) problems.push(`${label}: ${records.length} records, more than 10,000`);
        parsed = raw; // the document declares these as text
      } else if (type.includes('json')) parsed = JSON.parse(raw);
      else if (type.includes('msgpack')) parsed = unpack(bytes);
      else if (res.status !== 204) problems.push(`${res.status} on ${label}: not JSON (${res.headers.get('content-type')})`);
      for (const p of validator.problems(op.path, res.status, res.headers, parsed, op.method)) problems.push(`${label}: ${p}`);
      const error = (parsed as J | null)?.error;
      // invalid_parameter names the parameter at fault: "" only for one given without a name ("&=x").
      if (
        res.status === 400 &&
        typeof error === 'object' &&
        error.code === 'invalid_parameter' &&
        !(typeof error.parameter === 'string' && (error.parameter.length > 0 || /without a name/.test(error.message)))
      ) {
        problems.push(`${label}: invalid_parameter without the parameter's name: ${raw.slice(0, 200)}`);
      }
      charged += Number(res.headers.get('x-credits-charged') ?? 0);
    }
    expect(problems).toEqual([]);
    // The draw reached the engine and its refusals alike, and ran the credits out.
    expect(seen.get('get /buildings 200') ?? 0).toBeGreaterThan(20);
    expect(seen.get('get /buildings 400') ?? 0).toBeGreaterThan(20);
    expect(seen.get('get /buildings/at 200') ?? 0).toBeGreaterThan(20);
    expect(seen.get('get /buildings/{building_id}/units 200') ?? 0).toBeGreaterThan(5);
    expect(seen.get('get /buildings 402') ?? 0).toBeGreaterThan(0);
    expect(charged).toBeGreaterThan(0);
    expect(before - t.ledger.balance(workspaceId)).toBe(charged);
    expect(t.ledger.audit()).toEqual([]);
  });
});
