/**
 * The server as a replica of a fleet: the real uWebSockets.js app on 127.0.0.1 with its ledger in
 * a throwaway PostgreSQL and its limits in a throwaway Redis (test/services). Credits are read
 * back from PostgreSQL; the limits are counted by what clients received; PostgreSQL and Redis are
 * stopped and started under it.
 */
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Catalog } from '../src/catalog/catalog.ts';
import { loadConfig } from '../src/config.ts';
import { FleetLedger, redisFleetLimits } from '../src/http/fleet-ledger.ts';
import { startMetricsServer, type MetricsServer } from '../src/http/metrics-server.ts';
import { startServer, type RunningServer } from '../src/http/server.ts';
import { PgLedger, RedisLimits } from '../src/ledger/index.ts';
import { getFresh, removeDir, syntheticSnapshots, type JsonAnswer } from './http-helpers.ts';
import { startPostgres, type TestPostgres } from './services/postgres.ts';
import { startRedis, type TestRedis } from './services/redis.ts';

/** The replicas of the fleet this server counts itself in: alone, each allows a third of every limit. */
const REPLICAS = 3;

let pg: TestPostgres;
let redis: TestRedis;
let dir: string;
let admin: PgLedger;
let limits: RedisLimits;
let fleet: FleetLedger;
let server: RunningServer;
/** A second replica on the same PostgreSQL and Redis. */
let other: { fleet: FleetLedger; limits: RedisLimits; server: RunningServer; base: string };
let metrics: MetricsServer;
let base: string;
const answers: JsonAnswer[] = [];

beforeAll(async () => {
  [pg, redis, dir] = await Promise.all([startPostgres(), startRedis(), syntheticSnapshots(4000)]);
  admin = await PgLedger.open(pg.url);
  limits = await RedisLimits.connect(redis.url, { replicas: REPLICAS, commandTimeoutMs: 1_000 });
  const log = pino({ level: 'silent' });
  const config = { ...loadConfig({}), port: 0, snapshotsDir: join(dir, 'snapshots'), ledgerPath: pg.url, workers: 0, replicas: REPLICAS };
  fleet = new FleetLedger(await PgLedger.open(pg.url), redisFleetLimits(limits, 60, 5_000), {
    perKeyPerMinute: 60,
    dailyQuota: 5_000,
    log,
  });
  server = await startServer({ config, catalog: Catalog.open(config.snapshotsDir), fleet, log });
  metrics = await startMetricsServer('127.0.0.1', 0, () => server.metrics.registry.metrics(), log);
  base = `http://127.0.0.1:${server.port}`;
  const otherLimits = await RedisLimits.connect(redis.url, { replicas: REPLICAS, commandTimeoutMs: 1_000 });
  const otherFleet = new FleetLedger(await PgLedger.open(pg.url), redisFleetLimits(otherLimits, 60, 5_000), {
    perKeyPerMinute: 60,
    dailyQuota: 5_000,
    log,
  });
  const otherServer = await startServer({ config, catalog: Catalog.open(config.snapshotsDir), fleet: otherFleet, log });
  other = { fleet: otherFleet, limits: otherLimits, server: otherServer, base: `http://127.0.0.1:${otherServer.port}` };
}, 120_000);

afterAll(async () => {
  other?.server.close();
  await other?.fleet.close();
  await other?.limits.close();
  server?.close();
  await metrics?.close();
  await fleet?.close();
  await limits?.close();
  await admin?.close();
  pg?.destroy();
  await redis?.destroy();
  if (dir) removeDir(dir);
  // Whatever happened, no answer of the server was a 500.
  expect(answers.filter((a) => a.status >= 500 && a.status !== 503)).toEqual([]);
});

async function workspace(credits: number): Promise<{ workspaceId: string; key: string; keyId: string }> {
  const email = `fleet-${Math.random().toString(36).slice(2)}@example.com`;
  const { workspaceId } = await admin.createWorkspace('fleet', { createdBy: email });
  if (credits > 0) await admin.grantCredits(workspaceId, credits, { kind: 'bought' });
  const { key, keyId } = await admin.createKey(workspaceId, email);
  return { workspaceId, key, keyId };
}

