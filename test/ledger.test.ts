import { randomUUID } from 'node:crypto';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  DAY_MS,
  WindowLimiter,
  Ledger,
  LedgerError,
  LedgerUnavailableError,
  clientBucket,
  parseKey,
  bearerToken,
  type DemoKey,
} from '../src/ledger/index.ts';
import { keyChecksum } from '../src/ledger/keys.ts';
import { PLAN_RECHECK_MS } from '../src/ledger/credits.ts';
import { parseUtcDay, utcDay, utcMonth } from '../src/ledger/clock.ts';
import { SCHEMA_VERSION } from '../src/ledger/db.ts';
import { ABANDONED, PageCharges } from '../src/http/page-charges.ts';

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'edifice-ledger-'));
  dirs.push(dir);
  return dir;
}
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const open: Ledger[] = [];
afterEach(() => {
  while (open.length) open.pop()!.close();
});

/** A clock the test moves by hand. */
function clockAt(iso: string) {
  const clock = {
    t: Date.parse(iso),
    now: () => clock.t,
    set: (s: string) => {
      clock.t = Date.parse(s);
    },
    add: (ms: number) => {
      clock.t += ms;
    },
  };
  return clock;
}

function ledgerAt(iso: string, options: Parameters<typeof Ledger.open>[1] = {}, path = join(tempDir(), 'ledger.db')) {
  const clock = clockAt(iso);
  const ledger = Ledger.open(path, { now: clock.now, ...options });
  open.push(ledger);
  return { ledger, clock, path };
}

/** The invariants, checked after every step that moves credits. */
function expectSound(ledger: Ledger, workspaceId: string, now: number): void {
  expect(ledger.audit()).toEqual([]);
  const grants = ledger.workspace(workspaceId).grants;
  for (const g of grants) {
    expect(g.remaining).toBeGreaterThanOrEqual(0);
    expect(g.remaining).toBeLessThanOrEqual(g.amount);
  }
  const usable = grants.filter((g) => g.expiresAt === null || g.expiresAt > now).reduce((s, g) => s + g.remaining, 0);
  expect(ledger.balance(workspaceId)).toBe(usable);
}

const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

function workspace(ledger: Ledger, options: { plan?: string | null } = {}) {
  const { workspaceId, memberId } = ledger.createWorkspace('Acme', { createdBy: 'ana@acme.test', plan: options.plan ?? null });
  const { key, keyId } = ledger.createKey(workspaceId, memberId);
  return { workspaceId, memberId, key, keyId };
}

