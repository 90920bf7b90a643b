/**
 * The ledger: workspaces, members, API keys, credits, opened buildings and quotas in one SQLite
 * file, behind one synchronous class. On every authenticated request the HTTP layer
 * (http/server.ts) calls `authenticate` and `checkLimits`; a page is charged through `free` or,
 * grouped with the others of its turn, `chargePages` (http/page-charges.ts). engine.ts puts it
 * and the PostgreSQL ledger behind one contract.
 *
 * Every method may throw a LedgerUnavailableError (answer 503 `unavailable` with Retry-After):
 * the file is locked past the busy timeout, the disk fails or is full, or the ledger is closed.
 * Admin methods throw LedgerError (`not_found`, `conflict`, `invalid_state`) and
 * TypeError/RangeError for bad arguments.
 */
import { timingSafeEqual } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { type Clock, MINUTE_MS, startOfNextUtcDay, utcDay } from './clock.ts';
import { type ChargeOutcome, type ChargePage, type ChargeResult, Credits, type Grant } from './credits.ts';
import { SharedOpenings } from './shared-openings.ts';
import { type Db, isMemoryPath, openDatabase } from './db.ts';
import { DEMO_CREDITS, DEMO_EMAIL, DEMO_WORKSPACE_NAME, readDemoKey, removeDemoKey, writeDemoKey } from './demo.ts';
import { asUnavailable, LedgerError } from './errors.ts';
import { type AuthResult, hashKey, type KeyInfo, type KeyRecord, keyIdOf, Keys, keyVerdict, parseKey, unauthorized } from './keys.ts';
import { WindowLimiter } from './limits.ts';
import { DailyQuota } from './quota.ts';
import { SharedQuota } from './shared-quota.ts';
import { WriteLock } from './write-lock.ts';
import { type UsageDay, usageDays } from './usage.ts';
import { type CountryDemand, type CountryRequest, CountryRequests } from './country-requests.ts';
import { type ApprovedRemovals, type NewRemovalRequest, type RemovalRequest, type RemovalStatus, Removals } from './removals.ts';
import { type NewReportOrder, type ReportOrder, Reports } from './reports.ts';
import { type Member, type Workspace, Workspaces } from './workspaces.ts';
import { type LimitsResult, limitsResult, rateLimitPolicy } from './limits-result.ts';

export interface LedgerOptions {
  /** The clock, in ms since the epoch. Default `Date.now`. */
  now?: Clock;
  /**
   * How long a verified key is trusted before the ledger is read again. Default 2,000 ms: a
   * revocation, a member leaving or a suspension made through another connection (the admin
   * CLI, another worker) takes effect within this time; through this instance, at once.
   */
  keyCacheTtlMs?: number;
  /** Verified keys kept in memory. Default 10,000. */
  keyCacheMax?: number;
  /** How long a statement waits for another connection's write lock. Default BUSY_TIMEOUT_MS. */
  busyTimeoutMs?: number;
  /** Requests a minute per API key. Default 60 (spec 8). */
  perKeyPerMinute?: number;
  /** Requests per workspace per UTC day. Default 5,000 (spec 8). */
  dailyQuota?: number;
  /** Keys the per-key limiter tracks at once. Default 100,000. */
  limiterMaxKeys?: number;
  /**
   * The per-key limiter's state, shared with the Ledgers of other threads of the same server
   * (`keyLimiterTable` of the first one), so that a key gets 60 a minute in all, not from each.
   */
  keyLimiterTable?: SharedArrayBuffer;
  /** The write lock shared with the Ledgers of the server's other threads (`writeLockBuffer` of the first one). */
  writeLock?: SharedArrayBuffer;
  /** The daily quota's counters shared with the Ledgers of the server's other threads (`quotaTable` of the first one). */
  quotaTable?: SharedArrayBuffer;
  /**
   * The openings shared by the Ledgers of the server's threads (the `buffer` of a SharedOpenings):
   * the one that charges writes what it commits, the others answer free pages from it.
   */
  openingsTable?: SharedArrayBuffer;
  /**
   * Whether this Ledger writes the shared quota counters to the file (every 250 ms and at close).
   * Default true; the worker threads of a server leave it to one thread.
   */
  persistQuota?: boolean;
}

