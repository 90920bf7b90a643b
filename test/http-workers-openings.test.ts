/**
 * A worker thread answers a free page itself when its buildings are in the openings the server's
 * threads share, whoever opened them: the ledger thread puts there the latest openings of the file
 * as it starts (Ledger.loadOpenings), and then what it commits and what it finds opened in the
 * pages it is sent (ChargeOutcome.openedAt). The server runs as `npm start` runs it (`src/main.ts`,
 * two workers: either may take a request), is stopped and started again on the same ledger file.
 * The proof: with the file's write lock held by another connection, a page that must go to the
 * ledger thread cannot be answered (it waits out the busy timeout, then 503), and one the workers
 * know to be free is.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MessageChannel, Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import type { ChargeReply, LedgerThreadData } from '../src/http/ledger-thread.ts';
import { Ledger } from '../src/ledger/index.ts';
import { SharedOpenings } from '../src/ledger/shared-openings.ts';
import { killServerProcesses, removeDir, startServerProcess, syntheticSnapshots, workspaceWithKey } from './http-helpers.ts';

let dir = '';
const dirs: string[] = [];

afterAll(() => {
  killServerProcesses();
  if (dir) removeDir(dir);
  dirs.forEach(removeDir);
});

interface Got {
  status: number;
  charged: string | null;
  ids: string[];
  headers: Headers;
}

async function get(base: string, path: string, key: string): Promise<Got> {
  const res = await fetch(`${base}${path}`, { headers: { Authorization: `Bearer ${key}` } });
  const body = (await res.json()) as { data?: { building_id: string }[] };
  return {
    status: res.status,
    charged: res.headers.get('X-Credits-Charged'),
    ids: (body.data ?? []).map((b) => b.building_id),
    headers: res.headers,
  };
}

/** The headers of spec section 8 an answer carries (Retry-After aside). */
const limitHeaders = (g: Got) =>
  Object.fromEntries(
    [
      'RateLimit-Limit',
      'RateLimit-Remaining',
      'RateLimit-Reset',
      'X-Daily-Quota-Limit',
      'X-Daily-Quota-Remaining',
      'X-Credits-Charged',
      'X-Credits-Remaining',
    ].map((h) => [h, g.headers.get(h) !== null]),
  );

/** Runs `fn` while another connection holds the ledger file's write lock. */
async function withFileLocked<T>(ledgerPath: string, fn: () => Promise<T>): Promise<T> {
  const db = new Database(ledgerPath);
  db.exec('BEGIN IMMEDIATE');
  try {
    return await fn();
  } finally {
    db.exec('ROLLBACK');
    db.close();
  }
}

