/**
 * The docs page (Swagger UI served by Edifice itself) and CORS over real HTTP: what needs no key
 * is open to any origin, the authenticated API to EDIFICE_CORS_ORIGINS, preflights answered.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { removeDir, startTestServer, syntheticSnapshots, workspaceWithKey, type TestServer } from './http-helpers.ts';

const ALLOWED = 'https://app.example.com';
const OTHER = 'https://evil.example.net';

let dir: string;
let t: TestServer;
let key: string;
let bbox: string;

beforeAll(async () => {
  dir = await syntheticSnapshots(1000);
  t = await startTestServer(dir, { perKeyPerMinute: 1_000_000, dailyQuota: 1_000_000 }, 'ledger.db', {
    EDIFICE_CORS_ORIGINS: `${ALLOWED}, http://localhost:3000`,
  });
  key = workspaceWithKey(t.ledger, 1_000_000).key;
  const e = t.catalog.view().snapshots[0].extent!;
  bbox = [e.minLon, e.minLat, e.minLon + 0.05, e.minLat + 0.05].join(',');
});

afterAll(() => {
  t?.close();
  if (dir) removeDir(dir);
});

describe('the docs page', () => {
  it('GET /v1/docs: Swagger UI reading /v1/openapi.json, every asset from this server', async () => {
    const res = await fetch(`${t.base}/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const html = await res.text();
    expect(html).toContain('SwaggerUIBundle(');
    expect(html).toContain("url: 'openapi.json'");
    expect(html).toContain('validatorUrl: null'); // the default asks an online validator for a badge
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    const srcs = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    expect(srcs.sort()).toEqual(['docs/swagger-ui-bundle.js', 'docs/swagger-ui.css']);
    const dist = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
    for (const [src, type] of [
      ['docs/swagger-ui-bundle.js', 'text/javascript'],
      ['docs/swagger-ui.css', 'text/css'],
    ]) {
      const asset = await fetch(new URL(src, `${t.base}/docs`));
      expect(asset.status).toBe(200);
      expect(asset.headers.get('content-type')).toContain(type);
      expect(Buffer.from(await asset.arrayBuffer()).equals(readFileSync(join(dist, src.slice(5))))).toBe(true);
    }
    // The page's relative url resolves to the document.
    expect((await fetch(new URL('openapi.json', `${t.base}/docs`))).status).toBe(200);
  });
});

describe('CORS', () => {
  const get = (path: string, headers: Record<string, string> = {}) => fetch(`${t.url}${path}`, { headers });
  const preflight = (path: string, origin: string, method = 'GET') =>
    fetch(`${t.url}${path}`, {
      method: 'OPTIONS',
      headers: { Origin: origin, 'Access-Control-Request-Method': method, 'Access-Control-Request-Headers': 'authorization' },
    });

  it('what needs no key is open to any origin', async () => {
    for (const path of ['/v1/openapi.json', '/v1/public/countries', '/v1/docs', '/v1/docs/swagger-ui.css', '/v1', '/v1/collections']) {
      const r = await get(path, { Origin: OTHER });
      expect(r.status, path).toBe(200);
      expect(r.headers.get('access-control-allow-origin'), path).toBe('*');
    }
    const p = await preflight('/v1/public/countries', OTHER);
    expect(p.status).toBe(204);
    expect(p.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('the authenticated API answers the listed origins, its headers readable, errors included', async () => {
    const ok = await get(`/v1/buildings?bbox=${bbox}&limit=5`, { Origin: ALLOWED, Authorization: `Bearer ${key}` });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('access-control-allow-origin')).toBe(ALLOWED);
    expect(ok.headers.get('vary')).toBe('Origin');
    expect(ok.headers.get('access-control-expose-headers')).toContain('X-Credits-Charged');
    expect(ok.headers.get('access-control-expose-headers')).toContain('RateLimit-Remaining');
    const localhost = await get(`/v1/buildings?bbox=${bbox}`, { Origin: 'http://localhost:3000' });
    expect([localhost.status, localhost.headers.get('access-control-allow-origin')]).toEqual([401, 'http://localhost:3000']);
    const items = await get(`/v1/collections/buildings/items?bbox=${bbox}`, { Origin: ALLOWED, Authorization: `Bearer ${key}` });
    expect([items.status, items.headers.get('access-control-allow-origin')]).toEqual([200, ALLOWED]);
  });

  it("other origins get no CORS headers from the authenticated API, nor from the operators' endpoints", async () => {
    const r = await get(`/v1/buildings?bbox=${bbox}&limit=5`, { Origin: OTHER, Authorization: `Bearer ${key}` });
    expect(r.status).toBe(200);
    expect(r.headers.get('access-control-allow-origin')).toBeNull();
    const items = await get(`/v1/collections/buildings/items?bbox=${bbox}`, { Origin: OTHER, Authorization: `Bearer ${key}` });
    expect(items.headers.get('access-control-allow-origin')).toBeNull();
    for (const path of ['/healthz', '/readyz'])
      expect((await get(path, { Origin: ALLOWED })).headers.get('access-control-allow-origin')).toBeNull();
  });

  it('preflight: 204 with methods and the Authorization header for a listed origin; other origins as before (405)', async () => {
    const p = await preflight('/v1/buildings', ALLOWED);
    expect(p.status).toBe(204);
    expect(p.headers.get('access-control-allow-origin')).toBe(ALLOWED);
    expect(p.headers.get('access-control-allow-methods')).toContain('GET');
    expect(p.headers.get('access-control-allow-headers')).toContain('Authorization');
    expect(p.headers.get('content-length')).toBeNull();
    const refused = await preflight('/v1/buildings', OTHER);
    expect(refused.status).toBe(405);
    expect(refused.headers.get('access-control-allow-origin')).toBeNull();
    // An OPTIONS that is no preflight is answered as it always was.
    expect((await fetch(`${t.base}/buildings`, { method: 'OPTIONS' })).status).toBe(405);
  });

  it('EDIFICE_CORS_ORIGINS takes origins only, and says so by name', () => {
    expect(loadConfig({ EDIFICE_CORS_ORIGINS: 'https://A.example.com,http://[::1]:8081' }).corsOrigins).toEqual([
      'https://a.example.com',
      'http://[::1]:8081',
    ]);
    expect(loadConfig({}).corsOrigins).toEqual([]);
    for (const bad of ['app.example.com', 'https://app.example.com/', 'https://app.example.com/path', '*', 'ftp://x.example']) {
      expect(() => loadConfig({ EDIFICE_CORS_ORIGINS: bad }), bad).toThrow(/EDIFICE_CORS_ORIGINS/);
    }
  });
});