/** How long, by default, a statement waits for another process's write lock on the file (admin CLI). */
export const BUSY_TIMEOUT_MS = 5_000;

const OPTION_NAMES = [
  'now',
  'keyCacheTtlMs',
  'keyCacheMax',
  'busyTimeoutMs',
  'perKeyPerMinute',
  'dailyQuota',
  'limiterMaxKeys',
  'keyLimiterTable',
  'writeLock',
  'quotaTable',
  'openingsTable',
  'persistQuota',
];

/** The demo workspace's key: working (its plaintext, for the quick start's banner) or revoked for good. */
export type DemoKey =
  | { state: 'active'; key: string; keyId: string; workspaceId: string; created: boolean }
  | { state: 'revoked'; keyId: string; workspaceId: string };

/** Rows of the meta table that remember the demo: its workspace, its key, and when it was revoked. */
const META_DEMO_WORKSPACE = 'demo_workspace_id';
const META_DEMO_KEY = 'demo_key_id';
const META_DEMO_REVOKED = 'demo_revoked_at';

export type { AuthResult } from './keys.ts';

export type { LimitsResult };

export type { UsageDay } from './usage.ts';

export interface WorkspaceSummary extends Workspace {
  balance: number;
  members: Member[];
  grants: Grant[];
}

interface CachedKey extends KeyRecord {
  checkedAt: number;
}

export class Ledger {
  private readonly db: Db;
  private readonly quotaDb: Db;
  private readonly now: Clock;
  private readonly workspaces: Workspaces;
  private readonly keys: Keys;
  private readonly credits: Credits;
  private readonly quota: DailyQuota;
  private readonly lock: WriteLock;
  private quotaTimer: NodeJS.Timeout | null = null;
  private readonly countries: CountryRequests;
  private readonly removals: Removals;
  private readonly reports: Reports;
  private readonly keyLimiter: WindowLimiter;
  private readonly keyCache: LRUCache<string, CachedKey>;
  private readonly keyCacheTtlMs: number;
  private readonly rateLimitPolicy: string;

  private constructor(
    db: Db,
    quotaDb: Db,
    options: Required<Omit<LedgerOptions, 'busyTimeoutMs' | 'keyLimiterTable' | 'writeLock' | 'quotaTable' | 'openingsTable'>> &
      Pick<LedgerOptions, 'keyLimiterTable' | 'writeLock' | 'quotaTable' | 'openingsTable'>,
  ) {
    this.db = db;
    this.quotaDb = quotaDb;
    this.now = options.now;
    this.workspaces = new Workspaces(db, this.now);
    this.keys = new Keys(db, this.now);
    const shared = options.openingsTable === undefined ? null : new SharedOpenings(options.openingsTable);
    this.credits = new Credits(db, this.now, (fn) => this.lock.run(fn), shared);
    this.lock = new WriteLock(options.writeLock);
    this.quota = new DailyQuota(quotaDb, options.dailyQuota, new SharedQuota(undefined, options.quotaTable), this.lock);
    if (options.persistQuota) {
      this.quotaTimer = setInterval(() => this.persistQuota(), 250);
      this.quotaTimer.unref();
    }
    this.countries = new CountryRequests(db, this.now);
    this.removals = new Removals(db, this.now);
    this.reports = new Reports(db, this.now);
    this.keyLimiter = new WindowLimiter({
      limit: options.perKeyPerMinute,
      periodMs: MINUTE_MS,
      maxKeys: options.limiterMaxKeys,
      table: options.keyLimiterTable,
    });
    this.keyCache = new LRUCache<string, CachedKey>({ max: options.keyCacheMax });
    this.keyCacheTtlMs = options.keyCacheTtlMs;
    this.rateLimitPolicy = rateLimitPolicy(options.perKeyPerMinute, options.dailyQuota);
  }

