/**
 * One behavioural suite, run against both ledgers: the SQLite file and PostgreSQL (a throwaway
 * cluster started from the installed binaries). Credits, the 365-day rule, all-or-nothing pages,
 * the spending order, keys; the invariants after every step; and, on each engine, two ledgers
 * (two replicas) charging the same workspace's buildings at once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAY_MS, LedgerUnavailableError, ledgerLocation, openLedgerEngine, PgLedger, type LedgerEngine } from '../src/ledger/index.ts';
import { adminWith } from './admin-cli.ts';
import { freePort } from './services/ports.ts';
import { startPostgres, type TestPostgres } from './services/postgres.ts';

let postgres: TestPostgres;
const dirs: string[] = [];
let databases = 0;

beforeAll(async () => {
  postgres = await startPostgres();
}, 120_000);
afterAll(() => {
  postgres?.destroy();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A fresh, empty ledger location of the engine: a new file, or a new database of the cluster. */
async function freshLocation(kind: 'sqlite' | 'postgres'): Promise<string> {
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'edifice-engines-'));
    dirs.push(dir);
    return join(dir, 'ledger.db');
  }
  const name = `ledger_${++databases}`;
  const admin = new pg.Client(postgres.url);
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  return postgres.url.replace(/\/postgres$/, `/${name}`);
}

/** A clock the test moves by hand. */
function clockAt(iso: string) {
  const clock = { t: Date.parse(iso), now: () => clock.t };
  return clock;
}

const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

/** The invariants: audit clean, no grant below zero or above its amount, balance = Σ usable remaining. */
async function expectSound(ledger: LedgerEngine, workspaceId: string, now: number): Promise<void> {
  expect(await ledger.audit()).toEqual([]);
  const { grants, balance } = await ledger.workspace(workspaceId);
  for (const g of grants) {
    expect(g.remaining).toBeGreaterThanOrEqual(0);
    expect(g.remaining).toBeLessThanOrEqual(g.amount);
  }
  expect(balance).toBe(grants.filter((g) => g.expiresAt === null || g.expiresAt > now).reduce((s, g) => s + g.remaining, 0));
}

