/**
 * The ledger thread of a server with worker threads ends (killed here from outside through the
 * inspector, as an uncaught error would end it) and cannot start again a while (its file is out
 * of reach): paid pages are answered 503 with Retry-After, /readyz says unavailable, free pages
 * are still served, and the pool keeps trying; once the file is back, a new thread starts and
 * paid pages are charged again, exactly. And ended while pages wait for their charge: each is
 * answered (200, or 503 with nothing charged), none is left waiting, and the credits taken are
 * exactly those the 200s say.
 */
import { mkdirSync, renameSync, rmdirSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Catalog } from '../src/catalog/catalog.ts';
import { loadConfig } from '../src/config.ts';
import { startWorkers, type WorkerPool } from '../src/http/worker-pool.ts';
import { Ledger } from '../src/ledger/index.ts';
import { getFresh, removeDir, syntheticSnapshots, workspaceWithKey, type JsonAnswer } from './http-helpers.ts';

let dir: string;
let ledgerPath: string;
let ledger: Ledger;
let pool: WorkerPool;
let origin: string;
const logged: string[] = [];

const get = (path: string, headers: Record<string, string> = {}): Promise<JsonAnswer> => getFresh(origin, path, headers);

/** Asks `path` until `until` holds for `times` answers in a row (both workers then agree), at most `ms`. */
async function settle(path: string, until: (a: JsonAnswer) => boolean, times = 8, ms = 15_000): Promise<JsonAnswer[]> {
  const start = Date.now();
  let run: JsonAnswer[] = [];
  while (Date.now() - start < ms) {
    const a = await get(path);
    run = until(a) ? [...run, a] : [];
    if (run.length >= times) return run;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`${path}: not settled within ${ms} ms`);
}

/**
 * The inspector reaches the threads of this process: attached once while they are idle (attaching
 * and detaching while they served crashed the process in Node 20), it follows each ledger thread
 * the pool starts.
 */
let inspector: Session;
let ledgerSession = '';

/** Ends the pool's ledger thread with an uncaught error, from inside it, as a bug would. */
async function killLedgerThread(): Promise<void> {
  for (let waited = 0; ledgerSession === ''; waited += 10) {
    if (waited > 5_000) throw new Error('no thread named edifice-ledger');
    await new Promise((r) => setTimeout(r, 10));
  }
  const message = {
    id: 1,
    method: 'Runtime.evaluate',
    params: { expression: 'setTimeout(() => { throw new Error("ended by the test") })' },
  };
  await new Promise<void>((resolve, reject) => {
    inspector.post('NodeWorker.sendMessageToWorker', { sessionId: ledgerSession, message: JSON.stringify(message) }, (err) =>
      err ? reject(err) : resolve(),
    );
  });
}

beforeAll(async () => {
  dir = await syntheticSnapshots(4000, 5, 'LI');
  ledgerPath = join(dir, 'ledger.db');
  const config = { ...loadConfig({ EDIFICE_KEY_PER_MINUTE: '1000' }), port: 0, snapshotsDir: join(dir, 'snapshots'), ledgerPath };
  const log = pino(
    { level: 'warn' },
    {
      write: (line: string) => {
        logged.push(line);
      },
    },
  );
  const catalog = Catalog.open(config.snapshotsDir, { log: () => {} });
  ledger = Ledger.open(ledgerPath, { perKeyPerMinute: 1000 });
  pool = await startWorkers({ config, catalog, ledger, log, workers: 2 });
  await pool.allListening();
  origin = `http://127.0.0.1:${pool.port}`;
  inspector = new Session();
  inspector.connect();
  inspector.on('NodeWorker.attachedToWorker', ({ params }) => {
    if (params.workerInfo.title.includes('edifice-ledger')) ledgerSession = params.sessionId;
  });
  inspector.on('NodeWorker.detachedFromWorker', ({ params }) => {
    if (params.sessionId === ledgerSession) ledgerSession = '';
  });
  inspector.post('NodeWorker.enable', { waitForDebuggerOnStart: false });
});

afterAll(async () => {
  inspector?.disconnect();
  await pool?.close(2_000);
  ledger?.close();
  if (dir) removeDir(dir);
});