  /**
   * Opens (creating if needed, with its directory) the ledger at `path`; `':memory:'` makes a
   * private in-memory ledger for tests. A file ledger uses two connections: one with
   * `synchronous = FULL` for everything that touches credits, and one with NORMAL for the
   * request counter of the daily quota.
   */
  static open(path: string, options: LedgerOptions = {}): Ledger {
    for (const name of Object.keys(options)) {
      if (!OPTION_NAMES.includes(name)) throw new TypeError(`Unknown Ledger option "${name}"; expected one of ${OPTION_NAMES.join(', ')}.`);
    }
    const positive = (name: keyof LedgerOptions, fallback: number): number => {
      const v = options[name] ?? fallback;
      if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0)
        throw new RangeError(`Ledger option ${name} must be a whole number ≥ 0, got ${String(v)}.`);
      return v;
    };
    if (options.now !== undefined && typeof options.now !== 'function')
      throw new TypeError('Ledger option now must be a function returning ms since the epoch.');
    const resolved = {
      now: options.now ?? Date.now,
      keyCacheTtlMs: positive('keyCacheTtlMs', 2_000),
      keyCacheMax: Math.max(1, positive('keyCacheMax', 10_000)),
      perKeyPerMinute: positive('perKeyPerMinute', 60),
      dailyQuota: positive('dailyQuota', 5_000),
      limiterMaxKeys: Math.max(1, positive('limiterMaxKeys', 100_000)),
      keyLimiterTable: options.keyLimiterTable,
      writeLock: options.writeLock,
      quotaTable: options.quotaTable,
      openingsTable: options.openingsTable,
      persistQuota: options.persistQuota ?? true,
    };
    if (options.keyLimiterTable !== undefined && !(options.keyLimiterTable instanceof SharedArrayBuffer)) {
      throw new TypeError('Ledger option keyLimiterTable must be the SharedArrayBuffer of another Ledger (keyLimiterTable).');
    }
    if (options.openingsTable !== undefined && !(options.openingsTable instanceof SharedArrayBuffer)) {
      throw new TypeError('Ledger option openingsTable must be the buffer of a SharedOpenings.');
    }
    if (options.openingsTable !== undefined && options.writeLock === undefined) {
      // The table takes one writer at a time: the Ledgers that share it must share the lock too.
      throw new TypeError('Ledger option openingsTable needs the writeLock of the Ledgers it is shared with.');
    }
    const busyTimeoutMs = positive('busyTimeoutMs', BUSY_TIMEOUT_MS);
    let db: Db | undefined;
    try {
      db = openDatabase(path, { busyTimeoutMs, synchronous: 'FULL' });
      const quotaDb = isMemoryPath(path) ? db : openDatabase(path, { busyTimeoutMs, synchronous: 'NORMAL' });
      return new Ledger(db, quotaDb, resolved);
    } catch (err) {
      db?.close();
      throw asUnavailable(err) ?? err;
    }
  }

  /**
   * Readiness probe: reads the file through both connections; throws LedgerUnavailableError
   * when the ledger cannot serve (closed, unreadable, locked past the busy timeout).
   */
  ping(): void {
    this.guard(() => {
      this.db.prepare('SELECT count(*) FROM meta').get();
      if (this.quotaDb !== this.db) this.quotaDb.prepare('SELECT count(*) FROM daily_requests WHERE 0').get();
    });
  }

  /** The per-key limiter's state, to give to the Ledgers of other threads. */
  get keyLimiterTable(): SharedArrayBuffer {
    return this.keyLimiter.table;
  }

  /** The write lock, to give to the Ledgers of other threads. */
  get writeLockBuffer(): SharedArrayBuffer {
    return this.lock.buffer;
  }

  /** The daily quota's shared counters, to give to the Ledgers of other threads. */
  get quotaTable(): SharedArrayBuffer {
    return this.quota.table;
  }

  /** Writes the quota counts the file does not have yet (done every 250 ms and at close by the owner). */
  persistQuota(): void {
    try {
      this.guard(() => this.quota.persist());
    } catch (err) {
      // Kept in memory: the next round writes them.
      if (!asUnavailable(err)) throw err;
    }
  }

  close(): void {
    if (this.quotaTimer !== null) {
      clearInterval(this.quotaTimer);
      this.quotaTimer = null;
      if (this.quotaDb.open) this.persistQuota();
    }
    if (this.quotaDb !== this.db && this.quotaDb.open) this.quotaDb.close();
    if (this.db.open) this.db.close();
  }

  // ---- requests -------------------------------------------------------------------------

  /**
   * Who a raw API key (the token of `Authorization: Bearer <key>`) speaks for. 401 for a
   * missing or malformed key (refused before any lookup), an unknown one, a revoked one, an
   * expired one and one whose creator left the workspace; 403 when the workspace is suspended.
   */
  authenticate(rawKey: string | undefined): AuthResult {
    const keyId = keyIdOf(rawKey);
    if (typeof keyId !== 'string') return keyId;
    return this.guard(() => {
      const now = this.now();
      const presented = hashKey(rawKey!);
      let key = this.keyCache.get(keyId);
      if (key && (now - key.checkedAt >= this.keyCacheTtlMs || now < key.checkedAt)) key = undefined;
      if (!key) {
        const found = this.keys.lookup(keyId);
        if (!found || !timingSafeEqual(found.secretSha256, presented)) return unauthorized('Unknown API key.');
        key = { ...found, checkedAt: now };
        this.keyCache.set(keyId, key);
      }
      return keyVerdict(key, presented, now);
    });
  }

  /**
   * The per-key limit (60 in any minute) and then the workspace's daily quota (5,000 per UTC
   * day). A request refused by either is not counted in the quota. The headers belong on the
   * response whatever its status.
   */
  checkLimits(auth: { keyId: string; workspaceId: string }): LimitsResult {
    return this.guard(() => this.limits(auth, true));
  }

  /** The headers of spec 8 for a request that is refused before the limits count it (403). */
  limitHeaders(auth: { keyId: string; workspaceId: string }): Record<string, string> {
    return this.guard(() => this.limits(auth, false).headers);
  }

  private limits(auth: { keyId: string; workspaceId: string }, count: boolean): LimitsResult {
    const now = this.now();
    const day = utcDay(now);
    const dayResetS = Math.ceil((startOfNextUtcDay(now) - now) / 1000);
    const key = count ? this.keyLimiter.take(auth.keyId, now) : this.keyLimiter.peek(auth.keyId, now);
    const quota =
      key.ok && count
        ? this.quota.take(auth.workspaceId, day)
        : { ok: true, used: this.quota.used(auth.workspaceId, day), limit: this.quota.limit };
    return limitsResult(key, quota, dayResetS, this.rateLimitPolicy);
  }

  /**
   * Charges one answer: 1 credit per distinct building in `buildingIds` that this workspace has
   * not opened (been charged for) in the last 365 days; all or nothing, in one BEGIN IMMEDIATE
   * transaction. A 402 writes nothing. A charge of 0 writes nothing either (`chargeId` null).
   */
  charge(workspaceId: string, keyId: string | null, buildingIds: readonly string[], route: string): ChargeResult {
    return this.guard(() => this.credits.charge(workspaceId, keyId, buildingIds, route));
  }

  /**
   * The answer to a page that costs nothing, when this connection already knows every building of
   * it to be opened in the 365 days: no transaction. Null when the page must be charged.
   */
  free(workspaceId: string, buildingIds: readonly string[], route: string): ChargeResult | null {
    return this.guard(() => this.credits.free(workspaceId, buildingIds, route));
  }

  /**
   * For the connection that charges pages sent by other threads: the outcome of a page that costs
   * nothing by what this connection already holds in memory, without a transaction; null when
   * the page must go to `chargePages`.
   */
  knownFree(page: ChargePage): ChargeOutcome | null {
    return this.guard(() => this.credits.knownFree(page));
  }

  /** Charges pages sent by other threads' Ledgers (`remoteCharges`), in one transaction. */
  chargePages(pages: readonly ChargePage[]): ChargeOutcome[] {
    return this.guard(() => this.credits.chargeAll(pages));
  }

  /**
   * For the connection that will charge: the openings read into memory before the first page,
   * and the latest of them put in the shared table (`openingsTable`) for the other threads.
   */
  loadOpenings(shareMax?: number): { openings: number; shared: number; loadMs: number } {
    return this.guard(() => this.credits.loadOpenings(shareMax));
  }

  /** Credits usable now (materialises this month's plan allowance on first need). */
  balance(workspaceId: string): number {
    return this.guard(() => this.credits.balance(workspaceId));
  }

  /**
   * Requests and credits per UTC day from `fromDay` to `toDay` inclusive (YYYY-MM-DD; default
   * the 30 days ending today), one entry per day, zeros included. At most 366 days.
   */
  usage(workspaceId: string, fromDay?: string, toDay?: string): UsageDay[] {
    const { from, to, byDay } = usageDays(this.now(), fromDay, toDay);
    if (this.quotaTimer !== null) this.persistQuota();
    return this.guard(() => {
      this.workspaces.get(workspaceId);
      for (const r of this.quota.usage(workspaceId, from, to)) byDay.get(r.day)!.requests = r.requests;
      for (const c of this.credits.usage(workspaceId, from, to)) Object.assign(byDay.get(c.day)!, c);
      return [...byDay.values()];
    });
  }

  // ---- requests from the public ---------------------------------------------------------

  addCountryRequest(request: { country: string; email: string | null; comment: string | null; client: string }): CountryRequest {
    return this.write(() => this.countries.add(request));
  }

  /** The latest country requests, newest first. */
  countryRequests(limit?: number): CountryRequest[] {
    return this.guard(() => this.countries.list(limit));
  }

  /** Requests per country, most asked first. */
  countryDemand(): CountryDemand[] {
    return this.guard(() => this.countries.demand());
  }

  addRemovalRequest(request: NewRemovalRequest): RemovalRequest {
    return this.write(() => this.removals.add(request));
  }

  removalRequests(status?: RemovalStatus): RemovalRequest[] {
    return this.guard(() => this.removals.list(status));
  }

  /** Approves or rejects a pending removal request (LedgerError invalid_state once decided). */
  decideRemoval(id: string, decision: 'approved' | 'rejected', note: string | null = null): RemovalRequest {
    return this.write(() => this.removals.decide(id, decision, note));
  }

  /** The businesses approved removals hide. */
  approvedRemovals(): ApprovedRemovals {
    return this.guard(() => this.removals.approved());
  }

  /** Approved removals so far; a server polls it to apply new approvals at once. */
  approvedRemovalCount(): number {
    return this.guard(() => this.removals.approvedCount());
  }

  /** Stores a report order and its frozen report; returns the read token, shown once. */
  createReportOrder(order: NewReportOrder): { order: ReportOrder; token: string } {
    return this.write(() => this.reports.create(order));
  }

  /** The order and its report once paid, or null for an unknown order or a wrong token alike. */
  readReport(orderId: string, token: string): { order: ReportOrder; report: string | null } | null {
    return this.guard(() => this.reports.read(orderId, token));
  }

  /** Marks a report order paid (idempotent); LedgerError not_found for an unknown order. */
  markReportPaid(orderId: string, providerReference: string | null): { order: ReportOrder; changed: boolean } {
    return this.write(() => this.reports.markPaid(orderId, providerReference));
  }

  /** The order (never its token), or null. */
  reportOrder(orderId: string): ReportOrder | null {
    return this.guard(() => this.reports.find(orderId));
  }

  reportOrders(limit?: number): ReportOrder[] {
    return this.guard(() => this.reports.list(limit));
  }

  // ---- administration -------------------------------------------------------------------

  /** A new workspace with its first member and its welcome grant (5 credits, 30 days). */
  createWorkspace(name: string, options: { plan?: string | null; createdBy: string }): { workspaceId: string; memberId: string } {
    return this.write(() => {
      const { workspaceId, memberId, createdAt } = this.workspaces.create(name, options.plan ?? null, options.createdBy);
      this.credits.grantWelcome(workspaceId, createdAt);
      return { workspaceId, memberId };
    });
  }

  workspace(workspaceId: string): WorkspaceSummary {
    return this.guard(() => {
      const w = this.workspaces.get(workspaceId);
      return {
        ...w,
        balance: this.credits.balance(workspaceId),
        members: this.workspaces.members(workspaceId),
        grants: this.credits.grants(workspaceId),
      };
    });
  }

  listWorkspaces(): Workspace[] {
    return this.guard(() => this.workspaces.list());
  }

  addMember(workspaceId: string, email: string): Member {
    return this.write(() => this.workspaces.addMember(workspaceId, email));
  }

  /** Marks the member (id, or email of a current member) as left; their keys stop working. */
  removeMember(workspaceId: string, member: string): Member {
    const m = this.write(() => this.workspaces.removeMember(workspaceId, member));
    this.keyCache.clear();
    return m;
  }

  /** A new key for a current member (id or email). The plaintext `key` is shown once: here. */
  createKey(
    workspaceId: string,
    member: string,
    options: { expiresAt?: number | null; name?: string | null } = {},
  ): { key: string; keyId: string; prefix: string } {
    return this.write(() => {
      this.workspaces.get(workspaceId); // "No workspace ..." rather than "no member of" a workspace that does not exist
      return this.keys.create(this.workspaces.member(workspaceId, member), options);
    });
  }

  /** The workspace's keys, never their secrets. */
  listKeys(workspaceId: string): KeyInfo[] {
    return this.guard(() => {
      this.workspaces.get(workspaceId);
      return this.keys.list(workspaceId);
    });
  }

  revokeKey(keyId: string): KeyInfo {
    const info = this.write(() => this.keys.revoke(keyId));
    this.keyCache.delete(keyId);
    return info;
  }

  /** Adds credits bought (or granted by hand), usable until `expiresAt` (default: no expiry). */
  grantCredits(
    workspaceId: string,
    amount: number,
    options: { kind: 'bought' | 'manual'; expiresAt?: number | null; note?: string | null },
  ): Grant {
    return this.write(() => this.credits.grant(workspaceId, amount, options));
  }

  /**
   * Sets the plan (`free`, `starter`, `pro`) or none (null). The monthly allowance of the plan in
   * force when a month's allowance is first needed is that month's; a change later in the month
   * applies from the 1st of the next.
   */
  setPlan(workspaceId: string, plan: string | null): void {
    this.write(() => this.workspaces.setPlan(workspaceId, plan));
    this.credits.forgetPlan(workspaceId);
  }

  /** Suspends the workspace: its keys answer 403 forbidden until unsuspended. */
  suspendWorkspace(workspaceId: string, reason: string | null = null): void {
    this.write(() => this.workspaces.suspend(workspaceId, reason));
    this.keyCache.clear();
  }

  unsuspendWorkspace(workspaceId: string): void {
    this.write(() => this.workspaces.unsuspend(workspaceId));
    this.keyCache.clear();
  }

  /** Every breach of the ledger's invariants (see Credits.audit); empty when sound. */
  audit(): string[] {
    return this.guard(() => this.credits.audit());
  }

  /**
   * The demo workspace of the quick start (`npm start` on a fresh clone, serving the demo country
   * the server generated): on the first call, a workspace with 100,000 bought credits, a key for
   * demo@edifice.example, and that key written to `<dir>/demo-key.txt` (mode 0600, for the local
   * demo only). Later calls reuse both; if the file is lost, its key is revoked (nobody can read
   * it any more) and a new one made. Once the demo key is revoked (`admin revoke-key`, or
   * retireDemo) the ledger records it and no later call makes another: the answer says revoked.
   */
  ensureDemo(dir: string): DemoKey {
    const saved = readDemoKey(dir);
    const savedId = saved === null ? null : parseKey(saved);
    const answer = this.write((): DemoKey => {
      let workspaceId = this.getMeta(META_DEMO_WORKSPACE);
      let keyId = this.getMeta(META_DEMO_KEY) ?? (workspaceId !== null ? this.legacyDemoKeyId(workspaceId, savedId) : null);
      if (workspaceId !== null && keyId !== null) {
        if (this.getMeta(META_DEMO_REVOKED) !== null || this.keys.info(keyId).status !== 'active') {
          this.recordDemoRevoked(workspaceId);
          return { state: 'revoked', workspaceId, keyId };
        }
        if (savedId === keyId) return { state: 'active', key: saved!, keyId, workspaceId, created: false };
        this.keys.revoke(keyId); // its plaintext is lost (the file gone or rewritten): no one keeps it
      }
      let created = false;
      if (workspaceId === null || !this.workspaceExists(workspaceId)) {
        workspaceId = this.createWorkspace(DEMO_WORKSPACE_NAME, { createdBy: DEMO_EMAIL }).workspaceId;
        this.credits.grant(workspaceId, DEMO_CREDITS, { kind: 'bought', note: 'demo' });
        this.setMeta(META_DEMO_WORKSPACE, workspaceId);
        created = true;
      }
      let member: Member;
      try {
        member = this.workspaces.member(workspaceId, DEMO_EMAIL);
      } catch {
        member = this.workspaces.addMember(workspaceId, DEMO_EMAIL);
      }
      const made = this.keys.create(member, { name: 'demo' });
      keyId = made.keyId;
      this.setMeta(META_DEMO_KEY, keyId);
      return { state: 'active', key: made.key, keyId, workspaceId, created };
    });
    this.keyCache.clear();
    if (answer.state === 'active' && answer.key !== saved) writeDemoKey(dir, answer.key);
    if (answer.state === 'revoked') removeDemoKey(dir);
    return answer;
  }

  /**
   * A server that serves real snapshots keeps no demo key: every key of the demo workspace still
   * working is revoked, the ledger records the demo as revoked (a later demo start makes no new
   * key) and `<dir>/demo-key.txt` is removed. Returns the keys revoked now (none: nothing to do).
   */
  retireDemo(dir: string): { workspaceId: string; keyIds: string[] } | null {
    const workspaceId = this.guard(() => this.getMeta(META_DEMO_WORKSPACE));
    if (workspaceId === null) return null;
    const keyIds = this.write(() => {
      const active = this.keys
        .list(workspaceId)
        .filter((k) => k.status === 'active')
        .map((k) => k.keyId);
      for (const id of active) this.keys.revoke(id);
      this.recordDemoRevoked(workspaceId);
      return active;
    });
    for (const id of keyIds) this.keyCache.delete(id);
    removeDemoKey(dir);
    return keyIds.length > 0 ? { workspaceId, keyIds } : null;
  }

  /** A ledger whose demo predates the record of its key's id: the saved key's, if it belongs to the demo workspace. */
  private legacyDemoKeyId(workspaceId: string, savedId: string | null): string | null {
    const record = savedId === null ? undefined : this.keys.lookup(savedId);
    return record !== undefined && record.workspaceId === workspaceId ? record.keyId : null;
  }

  private recordDemoRevoked(workspaceId: string): void {
    if (this.getMeta(META_DEMO_REVOKED) === null) this.setMeta(META_DEMO_REVOKED, String(this.now()));
    if (this.getMeta(META_DEMO_WORKSPACE) === null) this.setMeta(META_DEMO_WORKSPACE, workspaceId);
  }

  // ---- internals ------------------------------------------------------------------------

  /** Runs `fn`, turning "the ledger cannot serve now" into LedgerUnavailableError. */
  private guard<T>(fn: () => T): T {
    try {
      return fn();
    } catch (err) {
      throw asUnavailable(err) ?? err;
    }
  }

  /** Runs `fn` in a BEGIN IMMEDIATE transaction (a savepoint when already inside one). */
  private write<T>(fn: () => T): T {
    return this.guard(() => this.lock.run(() => this.db.transaction(fn).immediate()));
  }

  private workspaceExists(workspaceId: string): boolean {
    try {
      this.workspaces.get(workspaceId);
      return true;
    } catch (err) {
      if (err instanceof LedgerError && err.code === 'not_found') return false;
      throw err;
    }
  }

  private getMeta(key: string): string | null {
    const row = this.db.prepare<[string], { value: string }>('SELECT value FROM meta WHERE key = ?').get(key);
    return row?.value ?? null;
  }

  private setMeta(key: string, value: string): void {
    this.db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value').run(key, value);
  }
}
