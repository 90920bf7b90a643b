/**
 * A start with worker threads as `npm start` makes it: the threads are started first and load
 * their code (bundles, code-bundles.mjs) while the main thread loads the catalog; then they get its
 * view, warm up and listen. What is published meanwhile reaches them, and a file a bundled module
 * finds beside its own source (the map page) is found.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Worker } from 'node:worker_threads';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Catalog } from '../src/catalog/catalog.ts';
import { loadConfig } from '../src/config.ts';
import { KEEP_BUNDLES, codeBundles, pruneBundles } from '../src/code-bundles.mjs';
import { dropEarlyThreads, startEarlyThreads, takeEarlyThread } from '../src/http/early-threads.mjs';
import { portRefusal } from '../src/http/port.ts';
import { spawnWorkers, type WorkerPool } from '../src/http/worker-pool.ts';
import { Ledger } from '../src/ledger/index.ts';
import { getFresh, removeDir, syntheticSnapshots, workspaceWithKey } from './http-helpers.ts';

let dir: string;
let catalog: Catalog;
let ledger: Ledger;
let pool: WorkerPool;
let origin: string;
const warnings: string[] = [];
let gone: string;
let buildingId: string;
let kept: string[];

beforeAll(async () => {
  dir = await syntheticSnapshots(3000, 11, 'LI');
  const config = { ...loadConfig({}), port: 0, snapshotsDir: join(dir, 'snapshots'), ledgerPath: join(dir, 'ledger.db') };
  const log = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(line) });
  ledger = Ledger.open(config.ledgerPath);
  const threads = await spawnWorkers({ config, ledger, log, workers: 2 });
  // As main.ts: the catalog is loaded (synchronously, on this thread) while the threads start.
  catalog = Catalog.open(config.snapshotsDir, { log: () => {} });
  const s = catalog.view().snapshots[0];
  let row = 0;
  while (s.businessCount(row) < 2) row++;
  buildingId = s.buildingId(row);
  const all = s.businesses(row).map((b) => b.business_id as string);
  gone = all[0];
  kept = all.slice(1);
  const serving = threads.serve(catalog);
  // Published after the first view went out, while the workers warm up on it: it must reach them.
  catalog.setRemovals({ businessIds: new Set([gone]), registrationNumbers: new Set() });
  pool = await serving;
  await pool.allListening();
  origin = `http://127.0.0.1:${pool.port}`;
});

afterAll(async () => {
  await pool?.close(2_000);
  ledger?.close();
  if (dir) removeDir(dir);
});

describe('threads started before the catalog', () => {
  it('serve the catalog, with a removal published while they warmed up applied in every worker', async () => {
    expect(pool.workers).toBe(2);
    const { key } = workspaceWithKey(ledger, 1_000);
    const pages = await Promise.all(
      Array.from({ length: 10 }, () =>
        getFresh(origin, `/v1/buildings/${buildingId}/registered-businesses`, { Authorization: `Bearer ${key}` }),
      ),
    );
    expect(pages.map((p) => p.status)).toEqual(new Array(10).fill(200));
    for (const p of pages) expect(p.body.data.map((x: { business_id: string }) => x.business_id).sort()).toEqual([...kept].sort());
    const readyz = await Promise.all(Array.from({ length: 6 }, () => getFresh(origin, '/readyz')));
    for (const r of readyz) expect(r.body.snapshots).toEqual([{ country: 'LI', date: '2026-11-21', buildings: 3000 }]);
  });

  it('run their bundles, whose modules find the files beside their sources (the map page)', async () => {
    expect(warnings.join('\n')).not.toContain('could not be bundled');
    const page = readFileSync(fileURLToPath(new URL('../src/http/map/index.html', import.meta.url)), 'utf8');
    const title = /<title>([^<]*)<\/title>/.exec(page)![1];
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => fetch(`${origin}/v1/map`).then(async (r) => [r.status, await r.text()])),
    );
    for (const [status, html] of answers) {
      expect(status).toBe(200);
      expect(html).toContain(`<title>${title}</title>`);
    }
  });
});

describe('workers of a start', () => {
  /** A pool of three workers over a small country, whose warm-up is long enough to be caught in the middle. */
  async function threeWorkers(): Promise<{ serving: Promise<WorkerPool>; done: () => void }> {
    const d = await syntheticSnapshots(2000, 12, 'LI');
    const config = {
      ...loadConfig({ EDIFICE_WARMUP_REQUESTS: '1000' }),
      port: 0,
      snapshotsDir: join(d, 'snapshots'),
      ledgerPath: join(d, 'ledger.db'),
    };
    const own = Ledger.open(config.ledgerPath);
    const threads = await spawnWorkers({ config, ledger: own, log: pino({ level: 'silent' }), workers: 3 });
    const serving = threads.serve(Catalog.open(config.snapshotsDir, { log: () => {} }));
    return {
      serving,
      done: () => {
        own.close();
        removeDir(d);
      },
    };
  }

  it('serve from the first to listen; allListening settles once every one does', async () => {
    const { serving, done } = await threeWorkers();
    const p = await serving;
    try {
      expect(p.listening).toBeGreaterThanOrEqual(1);
      const first = await getFresh(`http://127.0.0.1:${p.port}`, '/v1/public/countries');
      expect(first.status).toBe(200);
      expect(first.body.data.map((c: { country: string }) => c.country)).toEqual(['LI']);
      await p.allListening();
      expect(p.listening).toBe(3);
      // Every thread's metrics, the late ones' included.
      const text = await p.metricsText();
      expect(new Set([...text.matchAll(/thread="(http-\d+)"/g)].map((m) => m[1])).size).toBe(3);
    } finally {
      await p.close(2_000);
      done();
    }
  });

  it('a stop while some still start ends them all, and lets the port go', async () => {
    const { serving, done } = await threeWorkers();
    const p = await serving;
    try {
      await p.close(2_000);
      expect(p.listening).toBe(0);
      expect(await portRefusal('127.0.0.1', p.port)).toBeNull();
    } finally {
      done();
    }
  });
});