describe('the ledger thread ends and cannot start again a while', () => {
  it('paid pages 503 and /readyz unavailable while it is down, free pages served; charged exactly once it is back', async () => {
    const { workspaceId, key } = workspaceWithKey(ledger, 1_000);
    const auth = { Authorization: `Bearer ${key}` };
    const page = (offset: number) => `/v1/buildings?bbox=9.4,47.0,9.7,47.3&limit=10&offset=${offset}&sort=area`;
    const first = await get(page(0), auth);
    expect(first.status).toBe(200);
    expect(first.headers['x-credits-charged']).toBe('10');
    await settle('/readyz', (a) => a.status === 200);

    // The file out of reach (a folder where it was): a new ledger thread cannot open it. The
    // connections open already keep theirs.
    renameSync(ledgerPath, `${ledgerPath}.away`);
    mkdirSync(ledgerPath);
    try {
      await killLedgerThread();
      const down = await settle('/readyz', (a) => a.status === 503);
      for (const a of down) {
        expect(a.body).toMatchObject({ status: 'unavailable', ledger: 'unreachable' });
        expect(a.headers['retry-after']).toBe('5');
      }
      for (let i = 0; i < 6; i++) {
        const paid = await get(page(10 + 10 * i), auth);
        expect(paid.status).toBe(503);
        expect(paid.body.error.code).toBe('unavailable');
        expect(Number(paid.headers['retry-after'])).toBeGreaterThan(0);
        expect(paid.headers['x-credits-charged'] ?? '0').toBe('0');
      }
      // A page of buildings already opened costs nothing: the workers answer it from their shared openings.
      expect((await get(page(0), auth)).status).toBe(200);
      expect((await get('/v1/public/countries')).status).toBe(200);
      // The pool tried again, and again (250 ms, then 500, ...). Each try starts a thread, which
      // takes a while on a loaded machine: waited for, not timed.
      const retries = () => logged.filter((l) => l.includes('cannot restart the ledger thread; trying again')).length;
      for (const start = Date.now(); retries() < 2 && Date.now() - start < 15_000;) await new Promise((r) => setTimeout(r, 50));
      expect(retries()).toBeGreaterThanOrEqual(2);
      expect(ledger.balance(workspaceId)).toBe(1_005 - 10);
    } finally {
      rmdirSync(ledgerPath);
      renameSync(`${ledgerPath}.away`, ledgerPath);
    }

    await settle('/readyz', (a) => a.status === 200 && a.body.ledger === 'open');
    const again = await get(page(10), auth);
    expect(again.status).toBe(200);
    expect(again.headers['x-credits-charged']).toBe('10');
    expect(ledger.balance(workspaceId)).toBe(1_005 - 20);
    expect(ledger.audit()).toEqual([]);
    expect(logged.some((l) => l.includes('ledger thread exited; starting another'))).toBe(true);
  });

  it('pages waiting for their charge when it ends are answered 200 or 503, none left waiting; the credits taken are those the 200s say', async () => {
    // A thread that is back, whatever the test before left.
    await settle('/readyz', (a) => a.status === 200 && a.body.ledger === 'open');
    const { workspaceId, key } = workspaceWithKey(ledger, 10_000);
    const auth = { Authorization: `Bearer ${key}` };
    let killed = 0;
    for (let round = 0; round < 3; round++) {
      const before = ledger.balance(workspaceId);
      // 30 pages of 25 buildings each, none opened before; the thread is ended as soon as the
      // first is charged, while others wait for their charge or are on their way.
      let ended: Promise<void> | null = null;
      const answers = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          get(`/v1/buildings?bbox=9.4,47.0,9.7,47.3&limit=25&offset=${(round * 30 + i) * 25}&sort=volume`, auth).then((a) => {
            if (a.status === 200 && ended === null) ended = killLedgerThread();
            return a;
          }),
        ),
      );
      await ended;
      if (ended !== null) killed++;
      expect(answers.map((a) => a.status).filter((st) => st !== 200 && st !== 503)).toEqual([]);
      for (const a of answers.filter((x) => x.status === 503)) {
        expect(a.body.error.code).toBe('unavailable');
        expect(a.headers['x-credits-charged'] ?? '0').toBe('0');
      }
      const charged = answers.filter((a) => a.status === 200).reduce((n, a) => n + Number(a.headers['x-credits-charged']), 0);
      expect(before - ledger.balance(workspaceId)).toBe(charged);
      await settle('/readyz', (a) => a.status === 200);
    }
    expect(killed).toBe(3);
    expect(ledger.audit()).toEqual([]);
  });
});
