/**
 * HAProxy in front of replicas, with the configuration the fleet uses: accepted by `haproxy -c`;
 * requests spread over the replicas (each names itself in X-Edifice-Replica); a replica that stops
 * is routed around without a failed request; with none up, HAProxy answers the spec's 503 itself,
 * and logs each request it answered so.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { haproxyConfig } from '../src/fleet/haproxy.ts';
import { removeDir, startTestServer, syntheticSnapshots, workspaceWithKey, type TestServer } from './http-helpers.ts';
import { checkHaproxyConfig, startHaproxy, type TestHaproxy } from './services/haproxy.ts';
import { freePort } from './services/ports.ts';

let dir: string;
let replicas: TestServer[] = [];
let proxy: TestHaproxy | undefined;
let origin: string;

beforeAll(async () => {
  dir = await syntheticSnapshots(1000);
  replicas = [
    await startTestServer(dir, {}, 'r1.db', { EDIFICE_REPLICA: 'r1', EDIFICE_TRUSTED_PROXIES: '1' }),
    await startTestServer(dir, {}, 'r2.db', { EDIFICE_REPLICA: 'r2', EDIFICE_TRUSTED_PROXIES: '1' }),
  ];
  const port = await freePort();
  origin = `http://127.0.0.1:${port}`;
  const config = haproxyConfig({
    host: '127.0.0.1',
    port,
    checkEveryMs: 200,
    replicas: replicas.map((r, i) => ({ name: `r${i + 1}`, host: '127.0.0.1', port: r.server.port })),
  });
  checkHaproxyConfig(config);
  proxy = await startHaproxy(config, port);
}, 120_000);
afterAll(async () => {
  await proxy?.stop();
  for (const r of replicas) r.close();
  removeDir(dir);
});

/** Who answered `n` requests of `path` in turn, and with what status. */
async function answers(
  path: string,
  n: number,
  headers: Record<string, string> = {},
): Promise<{ status: number; replica: string | null }[]> {
  const out = [];
  for (let i = 0; i < n; i++) {
    const r = await fetch(`${origin}${path}`, { headers });
    await r.arrayBuffer();
    out.push({ status: r.status, replica: r.headers.get('x-edifice-replica') });
  }
  return out;
}

describe('the fleet behind HAProxy', () => {
  it('refuses a configuration without replicas or with a name unfit for it', () => {
    expect(() => haproxyConfig({ host: '127.0.0.1', port: 80, replicas: [] })).toThrow(/at least one replica/);
    expect(() => haproxyConfig({ host: '127.0.0.1', port: 80, replicas: [{ name: 'a b', host: '127.0.0.1', port: 1 }] })).toThrow(/name/);
  });

  it('spreads requests over the replicas once their health checks pass; a paid page answers through it', async () => {
    const seen = new Set<string | null>();
    for (let round = 0; round < 50 && seen.size < 2; round++) {
      for (const a of await answers('/healthz', 4)) if (a.status === 200) seen.add(a.replica);
      if (seen.size < 2) await new Promise((r) => setTimeout(r, 100));
    }
    expect([...seen].sort()).toEqual(['r1', 'r2']);
    const spread = await answers('/healthz', 10);
    expect(spread.every((a) => a.status === 200)).toBe(true);
    expect(new Set(spread.map((a) => a.replica)).size).toBe(2);
    const { key } = workspaceWithKey(replicas[1].ledger, 100);
    const page = await answers('/v1/buildings?bbox=9.4,47.0,9.7,47.3&limit=2', 6, { Authorization: `Bearer ${key}` });
    // The key lives in r2's own ledger here: r2 serves it, r1 does not know it.
    expect(page.filter((a) => a.replica === 'r2').every((a) => a.status === 200)).toBe(true);
    expect(page.filter((a) => a.replica === 'r1').every((a) => a.status === 401)).toBe(true);
  });

  it('a replica that stops is routed around: every request answered, by the other', async () => {
    replicas[0].server.close(); // stops accepting, as a stopping replica does
    const during = await answers('/healthz', 30);
    expect(during.map((a) => a.status)).toEqual(Array(30).fill(200));
    const after = await answers('/v1/public/countries', 10);
    expect(after.map((a) => [a.status, a.replica])).toEqual(Array(10).fill([200, 'r2']));
  });

  it("with no replica up, HAProxy answers the spec's 503 unavailable with Retry-After in each format", async () => {
    replicas[1].server.close();
    let api: Response | undefined;
    for (let i = 0; i < 100; i++) {
      api = await fetch(`${origin}/v1/buildings?bbox=9.4,47.0,9.7,47.3`);
      if (api.status === 503) break;
      await api.arrayBuffer();
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(api!.status).toBe(503);
    expect(api!.headers.get('retry-after')).toBe('2');
    expect(await api!.json()).toEqual({ error: { code: 'unavailable', message: expect.any(String), parameter: '' } });
    // Once HAProxy has marked the replicas down (before, its own 503 is the API's format for every path).
    let pub: [number, string | null, unknown] = [0, null, null];
    for (let i = 0; i < 100; i++) {
      const r = await fetch(`${origin}/v1/public/countries`);
      pub = [r.status, r.headers.get('retry-after'), await r.json()];
      if (JSON.stringify(pub[2]) === '{"error":"unavailable"}') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(pub).toEqual([503, '2', { error: 'unavailable' }]);
    // HAProxy logs each request it answered itself, with its termination state (LR: a local
    // answer), once the answer is sent; and no request answered 200 without a retry.
    const requests = (): string[] =>
      proxy!
        .output()
        .split('\n')
        .filter((l) => /^127\.0\.0\.1:\d+ \[/.test(l));
    const answeredHere = / 503 .* LR-- .*"GET \/v1\/public\/countries HTTP\/1\.1"$/;
    for (let i = 0; i < 40 && !requests().some((l) => answeredHere.test(l)); i++) await new Promise((r) => setTimeout(r, 50));
    expect(
      requests().some((l) => answeredHere.test(l)),
      proxy!.output(),
    ).toBe(true);
    expect(requests().filter((l) => / 200 .* \d+\/\d+\/\d+\/\d+\/0 \d+\/\d+ "/.test(l))).toEqual([]);
  });
});