describe('threads bin/start.mjs starts early', () => {
  const entries = ['worker.ts', 'ledger-thread.ts'].map((f) => fileURLToPath(new URL(`../src/http/${f}`, import.meta.url)));
  const early = () => (globalThis as Record<symbol, Record<string, { thread: Worker }[]> | undefined>)[Symbol.for('edifice.earlyThreads')];
  const code = async () => {
    const bundles = await codeBundles(entries);
    return { worker: bundles.get(entries[0])!, ledger: bundles.get(entries[1])! };
  };

  it('are none for a server on its main thread or on PostgreSQL', async () => {
    for (const env of [{ EDIFICE_WORKERS: '0' }, { EDIFICE_LEDGER: 'postgres://edifice@127.0.0.1/ledger' }]) {
      startEarlyThreads(await code(), env);
      expect(takeEarlyThread('worker')).toBeUndefined();
      expect(takeEarlyThread('ledger')).toBeUndefined();
    }
  });

  it('are the ledger thread and the workers the pool runs', async () => {
    const d = await syntheticSnapshots(1000, 13, 'LI');
    const config = { ...loadConfig({}), port: 0, snapshotsDir: join(d, 'snapshots'), ledgerPath: join(d, 'ledger.db') };
    const own = Ledger.open(config.ledgerPath);
    startEarlyThreads(await code(), { EDIFICE_WORKERS: '2' });
    const started = early()!.worker.map((w) => w.thread.threadId);
    expect(started).toHaveLength(2);
    const threads = await spawnWorkers({ config, ledger: own, log: pino({ level: 'silent' }), workers: 2 });
    // Taken by the pool: none left to take.
    expect([early()!.worker, early()!.ledger]).toEqual([[], []]);
    const served = Catalog.open(config.snapshotsDir, { log: () => {} });
    const s = served.view().snapshots[0];
    const box = [s.lon[0] - 0.001, s.lat[0] - 0.001, s.lon[0] + 0.001, s.lat[0] + 0.001].map((v) => v.toFixed(6)).join(',');
    const p = await threads.serve(served);
    try {
      await p.allListening();
      const text = await p.metricsText();
      const ids = [...text.matchAll(/thread="http-(\d+)"/g)].map((m) => Number(m[1]));
      expect([...new Set(ids)].sort((a, b) => a - b)).toEqual(started.sort((a, b) => a - b));
      const { key, workspaceId } = workspaceWithKey(own, 100);
      const before = own.balance(workspaceId);
      const page = await getFresh(`http://127.0.0.1:${p.port}`, `/v1/buildings?bbox=${box}&limit=1`, { Authorization: `Bearer ${key}` });
      // A charged page: the early ledger thread, given its data later, commits it.
      expect(page.status).toBe(200);
      expect(page.body.data).toHaveLength(1);
      expect(own.balance(workspaceId)).toBe(before - 1);
    } finally {
      await p.close(2_000);
      own.close();
      removeDir(d);
    }
  });

  it('that nobody takes end when dropped', async () => {
    startEarlyThreads(await code(), { EDIFICE_WORKERS: '1' });
    const threads = [...early()!.worker, ...early()!.ledger].map((t) => t.thread);
    expect(threads).toHaveLength(2);
    const ended = threads.map((t) => new Promise((done) => t.once('exit', done)));
    dropEarlyThreads();
    await Promise.all(ended);
    expect(takeEarlyThread('worker')).toBeUndefined();
  });
});

