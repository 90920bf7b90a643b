/**
 * A worker thread answers a free page itself once it has heard that its buildings are opened,
 * whoever opened them: the server before a restart too (ChargeOutcome.openedAt). The server runs
 * as `npm start` runs it (`src/main.ts`, one worker), is stopped and started again on the same
 * ledger file. The proof: with the file's write lock held by another connection, a page that must
 * go to the ledger thread cannot be answered (it waits out the busy timeout, then 503), and one
 * the worker knows to be free is.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { Ledger } from '../src/ledger/index.ts';
import { killServerProcesses, removeDir, startServerProcess, syntheticSnapshots, workspaceWithKey } from './http-helpers.ts';

let dir = '';

afterAll(() => {
  killServerProcesses();
  if (dir) removeDir(dir);
});

async function get(base: string, path: string, key: string): Promise<{ status: number; charged: string | null; ids: string[] }> {
  const res = await fetch(`${base}${path}`, { headers: { Authorization: `Bearer ${key}` } });
  const body = await res.json() as { data?: { building_id: string }[] };
  return { status: res.status, charged: res.headers.get('X-Credits-Charged'), ids: (body.data ?? []).map((b) => b.building_id) };
}

describe('a worker learns which buildings are opened from the ledger thread', () => {
  it('after a restart, a page opened before it is answered by the worker once the ledger thread has told it', { timeout: 120_000 }, async () => {
    dir = await syntheticSnapshots(2000, 9);
    const ledgerPath = join(dir, 'ledger.db');
    const env = { EDIFICE_SNAPSHOTS: join(dir, 'snapshots'), EDIFICE_LEDGER: ledgerPath, EDIFICE_WORKERS: '1', EDIFICE_WARMUP_REQUESTS: '0' };
    const setup = Ledger.open(ledgerPath);
    const { key } = workspaceWithKey(setup, 1_000);
    setup.close();
    const page = '/buildings?bbox=9.4,47.0,9.7,47.3&limit=30&sort=area';
    const other = '/buildings?bbox=9.4,47.0,9.7,47.3&limit=30&offset=30&sort=area';

    const before = await startServerProcess(env, ['--single-threaded-gc']);
    const first = await get(before.base, page, key);
    expect([first.status, first.charged, first.ids.length]).toEqual([200, '30', 30]);
    expect((await get(before.base, other, key)).charged).toBe('30');
    before.child.kill('SIGTERM');
    await new Promise((resolve) => before.child.once('exit', resolve));

    // The restarted worker has heard of no opening: its first answer comes from the ledger thread.
    const after = await startServerProcess(env, ['--single-threaded-gc']);
    const again = await get(after.base, page, key);
    expect([again.status, again.charged, again.ids]).toEqual([200, '0', first.ids]);
    const db = new Database(ledgerPath);
    db.exec('BEGIN IMMEDIATE');
    let known, unknown;
    try {
      known = await get(after.base, page, key);
      unknown = await get(after.base, other, key);
    } finally {
      db.exec('ROLLBACK');
      db.close();
    }
    // Told by that answer, the worker needs no ledger for the same page...
    expect([known.status, known.charged, known.ids]).toEqual([200, '0', first.ids]);
    // ...while a page it has not heard of still does, and is not answered without it.
    expect(unknown.status).toBe(503);
    expect((await get(after.base, other, key)).charged).toBe('0');
    after.child.kill('SIGTERM');
    await new Promise((resolve) => after.child.once('exit', resolve));

    const check = Ledger.open(ledgerPath);
    expect(check.audit()).toEqual([]);
    check.close();
  });
});