describe.each(['sqlite', 'postgres'] as const)('the %s ledger', (kind) => {
  const open: LedgerEngine[] = [];
  afterAll(async () => {
    for (const l of open) await l.close();
  });

  async function ledgerAt(iso: string, location?: string) {
    const clock = clockAt(iso);
    const where = location ?? (await freshLocation(kind));
    const ledger = await openLedgerEngine(where, { now: clock.now });
    open.push(ledger);
    expect(ledger.kind).toBe(kind);
    return { ledger, clock, where };
  }

  async function workspace(ledger: LedgerEngine, plan: string | null = null) {
    const { workspaceId, memberId } = await ledger.createWorkspace('Acme', { createdBy: 'ana@acme.test', plan });
    const { key, keyId } = await ledger.createKey(workspaceId, memberId);
    return { workspaceId, memberId, key, keyId };
  }

  it('charges one credit per new distinct building; free again within 365 days, charged again from day 365', async () => {
    const { ledger, clock } = await ledgerAt('2026-03-10T12:00:00Z');
    const w = await workspace(ledger);
    await ledger.grantCredits(w.workspaceId, 10, { kind: 'bought' }); // 15 with the welcome grant
    expect(await ledger.charge(w.workspaceId, w.keyId, ['a', 'b', 'a', 'c'], '/buildings')).toMatchObject({
      ok: true,
      charged: 3,
      remaining: 12,
    });
    expect(await ledger.charge(w.workspaceId, w.keyId, ['a', 'b', 'd'], '/buildings')).toMatchObject({
      ok: true,
      charged: 1,
      remaining: 11,
    });
    expect(await ledger.charge(w.workspaceId, w.keyId, ['a', 'b', 'c', 'd'], '/buildings')).toEqual({
      ok: true,
      charged: 0,
      remaining: 11,
      chargeId: null,
    });
    await expectSound(ledger, w.workspaceId, clock.t);
    clock.t += 365 * DAY_MS - 1;
    expect(await ledger.charge(w.workspaceId, w.keyId, ['a'], '/buildings')).toMatchObject({ charged: 0 });
    clock.t += 1;
    // a and d were opened at the same instant; the welcome grant (1 left) expired on day 30.
    expect(await ledger.charge(w.workspaceId, w.keyId, ['a', 'd'], '/buildings')).toMatchObject({ charged: 2, remaining: 8 });
    await expectSound(ledger, w.workspaceId, clock.t);
    // Another workspace pays for the same buildings.
    const other = await workspace(ledger);
    expect(await ledger.charge(other.workspaceId, other.keyId, ['a', 'b'], '/buildings')).toMatchObject({ charged: 2, remaining: 3 });
  });

  it('a page is all or nothing: too few credits is 402 and writes nothing', async () => {
    const { ledger, clock } = await ledgerAt('2026-03-10T12:00:00Z');
    const w = await workspace(ledger); // 5 welcome credits
    expect(await ledger.charge(w.workspaceId, w.keyId, ids('x', 3), '/buildings')).toMatchObject({ ok: true, charged: 3, remaining: 2 });
    const refused = await ledger.charge(w.workspaceId, w.keyId, [...ids('x', 3), ...ids('y', 3)], '/buildings');
    expect(refused).toMatchObject({ ok: false, status: 402, code: 'insufficient_credits', needed: 3, remaining: 2 });
    expect(await ledger.balance(w.workspaceId)).toBe(2);
    // Nothing of the refused page was opened: y-0 and y-1 still cost a credit each.
    expect(await ledger.charge(w.workspaceId, w.keyId, ids('y', 2), '/buildings')).toMatchObject({ ok: true, charged: 2, remaining: 0 });
    expect(await ledger.charge(w.workspaceId, w.keyId, ['x-0', 'y-1'], '/buildings')).toMatchObject({ ok: true, charged: 0, remaining: 0 });
    await expectSound(ledger, w.workspaceId, clock.t);
  });

  it("a page capped by maxCredits (a bulk export's max_credits) is 402 above it and writes nothing; at it, charged", async () => {
    const { ledger, clock } = await ledgerAt('2026-03-10T12:00:00Z');
    const w = await workspace(ledger);
    await ledger.grantCredits(w.workspaceId, 100, { kind: 'bought' });
    expect(await ledger.charge(w.workspaceId, w.keyId, ids('x', 2), '/buildings')).toMatchObject({ ok: true, charged: 2 });
    const page = { workspaceId: w.workspaceId, keyId: w.keyId, buildingIds: ids('x', 6), route: '/buildings/export' };
    const [refused] = await ledger.chargePages([{ ...page, maxCredits: 3 }]);
    expect(refused.result).toMatchObject({ ok: false, status: 402, code: 'insufficient_credits', needed: 4, remaining: 103 });
    expect(await ledger.balance(w.workspaceId)).toBe(103);
    const [charged] = await ledger.chargePages([{ ...page, maxCredits: 4 }]);
    expect(charged.result).toMatchObject({ ok: true, charged: 4, remaining: 99 });
    await expectSound(ledger, w.workspaceId, clock.t);
  });

  it('spends the grant that expires first; an expired grant is not counted', async () => {
    const { ledger, clock } = await ledgerAt('2026-03-10T12:00:00Z');
    const w = await workspace(ledger);
    const never = await ledger.grantCredits(w.workspaceId, 10, { kind: 'bought' });
    const soon = await ledger.grantCredits(w.workspaceId, 4, { kind: 'manual', expiresAt: clock.t + 2 * DAY_MS });
    await ledger.charge(w.workspaceId, w.keyId, ids('a', 6), '/buildings');
    const left = async () =>
      Object.fromEntries((await ledger.workspace(w.workspaceId)).grants.map((g) => [g.kind === 'welcome' ? 'welcome' : g.id, g.remaining]));
    expect(await left()).toEqual({ [soon.id]: 0, welcome: 3, [never.id]: 10 });
    clock.t += 30 * DAY_MS; // the welcome grant's last instant has passed
    expect(await ledger.balance(w.workspaceId)).toBe(10);
    expect(await ledger.charge(w.workspaceId, w.keyId, ids('b', 11), '/buildings')).toMatchObject({ ok: false, needed: 11, remaining: 10 });
    await expectSound(ledger, w.workspaceId, clock.t);
  });

  it('gives a plan its allowance once a UTC month', async () => {
    const { ledger, clock } = await ledgerAt('2026-03-31T23:00:00Z');
    const w = await workspace(ledger, 'starter');
    expect(await ledger.balance(w.workspaceId)).toBe(1_005);
    await ledger.charge(w.workspaceId, w.keyId, ids('a', 10), '/buildings');
    expect(await ledger.balance(w.workspaceId)).toBe(995); // the plan's grant expires first
    clock.t = Date.parse('2026-04-01T00:00:00Z');
    expect(await ledger.balance(w.workspaceId)).toBe(1_005);
    expect((await ledger.workspace(w.workspaceId)).grants.filter((g) => g.kind === 'plan').map((g) => g.period)).toEqual([
      '2026-03',
      '2026-04',
    ]);
    await expectSound(ledger, w.workspaceId, clock.t);
  });

  it('authenticates keys: unknown and malformed 401, revoked 401, suspended 403, creator gone 401', async () => {
    const { ledger } = await ledgerAt('2026-03-10T12:00:00Z');
    const w = await workspace(ledger);
    expect(await ledger.authenticate(w.key)).toMatchObject({ ok: true, keyId: w.keyId, workspaceId: w.workspaceId });
    expect(await ledger.authenticate(undefined)).toMatchObject({ status: 401, message: expect.stringMatching(/^Missing/) });
    expect(await ledger.authenticate('edf_nope')).toMatchObject({ status: 401, message: expect.stringMatching(/^Malformed/) });
    const second = await ledger.createKey(w.workspaceId, w.memberId);
    await ledger.revokeKey(second.keyId);
    expect(await ledger.authenticate(second.key)).toMatchObject({ status: 401, message: 'This API key was revoked.' });
    await ledger.suspendWorkspace(w.workspaceId, 'unpaid');
    expect(await ledger.authenticate(w.key)).toMatchObject({ ok: false, status: 403, code: 'forbidden', workspaceId: w.workspaceId });
    await ledger.unsuspendWorkspace(w.workspaceId);
    await ledger.addMember(w.workspaceId, 'bo@acme.test');
    const bo = await ledger.createKey(w.workspaceId, 'bo@acme.test', { name: 'ci' });
    expect(await ledger.authenticate(bo.key)).toMatchObject({ ok: true });
    await ledger.removeMember(w.workspaceId, 'bo@acme.test');
    expect(await ledger.authenticate(bo.key)).toMatchObject({ status: 401, message: expect.stringMatching(/left the workspace/) });
    expect((await ledger.listKeys(w.workspaceId)).map((k) => k.status).sort()).toEqual(['active', 'creator_left', 'revoked']);
    await expect(ledger.createWorkspace('', { createdBy: 'a@b.c' })).rejects.toThrow(RangeError);
    await expect(ledger.grantCredits('ws_nope', 5, { kind: 'bought' })).rejects.toMatchObject({ code: 'not_found' });
  });

  it('reports usage per UTC day: credits, charged requests and buildings, zeros included', async () => {
    const { ledger, clock } = await ledgerAt('2026-03-10T23:00:00Z');
    const w = await workspace(ledger);
    await ledger.grantCredits(w.workspaceId, 50, { kind: 'bought' });
    await ledger.charge(w.workspaceId, w.keyId, ['a', 'b', 'c'], '/buildings');
    clock.t = Date.parse('2026-03-12T01:00:00Z');
    await ledger.charge(w.workspaceId, w.keyId, ['a', 'd'], '/buildings');
    await ledger.charge(w.workspaceId, w.keyId, ['e'], '/buildings');
    await ledger.charge(w.workspaceId, w.keyId, ['e'], '/buildings'); // free: no charge
    expect(await ledger.usage(w.workspaceId, '2026-03-10', '2026-03-12')).toEqual([
      { day: '2026-03-10', requests: 0, credits: 3, charges: 1, buildings: 3 },
      { day: '2026-03-11', requests: 0, credits: 0, charges: 0, buildings: 0 },
      { day: '2026-03-12', requests: 0, credits: 2, charges: 2, buildings: 3 },
    ]);
    expect(await ledger.usage(w.workspaceId)).toHaveLength(30);
    await expect(ledger.usage(w.workspaceId, '2026-03-12', '2026-03-10')).rejects.toThrow(/fromDay 2026-03-12 is after toDay/);
    await expect(ledger.usage('ws_nope')).rejects.toMatchObject({ code: 'not_found' });
  });

  it('keeps the requests from the public: countries asked for, removals decided once, report orders read with their token', async () => {
    const { ledger } = await ledgerAt('2026-03-10T12:00:00Z');
    for (const country of ['PT', 'FR', 'PT'])
      await ledger.addCountryRequest({ country, email: null, comment: 'please', client: '203.0.113.9' });
    await expect(ledger.addCountryRequest({ country: 'pt', email: null, comment: null, client: 'x' })).rejects.toThrow(RangeError);
    expect((await ledger.countryRequests()).map((r) => r.country).sort()).toEqual(['FR', 'PT', 'PT']);
    expect((await ledger.countryDemand()).map((d) => [d.country, d.requests])).toEqual([
      ['PT', 2],
      ['FR', 1],
    ]);

    const ask = (businessId: string) =>
      ledger.addRemovalRequest({
        businessId,
        registrationNumber: null,
        buildingId: 'b-1',
        country: 'LI',
        businessName: 'Acme',
        reason: 'closed',
        contact: 'a@b.li',
        client: '203.0.113.9',
      });
    const first = await ask('biz-1');
    const second = await ask('biz-2');
    expect(first).toMatchObject({ status: 'pending', decidedAt: null });
    expect(await ledger.decideRemoval(first.id, 'approved', 'ok')).toMatchObject({ status: 'approved', decisionNote: 'ok' });
    await expect(ledger.decideRemoval(first.id, 'rejected')).rejects.toMatchObject({ code: 'invalid_state' });
    await expect(ledger.decideRemoval('rm_nope', 'approved')).rejects.toMatchObject({ code: 'not_found' });
    expect((await ledger.removalRequests('pending')).map((r) => r.id)).toEqual([second.id]);
    expect(await ledger.approvedRemovals()).toEqual({ businessIds: new Set(['biz-1']), registrationNumbers: new Set() });
    expect(await ledger.approvedRemovalCount()).toBe(1);

    const order = (paid: boolean) =>
      ledger.createReportOrder({
        buildingId: 'b-1',
        country: 'LI',
        snapshotDate: '2026-03-01',
        email: 'a@b.li',
        priceMinor: 990,
        priceCurrency: 'EUR',
        provider: paid ? 'builtin' : 'webhook',
        paid,
        providerReference: null,
        report: '{"building":"b-1"}',
        client: '203.0.113.9',
      });
    const paid = await order(true);
    expect(await ledger.readReport(paid.order.id, paid.token)).toEqual({ order: paid.order, report: '{"building":"b-1"}' });
    const pending = await order(false);
    expect(await ledger.readReport(pending.order.id, pending.token)).toMatchObject({ report: null, order: { status: 'pending' } });
    expect(await ledger.readReport(pending.order.id, paid.token)).toBeNull();
    expect(await ledger.markReportPaid(pending.order.id, 'pay_1')).toMatchObject({
      changed: true,
      order: { status: 'paid', providerReference: 'pay_1' },
    });
    expect(await ledger.markReportPaid(pending.order.id, 'pay_2')).toMatchObject({ changed: false, order: { providerReference: 'pay_1' } });
    await expect(ledger.markReportPaid('ord_nope', null)).rejects.toMatchObject({ code: 'not_found' });
    expect(await ledger.reportOrder('ord_nope')).toBeNull();
    expect((await ledger.reportOrders()).map((o) => o.id).sort()).toEqual([paid.order.id, pending.order.id].sort());
  });

  it('two replicas charging one workspace at once: each building charged once, credits never below zero, credits taken = Σ charged', async () => {
    const { ledger: a, clock, where } = await ledgerAt('2026-03-10T12:00:00Z');
    const { ledger: b } = await ledgerAt('2026-03-10T12:00:00Z', where);
    const w = await workspace(a);
    await a.grantCredits(w.workspaceId, 95, { kind: 'bought' }); // 100 credits
    // 60 pages of 5 buildings from a pool of 150: overlapping, more than the credits can pay for.
    const pages = Array.from({ length: 60 }, (_, i) => Array.from({ length: 5 }, (_, j) => `b-${(i * 7 + j * 31) % 150}`));
    const outcomes = await Promise.all(pages.map((p, i) => (i % 2 === 0 ? a : b).charge(w.workspaceId, w.keyId, p, '/buildings')));
    const charged = outcomes.reduce((s, o) => s + (o.ok ? o.charged : 0), 0);
    expect(outcomes.some((o) => !o.ok)).toBe(true);
    expect(await a.balance(w.workspaceId)).toBe(100 - charged);
    expect(await b.balance(w.workspaceId)).toBe(100 - charged);
    for (const o of outcomes) if (!o.ok) expect(o.needed).toBeGreaterThan(o.remaining);
    await expectSound(a, w.workspaceId, clock.t);
    // Every building of a page that passed is opened: a second round is free for each of them.
    const passed = new Set(pages.filter((_, i) => outcomes[i].ok).flat());
    expect(await b.charge(w.workspaceId, w.keyId, [...passed], '/buildings')).toMatchObject({ ok: true, charged: 0 });
    expect(charged).toBe(passed.size);
  });

  it('the same new buildings opened through two replicas at the same moment are charged once', async () => {
    const { ledger: a, clock, where } = await ledgerAt('2026-03-10T12:00:00Z');
    const { ledger: b } = await ledgerAt('2026-03-10T12:00:00Z', where);
    const w = await workspace(a);
    await a.grantCredits(w.workspaceId, 1_000, { kind: 'bought' });
    const page = ids('same', 20);
    const rounds = await Promise.all(
      Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? a : b).charge(w.workspaceId, w.keyId, page, '/buildings')),
    );
    expect(rounds.map((r) => (r.ok ? r.charged : -1)).sort((x, y) => y - x)).toEqual([20, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    expect(await a.balance(w.workspaceId)).toBe(1_005 - 20);
    await expectSound(b, w.workspaceId, clock.t);
  });
});

