/**
 * Serving with worker threads: one port, one copy of the snapshots, limits exact across
 * threads, and every change the main thread publishes (a hot swap, an approved removal) reaching
 * every worker. Requests go out on fresh connections, which the kernel spreads over the workers.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { getPriority } from 'node:os';
import { Worker } from 'node:worker_threads';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Catalog } from '../src/catalog/catalog.ts';
import { loadConfig } from '../src/config.ts';
import { followRemovals } from '../src/http/follow-removals.ts';
import { startWorkers, type WorkerPool } from '../src/http/worker-pool.ts';
import { Ledger } from '../src/ledger/index.ts';
import { writeSyntheticCountry } from '../src/synth/generate.ts';
import { getFresh, removeDir, syntheticSnapshots, workspaceWithKey, type JsonAnswer } from './http-helpers.ts';

let dir: string;
let catalog: Catalog;
let ledger: Ledger;
let pool: WorkerPool;
let stopFollowing: () => void;
let origin: string;
/** What the pool logged at warn and above. */
const warnings: string[] = [];

const get = (path: string, headers: Record<string, string> = {}): Promise<JsonAnswer> => getFresh(origin, path, headers);

beforeAll(async () => {
  dir = await syntheticSnapshots(4000, 5, 'LI');
  const config = {
    ...loadConfig({ EDIFICE_KEY_PER_MINUTE: '10', EDIFICE_REMOVALS_POLL_MS: '100' }),
    port: 0,
    snapshotsDir: join(dir, 'snapshots'),
    ledgerPath: join(dir, 'ledger.db'),
  };
  const log = pino(
    { level: 'warn' },
    {
      write: (line: string) => {
        warnings.push(line);
      },
    },
  );
  catalog = Catalog.open(config.snapshotsDir, { log: () => {} });
  ledger = Ledger.open(config.ledgerPath, { perKeyPerMinute: 10 });
  stopFollowing = followRemovals(ledger, catalog, config.removalsPollMs, log);
  pool = await startWorkers({ config, catalog, ledger, log, workers: 2 });
  await pool.allListening();
  origin = `http://127.0.0.1:${pool.port}`;
});

afterAll(async () => {
  stopFollowing?.();
  await pool?.close(2_000);
  ledger?.close();
  if (dir) removeDir(dir);
});

