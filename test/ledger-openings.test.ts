/**
 * Openings: the in-memory index of the charging connection (opened-index.ts) against a plain Map,
 * and the ledger that relies on it: other connections' charges, a failed batch, the file of an
 * older schema, the audit.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { DAY_MS, Ledger } from '../src/ledger/index.ts';
import { MIGRATIONS, SCHEMA_VERSION } from '../src/ledger/db.ts';
import { OpenedIndex } from '../src/ledger/opened-index.ts';
import { SharedOpenings } from '../src/ledger/shared-openings.ts';
import { PageCharges } from '../src/http/page-charges.ts';

const dirs: string[] = [];
const open: Ledger[] = [];
afterEach(() => {
  while (open.length) open.pop()!.close();
});
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function tempPath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'edifice-openings-'));
  dirs.push(dir);
  return join(dir, 'ledger.db');
}

function ledgerAt(path: string, clock: { t: number }): Ledger {
  const ledger = Ledger.open(path, { now: () => clock.t });
  open.push(ledger);
  return ledger;
}

/** A seeded generator, so a failure can be replayed. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t ^= t + Math.imul(t ^ (t >>> 7), 61 | t);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

const YEAR = 365 * DAY_MS;

describe('OpenedIndex', () => {
  it('answers as a Map of the latest opening per workspace and building, through growth and the dropping of expired openings', () => {
    const rand = random(7);
    const workspaces = ['ws_a', 'ws_b', 'ws_c', 'ws_d', 'ws_e'];
    const uuids = Array.from({ length: 30_000 }, () => randomUUID());
    // Not lowercase UUIDs: kept apart, still exact.
    const others = ['x', 'B-1', uuids[0].toUpperCase(), `${uuids[1]}-`, uuids[2].replace(/-/g, ''), `{${uuids[3]}}`, 'g'.repeat(36)];
    const pool = [...uuids, ...others];
    const index = new OpenedIndex();
    const reference = new Map<string, number>();
    let now = 10 * YEAR;
    for (let step = 0; step < 120_000; step++) {
      now += Math.floor(rand() * 10 * 60_000);
      const since = now - YEAR;
      const w = workspaces[Math.floor(rand() * workspaces.length)];
      const id = pool[Math.floor(rand() * pool.length)];
      // Mostly now; sometimes an opening from the past (another connection's, read late).
      const at = rand() < 0.9 ? now : now - Math.floor(rand() * 2 * YEAR);
      index.add(w, id, at, since);
      const key = `${w}\n${id}`;
      reference.set(key, Math.max(reference.get(key) ?? 0, at));
      if (step % 10_000 === 9_999) {
        for (const ws of workspaces) {
          for (const probe of [...uuids.slice(0, 3_000), ...others, randomUUID()]) {
            const expected = reference.get(`${ws}\n${probe}`) ?? 0;
            const got = index.openedAt(ws, probe);
            // Within the 365 days the exact time; before them it may be forgotten, never invented.
            if (expected > since) expect(got).toBe(expected);
            else expect(got <= since).toBe(true);
          }
        }
      }
    }
    expect(index.openedAt('ws_unknown', uuids[5])).toBe(0);
    // It grew past its first table, and dropped what expired: fewer entries than ever added.
    expect(index.bytes).toBeGreaterThan(4096 * 28);
    expect(index.size).toBeLessThan(reference.size);
  });
});

describe('OpenedIndex growing a little at a time', () => {
  it('stays exact while its slots move to a larger table, through transactions committed and rolled back', () => {
    const rand = random(11);
    const ids = Array.from({ length: 20_000 }, () => randomUUID());
    const workspaces = ['ws_a', 'ws_b', 'ws_c'];
    const committed = new Map<string, number>();
    const fromScratch = () => {
      // What the ledger does with a table it cannot undo: reads the committed openings again.
      const fresh = new OpenedIndex();
      for (const [key, at] of committed) {
        const [w, id] = key.split('\n');
        fresh.add(w, id, at, 0);
      }
      return fresh;
    };
    let index = new OpenedIndex();
    let midMove = 0;
    let undone = 0;
    for (let tx = 0; tx < 600; tx++) {
      // Rows other connections committed, read before the transaction (not undone by it).
      for (let i = Math.floor(rand() * 20); i > 0; i--) {
        const key = [workspaces[Math.floor(rand() * 3)], ids[Math.floor(rand() * ids.length)]] as const;
        const at = 1_000 + Math.floor(rand() * 1_000_000);
        index.add(key[0], key[1], at, 0);
        committed.set(key.join('\n'), Math.max(committed.get(key.join('\n')) ?? 0, at));
      }
      index.begin();
      const changes = new Map<string, number>();
      for (let i = 1 + Math.floor(rand() * 150); i > 0; i--) {
        const key = `${workspaces[Math.floor(rand() * 3)]}\n${ids[Math.floor(rand() * ids.length)]}`;
        const at = 1_000 + Math.floor(rand() * 1_000_000);
        const [w, id] = key.split('\n');
        index.add(w, id, at, 0);
        changes.set(key, Math.max(changes.get(key) ?? 0, at));
      }
      for (const [key, at] of changes) {
        const [w, id] = key.split('\n');
        expect(index.openedAt(w, id)).toBe(Math.max(at, committed.get(key) ?? 0));
      }
      // A power of two of slots at 28 bytes each, unless a table is being left beside it.
      if (!Number.isInteger(Math.log2(index.bytes / 28))) midMove++;
      if (rand() < 0.3) {
        if (index.rollback()) undone++;
        else index = fromScratch();
      } else {
        index.commit();
        for (const [key, at] of changes) committed.set(key, Math.max(committed.get(key) ?? 0, at));
      }
      for (const key of changes.keys()) {
        const [w, id] = key.split('\n');
        expect(index.openedAt(w, id)).toBe(committed.get(key) ?? 0);
      }
      if (tx % 25 === 24) {
        for (const w of workspaces) {
          for (const id of ids.slice(0, 4_000)) expect(index.openedAt(w, id)).toBe(committed.get(`${w}\n${id}`) ?? 0);
        }
      }
    }
    expect(midMove).toBeGreaterThan(10);
    expect(undone).toBeGreaterThan(100);
    expect(index.size).toBeGreaterThanOrEqual(committed.size);
  });
  it('a transaction rolled back while slots are still to move leaves every opening as it was', () => {
    const index = new OpenedIndex();
    const ids: string[] = [];
    // Openings read outside any transaction until the table starts growing.
    const midMove = () => !Number.isInteger(Math.log2(index.bytes / 28));
    while (!midMove()) {
      ids.push(randomUUID());
      index.add('ws_a', ids[ids.length - 1], 1_000 + ids.length, 0);
    }
    index.begin();
    // Every one of them again, half later and half earlier: none may be lost when undone.
    ids.forEach((id, i) => index.add('ws_a', id, i % 2 ? 9_000_000 : 1, 0));
    expect(midMove()).toBe(true);
    expect(index.rollback()).toBe(true);
    ids.forEach((id, i) => expect(index.openedAt('ws_a', id)).toBe(1_001 + i));
    index.begin();
    index.commit(); // the rest moves, a chunk a commit
    for (let i = 0; i < 100 && midMove(); i++) index.commit();
    expect(midMove()).toBe(false);
    ids.forEach((id, i) => expect(index.openedAt('ws_a', id)).toBe(1_001 + i));
  });
});

describe('OpenedIndex and large transactions', () => {
  it('takes transactions of 10,000 openings while its slots move, and stays exact (a second growth mid-move filled the table and spun)', () => {
    const index = new OpenedIndex();
    const reference = new Map<string, number>();
    let now = 10 * YEAR;
    // Pages of a few buildings between exports of thousands: growths start while slots still wait
    // to move (no moves inside a transaction), in every order.
    const rand = random(5);
    const sizes = Array.from({ length: 60 }, () => (rand() < 0.2 ? 1000 + Math.floor(rand() * 9000) : 1 + Math.floor(rand() * 100)));
    // 8,195 in one transaction after two pages filled the table while slots still waited to move
    // (the table had no room left for them); the rest mixes pages and exports.
    for (const size of [79, 64, 8195, 10, 2000, 10_000, 10_000, 25_000, 10_000, ...sizes]) {
      index.begin();
      for (let i = 0; i < size; i++) {
        const id = randomUUID();
        index.add('ws_a', id, now, now - YEAR);
        reference.set(id, now);
      }
      index.commit();
      now += 1000;
    }
    expect(index.size).toBe(reference.size);
    for (const [id, at] of reference) expect(index.openedAt('ws_a', id)).toBe(at);
  });
});

describe('OpenedIndex.reserve', () => {
  it('makes room once: the openings reserved for go in without the table growing, and stay exact', () => {
    const index = new OpenedIndex();
    index.reserve(50_000);
    const bytes = index.bytes;
    expect(bytes).toBeGreaterThan(50_000 * 28);
    const ids = Array.from({ length: 50_000 }, () => randomUUID());
    ids.forEach((id, i) => index.add(`ws_${i % 3}`, id, 1_000 + i, 0));
    expect(index.bytes).toBe(bytes);
    expect(index.size).toBe(50_000);
    ids.forEach((id, i) => expect(index.openedAt(`ws_${i % 3}`, id)).toBe(1_000 + i));
    expect(index.openedAt('ws_1', ids[0])).toBe(0); // ids[0] belongs to ws_0
  });
});

describe('OpenedIndex.begin / rollback', () => {
  it('undoes every change since begin (new keys, later times, ids that are not UUIDs, the row id); commit keeps them', () => {
    const index = new OpenedIndex();
    const ids = Array.from({ length: 500 }, () => randomUUID());
    ids.forEach((id, i) => index.add('ws_a', id, 1_000 + i, 0));
    index.add('ws_a', 'plain-id', 5, 0);
    index.lastRowId = 500;
    const before = (ws: string) => [...ids, 'plain-id', 'other-id'].map((id) => index.openedAt(ws, id));
    const a = before('ws_a');
    const b = before('ws_b');
    index.begin();
    ids.slice(0, 200).forEach((id) => index.add('ws_a', id, 9_999, 0)); // later: replaced
    ids.slice(0, 50).forEach((id) => index.add('ws_a', id, 1, 0)); // earlier: ignored
    ids.slice(100, 300).forEach((id) => index.add('ws_b', id, 7_777, 0)); // new keys
    index.add('ws_a', 'plain-id', 6, 0);
    index.add('ws_b', 'other-id', 6, 0);
    index.lastRowId = 900;
    expect(index.openedAt('ws_b', ids[150])).toBe(7_777);
    expect(index.rollback()).toBe(true);
    expect(before('ws_a')).toEqual(a);
    expect(before('ws_b')).toEqual(b);
    expect(index.lastRowId).toBe(500);
    index.begin();
    index.add('ws_b', ids[0], 3_333, 0);
    index.lastRowId = 501;
    index.commit();
    expect(index.rollback()).toBe(true); // nothing to undo after a commit
    expect(index.openedAt('ws_b', ids[0])).toBe(3_333);
    expect(index.lastRowId).toBe(501);
  });

  it('says it cannot undo when the table was rebuilt meanwhile', () => {
    const index = new OpenedIndex();
    index.begin();
    for (let i = 0; i < 3_000; i++) index.add('ws_a', randomUUID(), 1_000, 0); // past 4,096 × 70%: a rebuild
    expect(index.rollback()).toBe(false);
  });
});

describe('openings in the ledger', () => {
  it('a charge through one connection is seen by another whose index was already read', () => {
    const path = tempPath();
    const clock = { t: Date.parse('2026-05-01T00:00:00Z') };
    const a = ledgerAt(path, clock);
    const b = ledgerAt(path, clock);
    const { workspaceId, memberId } = a.createWorkspace('Acme', { createdBy: 'ana@acme.test' });
    const { keyId } = a.createKey(workspaceId, memberId);
    a.grantCredits(workspaceId, 100, { kind: 'bought' });
    const [u1, u2, u3, u4] = Array.from({ length: 4 }, () => randomUUID());
    expect(a.charge(workspaceId, keyId, [u1], '/buildings')).toMatchObject({ charged: 1 });
    expect(b.charge(workspaceId, keyId, [u1, u2], '/buildings')).toMatchObject({ charged: 1 });
    // Both indexes are read now; each must learn the other's later openings from the file.
    expect(a.charge(workspaceId, keyId, [u2, u3], '/buildings')).toMatchObject({ charged: 1 });
    expect(b.charge(workspaceId, keyId, [u1, u2, u3, u4], '/buildings')).toMatchObject({ charged: 1 });
    expect(a.charge(workspaceId, keyId, [u4], '/buildings')).toMatchObject({ charged: 0 });
    clock.t += YEAR;
    expect(b.charge(workspaceId, keyId, [u1, u2, u3, u4], '/buildings')).toMatchObject({ charged: 4 });
    expect(a.charge(workspaceId, keyId, [u1, u2, u3, u4], '/buildings')).toMatchObject({ charged: 0 });
    expect(a.audit()).toEqual([]);
    // The first four from the welcome grant (5, expired since with 1 left), the last four bought.
    expect(a.balance(workspaceId)).toBe(100 - 4);
  });

  it('a clock stepped back just after an opening expired still finds it, though the table grew and dropped what expired', () => {
    const clock = { t: Date.parse('2026-05-01T00:00:00Z') };
    const ledger = ledgerAt(tempPath(), clock);
    const { workspaceId } = ledger.createWorkspace('Acme', { createdBy: 'ana@acme.test' });
    ledger.grantCredits(workspaceId, 10_000, { kind: 'bought' });
    const x = randomUUID();
    const t0 = clock.t;
    expect(ledger.charge(workspaceId, null, [x], '/buildings')).toMatchObject({ charged: 1 });
    clock.t = t0 + YEAR + 3_600_000; // x expired an hour ago
    // Enough new openings to grow the table past its first size (4,096 slots at 70%): a rebuild.
    const many = Array.from({ length: 3_000 }, () => randomUUID());
    expect(ledger.charge(workspaceId, null, many, '/buildings')).toMatchObject({ charged: 3_000 });
    clock.t = t0 + YEAR - 3_600_000; // the clock steps back two hours: x is within its 365 days again
    expect(ledger.charge(workspaceId, null, [x], '/buildings')).toMatchObject({ charged: 0 });
    expect(ledger.audit()).toEqual([]);
  });

  it('a batch that fails is undone in memory without reading the file again', () => {
    const clock = { t: Date.parse('2026-05-01T00:00:00Z') };
    const path = tempPath();
    const ledger = ledgerAt(path, clock);
    const { workspaceId } = ledger.createWorkspace('Acme', { createdBy: 'ana@acme.test' });
    const [u1, u2] = [randomUUID(), randomUUID()];
    expect(ledger.charge(workspaceId, null, [u1], '/buildings')).toMatchObject({ charged: 1 });
    // Behind the ledger's back, u1's opening is moved two years into the past: only a ledger
    // that reads the file again would see it (and charge u1 again).
    const db = new Database(path);
    db.prepare('UPDATE openings SET opened_at = opened_at - ? WHERE building_id = ?').run(2 * YEAR, u1);
    db.close();
    expect(() =>
      ledger.chargePages([
        { workspaceId, keyId: null, buildingIds: [u2], route: '/buildings' },
        { workspaceId: 'ws_missing', keyId: null, buildingIds: [u2], route: '/buildings' },
      ]),
    ).toThrow(/ws_missing/);
    expect(ledger.charge(workspaceId, null, [u1], '/buildings')).toMatchObject({ charged: 0 });
    expect(ledger.charge(workspaceId, null, [u2], '/buildings')).toMatchObject({ charged: 1 });
  });

  it('tells, for each building of each page, when the workspace last had it charged (0: not in the 365 days)', () => {
    const t0 = Date.parse('2026-05-01T00:00:00Z');
    const clock = { t: t0 };
    const ledger = ledgerAt(tempPath(), clock);
    const { workspaceId } = ledger.createWorkspace('Acme', { createdBy: 'ana@acme.test' });
    const [u1, u2, u3, u4, u5, u6] = Array.from({ length: 6 }, () => randomUUID());
    expect(ledger.charge(workspaceId, null, [u1], '/buildings')).toMatchObject({ charged: 1, remaining: 4 });
    clock.t = t0 + DAY_MS;
    const page = (ids: string[]) => ({ workspaceId, keyId: null, buildingIds: ids, route: '/buildings' });
    const outcomes = ledger.chargePages([
      page([u2, u1, u2]), // u2 charged now (a duplicate costs once), u1 opened yesterday
      page([u1, u3, u4, u5, u6]), // four new buildings, three credits left: refused, nothing opened
      page([u2]), // opened by the first page of the same commit: free
    ]);
    expect(outcomes.map((o) => o.result)).toMatchObject([
      { ok: true, charged: 1 },
      { ok: false, needed: 4, remaining: 3 },
      { ok: true, charged: 0 },
    ]);
    expect(outcomes.map((o) => o.openedAt)).toEqual([[clock.t, t0, clock.t], [t0, 0, 0, 0, 0], [clock.t]]);
    // A year after u1's opening (exclusive) it is no longer opened; u2 still is.
    clock.t = t0 + 365 * DAY_MS;
    ledger.grantCredits(workspaceId, 10, { kind: 'bought' }); // the welcome credits expired long ago
    const [late] = ledger.chargePages([page([u1, u2])]);
    expect(late).toEqual({ result: expect.objectContaining({ ok: true, charged: 1 }), openedAt: [clock.t, t0 + DAY_MS] });
    expect(ledger.audit()).toEqual([]);
  });

  it('connections of one server share openings: what the charging one commits or reads at start, the others answer themselves', async () => {
    const t0 = Date.parse('2026-05-01T00:00:00Z');
    const clock = { t: t0 };
    const path = tempPath();
    // Another process's connection: what it charges reaches the server only through the file.
    const elsewhere = ledgerAt(path, clock);
    const { workspaceId } = elsewhere.createWorkspace('Acme', { createdBy: 'ana@acme.test' });
    const { workspaceId: otherId } = elsewhere.createWorkspace('Other', { createdBy: 'bo@other.test' });
    elsewhere.grantCredits(workspaceId, 100, { kind: 'bought' });
    elsewhere.grantCredits(otherId, 100, { kind: 'bought' });
    const [old, a, b, c, d, e, f, g] = Array.from({ length: 8 }, () => randomUUID());
    expect(elsewhere.charge(workspaceId, null, [old, 'not-a-uuid'], '/buildings')).toMatchObject({ charged: 2 });
    clock.t = t0 + 30 * DAY_MS;
    expect(elsewhere.charge(workspaceId, null, [a, b], '/buildings')).toMatchObject({ charged: 2 });
    expect(elsewhere.charge(workspaceId, null, [c, d], '/buildings')).toMatchObject({ charged: 2 });
    expect(elsewhere.charge(otherId, null, [e], '/buildings')).toMatchObject({ charged: 1 });
    clock.t = t0 + YEAR + DAY_MS; // `old` expired a day ago; a to e opened 335 days ago

    // The server: the main thread's Ledger, the ledger thread's, which charges, and a worker's, which
    // answers; the table is the pool's. Pages that reach `remoteCharges` are the ones the worker
    // could not answer itself.
    const main = ledgerAt(path, clock);
    const shared = { writeLock: main.writeLockBuffer, openingsTable: new SharedOpenings(1024).buffer };
    const charging = Ledger.open(path, { now: () => clock.t, ...shared });
    open.push(charging);
    const sent: string[][] = [];
    const worker = Ledger.open(path, { now: () => clock.t, ...shared });
    open.push(worker);
    const charges = new PageCharges(worker, {
      remote: async (pages) => {
        for (const p of pages) sent.push([...p.buildingIds]);
        return charging.chargePages(pages);
      },
    });
    const answeredHere = (workspace: string, page: string[]): boolean => charges.chargeSoon(workspace, null, page, '/buildings', () => {});
    const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
    // Before the charging connection has read the file, the worker knows nothing.
    expect(answeredHere(workspaceId, [a])).toBe(false);
    await turn();
    expect(sent).toEqual([[a]]);
    // Its answer to that page put a's opening in the table.
    expect(answeredHere(workspaceId, [a])).toBe(true);
    // Read at start: the latest 3 rows of the file are d, c (of workspaceId) and e (of the other).
    expect(charging.loadOpenings(3)).toMatchObject({ shared: 3 });
    expect(answeredHere(workspaceId, [c, d, c])).toBe(true);
    expect(answeredHere(otherId, [e])).toBe(true);
    expect(answeredHere(workspaceId, [e])).toBe(false); // another workspace's opening
    expect(answeredHere(workspaceId, [c, b])).toBe(false); // b is older than the 3 rows
    // All of them: `old` has expired and is not shared, nor is an id the table cannot hold. (The
    // pages this turn could not answer go at its end.)
    expect(charging.loadOpenings()).toMatchObject({ shared: 5 });
    expect(answeredHere(workspaceId, [a, b, c, d])).toBe(true);
    expect(answeredHere(workspaceId, [old])).toBe(false);
    // Committed by the charging connection (another worker's page): known to this worker at once.
    expect(charging.chargePages([{ workspaceId, keyId: null, buildingIds: [f, g], route: '/buildings' }])[0].result).toMatchObject({
      charged: 2,
    });
    expect(answeredHere(workspaceId, [f, g, a])).toBe(true);
    expect(answeredHere(workspaceId, ['not-a-uuid'])).toBe(false);
    await turn();
    expect(sent).toEqual([[a], [e], [c, b], [old], ['not-a-uuid']]);
    // Of the 100 bought, 4 before (the first 2 came from the welcome grant, expired since); then
    // e (the other workspace's), old and not-a-uuid (expired), f and g.
    expect(main.balance(workspaceId)).toBe(100 - 4 - 5);
    expect(main.audit()).toEqual([]);
  });

  it('the charging connection answers a page of openings it holds without a transaction, and shares them again', async () => {
    const clock = { t: Date.parse('2026-05-01T00:00:00Z') };
    const path = tempPath();
    const main = ledgerAt(path, clock);
    const { workspaceId } = main.createWorkspace('Acme', { createdBy: 'ana@acme.test' });
    main.grantCredits(workspaceId, 100, { kind: 'bought' });
    const [a, b, c] = Array.from({ length: 3 }, () => randomUUID());
    const page = (ids: string[]) => ({ workspaceId, keyId: null, buildingIds: ids, route: '/buildings' });
    const shared = { writeLock: main.writeLockBuffer, openingsTable: new SharedOpenings(1024).buffer };
    const charging = Ledger.open(path, { now: () => clock.t, ...shared });
    open.push(charging);
    expect(charging.knownFree(page([a]))).toBeNull(); // nothing read yet
    // Opened through a connection of another process: in the file, not in the shared table.
    expect(ledgerAt(path, clock).charge(workspaceId, null, [a, b], '/buildings')).toMatchObject({ charged: 2 });
    expect(charging.loadOpenings(0)).toMatchObject({ openings: 2, shared: 0 });
    const sent: string[][] = [];
    const worker = Ledger.open(path, { now: () => clock.t, ...shared });
    open.push(worker);
    const charges = new PageCharges(worker, {
      remote: async (pages) => {
        for (const p of pages) sent.push([...p.buildingIds]);
        return pages.map((p) => charging.knownFree(p) ?? charging.chargePages([p])[0]);
      },
    });
    const answeredHere = (ids: string[]): boolean => charges.chargeSoon(workspaceId, null, ids, '/buildings', () => {});
    expect(answeredHere([a, b])).toBe(false);
    // Answered with the file's write lock held by another connection: no transaction was needed.
    const db = new Database(path);
    db.exec('BEGIN IMMEDIATE');
    try {
      await new Promise((resolve) => setImmediate(resolve));
      expect(charging.knownFree(page([b, a, b]))).toEqual({
        result: { ok: true, charged: 0, remaining: 103, chargeId: null },
        openedAt: [clock.t, clock.t, clock.t],
      });
    } finally {
      db.exec('ROLLBACK');
      db.close();
    }
    expect(sent).toEqual([[a, b]]);
    // Shared again on the way: the worker answers the page itself now.
    expect(answeredHere([b, a])).toBe(true);
    // A building not opened, or opened more than 365 days ago, needs the transaction.
    expect(charging.knownFree(page([a, c]))).toBeNull();
    clock.t += YEAR;
    expect(charging.knownFree(page([a]))).toBeNull();
    expect(charging.chargePages([page([a])])[0].result).toMatchObject({ ok: true, charged: 1 });
    expect(charging.knownFree(page([a]))).toMatchObject({ result: { charged: 0 } });
    expect(() => charging.knownFree(page(['']))).toThrow(TypeError);
    // A batch that fails shares nothing, and leaves nothing known free.
    expect(() => charging.chargePages([page([c]), { ...page([c]), workspaceId: 'ws_missing' }])).toThrow(/ws_missing/);
    expect(new SharedOpenings(shared.openingsTable).openedAt(workspaceId, c)).toBe(0);
    expect(charging.knownFree(page([c]))).toBeNull();
    // The table takes one writer at a time: a Ledger sharing it must share the lock as well.
    expect(() => Ledger.open(path, { openingsTable: shared.openingsTable })).toThrow(/writeLock/);
    expect(main.audit()).toEqual([]);
  });

  it('a batch that fails leaves no opening behind, in the file or in memory', () => {
    const clock = { t: Date.parse('2026-05-01T00:00:00Z') };
    const ledger = ledgerAt(tempPath(), clock);
    const { workspaceId, memberId } = ledger.createWorkspace('Acme', { createdBy: 'ana@acme.test' });
    const { keyId } = ledger.createKey(workspaceId, memberId);
    const [u1, u2] = [randomUUID(), randomUUID()];
    expect(ledger.charge(workspaceId, keyId, [u1], '/buildings')).toMatchObject({ charged: 1, remaining: 4 });
    // The second page names no workspace the file knows: the whole batch rolls back.
    expect(() =>
      ledger.chargePages([
        { workspaceId, keyId, buildingIds: [u2], route: '/buildings' },
        { workspaceId: 'ws_missing', keyId: null, buildingIds: [u2], route: '/buildings' },
      ]),
    ).toThrow(/ws_missing/);
    expect(ledger.balance(workspaceId)).toBe(4);
    expect(ledger.charge(workspaceId, keyId, [u1, u2], '/buildings')).toMatchObject({ charged: 1, remaining: 3 });
    expect(ledger.audit()).toEqual([]);
  });

  it('a file of schema 2 keeps its openings when opened: they stay free, and the audit holds', () => {
    const path = tempPath();
    const opened = Date.parse('2026-04-01T00:00:00Z');
    const old = new Database(path);
    old.pragma('journal_mode = WAL');
    old.exec(MIGRATIONS[0]);
    old.exec(MIGRATIONS[1]);
    old.pragma('user_version = 2');
    const ids = [randomUUID(), randomUUID(), 'legacy-id'];
    old.prepare("INSERT INTO workspaces (id, name, created_at) VALUES ('ws_old', 'Old', ?)").run(opened - DAY_MS);
    old
      .prepare("INSERT INTO grants (workspace_id, kind, amount, remaining, granted_at) VALUES ('ws_old', 'bought', 10, 7, ?)")
      .run(opened - DAY_MS);
    old
      .prepare(
        "INSERT INTO charges (workspace_id, key_id, route, at, day, buildings, credits) VALUES ('ws_old', NULL, '/buildings', ?, '2026-04-01', 3, 3)",
      )
      .run(opened);
    old.prepare('INSERT INTO charge_entries (charge_id, grant_id, credits) VALUES (1, 1, 3)').run();
    for (const id of ids)
      old.prepare("INSERT INTO openings (workspace_id, building_id, opened_at, charge_id) VALUES ('ws_old', ?, ?, 1)").run(id, opened);
    old.close();

    const clock = { t: opened + 10 * DAY_MS };
    const ledger = ledgerAt(path, clock);
    const db = new Database(path, { readonly: true });
    expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    expect(db.prepare('SELECT building_id, opened_at, charge_id FROM openings ORDER BY id').all()).toEqual(
      [...ids].sort().map((building_id) => ({ building_id, opened_at: opened, charge_id: 1 })),
    );
    db.close();
    expect(ledger.audit()).toEqual([]);
    const fresh = randomUUID();
    expect(ledger.charge('ws_old', null, [...ids, fresh], '/buildings')).toMatchObject({ ok: true, charged: 1, remaining: 6 });
    clock.t = opened + YEAR;
    expect(ledger.charge('ws_old', null, ids, '/buildings')).toMatchObject({ ok: true, charged: 3, remaining: 3 });
    expect(ledger.audit()).toEqual([]);
  });

  it('the audit names a building charged twice within 365 days, whatever the order of the rows', () => {
    const path = tempPath();
    const clock = { t: Date.parse('2026-05-01T00:00:00Z') };
    const ledger = ledgerAt(path, clock);
    const { workspaceId } = ledger.createWorkspace('Acme', { createdBy: 'ana@acme.test' });
    ledger.grantCredits(workspaceId, 10, { kind: 'bought' });
    const u = randomUUID();
    expect(ledger.charge(workspaceId, null, [u], '/buildings')).toMatchObject({ charged: 1 });
    clock.t += YEAR; // charged again a year on: sound
    expect(ledger.charge(workspaceId, null, [u], '/buildings')).toMatchObject({ charged: 1 });
    expect(ledger.audit()).toEqual([]);
    // A third opening written behind the ledger's back, at the first one's instant, the books
    // otherwise balanced: only the rule of 365 days is broken.
    const db = new Database(path);
    const { at } = db.prepare<[], { at: number }>('SELECT MIN(opened_at) AS at FROM openings').get()!;
    db.prepare('UPDATE charges SET credits = 2, buildings = 2 WHERE id = 1').run();
    db.prepare('UPDATE charge_entries SET credits = 2 WHERE charge_id = 1').run();
    db.prepare('UPDATE grants SET remaining = remaining - 1 WHERE id = 1').run();
    db.prepare('INSERT INTO openings (workspace_id, building_id, opened_at, charge_id) VALUES (?, ?, ?, 1)').run(workspaceId, u, at);
    db.close();
    const problems = ledger.audit();
    expect(problems).toEqual([`building ${u} charged twice to ${workspaceId} within 365 days (${at}, ${at})`]);
  });
});