describe('PostgreSQL away', () => {
  it('a charge while the server is down is LedgerUnavailableError (503), nothing charged; the pool recovers once it is back', async () => {
    const clock = clockAt('2026-03-10T12:00:00Z');
    const ledger = await openLedgerEngine(await freshLocation('postgres'), { now: clock.now });
    try {
      const { workspaceId, memberId } = await ledger.createWorkspace('Acme', { createdBy: 'ana@acme.test' });
      const { keyId } = await ledger.createKey(workspaceId, memberId);
      expect(await ledger.charge(workspaceId, keyId, ['a'], '/buildings')).toMatchObject({ charged: 1 });
      postgres.stop();
      await expect(ledger.charge(workspaceId, keyId, ['b'], '/buildings')).rejects.toBeInstanceOf(LedgerUnavailableError);
      await expect(ledger.ping()).rejects.toMatchObject({ status: 503, code: 'unavailable' });
      postgres.start();
      expect(await ledger.charge(workspaceId, keyId, ['b'], '/buildings')).toMatchObject({ ok: true, charged: 1, remaining: 3 });
      expect(await ledger.audit()).toEqual([]);
    } finally {
      postgres.start();
      await ledger.close();
    }
  });
});

describe('PostgreSQL rows held', () => {
  it('a page whose grants another transaction holds past the lock timeout is unavailable, not a hang; charged once they are free', async () => {
    const clock = clockAt('2026-03-10T12:00:00Z');
    const url = await freshLocation('postgres');
    const ledger = await PgLedger.open(url, { now: clock.now, lockTimeoutMs: 300 });
    const holder = new pg.Client(url);
    await holder.connect();
    try {
      const { workspaceId, memberId } = await ledger.createWorkspace('Acme', { createdBy: 'ana@acme.test' });
      const { keyId } = await ledger.createKey(workspaceId, memberId);
      await holder.query('BEGIN');
      await holder.query('SELECT * FROM grants WHERE workspace_id = $1 FOR UPDATE', [workspaceId]);
      await expect(ledger.charge(workspaceId, keyId, ['a'], '/buildings')).rejects.toMatchObject({
        name: 'LedgerUnavailableError',
        status: 503,
      });
      await holder.query('ROLLBACK');
      expect(await ledger.charge(workspaceId, keyId, ['a'], '/buildings')).toMatchObject({ ok: true, charged: 1, remaining: 4 });
      expect(await ledger.audit()).toEqual([]);
    } finally {
      await holder.end();
      await ledger.close();
    }
  });
});