describe('thread bundles', () => {
  const entries = ['worker.ts', 'ledger-thread.ts'].map((f) => fileURLToPath(new URL(`../src/http/${f}`, import.meta.url)));

  it('are kept under a hash of the sources and reused while they do not change', async () => {
    const first = await codeBundles(entries);
    const mtimes = entries.map((e) => statSync(first.get(e)!).mtimeMs);
    const again = await codeBundles(entries);
    expect(entries.map((e) => again.get(e)!.href)).toEqual(entries.map((e) => first.get(e)!.href));
    expect(entries.map((e) => statSync(again.get(e)!).mtimeMs)).toEqual(mtimes);
    expect(first.get(entries[0])!.pathname).toMatch(/\/node_modules\/\.cache\/edifice\/[0-9a-f]{16}\/http-worker\.mjs$/);
  });

  it('are marked in use by this process; older folders past the newest few go unless a live process uses them', async () => {
    const current = dirname(fileURLToPath((await codeBundles(entries)).get(entries[0])!));
    const cache = dirname(current);
    expect(readdirSync(join(current, '.in-use'))).toContain(String(process.pid));
    // Another process's mark lasts while it runs.
    const script =
      `const { codeBundles } = await import(${JSON.stringify(new URL('../src/code-bundles.mjs', import.meta.url).href)});` +
      `await codeBundles(${JSON.stringify(entries)});` +
      `const { readdirSync } = await import('node:fs');` +
      `process.stdout.write(JSON.stringify([process.pid, readdirSync(${JSON.stringify(join(current, '.in-use'))})]));`;
    const [child, marksWhileRunning] = JSON.parse(
      spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }).stdout,
    ) as [number, string[]];
    expect(marksWhileRunning).toContain(String(child));
    expect(readdirSync(join(current, '.in-use'))).not.toContain(String(child));
    // A process id that is surely not running: a child's, once it has exited.
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout;
    // Folders of earlier sources, newest first, all newer than any real one: the 5th used by this
    // process, the 6th by the dead one.
    const now = Date.now() / 1000 + 3600;
    const names = Array.from({ length: 7 }, (_, i) => `test-prune-${process.pid}-${i}`);
    names.forEach((name, i) => {
      mkdirSync(join(cache, name, '.in-use'), { recursive: true });
      writeFileSync(join(cache, name, 'http-worker.mjs'), '');
      if (i === 4) writeFileSync(join(cache, name, '.in-use', String(process.pid)), '');
      if (i === 5) writeFileSync(join(cache, name, '.in-use', dead), '');
      utimesSync(join(cache, name), now - i, now - i);
    });
    const removed = pruneBundles(basename(current));
    const kept = KEEP_BUNDLES - 1; // besides the current folder
    expect(removed.filter((n) => names.includes(n))).toEqual(names.filter((_, i) => i >= kept && i !== 4));
    expect(names.map((n) => existsSync(join(cache, n)))).toEqual(names.map((_, i) => i < kept || i === 4));
    expect(existsSync(join(current, 'http-worker.mjs'))).toBe(true);
    for (const name of names) rmSync(join(cache, name), { recursive: true, force: true });
  });

  it("give each module its own import.meta.url: its source's", async () => {
    const bundle = readFileSync((await codeBundles(entries)).get(entries[0])!, 'utf8');
    expect(bundle).not.toMatch(/import\.meta\.url/);
    const mapPage = new URL('../src/http/map-page.ts', import.meta.url).href;
    expect(bundle).toContain(JSON.stringify(mapPage));
    // The main thread's bundle holds code-bundles.mjs itself, plain JavaScript, whose URL finds the sources.
    const main = fileURLToPath(new URL('../src/main.ts', import.meta.url));
    const mainBundle = readFileSync((await codeBundles([main])).get(main)!, 'utf8');
    expect(mainBundle).not.toMatch(/import\.meta\.url/);
    expect(mainBundle).toContain(JSON.stringify(new URL('../src/code-bundles.mjs', import.meta.url).href));
  });
});
