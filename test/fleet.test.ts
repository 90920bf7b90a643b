/**
 * `npm run fleet` as an operator runs it: three replicas behind Debian's HAProxy, sharing a
 * throwaway PostgreSQL ledger and a throwaway Redis (test/services), on loopback ports. What
 * holds across replicas: credits (concurrent pages of one workspace with too few credits), the
 * per-key limit, openings; and what holds when a replica is killed, PostgreSQL restarts and
 * Redis restarts. The ledger is read directly (PgLedger) as the independent account.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgLedger } from '../src/ledger/index.ts';
import { removeDir, ROOT, syntheticSnapshots, TSX_LOADER, type JsonAnswer } from './http-helpers.ts';
import { freePort } from './services/ports.ts';
import { startPostgres, type TestPostgres } from './services/postgres.ts';
import { startRedis, type TestRedis } from './services/redis.ts';

/** The synthetic country's bounds (http-helpers' syntheticSnapshots): every page inside holds buildings. */
const ALL = 'bbox=9.4,47.0,9.7,47.3&sort=volume';
/** A workspace's first grant beside the 5 welcome credits. */
const WELCOME = 5;

let pg: TestPostgres;
let redis: TestRedis;
let dir: string;
let ledger: PgLedger;
let fleet: ChildProcess;
let origin: string;
let output = '';
/** Every PID the fleet logged (replicas, HAProxy), so that none outlives the suite. */
const pids = new Set<number>();

interface LogLine {
  msg?: string;
  replica?: string;
  replicaPid?: number;
  haproxyPid?: number;
  haproxy?: string;
  replicas?: { name: string; port: number; replicaPid: number }[];
}
function logLines(): LogLine[] {
  const out: LogLine[] = [];
  for (const line of output.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      out.push(JSON.parse(line) as LogLine);
    } catch {
      // a line cut by the read so far
    }
  }
  return out;
}