describe('the admin CLI on PostgreSQL', () => {
  const admin = (...args: string[]) => adminWith({}, ...args, '--json');
  const ok = async (...args: string[]) => {
    const r = await admin(...args);
    expect(r, args.join(' ')).toMatchObject({ code: 0, stderr: '' });
    return JSON.parse(r.stdout);
  };

  it(
    '--ledger takes a postgres:// URL: workspaces, keys, credits and usage, seen by a server ledger at once',
    { timeout: 120_000 },
    async () => {
      const url = await freshLocation('postgres');
      const L = ['--ledger', url];
      const made = await ok('create-workspace', '--name', 'Acme', '--member', 'ana@acme.test', ...L);
      const key = await ok('create-key', made.workspaceId, '--member', 'ana@acme.test', ...L);
      await ok('buy', made.workspaceId, '20', ...L);
      const server = await openLedgerEngine(url);
      try {
        expect(await server.authenticate(key.key)).toMatchObject({ ok: true, workspaceId: made.workspaceId });
        expect(await server.charge(made.workspaceId, key.keyId, ids('a', 3), '/buildings')).toMatchObject({ charged: 3, remaining: 22 });
      } finally {
        await server.close();
      }
      expect(await ok('show', made.workspaceId, ...L)).toMatchObject({ balance: 22, members: [{ email: 'ana@acme.test' }] });
      expect(await ok('revoke-key', key.keyId, ...L)).toMatchObject({ keyId: key.keyId, status: 'revoked' });
      expect(await ok('check', ...L)).toEqual({ ok: true, problems: [] });
      const today = new Date().toISOString().slice(0, 10);
      expect(await ok('usage', made.workspaceId, '--from', today, '--to', today, ...L)).toEqual([
        { day: today, requests: 0, credits: 3, charges: 1, buildings: 3 },
      ]);
      expect(await ok('country-requests', ...L)).toEqual({ demand: [] });
      const away = await admin('list-workspaces', '--ledger', `postgres://postgres@127.0.0.1:${await freePort()}/postgres`);
      expect([away.code, JSON.parse(away.stderr).error.code]).toEqual([1, 'unavailable']);
    },
  );
});

describe('ledger locations', () => {
  it('a postgres:// URL is PostgreSQL, anything else a file; other URLs and broken ones are refused', () => {
    expect(ledgerLocation('postgres://edifice:secret@db.internal:5432/edifice')).toEqual({
      kind: 'postgres',
      url: 'postgres://edifice:secret@db.internal:5432/edifice',
    });
    expect(ledgerLocation('postgresql://db/edifice').kind).toBe('postgres');
    expect(ledgerLocation('data/ledger.db')).toEqual({ kind: 'sqlite', path: 'data/ledger.db' });
    expect(() => ledgerLocation('mysql://db/edifice')).toThrow(/file path or a postgres:\/\/ URL/);
    expect(() => ledgerLocation('postgres://')).toThrow(/no host/);
  });
});