async function get(path: string, key?: string, origin = base): Promise<JsonAnswer> {
  const a = await getFresh(origin, `/v1${path}`, key ? { Authorization: `Bearer ${key}` } : {});
  answers.push(a);
  return a;
}

const bbox = (i: number) => {
  const lon = 9.4 + (i % 10) * 0.03;
  const lat = 47.0 + Math.floor(i / 10) * 0.03;
  return `${lon.toFixed(2)},${lat.toFixed(2)},${(lon + 0.03).toFixed(2)},${(lat + 0.03).toFixed(2)}`;
};

/** The whole synthetic country: pages at distinct offsets hold distinct buildings. */
const WHOLE = '9.4,47.0,9.7,47.3';

describe('a replica on PostgreSQL and Redis', () => {
  it('charges each page exactly: the X-Credits-Charged of the answers are what PostgreSQL took, and a building opened is free', async () => {
    const { workspaceId, key } = await workspace(10_000);
    const before = await admin.balance(workspaceId);
    let charged = 0;
    const ids = new Set<string>();
    for (let i = 0; i < 6; i++) {
      const a = await get(`/buildings?bbox=${bbox(i % 4)}&limit=20&offset=${(i % 2) * 10}`, key);
      expect(a.status).toBe(200);
      const fresh = (a.body.data as { building_id: string }[]).filter((b) => !ids.has(b.building_id)).length;
      for (const b of a.body.data as { building_id: string }[]) ids.add(b.building_id);
      // Hand-counted: a page costs its buildings not returned before.
      expect(Number(a.headers['x-credits-charged'])).toBe(fresh);
      charged += fresh;
      expect(Number(a.headers['x-credits-remaining'])).toBe(before - charged);
      expect(a.headers['ratelimit-limit']).toBe('60');
      expect(a.headers['x-daily-quota-limit']).toBe('5000');
    }
    expect(charged).toBeGreaterThan(0);
    expect(await admin.balance(workspaceId)).toBe(before - charged);
    // The same page again: every building opened, nothing charged.
    const again = await get(`/buildings?bbox=${bbox(0)}&limit=20`, key);
    expect(again.status).toBe(200);
    expect(again.headers['x-credits-charged']).toBe('0');
    expect(await admin.balance(workspaceId)).toBe(before - charged);
    expect(await admin.audit()).toEqual([]);
    // The daily quota's count of the 7 requests reaches the usage report in PostgreSQL within a few seconds.
    let requests = 0;
    for (let i = 0; i < 100 && requests < 7; i++) {
      await new Promise((r) => setTimeout(r, 100));
      requests = (await admin.usage(workspaceId)).at(-1)!.requests;
    }
    expect(requests).toBe(7);
  });

  it('refuses a page with too few credits (402, nothing charged) and a bad key (401)', async () => {
    const { workspaceId, key } = await workspace(0); // the welcome 5 credits alone
    const a = await get(`/buildings?bbox=${bbox(5)}&limit=10`, key);
    expect(a.status).toBe(402);
    expect(a.body.error.code).toBe('insufficient_credits');
    expect(a.headers['x-credits-charged']).toBe('0');
    expect(a.headers['x-credits-remaining']).toBe('5');
    expect(await admin.balance(workspaceId)).toBe(5);

    const bad = await get(`/buildings?bbox=${bbox(5)}&limit=1`, 'edf_not_a_key');
    expect(bad.status).toBe(401);
    expect(bad.headers['www-authenticate']).toMatch(/^Bearer/);
    expect(bad.body.error.code).toBe('unauthorized');
    const none = await get(`/buildings?bbox=${bbox(5)}&limit=1`);
    expect(none.status).toBe(401);
  });

  it("answers 400 for a bad parameter with the workspace's balance, charging nothing", async () => {
    const { key } = await workspace(100);
    const a = await get('/buildings?bbox=1,2,3', key);
    expect(a.status).toBe(400);
    expect(a.body.error.code).toBe('invalid_parameter');
    expect(a.headers['x-credits-remaining']).toBe('105');
  });

  it('holds a key to its 60 a minute in Redis across two replicas: of 100 quick requests exactly 60 pass, the rest 429 with Retry-After', async () => {
    const { key } = await workspace(1_000);
    const all = await Promise.all(
      Array.from({ length: 100 }, (_, i) => get(`/buildings?bbox=${bbox(7)}&limit=1`, key, i % 2 ? other.base : base)),
    );
    expect(all.filter((a) => a.status === 200)).toHaveLength(60);
    const refused = all.filter((a) => a.status === 429);
    expect(refused).toHaveLength(40);
    for (const a of refused) {
      expect(a.body.error.code).toBe('rate_limited');
      expect(Number(a.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
    expect([limits.fallbacks, other.limits.fallbacks]).toEqual([0, 0]);
  });

  it('two replicas charging one workspace at once, with too few credits for all: what was taken is what the answers say, never below zero', async () => {
    const { workspaceId, key } = await workspace(40); // 45 credits with the welcome 5
    // 16 pages of 5 buildings, overlapping by pairs (offsets 1000, 1003, 1006, …), half through each replica.
    const all = await Promise.all(
      Array.from({ length: 16 }, (_, i) => get(`/buildings?bbox=${WHOLE}&limit=5&offset=${1_000 + i * 3}`, key, i % 2 ? other.base : base)),
    );
    const ok = all.filter((a) => a.status === 200);
    const refused = all.filter((a) => a.status === 402);
    expect(ok.length + refused.length).toBe(16);
    expect(refused.length).toBeGreaterThan(0);
    for (const a of refused) expect([a.body.error.code, a.headers['x-credits-charged']]).toEqual(['insufficient_credits', '0']);
    const taken = ok.reduce((sum, a) => sum + Number(a.headers['x-credits-charged']), 0);
    const left = await admin.balance(workspaceId);
    expect(left).toBeGreaterThanOrEqual(0);
    expect(45 - left).toBe(taken);
    // Each building charged once: the distinct buildings of the answers that were charged, at most.
    const received = new Set(ok.flatMap((a) => (a.body.data as { building_id: string }[]).map((b) => b.building_id)));
    expect(taken).toBeLessThanOrEqual(received.size);
    expect(await admin.audit()).toEqual([]);
  });

  it('a building opened through one replica is free through the other', async () => {
    const { key } = await workspace(100);
    const first = await get(`/buildings?bbox=${WHOLE}&limit=5&offset=2000`, key, base);
    expect([first.status, first.headers['x-credits-charged']]).toEqual([200, '5']);
    const second = await get(`/buildings?bbox=${WHOLE}&limit=5&offset=2000`, key, other.base);
    expect([second.status, second.headers['x-credits-charged'], second.headers['x-credits-remaining']]).toEqual([200, '0', '100']);
  });

  it('a key revoked with the admin commands stops on every replica within the 2 s its row is kept', async () => {
    const { key, keyId } = await workspace(100);
    for (const origin of [base, other.base])
      expect((await get(`/buildings?bbox=${WHOLE}&limit=1&offset=3000`, key, origin)).status).toBe(200);
    await admin.revokeKey(keyId);
    await new Promise((r) => setTimeout(r, 2_100));
    for (const origin of [base, other.base]) {
      const a = await get(`/buildings?bbox=${WHOLE}&limit=1&offset=3000`, key, origin);
      expect([a.status, a.body.error.message]).toEqual([401, 'This API key was revoked.']);
    }
  });

  it("a suspended workspace's key answers 403 with the headers of spec section 8, charging nothing", async () => {
    const { workspaceId, key } = await workspace(100);
    await admin.suspendWorkspace(workspaceId, 'unpaid');
    const a = await get(`/buildings?bbox=${WHOLE}&limit=1&offset=3100`, key);
    expect([a.status, a.body.error.code]).toEqual([403, 'forbidden']);
    expect([a.headers['ratelimit-limit'], a.headers['x-credits-charged'], a.headers['x-credits-remaining']]).toEqual(['60', '0', '105']);
    expect(a.headers['x-daily-quota-limit']).toBe('5000');
  });

  it('stores the open operations in PostgreSQL (a country request) and says the ledger is open in /readyz', async () => {
    const r = await fetch(`${base}/v1/public/country-requests`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ country: 'PT', email: 'ana@example.pt', comment: 'Lisbon first.' }),
    });
    expect(r.status).toBe(201);
    const stored = (await r.json()) as { id: number };
    expect((await admin.countryRequests()).find((c) => c.id === stored.id)).toMatchObject({ country: 'PT', email: 'ana@example.pt' });
    const ready = await getFresh(base, '/readyz');
    expect([ready.status, ready.body.ledger]).toEqual([200, 'open']);
  });

  it('PostgreSQL stopped: a page not yet paid is 503 unavailable with Retry-After, a page opened here is served free; then it recovers', async () => {
    const { workspaceId, key } = await workspace(1_000);
    const unseen = await workspace(1_000); // a key this replica never authenticated
    const opened = await get(`/buildings?bbox=${WHOLE}&limit=5&offset=500`, key);
    expect(opened.status).toBe(200);
    const paid = Number(opened.headers['x-credits-charged']);
    expect(paid).toBeGreaterThan(0);
    pg.stop();
    try {
      // Past PgLedger's few seconds of kept key rows: the key is known to this replica alone now.
      await new Promise((r) => setTimeout(r, 2_100));
      const refused = await get(`/buildings?bbox=${WHOLE}&limit=5&offset=600`, key);
      expect(refused.status).toBe(503);
      expect(refused.body.error.code).toBe('unavailable');
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      const free = await get(`/buildings?bbox=${WHOLE}&limit=5&offset=500`, key);
      expect(free.status).toBe(200);
      expect(free.headers['x-credits-charged']).toBe('0');
      expect(free.headers['x-credits-remaining']).toBe(String(1_005 - paid));
      const ready = await getFresh(base, '/readyz');
      expect(ready.body).toMatchObject({ status: 'ready', ledger: 'unreachable' });
      const unknown = await get(`/buildings?bbox=${WHOLE}&limit=5&offset=500`, unseen.key);
      expect([unknown.status, unknown.body.error.code]).toEqual([503, 'unavailable']);
      expect(Number(unknown.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    } finally {
      pg.start();
    }
    let after: JsonAnswer | undefined;
    for (let i = 0; i < 100; i++) {
      after = await get(`/buildings?bbox=${WHOLE}&limit=5&offset=600`, key);
      if (after.status === 200) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(after!.status).toBe(200);
    expect(await admin.balance(workspaceId)).toBe(1_005 - paid - Number(after!.headers['x-credits-charged']));
    expect(await admin.audit()).toEqual([]);
  }, 60_000);

  it('Redis stopped: each replica limits alone at a third of the limit (20 of 30 pass), counted in /metrics, never a 500', async () => {
    const { key } = await workspace(1_000);
    await redis.stop();
    try {
      const all = await Promise.all(Array.from({ length: 30 }, () => get(`/buildings?bbox=${bbox(7)}&limit=1`, key)));
      expect(all.filter((a) => a.status === 200)).toHaveLength(20);
      const refused = all.filter((a) => a.status === 429);
      expect(refused).toHaveLength(10);
      for (const a of refused) expect(a.headers['ratelimit-limit']).toBe('20');
      const text = await (await fetch(`http://127.0.0.1:${metrics.port}/metrics`)).text();
      const counted = /^edifice_limit_fallbacks_total\S* (\d+)/m.exec(text);
      expect(Number(counted?.[1])).toBeGreaterThanOrEqual(30);
    } finally {
      await redis.start();
    }
  }, 60_000);
});