async function until<T>(what: string, probe: () => T | Promise<T>, timeoutMs = 60_000): Promise<NonNullable<T>> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v as NonNullable<T>;
    if (Date.now() > end) throw new Error(`${what}: not within ${timeoutMs / 1000} s. Fleet output:\n${output.slice(-4000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The replica's current PID, from the fleet's log of its last start. */
function replicaPid(name: string): number {
  const started = logLines().filter((l) => l.msg === 'replica started' && l.replica === name);
  return started[started.length - 1].replicaPid!;
}

/** Replicas HAProxy has marked down so far. */
const downCount = (): number => logLines().filter((l) => / is DOWN/.test(l.haproxy ?? '')).length;

/** SIGSTOP to every replica's current process; the function returned sends SIGCONT, once. */
function stallReplicas(): () => void {
  const stopped = ['r1', 'r2', 'r3'].map(replicaPid);
  for (const pid of stopped) process.kill(pid, 'SIGSTOP');
  let resumed = false;
  return () => {
    if (resumed) return;
    resumed = true;
    for (const pid of stopped) process.kill(pid, 'SIGCONT');
  };
}

async function workspace(credits: number, keys = 1): Promise<{ workspaceId: string; keys: string[]; total: number }> {
  const email = `fleet-${Math.random().toString(36).slice(2)}@example.com`;
  const { workspaceId } = await ledger.createWorkspace('fleet', { createdBy: email });
  if (credits > 0) await ledger.grantCredits(workspaceId, credits, { kind: 'bought' });
  const made: string[] = [];
  for (let i = 0; i < keys; i++) made.push((await ledger.createKey(workspaceId, email)).key);
  return { workspaceId, keys: made, total: credits + WELCOME };
}

/**
 * GET through HAProxy on a new connection, so that consecutive requests may land on any replica.
 * A body that is not JSON (a proxy's page) is kept as its text; a failed request is status 0.
 */
function get(path: string, key?: string): Promise<JsonAnswer> {
  return new Promise((resolve) => {
    const headers: Record<string, string> = { Connection: 'close', ...(key ? { Authorization: `Bearer ${key}` } : {}) };
    const req = request(`${origin}${path}`, { headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', (err) => resolve({ status: 0, headers: {}, body: String(err) }));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        let body: unknown = text;
        try {
          body = text ? JSON.parse(text) : null;
        } catch {
          // kept as text
        }
        resolve({ status: res.statusCode!, headers: res.headers, body });
      });
    });
    req.setTimeout(15_000, () => req.destroy(new Error(`GET ${path}: no answer in 15 s`)));
    req.on('error', (err) => resolve({ status: 0, headers: {}, body: String(err) }));
    req.end();
  });
}

const charged = (a: JsonAnswer): number => Number(a.headers['x-credits-charged'] ?? 0);
const replicaOf = (a: JsonAnswer): string => String(a.headers['x-edifice-replica']);

beforeAll(async () => {
  [pg, redis, dir] = await Promise.all([startPostgres(), startRedis(), syntheticSnapshots(4000)]);
  const port = await freePort();
  origin = `http://127.0.0.1:${port}`;
  fleet = spawn(process.execPath, ['--import', TSX_LOADER, join(ROOT, 'tools/fleet.ts')], {
    cwd: dir,
    env: {
      ...process.env,
      EDIFICE_PORT: String(port),
      EDIFICE_LEDGER: pg.url,
      EDIFICE_REDIS: redis.url,
      EDIFICE_REPLICAS: '3',
      EDIFICE_SNAPSHOTS: join(dir, 'snapshots'),
      EDIFICE_DEMO: '0',
      EDIFICE_METRICS_PORT: '0',
      EDIFICE_WARMUP_REQUESTS: '0',
      EDIFICE_LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const read = (c: Buffer) => {
    output += c.toString();
    for (const l of logLines()) {
      if (l.replicaPid) pids.add(l.replicaPid);
      if (l.haproxyPid) pids.add(l.haproxyPid);
    }
  };
  fleet.stdout!.on('data', read);
  fleet.stderr!.on('data', read);
  await until('the fleet listening', () => {
    if (fleet.exitCode !== null) throw new Error(`the fleet ended (${fleet.exitCode}):\n${output}`);
    return logLines().some((l) => l.msg === 'fleet listening');
  });
  ledger = await PgLedger.open(pg.url);
}, 120_000);

afterAll(async () => {
  if (fleet && fleet.exitCode === null) {
    const ended = new Promise((r) => fleet.once('exit', r));
    fleet.kill('SIGTERM');
    await Promise.race([ended, new Promise((r) => setTimeout(r, 20_000))]);
  }
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // ended with the fleet, as it should
    }
  }
  await ledger?.close();
  pg?.destroy();
  await redis?.destroy();
  if (dir) removeDir(dir);
}, 60_000);