describe('a worker knows which buildings are opened', () => {
  it('from the file as the server starts, and from the ledger thread for what is opened later', { timeout: 120_000 }, async () => {
    dir = await syntheticSnapshots(2000, 9);
    const ledgerPath = join(dir, 'ledger.db');
    const env = {
      EDIFICE_SNAPSHOTS: join(dir, 'snapshots'),
      EDIFICE_LEDGER: ledgerPath,
      EDIFICE_WORKERS: '2',
      EDIFICE_WARMUP_REQUESTS: '0',
    };
    const setup = Ledger.open(ledgerPath);
    const { key, workspaceId } = workspaceWithKey(setup, 1_000);
    const { key: otherKey } = workspaceWithKey(setup, 1_000, 'other');
    setup.close();
    const page = '/buildings?bbox=9.4,47.0,9.7,47.3&limit=30&sort=area';
    const next = '/buildings?bbox=9.4,47.0,9.7,47.3&limit=30&offset=30&sort=area';
    const later = '/buildings?bbox=9.4,47.0,9.7,47.3&limit=30&offset=60&sort=area';

    const before = await startServerProcess(env, ['--single-threaded-gc']);
    const first = await get(before.base, page, key);
    expect([first.status, first.charged, first.ids.length]).toEqual([200, '30', 30]);
    const second = await get(before.base, next, key);
    expect([second.status, second.charged, second.ids.length]).toEqual([200, '30', 30]);
    before.child.kill('SIGTERM');
    await new Promise((resolve) => before.child.once('exit', resolve));

    // Restarted, the ledger thread has shared both pages' openings: a worker answers them without
    // it, while a page never opened needs it and is not answered without it.
    const after = await startServerProcess(env, ['--single-threaded-gc']);
    const [known, alsoKnown, unknown] = await withFileLocked(ledgerPath, async () => [
      await get(after.base, page, key),
      await get(after.base, next, key),
      await get(after.base, later, key),
    ]);
    expect([known.status, known.charged, known.ids]).toEqual([200, '0', first.ids]);
    expect([alsoKnown.status, alsoKnown.charged, alsoKnown.ids]).toEqual([200, '0', second.ids]);
    expect(unknown.status).toBe(503);
    // Refused after its limits counted it: with every header of spec section 8, nothing charged,
    // the balance as it was (1,000 bought and 5 welcome credits, 60 spent).
    expect(Object.values(limitHeaders(unknown)).every(Boolean), JSON.stringify(limitHeaders(unknown))).toBe(true);
    expect([unknown.charged, unknown.headers.get('X-Credits-Remaining'), unknown.headers.get('RateLimit-Limit')]).toEqual([
      '0',
      '945',
      '60',
    ]);

    // Opened after the server started, by another connection to the file: the ledger thread finds
    // it in the file when sent that page, shares it, and then the workers answer it themselves.
    const byOther = await get(after.base, later, otherKey);
    expect([byOther.status, byOther.charged, byOther.ids.length]).toEqual([200, '30', 30]);
    const elsewhere = Ledger.open(ledgerPath);
    expect(elsewhere.charge(workspaceId, null, byOther.ids, '/buildings')).toMatchObject({ ok: true, charged: 30 });
    elsewhere.close();
    expect(await withFileLocked(ledgerPath, () => get(after.base, later, key))).toMatchObject({ status: 503 });
    const told = await get(after.base, later, key);
    expect([told.status, told.charged, told.ids]).toEqual([200, '0', byOther.ids]);
    const knownNow = await withFileLocked(ledgerPath, () => get(after.base, later, key));
    expect([knownNow.status, knownNow.charged, knownNow.ids]).toEqual([200, '0', byOther.ids]);
    after.child.kill('SIGTERM');
    await new Promise((resolve) => after.child.once('exit', resolve));

    const check = Ledger.open(ledgerPath);
    expect(check.audit()).toEqual([]);
    check.close();
  });

  it(
    'the ledger thread answers the pages it knows free at once, and a message mixing them with pages to charge in page order',
    { timeout: 60_000 },
    async () => {
      const d = mkdtempSync(join(tmpdir(), 'edifice-ledger-thread-'));
      dirs.push(d);
      const ledgerPath = join(d, 'ledger.db');
      const main = Ledger.open(ledgerPath);
      const { workspaceId } = main.createWorkspace('Acme', { createdBy: 'ana@acme.test' });
      main.grantCredits(workspaceId, 100, { kind: 'bought' });
      const [a, b, c, e] = Array.from({ length: 4 }, () => randomUUID());
      expect(main.charge(workspaceId, null, [a, b], '/buildings')).toMatchObject({ charged: 2 });
      const table = new SharedOpenings(1024);
      const data: LedgerThreadData = {
        entry: new URL('../src/http/ledger-thread.ts', import.meta.url).href,
        config: loadConfig({ EDIFICE_LEDGER: ledgerPath }),
        keyLimiterTable: main.keyLimiterTable,
        writeLock: main.writeLockBuffer,
        quotaTable: main.quotaTable,
        openingsTable: table.buffer,
      };
      const thread = new Worker(new URL('../src/http/thread-boot.mjs', import.meta.url), { workerData: data });
      try {
        expect(
          await new Promise((resolve, reject) => {
            thread.once('message', resolve);
            thread.once('error', reject);
          }),
        ).toMatchObject({ openings: 2, shared: 2 });
        const { port1, port2 } = new MessageChannel();
        thread.postMessage({ type: 'port', port: port1 }, [port1]);
        const replies: ChargeReply[] = [];
        port2.on('message', (m: ChargeReply) => replies.push(m));
        const page = (ids: string[]) => ({ workspaceId, keyId: null, buildingIds: ids, route: '/buildings' });
        const until = async (n: number) => {
          while (replies.length < n) await new Promise((r) => setTimeout(r, 5));
        };
        // With the file's write lock held by another connection, a message of pages known free is
        // answered: no transaction (one that was would wait out the busy timeout, then fail).
        const db = new Database(ledgerPath);
        db.exec('BEGIN IMMEDIATE');
        try {
          port2.postMessage({ type: 'charge', id: 1, pages: [page([b]), page([a, b, a])] });
          await until(1);
        } finally {
          db.exec('ROLLBACK');
          db.close();
        }
        expect(replies[0]).toMatchObject({
          type: 'charged',
          id: 1,
          outcomes: [{ result: { ok: true, charged: 0, remaining: 103 } }, { result: { charged: 0 } }],
        });
        // Pages known free and pages to charge in one message: one commit, the outcomes in page order.
        port2.postMessage({ type: 'charge', id: 2, pages: [page([a]), page([c, a]), page([b, a, b])] });
        port2.postMessage({ type: 'charge', id: 3, pages: [page([e]), page([a])] });
        await until(3);
        const byId = new Map(replies.map((r) => [r.id, r]));
        const charged = (id: number) =>
          (byId.get(id) as Extract<ChargeReply, { type: 'charged' }>).outcomes.map((o) => o.result.ok && o.result.charged);
        expect(charged(2)).toEqual([0, 1, 0]);
        expect(charged(3)).toEqual([1, 0]);
        // What the commits made is shared; the balance and the file agree.
        expect([c, e].map((id) => table.openedAt(workspaceId, id) > 0)).toEqual([true, true]);
        port2.close();
      } finally {
        await thread.terminate();
      }
      expect(main.balance(workspaceId)).toBe(101); // 5 welcome + 100 bought, less a, b, c and e
      expect(main.audit()).toEqual([]);
      main.close();
    },
  );
});