describe('worker threads', () => {
  it('serve on one port; a key gets its per-minute limit once across threads, not once per thread', async () => {
    expect(pool.workers).toBe(2);
    expect(pool.implementation).toBe('native');
    const { key } = workspaceWithKey(ledger, 1_000);
    const answers = await Promise.all(
      Array.from({ length: 24 }, () => get('/v1/buildings?bbox=9.4,47.0,9.7,47.3&limit=1', { Authorization: `Bearer ${key}` })),
    );
    const ok = answers.filter((a) => a.status === 200).length;
    // 10 a minute: one token comes back every 6 s, so a burst of 24 lets 10 (or, past a refill, 11) through.
    expect(ok === 10 || ok === 11).toBe(true);
    expect(answers.filter((a) => a.status === 429).every((a) => a.body.error.code === 'rate_limited')).toBe(true);
    // The workers' metrics are summed.
    const metrics = await pool.metricsText();
    expect(metrics).toContain(`edifice_http_requests_total{route="/buildings",status="200"} ${ok}`);
    expect(metrics).toContain(`edifice_http_requests_total{route="/buildings",status="429"} ${24 - ok}`);
    expect(metrics).toMatch(/edifice_snapshot_buildings\{country="LI",date="2026-11-21"\} 4000\n/);
    // Every answer held the same one building: each worker's cache encoded it once, then served it.
    const lookups = (result: string) =>
      Number(new RegExp(`edifice_fragment_cache_lookups_total\\{result="${result}"\\} (\\d+)`).exec(metrics)?.[1]);
    expect(lookups('hit') + lookups('miss')).toBe(ok);
    expect([1, 2]).toContain(lookups('miss'));
  });

  it('pages charged from both workers at once near the end of the credits never overdraw; each building is charged once', async () => {
    const { workspaceId, key } = workspaceWithKey(ledger, 300);
    // Four keys of the workspace (10 requests a minute each here).
    const keys = [key];
    for (let i = 0; i < 3; i++) {
      const email = `member-${i}-${Date.now()}@example.li`;
      ledger.addMember(workspaceId, email);
      keys.push(ledger.createKey(workspaceId, email).key);
    }
    // 40 pages of up to 100 buildings, with overlaps (offsets step 50): together far more than 305 credits.
    const offsets = Array.from({ length: 40 }, (_, i) => (i % 20) * 50);
    const answers = await Promise.all(
      offsets.map((o, i) =>
        get(`/v1/buildings?bbox=9.4,47.0,9.7,47.3&limit=100&offset=${o}&sort=area`, { Authorization: `Bearer ${keys[i % 4]}` }),
      ),
    );
    const ok = answers.filter((a) => a.status === 200);
    expect(answers.map((a) => a.status).filter((st) => st !== 200 && st !== 402)).toEqual([]);
    expect(answers.filter((a) => a.status === 402).every((a) => a.body.error.code === 'insufficient_credits')).toBe(true);
    expect(ok.length).toBeGreaterThan(2);
    expect(answers.some((a) => a.status === 402)).toBe(true);
    const charged = ok.reduce((n, a) => n + Number(a.headers['x-credits-charged']), 0);
    expect(charged).toBeLessThanOrEqual(305);
    expect(ledger.balance(workspaceId)).toBe(305 - charged);
    // Every building a 200 returned is opened: asking for all of them again costs nothing.
    const seen = new Set(ok.flatMap((a) => a.body.data.map((b: { building_id: string }) => b.building_id)));
    expect(charged).toBe(seen.size);
    expect(ledger.charge(workspaceId, null, [...seen], '/buildings')).toMatchObject({ ok: true, charged: 0 });
    expect(ledger.audit()).toEqual([]);
  });

  it('a client address gets its 120 a minute across /public once, not once per thread', async () => {
    const t0 = Date.now();
    const answers = await Promise.all(Array.from({ length: 160 }, () => get('/v1/public/countries')));
    const elapsed = Date.now() - t0;
    const ok = answers.filter((a) => a.status === 200).length;
    // A token comes back every 0.5 s: a second thread with buckets of its own would let 240 through.
    expect(ok).toBeGreaterThanOrEqual(120);
    expect(ok).toBeLessThanOrEqual(120 + Math.ceil(elapsed / 500));
    expect(answers.filter((a) => a.status === 429).every((a) => a.body.error === 'rate_limited')).toBe(true);
  });

  it('the ledger thread runs ten nice steps above every other thread, or the pool says why not', async () => {
    // Linux keeps a nice value per thread (/proc/<pid>/task/<tid>/stat, field 19).
    const nices = readdirSync('/proc/self/task').map((t) =>
      Number(readFileSync(`/proc/self/task/${t}/stat`, 'utf8').split(') ')[1].split(' ')[16]),
    );
    const base = getPriority(0);
    const wanted = Math.max(-20, base - 10);
    // Whether this process may raise a thread's priority at all, asked of a thread of its own.
    const permitted = await new Promise<boolean>((resolve, reject) => {
      const probe = new Worker(
        `const { parentPort } = require('node:worker_threads'); const os = require('node:os');
        try { os.setPriority(0, ${wanted}); parentPort.postMessage(true); } catch { parentPort.postMessage(false); }`,
        { eval: true },
      );
      probe.once('message', resolve);
      probe.once('error', reject);
    });
    const warned = warnings.filter((l) => l.includes('the ledger thread runs at the priority of the workers'));
    if (permitted) {
      expect(nices.filter((n) => n === wanted)).toHaveLength(1);
      expect(nices.filter((n) => n !== wanted && n !== base)).toEqual([]);
      expect(warned).toEqual([]);
    } else {
      expect(nices.every((n) => n === base)).toBe(true);
      expect(warned).toHaveLength(1);
      expect(JSON.parse(warned[0]).reason).toMatch(/^E(ACCES|PERM): raising a priority needs CAP_SYS_NICE/);
    }
  });

  it('a hot swap and an approved removal reach every worker', async () => {
    const b = catalog.view().snapshots[0];
    let row = 0;
    while (b.businessCount(row) === 0) row++;
    const id = b.buildingId(row);
    const gone = b.businesses(row)[0].business_id;
    await writeSyntheticCountry({
      seed: 5,
      buildings: 4000,
      country: 'LI',
      date: '2026-11-22',
      bounds: [9.4, 47.0, 9.7, 47.3],
      outDir: join(dir, 'snapshots'),
    });
    expect(catalog.rescan().map((r) => r.status)).toEqual(['loaded']);
    const asked = ledger.addRemovalRequest({
      businessId: gone,
      registrationNumber: null,
      buildingId: id,
      country: 'LI',
      businessName: 'x',
      reason: 'moved away long ago',
      contact: 'a@b.li',
      client: 't',
    });
    ledger.decideRemoval(asked.id, 'approved');
    // Applied by the main thread within its poll, then posted to the workers.
    await new Promise((r) => setTimeout(r, 600));
    const { key } = workspaceWithKey(ledger, 1_000);
    const pages = await Promise.all(
      Array.from({ length: 10 }, () => get(`/v1/buildings/${id}/registered-businesses`, { Authorization: `Bearer ${key}` })),
    );
    expect(pages.map((p) => p.status)).toEqual(new Array(10).fill(200));
    for (const p of pages) expect(p.body.data.map((x: { business_id: string }) => x.business_id)).not.toContain(gone);
    const readyz = await Promise.all(Array.from({ length: 10 }, () => get('/readyz')));
    for (const r of readyz) expect(r.body.snapshots).toEqual([{ country: 'LI', date: '2026-11-22', buildings: 4000 }]);
  });
});