describe('ledger file', () => {
  it('opens in WAL with synchronous=FULL and foreign keys on, the quota counter at NORMAL, at the current schema version', () => {
    const { ledger, path } = ledgerAt('2026-03-10T12:00:00Z');
    const db = ledger['db'] as Database.Database;
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('synchronous', { simple: true })).toBe(2);
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(db.pragma('busy_timeout', { simple: true })).toBe(5000);
    expect((ledger['quotaDb'] as Database.Database).pragma('synchronous', { simple: true })).toBe(1);
    expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    ledger.close();
    open.pop();
    // Reopening migrates nothing and keeps the data.
    const again = Ledger.open(path);
    open.push(again);
    expect(again.listWorkspaces()).toEqual([]);
  });

  it('refuses a file written by a newer schema, and misspelled options by name', () => {
    const path = join(tempDir(), 'newer.db');
    const raw = new Database(path);
    raw.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    raw.close();
    expect(() => Ledger.open(path)).toThrow(/newer than this program/);
    expect(() => Ledger.open(':memory:', { nwo: () => 0 } as never)).toThrow(/Unknown Ledger option "nwo"/);
    expect(() => Ledger.open(':memory:', { dailyQuota: -1 })).toThrow(RangeError);
  });

  it('answers 503-unavailable when the write lock stays taken past the busy timeout, and after close', () => {
    const { ledger, path } = ledgerAt('2026-03-10T12:00:00Z', { busyTimeoutMs: 50 });
    const { workspaceId, keyId } = workspace(ledger);
    const other = new Database(path);
    other.exec('BEGIN IMMEDIATE');
    try {
      let err: unknown;
      try {
        ledger.charge(workspaceId, keyId, ['b-1'], '/buildings');
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(LedgerUnavailableError);
      expect(err).toMatchObject({ status: 503, code: 'unavailable', retryAfterS: 1 });
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    expect(ledger.charge(workspaceId, keyId, ['b-1'], '/buildings')).toMatchObject({ ok: true, charged: 1 });
    expect(() => ledger.ping()).not.toThrow();
    ledger.close();
    expect(() => ledger.balance(workspaceId)).toThrow(LedgerUnavailableError);
    expect(() => ledger.ping()).toThrow(LedgerUnavailableError);
    open.pop();
  });
});

describe('API keys', () => {
  it('look like edf_<id>_<secret><checksum>, carry 128+ bits, and only their SHA-256 is stored', () => {
    const { ledger } = ledgerAt('2026-03-10T12:00:00Z');
    const { key, keyId, workspaceId } = workspace(ledger);
    expect(key).toMatch(/^edf_[0-9A-Za-z]{12}_[0-9A-Za-z]{28}$/);
    expect(key.slice(4, 16)).toBe(keyId);
    expect(parseKey(key)).toBe(keyId);
    expect(22 * Math.log2(62)).toBeGreaterThan(128);
    const row = (ledger['db'] as Database.Database).prepare('SELECT * FROM api_keys WHERE id = ?').get(keyId) as Record<string, unknown>;
    expect((row.secret_sha256 as Buffer).equals(createHash('sha256').update(key).digest())).toBe(true);
    const secret = key.slice(17);
    for (const v of Object.values(row)) expect(String(v)).not.toContain(secret);
    expect(JSON.stringify(ledger.listKeys(workspaceId))).not.toContain(secret);
    expect(ledger.listKeys(workspaceId)[0]).toMatchObject({
      keyId,
      prefix: `edf_${keyId}_…`,
      status: 'active',
      memberEmail: 'ana@acme.test',
    });
    const second = ledger.createKey(workspaceId, 'ana@acme.test');
    expect(second.key).not.toBe(key);
  });

  it('authenticate a valid key', () => {
    const { ledger } = ledgerAt('2026-03-10T12:00:00Z');
    const { key, keyId, workspaceId } = workspace(ledger);
    expect(ledger.authenticate(key)).toEqual({ ok: true, keyId, keyPrefix: `edf_${keyId}`, workspaceId });
    expect(bearerToken(`Bearer ${key}`)).toBe(key);
    expect(bearerToken(`bearer  ${key} `)).toBe(key);
    expect(bearerToken(`Basic ${key}`)).toBeUndefined();
  });

  it('refuse missing and malformed keys with 401 before any lookup', () => {
    const { ledger } = ledgerAt('2026-03-10T12:00:00Z');
    const { key } = workspace(ledger);
    const flipped = key.slice(0, 20) + (key[20] === 'a' ? 'b' : 'a') + key.slice(21);
    const malformed = [
      '',
      'garbage',
      `Bearer ${key}`,
      key.toUpperCase(),
      key.slice(0, -1),
      `${key}x`,
      flipped,
      key.replace('edf_', 'edg_'),
      ` ${key}`,
    ];
    ledger.close(); // any lookup would now throw LedgerUnavailableError
    open.pop();
    expect(ledger.authenticate(undefined)).toMatchObject({
      ok: false,
      status: 401,
      code: 'unauthorized',
      message: expect.stringMatching(/Missing/),
    });
    for (const k of malformed) {
      expect(ledger.authenticate(k), k).toMatchObject({ ok: false, status: 401, code: 'unauthorized' });
    }
    expect(() => ledger.authenticate(key)).toThrow(LedgerUnavailableError);
  });

  it('refuse unknown keys, and a known id with another secret, with 401', () => {
    const { ledger } = ledgerAt('2026-03-10T12:00:00Z');
    const { key, keyId } = workspace(ledger);
    const withChecksum = (body: string) => body + keyChecksum(body);
    const unknown = withChecksum(`edf_${'Z'.repeat(12)}_${'a'.repeat(22)}`);
    const forged = withChecksum(`edf_${keyId}_${'a'.repeat(22)}`);
    expect(parseKey(forged)).toBe(keyId);
    expect(ledger.authenticate(unknown)).toMatchObject({ status: 401, message: 'Unknown API key.' });
    expect(ledger.authenticate(forged)).toMatchObject({ status: 401, message: 'Unknown API key.' });
    expect(ledger.authenticate(key).ok).toBe(true); // now cached
    expect(ledger.authenticate(forged)).toMatchObject({ status: 401, message: 'Unknown API key.' });
  });

  it('refuse a revoked key (at once through this instance)', () => {
    const { ledger } = ledgerAt('2026-03-10T12:00:00Z');
    const { key, keyId, workspaceId } = workspace(ledger);
    expect(ledger.authenticate(key).ok).toBe(true);
    expect(ledger.revokeKey(`${keyId}`)).toMatchObject({ status: 'revoked' });
    expect(ledger.authenticate(key)).toMatchObject({ status: 401, code: 'unauthorized', message: expect.stringMatching(/revoked/) });
    expect(ledger.listKeys(workspaceId)[0].status).toBe('revoked');
    expect(() => ledger.revokeKey('nosuchkey123')).toThrow(LedgerError);
  });

  it('refuse an expired key from its expiry instant on', () => {
    const { ledger, clock } = ledgerAt('2026-03-10T12:00:00Z');
    const { workspaceId, memberId } = workspace(ledger);
    const expiresAt = clock.t + 3_600_000;
    const { key } = ledger.createKey(workspaceId, memberId, { expiresAt, name: 'one hour' });
    clock.t = expiresAt - 1;
    expect(ledger.authenticate(key).ok).toBe(true);
    clock.t = expiresAt;
    expect(ledger.authenticate(key)).toMatchObject({ status: 401, message: expect.stringMatching(/expired at 2026-03-10T13:00:00.000Z/) });
    expect(ledger.listKeys(workspaceId).find((k) => k.name === 'one hour')!.status).toBe('expired');
    expect(() => ledger.createKey(workspaceId, memberId, { expiresAt: clock.t })).toThrow(RangeError);
  });

  it("refuse the keys of a member who left, even after they join again; other members' keys keep working", () => {
    const { ledger } = ledgerAt('2026-03-10T12:00:00Z');
    const { workspaceId, key: anaKey } = workspace(ledger);
    const bob = ledger.addMember(workspaceId, 'Bob@Acme.test');
    expect(bob.email).toBe('bob@acme.test');
    const { key: bobKey } = ledger.createKey(workspaceId, 'bob@acme.test');
    expect(ledger.authenticate(bobKey).ok).toBe(true);
    expect(() => ledger.addMember(workspaceId, 'bob@acme.test')).toThrow(/already a member/);
    ledger.removeMember(workspaceId, bob.id);
    expect(ledger.authenticate(bobKey)).toMatchObject({ status: 401, message: expect.stringMatching(/left the workspace/) });
    expect(ledger.authenticate(anaKey).ok).toBe(true);
    expect(() => ledger.createKey(workspaceId, bob.id)).toThrow(/left the workspace/);
    expect(() => ledger.removeMember(workspaceId, bob.id)).toThrow(/already left/);
    const again = ledger.addMember(workspaceId, 'bob@acme.test');
    expect(again.id).not.toBe(bob.id);
    expect(ledger.authenticate(bobKey).ok).toBe(false);
    expect(ledger.authenticate(ledger.createKey(workspaceId, again.id).key).ok).toBe(true);
  });

  it('answer 403 forbidden while the workspace is suspended', () => {
    const { ledger } = ledgerAt('2026-03-10T12:00:00Z');
    const { key, workspaceId } = workspace(ledger);
    ledger.suspendWorkspace(workspaceId, 'unpaid invoice');
    expect(ledger.authenticate(key)).toMatchObject({ ok: false, status: 403, code: 'forbidden' });
    expect(ledger.workspace(workspaceId).suspendedReason).toBe('unpaid invoice');
    ledger.unsuspendWorkspace(workspaceId);
    expect(ledger.authenticate(key).ok).toBe(true);
  });

  it('stay cached at most keyCacheTtlMs (2 s) after a change made through another connection', () => {
    const clock = clockAt('2026-03-10T12:00:00Z');
    const path = join(tempDir(), 'ledger.db');
    const server = Ledger.open(path, { now: clock.now });
    const admin = Ledger.open(path, { now: clock.now });
    open.push(server, admin);
    const { key, keyId, workspaceId } = workspace(admin);
    const second = admin.createKey(workspaceId, 'ana@acme.test');
    expect(server.authenticate(key).ok).toBe(true);
    expect(server.authenticate(second.key).ok).toBe(true);
    admin.revokeKey(keyId);
    admin.suspendWorkspace(workspaceId);
    clock.add(1_999);
    expect(server.authenticate(key).ok).toBe(true); // still within the cache's 2 s
    clock.add(1);
    expect(server.authenticate(key)).toMatchObject({ status: 401, message: expect.stringMatching(/revoked/) });
    expect(server.authenticate(second.key)).toMatchObject({ status: 403 });
  });
});

describe('credits', () => {
  it('refuse a page whose building ids are not 1 to 128 characters each, opened or not, and write nothing', () => {
    const { ledger, clock } = ledgerAt('2026-03-10T12:00:00Z');
    const { workspaceId, keyId } = workspace(ledger);
    expect(ledger.charge(workspaceId, keyId, ['a', 'b'], '/buildings')).toMatchObject({ charged: 2, remaining: 3 });
    // A bad id after ones already opened (the free answer's path) or after a new one (the charge's).
    for (const page of [['a', ''], ['a', 'b', 'x'.repeat(129)], ['c', 7], ['a', null], 'a']) {
      expect(() => ledger.charge(workspaceId, keyId, page as string[], '/buildings')).toThrow(TypeError);
    }
    expect(ledger.charge(workspaceId, keyId, ['a', 'b', 'x'.repeat(128)], '/buildings')).toMatchObject({
      ok: true,
      charged: 1,
      remaining: 2,
    });
    expectSound(ledger, workspaceId, clock.t);
  });

  it('charge one credit per new distinct building; a building opened within 365 days is free', () => {
    const { ledger, clock } = ledgerAt('2026-03-10T12:00:00Z');
    const { workspaceId, keyId } = workspace(ledger);
    ledger.grantCredits(workspaceId, 100, { kind: 'bought' });
    expect(ledger.balance(workspaceId)).toBe(105);
    expect(ledger.charge(workspaceId, keyId, ['a', 'b', 'a', 'c', 'b'], '/buildings')).toEqual({
      ok: true,
      charged: 3,
      remaining: 102,
      chargeId: 1,
    });
    expectSound(ledger, workspaceId, clock.t);
    clock.add(DAY_MS);
    expect(ledger.charge(workspaceId, keyId, ['c', 'b', 'a'], '/buildings')).toEqual({
      ok: true,
      charged: 0,
      remaining: 102,
      chargeId: null,
    });
    expect(ledger.charge(workspaceId, keyId, ['a', 'd'], '/buildings/at')).toMatchObject({ ok: true, charged: 1, remaining: 101 });
    expect(ledger.charge(workspaceId, keyId, [], '/buildings')).toEqual({ ok: true, charged: 0, remaining: 101, chargeId: null });
    expectSound(ledger, workspaceId, clock.t);
    // Another workspace pays for the same buildings.
    const other = workspace(ledger);
    expect(ledger.charge(other.workspaceId, other.keyId, ['a', 'b'], '/buildings')).toMatchObject({ ok: true, charged: 2, remaining: 3 });
    expect(() => ledger.charge(workspaceId, keyId, [42 as never], '/buildings')).toThrow(TypeError);
  });

  it('group commit: pages charged in one turn share a transaction, each all or nothing, in order; a free page is answered at once', async () => {
    const { ledger, clock } = ledgerAt('2026-03-10T12:00:00Z');
    const pages = new PageCharges(ledger);
    const { workspaceId, keyId } = workspace(ledger);
    ledger.grantCredits(workspaceId, 10, { kind: 'bought' }); // 15 with the welcome grant
    ledger.charge(workspaceId, keyId, ['x'], '/buildings');
    const results: unknown[] = [];
    const done = (r: unknown) => {
      results.push(r);
    };
    // 6 new, then 9 new (only 8 left: refused, writes nothing), then 2 new, then x again (free: at once).
    expect(pages.chargeSoon(workspaceId, keyId, ids('p', 6), '/buildings', done)).toBe(false);
    expect(pages.chargeSoon(workspaceId, keyId, ids('q', 9), '/buildings', done)).toBe(false);
    expect(pages.chargeSoon(workspaceId, keyId, [...ids('r', 2), 'x'], '/buildings', done)).toBe(false);
    expect(pages.chargeSoon(workspaceId, keyId, ['x'], '/buildings', done)).toBe(true);
    expect(results).toEqual([{ ok: true, charged: 0, remaining: 14, chargeId: null }]);
    await new Promise((r) => setImmediate(r));
    expect(results.slice(1)).toEqual([
      { ok: true, charged: 6, remaining: 8, chargeId: 2 },
      expect.objectContaining({ ok: false, status: 402, code: 'insufficient_credits', needed: 9, remaining: 8 }),
      { ok: true, charged: 2, remaining: 6, chargeId: 3 },
    ]);
    expect(ledger.balance(workspaceId)).toBe(6);
    expectSound(ledger, workspaceId, clock.t);
    // A batch that fails rolls every page of it back and tells each.
    const failed: unknown[] = [];
    pages.chargeSoon(workspaceId, keyId, ids('s', 1), '/buildings', (r: unknown) => failed.push(r));
    ledger.close();
    await new Promise((r) => setImmediate(r));
    expect(failed).toEqual([expect.any(LedgerUnavailableError)]);
  });

  it('group commit: a page abandoned before the end of its turn is not charged; the others of the turn are', async () => {
    const { ledger, clock } = ledgerAt('2026-03-10T12:00:00Z');
    const pages = new PageCharges(ledger);
    const { workspaceId, keyId } = workspace(ledger);
    ledger.grantCredits(workspaceId, 10, { kind: 'bought' }); // 15 with the welcome grant
    const results: unknown[] = [];
    let gone = false;
    expect(
      pages.chargeSoon(
        workspaceId,
        keyId,
        ids('a', 4),
        '/buildings',
        (r: unknown) => results.push(['a', r]),
        () => gone,
      ),
    ).toBe(false);
    expect(
      pages.chargeSoon(
        workspaceId,
        keyId,
        ids('b', 3),
        '/buildings',
        (r: unknown) => results.push(['b', r]),
        () => false,
      ),
    ).toBe(false);
    gone = true; // later in the same turn, as uWS closes a connection with a request pipelined behind
    await new Promise((r) => setImmediate(r));
    expect(results).toEqual([
      ['a', ABANDONED],
      ['b', { ok: true, charged: 3, remaining: 12, chargeId: 1 }],
    ]);
    expect(ledger.balance(workspaceId)).toBe(12);
    // Its buildings were not opened: asked again, they cost their credits.
    expect(ledger.charge(workspaceId, keyId, ids('a', 4), '/buildings')).toMatchObject({ ok: true, charged: 4, remaining: 8 });
    // A turn of abandoned pages only writes nothing.
    const alone: unknown[] = [];
    pages.chargeSoon(
      workspaceId,
      keyId,
      ids('c', 2),
      '/buildings',
      (r: unknown) => alone.push(r),
      () => true,
    );
    await new Promise((r) => setImmediate(r));
    expect(alone).toEqual([ABANDONED]);
    expect(ledger.balance(workspaceId)).toBe(8);
    expectSound(ledger, workspaceId, clock.t);
  });

  it('count the 365 days from the charged opening: free at 365 d − 1 ms, charged at 365 d and on day 366; free returns do not extend', () => {
    const { ledger, clock } = ledgerAt('2026-03-10T12:00:00Z');
    const { workspaceId, keyId } = workspace(ledger);
    ledger.grantCredits(workspaceId, 100, { kind: 'bought' });
    const t0 = clock.t;
    expect(ledger.charge(workspaceId, keyId, ['x', 'y', 'z'], '/buildings')).toMatchObject({ charged: 3 });
    clock.t = t0 + 200 * DAY_MS;
    expect(ledger.charge(workspaceId, keyId, ['x', 'y', 'z'], '/buildings')).toMatchObject({ charged: 0 }); // free, not extending
    clock.t = t0 + 365 * DAY_MS - 1;
    expect(ledger.charge(workspaceId, keyId, ['x'], '/buildings')).toMatchObject({ charged: 0 });
    clock.t = t0 + 365 * DAY_MS;
    expect(ledger.charge(workspaceId, keyId, ['x'], '/buildings')).toMatchObject({ charged: 1 });
    clock.t = t0 + 366 * DAY_MS;
    expect(ledger.charge(workspaceId, keyId, ['x', 'y'], '/buildings')).toMatchObject({ charged: 1 }); // y only: x was charged a day ago
    clock.t = t0 + 730 * DAY_MS - 1;
    expect(ledger.charge(workspaceId, keyId, ['x'], '/buildings')).toMatchObject({ charged: 0 });
    clock.t = t0 + 730 * DAY_MS;
    expect(ledger.charge(workspaceId, keyId, ['x'], '/buildings')).toMatchObject({ charged: 1 });
    expectSound(ledger, workspaceId, clock.t);
  });

  it('refuse a page they cannot cover with 402 and change nothing', () => {
    const { ledger, clock } = ledgerAt('2026-03-10T12:00:00Z');
    const { workspaceId, keyId } = workspace(ledger);
    expect(ledger.charge(workspaceId, keyId, ['a', 'b'], '/buildings')).toMatchObject({ ok: true, charged: 2, remaining: 3 });
    const before = ledger.workspace(workspaceId).grants;
    const refused = ledger.charge(workspaceId, keyId, ['a', 'b', 'c', 'd', 'e', 'f'], '/buildings');
    expect(refused).toMatchObject({ ok: false, status: 402, code: 'insufficient_credits', needed: 4, remaining: 3 });
    expect(ledger.workspace(workspaceId).grants).toEqual(before);
    expect(ledger.usage(workspaceId).reduce((s, d) => s + d.credits, 0)).toBe(2);
    // Nothing of the refused page was recorded as opened: each still costs a credit.
    expect(ledger.charge(workspaceId, keyId, ['c', 'd', 'e'], '/buildings')).toMatchObject({ ok: true, charged: 3, remaining: 0 });
    expect(ledger.charge(workspaceId, keyId, ['f'], '/buildings')).toMatchObject({ ok: false, needed: 1, remaining: 0 });
    expect(ledger.charge(workspaceId, keyId, ['a', 'e'], '/buildings')).toMatchObject({ ok: true, charged: 0, remaining: 0 });
    expectSound(ledger, workspaceId, clock.t);
  });

  it('spend grants earliest expiry first: plan (month end), welcome (30 days), bought with expiry, bought without', () => {
    const { ledger, clock } = ledgerAt('2026-01-20T12:00:00Z');
    const { workspaceId, keyId } = workspace(ledger, { plan: 'starter' });
    const late = ledger.grantCredits(workspaceId, 10, { kind: 'bought', expiresAt: Date.parse('2026-06-01T00:00:00Z') });
    const never = ledger.grantCredits(workspaceId, 10, { kind: 'bought' });
    const soon = ledger.grantCredits(workspaceId, 10, { kind: 'manual', expiresAt: Date.parse('2026-03-01T00:00:00Z') });
    expect(ledger.balance(workspaceId)).toBe(1000 + 5 + 30);
    const remaining = () =>
      Object.fromEntries(
        ledger.workspace(workspaceId).grants.map((g) => [g.kind === 'plan' || g.kind === 'welcome' ? g.kind : g.id, g.remaining]),
      );
    expect(ledger.charge(workspaceId, keyId, ids('p', 998), '/buildings')).toMatchObject({ charged: 998 });
    expect(remaining()).toEqual({ plan: 2, welcome: 5, [late.id]: 10, [never.id]: 10, [soon.id]: 10 });
    expect(ledger.charge(workspaceId, keyId, ids('q', 5), '/buildings')).toMatchObject({ charged: 5 });
    expect(remaining()).toEqual({ plan: 0, welcome: 2, [late.id]: 10, [never.id]: 10, [soon.id]: 10 });
    expect(ledger.charge(workspaceId, keyId, ids('r', 14), '/buildings')).toMatchObject({ charged: 14 });
    expect(remaining()).toEqual({ plan: 0, welcome: 0, [late.id]: 8, [never.id]: 10, [soon.id]: 0 });
    expect(ledger.charge(workspaceId, keyId, ids('s', 9), '/buildings')).toMatchObject({ charged: 9, remaining: 9 });
    expect(remaining()).toEqual({ plan: 0, welcome: 0, [late.id]: 0, [never.id]: 9, [soon.id]: 0 });
    expectSound(ledger, workspaceId, clock.t);
    // The charge entries say which grants paid.
    const kinds = new Map(
      ledger.workspace(workspaceId).grants.map((g) => [g.id, g.kind === 'plan' || g.kind === 'welcome' ? g.kind : g.id]),
    );
    const entries = (ledger['db'] as Database.Database)
      .prepare<[], { charge_id: number; grant_id: number; credits: number }>(
        'SELECT charge_id, grant_id, credits FROM charge_entries ORDER BY charge_id, grant_id',
      )
      .all();
    expect(entries.map((e) => [e.charge_id, kinds.get(e.grant_id), e.credits])).toEqual([
      [1, 'plan', 998],
      [2, 'welcome', 3],
      [2, 'plan', 2], // grant ids: welcome 1, late 2, never 3, soon 4, plan 5
      [3, 'welcome', 2],
      [3, late.id, 2],
      [3, soon.id, 10],
      [4, late.id, 8],
      [4, never.id, 1],
    ]);
  });

  it('keep the welcome grant usable through day 30 (until created + 30 × 24 h, exclusive), not on day 31', () => {
    const { ledger, clock } = ledgerAt('2026-03-10T12:00:00Z');
    const created = clock.t;
    const { workspaceId, keyId } = workspace(ledger);
    clock.t = created + 29 * DAY_MS + 12 * 3_600_000; // day 30
    expect(ledger.balance(workspaceId)).toBe(5);
    clock.t = created + 30 * DAY_MS - 1; // last instant
    expect(ledger.balance(workspaceId)).toBe(5);
    expect(ledger.charge(workspaceId, keyId, ['a'], '/buildings')).toMatchObject({ ok: true, charged: 1, remaining: 4 });
    clock.t = created + 30 * DAY_MS; // day 31 starts
    expect(ledger.balance(workspaceId)).toBe(0);
    expect(ledger.charge(workspaceId, keyId, ['b'], '/buildings')).toMatchObject({ ok: false, status: 402, needed: 1, remaining: 0 });
    expect(ledger.charge(workspaceId, keyId, ['a'], '/buildings')).toMatchObject({ ok: true, charged: 0 }); // opened: still free
    expectSound(ledger, workspaceId, clock.t);
  });

  it('give the welcome grant once per workspace', () => {
    const { ledger } = ledgerAt('2026-03-10T12:00:00Z');
    const { workspaceId } = workspace(ledger);
    expect(ledger.workspace(workspaceId).grants.filter((g) => g.kind === 'welcome')).toHaveLength(1);
    const db = ledger['db'] as Database.Database;
    expect(() =>
      db.prepare("INSERT INTO grants (workspace_id, kind, amount, remaining, granted_at) VALUES (?, 'welcome', 5, 5, 0)").run(workspaceId),
    ).toThrow(/UNIQUE/);
    expect(() => db.prepare('UPDATE grants SET remaining = -1 WHERE workspace_id = ?').run(workspaceId)).toThrow(/CHECK/);
  });

  it('renew the plan allowance at the start of each UTC month and expire it at the month end', () => {
    const { ledger, clock } = ledgerAt('2026-01-31T12:00:00Z');
    const { workspaceId, keyId } = workspace(ledger, { plan: 'starter' });
    expect(ledger.balance(workspaceId)).toBe(1005);
    ledger.charge(workspaceId, keyId, ids('jan', 10), '/buildings');
    clock.set('2026-01-31T23:59:59.999Z');
    expect(ledger.balance(workspaceId)).toBe(995);
    clock.set('2026-02-01T00:00:00.000Z');
    expect(ledger.balance(workspaceId)).toBe(1005); // January's 990 gone, February's 1000 and the welcome 5
    const plans = ledger.workspace(workspaceId).grants.filter((g) => g.kind === 'plan');
    expect(plans.map((g) => [g.period, g.amount, g.remaining, new Date(g.expiresAt!).toISOString()])).toEqual([
      ['2026-01', 1000, 990, '2026-02-01T00:00:00.000Z'],
      ['2026-02', 1000, 1000, '2026-03-01T00:00:00.000Z'],
    ]);
    // A month with no request gets no grant; the next one used gets its own.
    clock.set('2026-04-15T08:00:00Z');
    expect(ledger.charge(workspaceId, keyId, ids('apr', 3), '/buildings')).toMatchObject({ charged: 3, remaining: 997 });
    expect(
      ledger
        .workspace(workspaceId)
        .grants.filter((g) => g.kind === 'plan')
        .map((g) => g.period),
    ).toEqual(['2026-01', '2026-02', '2026-04']);
    expectSound(ledger, workspaceId, clock.t);
  });

  it("create the month's plan grant again when the batch that created it rolled back", () => {
    const { ledger, clock, path } = ledgerAt('2026-05-10T12:00:00Z');
    const { workspaceId } = workspace(ledger, { plan: 'starter' });
    expect(ledger.balance(workspaceId)).toBe(1005);
    clock.set('2026-06-02T00:00:00Z');
    const reader = new Database(path, { readonly: true });
    const periods = () =>
      (reader.prepare("SELECT period FROM grants WHERE kind = 'plan' ORDER BY id").all() as { period: string }[]).map((g) => g.period);
    // June's grant is created by the first page and read by the second, inside the transaction
    // the third page's unknown workspace rolls back.
    const page = (w: string, id: string) => ({ workspaceId: w, keyId: null, buildingIds: [id], route: '/buildings' });
    expect(() =>
      ledger.chargePages([page(workspaceId, randomUUID()), page(workspaceId, randomUUID()), page('ws_missing', randomUUID())]),
    ).toThrow(/ws_missing/);
    expect(periods()).toEqual(['2026-05']);
    expect(ledger.balance(workspaceId)).toBe(1005); // June's 1000 and the welcome 5
    expect(periods()).toEqual(['2026-05', '2026-06']);
    expect(ledger.balance(workspaceId)).toBe(1005); // the second time from memory
    reader.close();
    expectSound(ledger, workspaceId, clock.t);
  });

  it('apply a plan given by another process (the admin CLI) within PLAN_RECHECK_MS (through the same Ledger: at once, the test below)', () => {
    const { ledger, clock, path } = ledgerAt('2026-05-10T12:00:00Z');
    const admin = Ledger.open(path, { now: clock.now });
    open.push(admin);
    const { workspaceId } = workspace(ledger);
    expect(ledger.balance(workspaceId)).toBe(5);
    admin.setPlan(workspaceId, 'starter');
    // The serving Ledger read "no plan" a moment ago and takes it as still so, for a while: the
    // month's grant is not created yet (had the admin's Ledger created it, every balance would count it).
    clock.add(PLAN_RECHECK_MS - 1);
    expect(ledger.balance(workspaceId)).toBe(5);
    clock.add(1);
    expect(ledger.balance(workspaceId)).toBe(1005);
    expectSound(ledger, workspaceId, clock.t);
  });

  it('give a workspace without a plan only its welcome credits and what it bought', () => {
    const { ledger, clock } = ledgerAt('2026-01-20T12:00:00Z');
    const { workspaceId, keyId } = workspace(ledger);
    ledger.grantCredits(workspaceId, 10, { kind: 'bought' });
    expect(ledger.balance(workspaceId)).toBe(15);
    clock.set('2026-02-05T00:00:00Z');
    expect(ledger.balance(workspaceId)).toBe(15);
    clock.set('2026-03-05T00:00:00Z');
    expect(ledger.balance(workspaceId)).toBe(10);
    ledger.setPlan(workspaceId, 'free');
    expect(ledger.balance(workspaceId)).toBe(10);
    expect(ledger.workspace(workspaceId).grants.map((g) => g.kind)).toEqual(['welcome', 'bought']);
    expect(ledger.charge(workspaceId, keyId, ids('b', 11), '/buildings')).toMatchObject({ ok: false, needed: 11, remaining: 10 });
    expectSound(ledger, workspaceId, clock.t);
  });

  it('apply a plan chosen mid-month at once when the month has no allowance yet, a later change from next month', () => {
    const { ledger, clock } = ledgerAt('2026-05-10T12:00:00Z');
    const { workspaceId } = workspace(ledger);
    expect(ledger.balance(workspaceId)).toBe(5);
    ledger.setPlan(workspaceId, 'starter');
    expect(ledger.balance(workspaceId)).toBe(1005);
    ledger.setPlan(workspaceId, 'pro');
    expect(ledger.balance(workspaceId)).toBe(1005);
    clock.set('2026-06-01T00:00:00Z');
    expect(ledger.balance(workspaceId)).toBe(20000 + 5);
    ledger.setPlan(workspaceId, null);
    clock.set('2026-07-01T00:00:00Z');
    expect(ledger.balance(workspaceId)).toBe(0);
    expect(() => ledger.setPlan(workspaceId, 'gold')).toThrow(/Unknown plan "gold"/);
  });

  it('validate grants', () => {
    const { ledger, clock } = ledgerAt('2026-05-10T12:00:00Z');
    const { workspaceId } = workspace(ledger);
    for (const n of [0, -1, 1.5, 2e9, NaN]) expect(() => ledger.grantCredits(workspaceId, n, { kind: 'bought' })).toThrow(RangeError);
    expect(() => ledger.grantCredits(workspaceId, 5, { kind: 'bought', expiresAt: clock.t })).toThrow(RangeError);
    expect(() => ledger.grantCredits(workspaceId, 5, { kind: 'welcome' as never })).toThrow(RangeError);
    expect(() => ledger.grantCredits('ws_nope', 5, { kind: 'bought' })).toThrow(expect.objectContaining({ code: 'not_found' }));
    expect(() => ledger.balance('ws_nope')).toThrow(LedgerError);
    expect(() => ledger.createWorkspace('', { createdBy: 'a@b.c' })).toThrow(RangeError);
    expect(() => ledger.createWorkspace('X', { createdBy: 'not an email' })).toThrow(RangeError);
    expect(() => ledger.createWorkspace('X', { createdBy: 'a@b.c', plan: 'gold' })).toThrow(RangeError);
  });
});

describe('rate limits', () => {
  /** The most requests of `times` inside any window of `periodMs` (brute force over every start). */
  const mostInAnyWindow = (times: number[], periodMs: number): number =>
    Math.max(0, ...times.map((t0) => times.filter((t) => t >= t0 && t < t0 + periodMs).length));

  it('60 a minute means at most 60 in ANY 60-second window: 119 requests over 61 s of a fake clock', () => {
    // 60 at once, then one a second for 59 s: a token bucket of 60 refilled one a second lets all
    // 119 through inside one minute; the spec allows 60, and the next only when the first 60 leave.
    const limiter = new WindowLimiter({ limit: 60, periodMs: 60_000 });
    const t0 = 1_000_000;
    const times = [...Array<number>(60).fill(t0), ...Array.from({ length: 59 }, (_, i) => t0 + 1_000 * (i + 1))];
    const passed = times.filter((t) => limiter.take('k', t).ok);
    expect(passed).toHaveLength(60);
    expect(passed.every((t) => t === t0)).toBe(true);
    // At 60 s the first 60 have left the window: the window is empty again, all at once.
    expect(limiter.take('k', t0 + 59_999)).toMatchObject({ ok: false, remaining: 0, retryAfterS: 1, resetS: 1 });
    expect(limiter.take('k', t0 + 60_000)).toMatchObject({ ok: true, remaining: 59, resetS: 60 });

    // Evenly spread: 119 requests 61 s / 118 apart. The first 60 pass (up to 30.5 s), then none
    // until the oldest leave at 60 s and 60.5 s: 62 in all, never more than 60 in a window.
    const even = new WindowLimiter({ limit: 60, periodMs: 60_000 });
    const spread = Array.from({ length: 119 }, (_, i) => Math.round((i * 61_000) / 118));
    const ok = spread.filter((t) => even.take('k', t).ok);
    expect(ok).toEqual([...spread.slice(0, 60), spread[117], spread[118]]);
    expect(mostInAnyWindow(ok, 60_000)).toBe(60);
  });

  it('headers stay truthful: remaining counts the window, reset is when it empties, Retry-After when the oldest leaves', () => {
    const limiter = new WindowLimiter({ limit: 3, periodMs: 10_000 });
    expect(limiter.take('k', 0)).toEqual({ ok: true, limit: 3, remaining: 2, resetS: 10, retryAfterS: 0 });
    expect(limiter.take('k', 2_500)).toEqual({ ok: true, limit: 3, remaining: 1, resetS: 10, retryAfterS: 0 });
    expect(limiter.take('k', 4_000)).toEqual({ ok: true, limit: 3, remaining: 0, resetS: 10, retryAfterS: 0 });
    // Refused at 6 s: the request of 0 s leaves at 10 s; refusals are not counted.
    expect(limiter.take('k', 6_000)).toEqual({ ok: false, limit: 3, remaining: 0, resetS: 8, retryAfterS: 4 });
    expect(limiter.take('k', 9_999)).toMatchObject({ ok: false, retryAfterS: 1 });
    expect(limiter.peek('k', 10_000)).toMatchObject({ remaining: 1, resetS: 4 });
    expect(limiter.take('k', 10_000)).toMatchObject({ ok: true, remaining: 0 });
    expect(limiter.take('k', 12_499)).toMatchObject({ ok: false, retryAfterS: 1 });
    expect(limiter.take('k', 12_500)).toMatchObject({ ok: true, remaining: 0 });
    expect(limiter.peek('k', 30_000)).toMatchObject({ remaining: 3, resetS: 0 });
    expect(limiter.take('other', 6_000).ok).toBe(true);
  });

  it('limits raised past the ring count by grains of the window, never more than the limit in any window', () => {
    // 1,000 a minute: grains of 250 ms; a grain counts until its last millisecond has left.
    const limiter = new WindowLimiter({ limit: 1_000, periodMs: 60_000 });
    const times: number[] = [];
    const resets = new Set<number>();
    for (let i = 0; i < 3_000; i++) {
      const t = 7 + i * 40; // 2 minutes at 25 a second
      const d = limiter.take('k', t);
      resets.add(d.resetS);
      if (d.ok) times.push(t);
    }
    expect(mostInAnyWindow(times, 60_000)).toBe(1_000);
    // A grain counts up to 249 ms past the minute; RateLimit-Reset still never reads past it.
    expect(Math.max(...resets)).toBe(60);
    // At most one grain stricter than exact: each minute after the first lets through at least 990.
    expect(times.filter((t) => t >= 60_007 && t < 120_007).length).toBeGreaterThanOrEqual(990);
  });

  it('limiter state is bounded by maxKeys', () => {
    const limiter = new WindowLimiter({ limit: 2, periodMs: 1_000, maxKeys: 3 });
    for (let i = 0; i < 10; i++) limiter.take(`k${i}`, 0);
    expect(limiter.size).toBe(3);
    expect(() => new WindowLimiter({ limit: 0, periodMs: 1 })).toThrow(RangeError);
    expect(() => new WindowLimiter({ limit: 1, periodMs: 0.5 })).toThrow(RangeError);
  });

  it('group client addresses: IPv4 as is, IPv6 by /56', () => {
    expect(clientBucket('203.0.113.9')).toBe('203.0.113.9');
    expect(clientBucket('::ffff:203.0.113.9')).toBe('203.0.113.9');
    expect(clientBucket('2001:db8:abcd:12ff:1::1')).toBe('2001:db8:abcd:1200::/56');
    expect(clientBucket('2001:db8:abcd:1200::9')).toBe('2001:db8:abcd:1200::/56');
    expect(clientBucket('2001:db8:abcd:1300::1')).not.toBe(clientBucket('2001:db8:abcd:1200::1'));
    expect(clientBucket('::1')).toBe('0:0:0:0::/56');
    expect(clientBucket('fe80::1%eth0')).toBe('fe80:0:0:0::/56');
  });

  it('checkLimits: headers of spec 8 and the IETF draft; 429 rate_limited with Retry-After, not counted in the quota', () => {
    const { ledger, clock } = ledgerAt('2026-03-10T12:00:00Z');
    const auth = workspace(ledger);
    const first = ledger.checkLimits(auth);
    expect(first).toEqual({
      ok: true,
      headers: {
        'RateLimit-Limit': '60',
        'RateLimit-Remaining': '59',
        'RateLimit-Reset': '60',
        'X-Daily-Quota-Limit': '5000',
        'X-Daily-Quota-Remaining': '4999',
        'RateLimit-Policy': '"key";q=60;w=60, "workspace";q=5000;w=86400',
        RateLimit: '"key";r=59;t=60, "workspace";r=4999;t=43200',
      },
    });
    for (let i = 0; i < 59; i++) expect(ledger.checkLimits(auth).ok).toBe(true);
    const refused = ledger.checkLimits(auth);
    expect(refused).toMatchObject({ ok: false, status: 429, code: 'rate_limited', retryAfterS: 60 });
    expect(refused.headers).toMatchObject({
      'Retry-After': '60',
      'RateLimit-Remaining': '0',
      'RateLimit-Reset': '60',
      'X-Daily-Quota-Remaining': '4940',
    });
    // Another key of the same workspace has its own minute, and shares the day.
    const other = ledger.createKey(auth.workspaceId, auth.memberId);
    expect(ledger.checkLimits({ keyId: other.keyId, workspaceId: auth.workspaceId }).headers['X-Daily-Quota-Remaining']).toBe('4939');
    // A second later the 60 are still inside the minute; at 60 s they have all left it.
    clock.add(1_000);
    expect(ledger.checkLimits(auth)).toMatchObject({ ok: false, retryAfterS: 59, headers: { 'RateLimit-Reset': '59' } });
    clock.add(59_000);
    expect(ledger.checkLimits(auth)).toMatchObject({
      ok: true,
      headers: { 'RateLimit-Remaining': '59', 'X-Daily-Quota-Remaining': '4938' },
    });
    expect(ledger.usage(auth.workspaceId, '2026-03-10', '2026-03-10')[0].requests).toBe(62);
  });

  it('checkLimits through a fake clock: 119 requests over 61 s, exactly 60 in the first minute', () => {
    const { ledger, clock } = ledgerAt('2026-03-10T12:00:00Z');
    const auth = workspace(ledger);
    const start = clock.t;
    const passed: number[] = [];
    for (let i = 0; i < 119; i++) {
      clock.t = start + Math.round((i * 61_000) / 118);
      const r = ledger.checkLimits(auth);
      if (r.ok) passed.push(clock.t);
      expect(Number(r.headers['RateLimit-Remaining'])).toBe(Math.max(0, 60 - passed.filter((t) => t > clock.t - 60_000).length));
    }
    expect(passed.filter((t) => t < start + 60_000)).toHaveLength(60);
    expect(mostInAnyWindow(passed, 60_000)).toBe(60);
  });

  it('daily quota: 5,000 per workspace per UTC day, refused with quota_exceeded until 00:00 UTC, kept across restarts', () => {
    const { ledger, clock, path } = ledgerAt('2026-03-10T20:00:00Z');
    const auth = workspace(ledger);
    for (let i = 0; i < 5000; i++) {
      clock.add(1_000); // one a second: the per-key limit never bites
      const r = ledger.checkLimits(auth);
      if (!r.ok) throw new Error(`request ${i} refused: ${r.message}`);
    }
    clock.add(1_000);
    const over = ledger.checkLimits(auth);
    const toMidnight = Math.ceil((Date.parse('2026-03-11T00:00:00Z') - clock.t) / 1000);
    expect(over).toMatchObject({ ok: false, status: 429, code: 'quota_exceeded', retryAfterS: toMidnight });
    expect(over.headers).toMatchObject({ 'X-Daily-Quota-Remaining': '0', 'Retry-After': String(toMidnight) });
    expect(over.headers['RateLimit']).toBe(`"key";r=0;t=60, "workspace";r=0;t=${toMidnight}`);
    ledger.close();
    open.pop();

    const again = Ledger.open(path, { now: clock.now });
    open.push(again);
    clock.set('2026-03-10T23:59:59.500Z');
    expect(again.checkLimits(auth)).toMatchObject({ ok: false, code: 'quota_exceeded', retryAfterS: 1 });
    clock.set('2026-03-11T00:00:00.000Z');
    expect(again.checkLimits(auth)).toMatchObject({ ok: true, headers: { 'X-Daily-Quota-Remaining': '4999' } });
    const usage = again.usage(auth.workspaceId, '2026-03-10', '2026-03-11');
    expect(usage.map((d) => d.requests)).toEqual([5000, 1]);
  });
});

describe('usage', () => {
  it('lists requests and credits per UTC day, zeros included', () => {
    const { ledger, clock } = ledgerAt('2026-03-10T23:00:00Z');
    const auth = workspace(ledger);
    ledger.grantCredits(auth.workspaceId, 50, { kind: 'bought' });
    ledger.checkLimits(auth);
    ledger.charge(auth.workspaceId, auth.keyId, ['a', 'b', 'c'], '/buildings');
    clock.set('2026-03-12T01:00:00Z');
    ledger.checkLimits(auth);
    ledger.checkLimits(auth);
    ledger.charge(auth.workspaceId, auth.keyId, ['a', 'd'], '/buildings');
    ledger.charge(auth.workspaceId, auth.keyId, ['e'], '/buildings');
    expect(ledger.usage(auth.workspaceId, '2026-03-10', '2026-03-12')).toEqual([
      { day: '2026-03-10', requests: 1, credits: 3, charges: 1, buildings: 3 },
      { day: '2026-03-11', requests: 0, credits: 0, charges: 0, buildings: 0 },
      { day: '2026-03-12', requests: 2, credits: 2, charges: 2, buildings: 3 },
    ]);
    expect(ledger.usage(auth.workspaceId)).toHaveLength(30);
    expect(ledger.usage(auth.workspaceId).at(-1)!.day).toBe('2026-03-12');
    expect(() => ledger.usage(auth.workspaceId, '2026-03-12', '2026-03-10')).toThrow(/after/);
    expect(() => ledger.usage(auth.workspaceId, '2026-02-30')).toThrow(/YYYY-MM-DD/);
    expect(() => ledger.usage('ws_nope')).toThrow(LedgerError);
  });
});

describe('UTC days', () => {
  it('utcDay, utcMonth and parseUtcDay agree with Date on instants that jump between days, before and after 1970', () => {
    const edges = [0, -1, 1, DAY_MS - 1, DAY_MS, -DAY_MS, -DAY_MS - 1, Date.UTC(2026, 1, 28, 23, 59, 59, 999), Date.UTC(2028, 1, 29, 12)];
    let seed = 3;
    const instants = [...edges];
    for (let i = 0; i < 3000; i++) {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      // Same day as the one before, the next or previous millisecond, or anywhere from 1900 to 2100.
      const kind = seed % 4;
      const prev = instants[instants.length - 1];
      instants.push(
        kind === 0 ? prev : kind === 1 ? prev + 1 : kind === 2 ? prev - 1 : Date.UTC(1900, 0, 1) + (seed / 2 ** 32) * 200 * 365.25 * DAY_MS,
      );
    }
    for (const ms of instants) {
      const iso = new Date(ms).toISOString();
      expect(utcDay(ms)).toBe(iso.slice(0, 10));
      expect(utcMonth(ms)).toBe(iso.slice(0, 7));
      expect(parseUtcDay(iso.slice(0, 10))).toBe(
        Date.UTC(new Date(ms).getUTCFullYear(), new Date(ms).getUTCMonth(), new Date(ms).getUTCDate()),
      );
      expect(() => parseUtcDay(`${iso.slice(0, 8)}32`)).toThrow(/YYYY-MM-DD/);
    }
    expect(() => utcDay(Number.NaN)).toThrow(RangeError);
    expect(() => parseUtcDay('2026-02-29')).toThrow(/YYYY-MM-DD/);
  });
});

describe('demo workspace', () => {
  /** The working demo key, failing the test when the demo is revoked. */
  const active = (d: DemoKey) => {
    if (d.state !== 'active') throw new Error(`demo ${d.state}`);
    return d;
  };

  it('is made once with 100,000 bought credits; its key is kept in demo-key.txt (0600) and reused', () => {
    const dir = tempDir();
    const path = join(dir, 'ledger.db');
    const first = Ledger.open(path);
    const made = active(first.ensureDemo(dir));
    expect(made.created).toBe(true);
    expect(first.authenticate(made.key)).toMatchObject({ ok: true, workspaceId: made.workspaceId });
    const bought = first.workspace(made.workspaceId).grants.filter((g) => g.kind === 'bought');
    expect(bought.map((g) => [g.amount, g.expiresAt])).toEqual([[100_000, null]]);
    const file = join(dir, 'demo-key.txt');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).toContain(made.key);
    const mtime = statSync(file).mtimeMs;
    first.close();

    const second = Ledger.open(path);
    open.push(second);
    expect(second.ensureDemo(dir)).toEqual({ ...made, created: false });
    expect(statSync(file).mtimeMs).toBe(mtime);
    expect(second.listWorkspaces()).toHaveLength(1);

    unlinkSync(file); // lost file: a new key for the same workspace, the lost one revoked
    const third = active(second.ensureDemo(dir));
    expect(third).toMatchObject({ workspaceId: made.workspaceId, created: false });
    expect(third.key).not.toBe(made.key);
    expect(second.authenticate(third.key).ok).toBe(true);
    expect(second.authenticate(made.key).ok).toBe(false);
    expect(second.listWorkspaces()).toHaveLength(1);
  });

  it('stays revoked once its key is revoked: no later call makes or revives a key, and the file goes', () => {
    const dir = tempDir();
    const path = join(dir, 'ledger.db');
    const ledger = Ledger.open(path);
    const made = active(ledger.ensureDemo(dir));
    ledger.revokeKey(made.keyId);
    ledger.close();
    for (let start = 0; start < 2; start++) {
      const again = Ledger.open(path);
      expect(again.ensureDemo(dir)).toEqual({ state: 'revoked', keyId: made.keyId, workspaceId: made.workspaceId });
      expect(again.authenticate(made.key).ok).toBe(false);
      expect(again.listKeys(made.workspaceId).map((k) => k.status)).toEqual(['revoked']);
      again.close();
      expect(existsSync(join(dir, 'demo-key.txt'))).toBe(false);
    }
  });

  it('is retired by a start that serves real snapshots: its keys revoked, recorded, the file removed', () => {
    const dir = tempDir();
    const ledger = Ledger.open(join(dir, 'ledger.db'));
    open.push(ledger);
    expect(ledger.retireDemo(dir)).toBeNull(); // no demo: nothing to do
    const made = active(ledger.ensureDemo(dir));
    expect(ledger.retireDemo(dir)).toEqual({ workspaceId: made.workspaceId, keyIds: [made.keyId] });
    expect(ledger.authenticate(made.key).ok).toBe(false);
    expect(existsSync(join(dir, 'demo-key.txt'))).toBe(false);
    expect(ledger.retireDemo(dir)).toBeNull();
    expect(ledger.ensureDemo(dir)).toMatchObject({ state: 'revoked', keyId: made.keyId });
  });
});