describe('npm run fleet: three replicas behind HAProxy on PostgreSQL and Redis', () => {
  it('spreads requests over the three replicas, each named in X-Edifice-Replica', async () => {
    const seen = new Set<string>();
    for (let i = 0; i < 30 && seen.size < 3; i++) seen.add(replicaOf(await get('/healthz')));
    // What the fleet logged (HAProxy's checks included) says why a replica was left out.
    expect([...seen].sort(), output.slice(-4000)).toEqual(['r1', 'r2', 'r3']);
  });

  it('concurrent pages of one workspace with too few credits: credits taken = the 200s charged, 402s in the spec format, never below zero', async () => {
    const { workspaceId, keys, total } = await workspace(20);
    // 12 pages of 5 different buildings each: 60 credits asked of 25.
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => get(`/v1/buildings?${ALL}&limit=5&offset=${i * 5}`, keys[0])));
    const ok = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status === 402);
    expect(ok.length + refused.length).toBe(12);
    const balance = await ledger.balance(workspaceId);
    expect(balance).toBeGreaterThanOrEqual(0);
    expect(ok.reduce((s, a) => s + charged(a), 0)).toBe(total - balance);
    expect(total - balance).toBe(25); // pages of 5 use the 25 credits exactly
    expect(ok.every((a) => a.body.data.length === 5 && charged(a) === 5)).toBe(true);
    expect(refused.length).toBe(7);
    for (const r of refused) {
      expect(r.body).toEqual({ error: { code: 'insufficient_credits', message: expect.any(String), parameter: '' } });
    }
    expect(await ledger.audit()).toEqual([]);
  });

  it('the per-key limit is exact across replicas: of 100 quick requests exactly 60 pass', async () => {
    const { keys } = await workspace(1000);
    const answers: JsonAnswer[] = [];
    for (let wave = 0; wave < 10; wave++) {
      answers.push(...(await Promise.all(Array.from({ length: 10 }, () => get(`/v1/buildings?${ALL}&limit=1`, keys[0])))));
    }
    const ok = answers.filter((a) => a.status === 200);
    expect(ok.length).toBe(60);
    const limited = answers.filter((a) => a.status === 429);
    expect(limited.length).toBe(40);
    expect(limited.every((a) => a.body.error.code === 'rate_limited' && Number(a.headers['retry-after']) > 0)).toBe(true);
    expect(new Set(ok.map(replicaOf)).size).toBe(3);
  });

  it('a building opened through one replica is free through every other', async () => {
    const { workspaceId, keys, total } = await workspace(100);
    const path = `/v1/buildings?${ALL}&limit=3&offset=100`;
    const first = await get(path, keys[0]);
    expect([first.status, charged(first)]).toEqual([200, 3]);
    const others = new Map<string, JsonAnswer>();
    for (let i = 0; i < 30 && others.size < 2; i++) {
      const a = await get(path, keys[0]);
      if (replicaOf(a) !== replicaOf(first)) others.set(replicaOf(a), a);
    }
    expect(others.size).toBe(2);
    for (const a of others.values()) {
      expect(a.status).toBe(200);
      expect(charged(a)).toBe(0);
      expect(a.body.data.map((b: { building_id: string }) => b.building_id)).toEqual(
        first.body.data.map((b: { building_id: string }) => b.building_id),
      );
    }
    expect(total - (await ledger.balance(workspaceId))).toBe(3);
  });

  it('kill -9 of a replica under load: HAProxy routes around it, every charge a client received is committed, the rest bounded; the replica is restarted', async () => {
    const WORKERS = 6;
    const PAGE = 4;
    const { workspaceId, keys, total } = await workspace(100_000, 8);
    const victim = replicaPid('r2');
    const answers: JsonAnswer[] = [];
    let next = 0;
    let killed = false;
    // Each request a page of new buildings, so that each 200 is charged; 8 keys keep under 60 a minute each.
    const worker = async () => {
      while (next < 360) {
        const i = next++;
        if (i === 120 && !killed) {
          killed = true;
          process.kill(victim, 'SIGKILL');
        }
        answers.push(await get(`/v1/buildings?${ALL}&limit=${PAGE}&offset=${(i * PAGE) % 4000}`, keys[i % keys.length]));
      }
    };
    await Promise.all(Array.from({ length: WORKERS }, worker));
    expect(killed).toBe(true);
    // HAProxy tries again what the replica closed unanswered; an answer the kill cut off part-way
    // cannot be tried again, and the client sees a reset, before or after the headers
    // (docs/scaling.md): only requests then in flight, never another status.
    const failed = answers.filter((a) => a.status !== 200);
    expect(failed.length, output.slice(-4000)).toBeLessThanOrEqual(WORKERS);
    for (const a of failed)
      expect([a.status, a.body], output.slice(-4000)).toEqual([0, expect.stringMatching(/^Error: (socket hang up|aborted)$/)]);
    const received = answers.reduce((s, a) => s + charged(a), 0);
    const taken = total - (await ledger.balance(workspaceId));
    // No charge a client saw is missing from the ledger; a page committed whose answer died with
    // the replica is charged without a client seeing it: at most the pages then in flight there.
    expect(taken).toBeGreaterThanOrEqual(received);
    expect(taken - received).toBeLessThanOrEqual(WORKERS * PAGE);
    expect(await ledger.audit()).toEqual([]);
    await until('the replica restarted', () =>
      logLines().some((l) => l.msg === 'replica ended without being asked: restarting it' && l.replica === 'r2'),
    );
    await until('r2 back in HAProxy', () => logLines().some((l) => /replicas\/r2 is UP/.test(l.haproxy ?? '')));
    expect(replicaPid('r2')).not.toBe(victim);
    const seen = new Set<string>();
    await until('r2 answering', async () => {
      seen.add(replicaOf(await get('/healthz')));
      return seen.has('r2');
    });
  }, 120_000);

  it('PostgreSQL restarted under load: new pages answer 503 unavailable with Retry-After meanwhile, never 500, and the fleet recovers by itself', async () => {
    const { workspaceId, keys, total } = await workspace(1000, 12);
    const openedPath = `/v1/buildings?${ALL}&limit=2&offset=200`;
    const opened = await get(openedPath, keys[0]);
    expect(opened.status).toBe(200);
    // Load all along, from three connections: pages of new buildings, and the page already opened.
    const background: JsonAnswer[] = [];
    let loading = true;
    let page = 0;
    const loader = async () => {
      while (loading) {
        const i = page++;
        background.push(await get(i % 2 ? openedPath : `/v1/buildings?${ALL}&limit=2&offset=${1000 + i * 2}`, keys[3 + (i % 9)]));
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    const loaders = Promise.all([loader(), loader(), loader()]);
    pg.stop();
    const during: JsonAnswer[] = [];
    for (let i = 0; i < 12; i++) during.push(await get(`/v1/buildings?${ALL}&limit=2&offset=${300 + i * 2}`, keys[i % 3]));
    for (const a of during) {
      expect(a.status).toBe(503);
      expect(a.body.error.code).toBe('unavailable');
      expect(Number(a.headers['retry-after'])).toBeGreaterThan(0);
    }
    pg.start();
    const back = await until('a paid page answered again', async () => {
      const a = await get(`/v1/buildings?${ALL}&limit=2&offset=400`, keys[1]);
      expect([200, 503]).toContain(a.status);
      return a.status === 200 ? a : null;
    });
    loading = false;
    await loaders;
    expect(charged(back)).toBe(2);
    expect(background.length).toBeGreaterThan(0);
    for (const a of background) {
      expect([200, 429, 503]).toContain(a.status);
      if (a.status === 503) expect([a.body.error.code, Number(a.headers['retry-after']) > 0]).toEqual(['unavailable', true]);
    }
    // A commit whose acknowledgement PostgreSQL's stop cut off is charged and answered 503: at
    // most the pages then in flight.
    const received = [opened, back, ...background].reduce((s, a) => s + charged(a), 0);
    const taken = total - (await ledger.balance(workspaceId));
    expect(taken).toBeGreaterThanOrEqual(received);
    expect(taken - received).toBeLessThanOrEqual(3 * 2);
    expect(await ledger.audit()).toEqual([]);
  }, 120_000);

  it('Redis restarted: no request fails meanwhile and no key passes its limit; once back, the limit is exact across replicas again', async () => {
    await redis.stop();
    const { keys } = await workspace(1000, 2);
    const during: JsonAnswer[] = [];
    for (let wave = 0; wave < 10; wave++) {
      during.push(...(await Promise.all(Array.from({ length: 10 }, () => get(`/v1/buildings?${ALL}&limit=1&offset=7`, keys[0])))));
    }
    expect(during.every((a) => a.status === 200 || (a.status === 429 && a.body.error.code === 'rate_limited'))).toBe(true);
    expect(during.filter((a) => a.status === 200).length).toBeLessThanOrEqual(60);
    await redis.start();
    // Shared again once the replicas' clients reconnect: probe until Redis holds a count, then
    // leave the others the few seconds of their reconnection schedule.
    await until('Redis shared again', async () => {
      await get(`/v1/buildings?${ALL}&limit=1&offset=9`, keys[1]);
      return (
        Number(
          execFileSync('redis-cli', ['-p', String(redis.port), 'dbsize'])
            .toString()
            .trim(),
        ) > 0
      );
    });
    await new Promise((r) => setTimeout(r, 3_000));
    const { keys: fresh } = await workspace(1000);
    const after: JsonAnswer[] = [];
    for (let wave = 0; wave < 10; wave++) {
      after.push(...(await Promise.all(Array.from({ length: 10 }, () => get(`/v1/buildings?${ALL}&limit=1&offset=11`, fresh[0])))));
    }
    expect(after.filter((a) => a.status === 200).length).toBe(60);
  }, 120_000);

  it('every replica stalled 2.5 s at once (a machine starved a moment): requests wait and are answered, none is 503', async () => {
    const downBefore = downCount();
    const resume = stallReplicas();
    try {
      // Sent while every replica is stopped: HAProxy holds them on their connections.
      await new Promise((r) => setTimeout(r, 300));
      const during = Array.from({ length: 6 }, () => get('/healthz'));
      await new Promise((r) => setTimeout(r, 2_200));
      resume();
      const answers = await Promise.all(during);
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200]);
      // A check that waited for a stalled replica is one failure, not the two that take it out.
      await new Promise((r) => setTimeout(r, 1_500));
      expect(downCount(), output.slice(-4000)).toBe(downBefore);
    } finally {
      resume();
    }
  }, 60_000);

  it('every replica stalled past its checks: HAProxy answers in the spec format, never a page of its own, and the fleet comes back', async () => {
    const { keys } = await workspace(100);
    const downBefore = downCount();
    const resume = stallReplicas();
    let early: JsonAnswer[];
    let late: JsonAnswer[];
    try {
      await new Promise((r) => setTimeout(r, 300));
      // In flight on a replica when HAProxy takes it out, and sent once none is left.
      const inFlight = Array.from({ length: 4 }, (_, i) => get(i % 2 ? '/healthz' : `/v1/buildings?${ALL}&limit=1&offset=${i}`, keys[0]));
      await until('every replica down', () => downCount() >= downBefore + 3, 20_000);
      late = await Promise.all(['/healthz', `/v1/buildings?${ALL}&limit=1`, '/v1/public/countries'].map((p) => get(p, keys[0])));
      resume();
      early = await Promise.all(inFlight);
    } finally {
      resume();
    }
    const spec = (a: JsonAnswer): unknown[] => {
      const body = a.body as { error?: string | { code?: string } };
      return [
        a.status,
        a.headers['content-type'],
        a.headers['retry-after'],
        typeof body.error === 'string' ? body.error : body.error?.code,
      ];
    };
    const unavailable = [503, 'application/json', '2', 'unavailable'];
    // With none left, HAProxy answers itself, every time.
    for (const a of late) expect(spec(a), JSON.stringify(a.body)).toEqual(unavailable);
    // ...and the fleet's log holds a line for each, HAProxy's own answer (LR) to the path asked.
    for (const path of ['/healthz', '/v1/public/countries'])
      await until(`HAProxy's log line of its answer to ${path}`, () =>
        logLines().some((l) => / 503 .* LR-- /.test(l.haproxy ?? '') && l.haproxy!.endsWith(`"GET ${path} HTTP/1.1"`)),
      );
    // A request in flight is answered the same (or, once its replica is back, served); rarely, under
    // load, HAProxy closes its connection unanswered instead (docs/scaling.md): never another status, never a page.
    expect(early.some((a) => a.status !== 200)).toBe(true);
    for (const a of early) {
      if (a.status === 0) expect(a.body, output.slice(-4000)).toBe('Error: socket hang up');
      else if (a.status !== 200) expect(spec(a), JSON.stringify(a.body)).toEqual(unavailable);
    }
    await until('the fleet answering again', async () => (await get('/healthz')).status === 200, 20_000);
  }, 90_000);
});
