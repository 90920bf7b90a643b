/**
 * The ledger on PostgreSQL, for several replicas sharing one ledger (EDIFICE_LEDGER=postgres://…),
 * through node-postgres and its pool. The same rules as the SQLite Ledger (credits.ts):
 *
 * - A page is charged all or nothing in one transaction: its new buildings claim their opening
 *   rows (`ON CONFLICT … DO UPDATE … WHERE` the opening is 365 days old), then its grants are
 *   locked and debited, earliest expiry first. Too few credits: rolled back, 402.
 * - A building is charged at most once per workspace per 365 days: the opening row is the unique
 *   key two replicas meet on; the second waits for the first's commit, then finds it opened.
 * - A committed charge is durable before its answer (PostgreSQL's commit, synchronous_commit on).
 * - The database unreachable, restarting or refusing connections: LedgerUnavailableError (503).
 */
import { timingSafeEqual } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type pg from 'pg';
import { type Clock, startOfNextUtcMonth, utcDay, utcMonth } from './clock.ts';
import {
  type ChargeOutcome,
  type ChargePage,
  type ChargeResult,
  chargeRefusal,
  FREE_REOPEN_MS,
  type Grant,
  type GrantRow,
  MAX_GRANT,
  toGrant,
  WELCOME_CREDITS,
  WELCOME_VALID_MS,
} from './credits.ts';
import { LedgerError, LedgerUnavailableError } from './errors.ts';
import { newId } from './base62.ts';
import {
  type AuthResult,
  hashKey,
  keyIdOf,
  type KeyInfo,
  type KeyInfoRow,
  type KeyRecord,
  keyPrefix,
  keyVerdict,
  newKey,
  toKeyInfo,
  unauthorized,
} from './keys.ts';
import { migratePg } from './pg-schema.ts';
import { checkName, checkPlan, type Member, normaliseEmail, planAllowance, type Workspace } from './workspaces.ts';
import { checkCountry, type CountryDemand, type CountryRequest, type CountryRequestRow, toCountryRequest } from './country-requests.ts';
import type { LedgerEngine } from './engine.ts';
import {
  type ApprovedRemovals,
  approvedOf,
  type NewRemovalRequest,
  newRemovalRow,
  type RemovalRequest,
  type RemovalRow,
  type RemovalStatus,
  toRemoval,
} from './removals.ts';
import { isReportToken, type NewReportOrder, newOrderRow, type OrderRow, readOrder, type ReportOrder, toOrder } from './reports.ts';
import { type UsageDay, usageDays } from './usage.ts';
import type { WorkspaceSummary } from './ledger.ts';

export interface PgLedgerOptions {
  now?: Clock;
  /** Connections of this replica's pool. Default 10. */
  poolSize?: number;
  /** How long a verified key is trusted before it is read again (ms). Default 2,000. */
  keyCacheTtlMs?: number;
  /** How long to wait for a connection before answering unavailable (ms). Default 5,000. */
  connectTimeoutMs?: number;
  /**
   * How long a statement waits for a row another transaction holds (ms) before the page is
   * answered unavailable, rather than waiting on a replica that stalled. Default 5,000.
   */
  lockTimeoutMs?: number;
}

/** int8 as a JavaScript number: every int8 of the ledger is a count or ms since the epoch, far below 2^53. */
const typesOf = (types: typeof pg.types): { getTypeParser: typeof pg.types.getTypeParser } => ({
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === types.builtins.INT8 ? (v: string) => Number(v) : types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
});

/**
 * SQLSTATEs that mean "not now" rather than a bug: connection (08), resources (53), shutdown or
 * a statement cancelled by its timeout (57), system (58), a lock not had in time (55P03).
 */
const UNAVAILABLE_STATES = /^(08|53|57|58|55P03)/;
/** Deadlock or serialisation failure: the transaction is tried again. */
const RETRY_STATES = new Set(['40P01', '40001']);
const RETRIES = 5;

function asPgUnavailable(err: unknown): LedgerUnavailableError | null {
  if (err instanceof LedgerUnavailableError) return err;
  const code = (err as { code?: unknown } | null)?.code;
  if (
    typeof code === 'string' &&
    (UNAVAILABLE_STATES.test(code) || /^E(CONNREFUSED|CONNRESET|PIPE|TIMEDOUT|HOSTUNREACH|NOTFOUND)$/.test(code))
  ) {
    return new LedgerUnavailableError(`Ledger unavailable (${code}).`, 1, { cause: err });
  }
  const message = err instanceof Error ? err.message : '';
  if (
    /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Cannot use a pool after calling end/i.test(
      message,
    )
  ) {
    return new LedgerUnavailableError(`Ledger unavailable (${message}).`, 1, { cause: err });
  }
  return null;
}

interface WorkspaceRow {
  id: string;
  name: string;
  plan: string | null;
  created_at: number;
  suspended_at: number | null;
  suspended_reason: string | null;
}
const toWorkspace = (r: WorkspaceRow): Workspace => ({
  id: r.id,
  name: r.name,
  plan: checkPlan(r.plan),
  createdAt: r.created_at,
  suspendedAt: r.suspended_at,
  suspendedReason: r.suspended_reason,
});
interface MemberRow {
  id: string;
  workspace_id: string;
  email: string;
  joined_at: number;
  left_at: number | null;
}
const toMember = (r: MemberRow): Member => ({
  id: r.id,
  workspaceId: r.workspace_id,
  email: r.email,
  joinedAt: r.joined_at,
  leftAt: r.left_at,
});

function checkPage(page: ChargePage): string[] {
  if (typeof page.route !== 'string' || page.route.length === 0 || page.route.length > 200)
    throw new TypeError('route is a string of 1 to 200 characters.');
  if (!Array.isArray(page.buildingIds)) throw new TypeError('buildingIds must be an array of building ids.');
  for (const id of page.buildingIds) {
    if (typeof id !== 'string' || id.length === 0 || id.length > 128)
      throw new TypeError(`A building id is a string of 1 to 128 characters, got ${JSON.stringify(id)}.`);
  }
  // Sorted: every transaction claims opening rows in one order, so two never wait on each other in a cycle.
  return [...new Set(page.buildingIds)].sort();
}

type Query = Pick<pg.PoolClient, 'query'>;

export class PgLedger implements LedgerEngine {
  readonly kind = 'postgres' as const;
  private readonly pool: pg.Pool;
  private readonly now: Clock;
  private readonly keyCache = new LRUCache<string, KeyRecord & { checkedAt: number }>({ max: 10_000 });
  private readonly keyCacheTtlMs: number;

  private constructor(pool: pg.Pool, options: PgLedgerOptions) {
    this.pool = pool;
    this.now = options.now ?? Date.now;
    this.keyCacheTtlMs = options.keyCacheTtlMs ?? 2_000;
  }

  /** Connects to `url` (postgres://…) and brings its schema up to date. */
  static async open(url: string, options: PgLedgerOptions = {}): Promise<PgLedger> {
    // Loaded here, not with the module: a server on SQLite, and each of its threads, never needs it.
    const { default: client } = await import('pg');
    const pool = new client.Pool({
      connectionString: url,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 5_000,
      idleTimeoutMillis: 30_000,
      types: typesOf(client.types),
      application_name: 'edifice',
      lock_timeout: options.lockTimeoutMs ?? 5_000,
      statement_timeout: 30_000,
      // A replica stalled inside a transaction (stopped, cut off) gives its row locks back.
      idle_in_transaction_session_timeout: 10_000,
    });
    // An idle connection that breaks (the server restarting) must not end the process.
    pool.on('error', () => undefined);
    const ledger = new PgLedger(pool, options);
    try {
      await ledger.guard(() => migratePg(pool));
    } catch (err) {
      await pool.end().catch(() => undefined);
      throw err;
    }
    return ledger;
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  /** Readiness: one round trip. */
  async ping(): Promise<void> {
    await this.guard(() => this.pool.query('SELECT 1'));
  }

  // ---- requests -------------------------------------------------------------------------

  async authenticate(rawKey: string | undefined): Promise<AuthResult> {
    const keyId = keyIdOf(rawKey);
    if (typeof keyId !== 'string') return keyId;
    const now = this.now();
    const presented = hashKey(rawKey!);
    let key = this.keyCache.get(keyId);
    if (key && (now - key.checkedAt >= this.keyCacheTtlMs || now < key.checkedAt)) key = undefined;
    if (!key) {
      const { rows } = await this.guard(() =>
        this.pool.query<{
          id: string;
          workspace_id: string;
          secret_sha256: Buffer;
          expires_at: number | null;
          revoked_at: number | null;
          left_at: number | null;
          suspended_at: number | null;
        }>(
          `SELECT k.id, k.workspace_id, k.secret_sha256, k.expires_at, k.revoked_at, m.left_at, w.suspended_at
           FROM api_keys k JOIN members m ON m.id = k.member_id JOIN workspaces w ON w.id = k.workspace_id WHERE k.id = $1`,
          [keyId],
        ),
      );
      const r = rows[0];
      if (!r || !timingSafeEqual(r.secret_sha256, presented)) return unauthorized('Unknown API key.');
      key = {
        keyId: r.id,
        workspaceId: r.workspace_id,
        secretSha256: r.secret_sha256,
        expiresAt: r.expires_at,
        revokedAt: r.revoked_at,
        memberLeftAt: r.left_at,
        workspaceSuspendedAt: r.suspended_at,
        checkedAt: now,
      };
      this.keyCache.set(keyId, key);
    }
    return keyVerdict(key, presented, now);
  }

  /** Credits usable now (creates this month's plan grant on first need). */
  async balance(workspaceId: string): Promise<number> {
    const now = this.now();
    return this.guard(async () => {
      await this.ensurePlanGrant(this.pool, workspaceId, now);
      return this.balanceIn(this.pool, workspaceId, now);
    });
  }

  /** Charges one page (see the module's comment). */
  async charge(workspaceId: string, keyId: string | null, buildingIds: readonly string[], route: string): Promise<ChargeResult> {
    return (await this.chargePages([{ workspaceId, keyId, buildingIds, route }]))[0].result;
  }

  /**
   * Charges pages, each in its own transaction (all at once, on the pool's connections): each is
   * all or nothing; a failure of one fails the call once every page has settled.
   */
  async chargePages(pages: readonly ChargePage[]): Promise<ChargeOutcome[]> {
    const checked = pages.map((p) => ({ page: p, distinct: checkPage(p) }));
    const settled = await Promise.allSettled(checked.map(({ page, distinct }) => this.chargeOne(page, distinct)));
    const failed = settled.find((s) => s.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
    return settled.map((s) => (s as PromiseFulfilledResult<ChargeOutcome>).value);
  }

  private async chargeOne(page: ChargePage, distinct: string[]): Promise<ChargeOutcome> {
    const { workspaceId, keyId, route } = page;
    const now = this.now();
    const since = now - FREE_REOPEN_MS;
    return this.guard(async () => {
      // A page of buildings all opened costs nothing and needs no transaction: openings only grow newer.
      const opened = await this.openedAt(this.pool, workspaceId, distinct);
      if (distinct.every((id) => (opened.get(id) ?? 0) > since)) {
        await this.ensurePlanGrant(this.pool, workspaceId, now);
        const remaining = await this.balanceIn(this.pool, workspaceId, now);
        return { result: { ok: true, charged: 0, remaining, chargeId: null }, openedAt: page.buildingIds.map((id) => opened.get(id)!) };
      }
      return this.transaction<ChargeOutcome>(async (c) => {
        await this.ensurePlanGrant(c, workspaceId, now);
        const {
          rows: [{ id: chargeId }],
        } = await c.query<{ id: number }>("SELECT nextval('charges_id_seq') AS id");
        // Claims the rows of buildings never opened, or opened 365 days ago or more; a row another
        // transaction is claiming waits for its end, then is judged on what it committed.
        const claimed = await c.query<{ building_id: string }>(
          `INSERT INTO openings (workspace_id, building_id, opened_at, charge_id)
             SELECT $1, b, $2, $3 FROM unnest($4::text[]) WITH ORDINALITY AS u(b, n) ORDER BY n
           ON CONFLICT (workspace_id, building_id) DO UPDATE SET opened_at = excluded.opened_at, charge_id = excluded.charge_id
             WHERE openings.opened_at <= $5
           RETURNING building_id`,
          [workspaceId, now, chargeId, distinct, since],
        );
        const fresh = claimed.rows.map((r) => r.building_id);
        const needed = fresh.length;
        const grants = await c.query<{ id: number; remaining: number }>(
          `SELECT id, remaining FROM grants WHERE workspace_id = $1 AND remaining > 0 AND (expires_at IS NULL OR expires_at > $2)
            ORDER BY expires_at ASC NULLS LAST, id FOR UPDATE`,
          [workspaceId, now],
        );
        let available = 0;
        for (const g of grants.rows) available += g.remaining;
        const openedNow = needed === distinct.length ? new Map<string, number>() : await this.openedAt(c, workspaceId, distinct);
        for (const id of fresh) openedNow.set(id, now);
        const openedAt = page.buildingIds.map((id) => openedNow.get(id) ?? 0);
        if (needed === 0)
          return { rollback: true, value: { result: { ok: true, charged: 0, remaining: available, chargeId: null }, openedAt } };
        const refused = chargeRefusal(needed, available, page.maxCredits);
        if (refused !== null) {
          const openedBefore = page.buildingIds.map((id) => ((opened.get(id) ?? 0) > since ? opened.get(id)! : 0));
          return { rollback: true, value: { openedAt: openedBefore, result: refused } };
        }
        await c.query(
          `INSERT INTO charges (id, workspace_id, key_id, route, at, day, buildings, credits) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
          [chargeId, workspaceId, keyId, route, now, utcDay(now), distinct.length, needed],
        );
        await c.query('INSERT INTO charged_buildings (charge_id, building_id) SELECT $1, unnest($2::text[])', [chargeId, fresh]);
        let left = needed;
        for (const g of grants.rows) {
          const take = Math.min(g.remaining, left);
          await c.query('UPDATE grants SET remaining = remaining - $1 WHERE id = $2', [take, g.id]);
          await c.query('INSERT INTO charge_entries (charge_id, grant_id, credits) VALUES ($1, $2, $3)', [chargeId, g.id, take]);
          left -= take;
          if (left === 0) break;
        }
        return { rollback: false, value: { result: { ok: true, charged: needed, remaining: available - needed, chargeId }, openedAt } };
      });
    });
  }

  // ---- administration -------------------------------------------------------------------

  /** A new workspace with its first member and its welcome grant (5 credits, 30 days). */
  async createWorkspace(
    name: string,
    options: { plan?: string | null; createdBy: string },
  ): Promise<{ workspaceId: string; memberId: string }> {
    const n = checkName(name);
    const plan = checkPlan(options.plan ?? null);
    const email = normaliseEmail(options.createdBy);
    const workspaceId = newId('ws');
    const memberId = newId('mem');
    const now = this.now();
    await this.write(async (c) => {
      await c.query('INSERT INTO workspaces (id, name, plan, created_at) VALUES ($1, $2, $3, $4)', [workspaceId, n, plan, now]);
      await c.query('INSERT INTO members (id, workspace_id, email, joined_at) VALUES ($1, $2, $3, $4)', [
        memberId,
        workspaceId,
        email,
        now,
      ]);
      await c.query(
        `INSERT INTO grants (workspace_id, kind, amount, remaining, granted_at, expires_at) VALUES ($1, 'welcome', $2, $2, $3, $4)`,
        [workspaceId, WELCOME_CREDITS, now, now + WELCOME_VALID_MS],
      );
    });
    return { workspaceId, memberId };
  }

  async workspace(workspaceId: string): Promise<WorkspaceSummary> {
    const w = await this.getWorkspace(this.pool, workspaceId);
    const [balance, members, grants] = await Promise.all([
      this.balance(workspaceId),
      this.guard(() => this.pool.query<MemberRow>('SELECT * FROM members WHERE workspace_id = $1 ORDER BY joined_at, id', [workspaceId])),
      this.grants(workspaceId),
    ]);
    return { ...w, balance, members: members.rows.map(toMember), grants };
  }

  async listWorkspaces(): Promise<Workspace[]> {
    const { rows } = await this.guard(() => this.pool.query<WorkspaceRow>('SELECT * FROM workspaces ORDER BY created_at, id'));
    return rows.map(toWorkspace);
  }

  async grants(workspaceId: string): Promise<Grant[]> {
    const { rows } = await this.guard(() =>
      this.pool.query<GrantRow>('SELECT * FROM grants WHERE workspace_id = $1 ORDER BY id', [workspaceId]),
    );
    return rows.map(toGrant);
  }

  async addMember(workspaceId: string, email: string): Promise<Member> {
    const e = normaliseEmail(email);
    return this.write(async (c) => {
      await this.getWorkspace(c, workspaceId);
      const { rows } = await c.query<MemberRow>(
        `INSERT INTO members (id, workspace_id, email, joined_at) VALUES ($1, $2, $3, $4) ON CONFLICT (workspace_id, email) WHERE left_at IS NULL DO NOTHING RETURNING *`,
        [newId('mem'), workspaceId, e, this.now()],
      );
      if (rows.length === 0) throw new LedgerError('conflict', `${e} is already a member of workspace ${workspaceId}.`);
      return toMember(rows[0]);
    });
  }

  async removeMember(workspaceId: string, member: string): Promise<Member> {
    const m = await this.write(async (c) => {
      const found = await this.member(c, workspaceId, member);
      if (found.leftAt !== null) throw new LedgerError('conflict', `Member ${found.id} already left workspace ${workspaceId}.`);
      const { rows } = await c.query<MemberRow>('UPDATE members SET left_at = $1 WHERE id = $2 RETURNING *', [this.now(), found.id]);
      return toMember(rows[0]);
    });
    this.keyCache.clear();
    return m;
  }

  /** A new key for a current member (id or email). The plaintext `key` is shown once: here. */
  async createKey(
    workspaceId: string,
    member: string,
    options: { expiresAt?: number | null; name?: string | null } = {},
  ): Promise<{ key: string; keyId: string; prefix: string }> {
    return this.write(async (c) => {
      await this.getWorkspace(c, workspaceId);
      const m = await this.member(c, workspaceId, member);
      const now = this.now();
      const made = newKey(m, options, now);
      await c.query(
        `INSERT INTO api_keys (id, workspace_id, member_id, name, secret_sha256, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [made.keyId, workspaceId, m.id, made.name, hashKey(made.key), now, made.expiresAt],
      );
      return { key: made.key, keyId: made.keyId, prefix: keyPrefix(made.keyId) };
    });
  }

  async listKeys(workspaceId: string): Promise<KeyInfo[]> {
    await this.getWorkspace(this.pool, workspaceId);
    const { rows } = await this.guard(() =>
      this.pool.query<KeyInfoRow>(
        `SELECT k.id, k.name, k.workspace_id, k.member_id, m.email, k.created_at, k.expires_at, k.revoked_at, m.left_at
         FROM api_keys k JOIN members m ON m.id = k.member_id WHERE k.workspace_id = $1 ORDER BY k.created_at, k.id`,
        [workspaceId],
      ),
    );
    const now = this.now();
    return rows.map((r) => toKeyInfo(r, now));
  }

  /** Revokes the key (a second revoke changes nothing) and returns it as it now is. */
  async revokeKey(keyId: string): Promise<KeyInfo> {
    const { rows } = await this.guard(() =>
      this.pool.query<{ workspace_id: string }>(
        'UPDATE api_keys SET revoked_at = coalesce(revoked_at, $1) WHERE id = $2 RETURNING workspace_id',
        [this.now(), keyId],
      ),
    );
    if (rows.length === 0) throw new LedgerError('not_found', `No API key ${keyId}.`);
    this.keyCache.delete(keyId);
    return (await this.listKeys(rows[0].workspace_id)).find((k) => k.keyId === keyId)!;
  }

  async grantCredits(
    workspaceId: string,
    amount: number,
    options: { kind: 'bought' | 'manual'; expiresAt?: number | null; note?: string | null },
  ): Promise<Grant> {
    if (!Number.isSafeInteger(amount) || amount < 1 || amount > MAX_GRANT) {
      throw new RangeError(`A grant is a whole number of credits from 1 to ${MAX_GRANT}, got ${amount}.`);
    }
    if (options.kind !== 'bought' && options.kind !== 'manual')
      throw new RangeError(`A grant's kind is bought or manual, got "${String(options.kind)}".`);
    const now = this.now();
    const expiresAt = options.expiresAt ?? null;
    if (expiresAt !== null && (!Number.isSafeInteger(expiresAt) || expiresAt <= now)) {
      throw new RangeError(`expiresAt must be a time in the future (ms since epoch), got ${String(expiresAt)}.`);
    }
    return this.write(async (c) => {
      await this.getWorkspace(c, workspaceId);
      const { rows } = await c.query<GrantRow>(
        `INSERT INTO grants (workspace_id, kind, amount, remaining, granted_at, expires_at, note)
        VALUES ($1, $2, $3, $3, $4, $5, $6) RETURNING *`,
        [workspaceId, options.kind, amount, now, expiresAt, options.note ?? null],
      );
      return toGrant(rows[0]);
    });
  }

  async setPlan(workspaceId: string, plan: string | null): Promise<void> {
    const p = checkPlan(plan);
    await this.updateWorkspace(workspaceId, 'UPDATE workspaces SET plan = $2 WHERE id = $1', [p]);
  }

  async suspendWorkspace(workspaceId: string, reason: string | null = null): Promise<void> {
    await this.updateWorkspace(
      workspaceId,
      'UPDATE workspaces SET suspended_at = coalesce(suspended_at, $2), suspended_reason = $3 WHERE id = $1',
      [this.now(), reason],
    );
    this.keyCache.clear();
  }

  async unsuspendWorkspace(workspaceId: string): Promise<void> {
    await this.updateWorkspace(workspaceId, 'UPDATE workspaces SET suspended_at = NULL, suspended_reason = NULL WHERE id = $1', []);
    this.keyCache.clear();
  }

  // ---- usage and requests from the public ----------------------------------------------

  /** Requests and credits per UTC day (see Ledger.usage). */
  async usage(workspaceId: string, fromDay?: string, toDay?: string): Promise<UsageDay[]> {
    const { from, to, byDay } = usageDays(this.now(), fromDay, toDay);
    await this.getWorkspace(this.pool, workspaceId);
    const [requests, credits] = await this.guard(() =>
      Promise.all([
        this.pool.query<{ day: string; requests: number }>(
          'SELECT day, requests FROM daily_requests WHERE workspace_id = $1 AND day >= $2 AND day <= $3',
          [workspaceId, from, to],
        ),
        this.pool.query<{ day: string; credits: number; charges: number; buildings: number }>(
          `SELECT day, sum(credits)::bigint AS credits, count(*) AS charges, sum(buildings)::bigint AS buildings FROM charges
          WHERE workspace_id = $1 AND day >= $2 AND day <= $3 GROUP BY day`,
          [workspaceId, from, to],
        ),
      ]),
    );
    for (const r of requests.rows) byDay.get(r.day)!.requests = r.requests;
    for (const c of credits.rows) Object.assign(byDay.get(c.day)!, c);
    return [...byDay.values()];
  }

  /**
   * Writes request counts of the daily quota (counted elsewhere: in shared memory or Redis); a
   * count lower than the one stored is ignored, so a repeated or late write is harmless.
   */
  async persistRequests(counts: readonly { workspaceId: string; day: string; requests: number }[]): Promise<void> {
    if (counts.length === 0) return;
    await this.guard(() =>
      this.pool.query(
        `INSERT INTO daily_requests (workspace_id, day, requests)
         SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[])
       ON CONFLICT (workspace_id, day) DO UPDATE SET requests = greatest(daily_requests.requests, excluded.requests)`,
        [counts.map((c) => c.workspaceId), counts.map((c) => c.day), counts.map((c) => c.requests)],
      ),
    );
  }

  async addCountryRequest(request: {
    country: string;
    email: string | null;
    comment: string | null;
    client: string;
  }): Promise<CountryRequest> {
    checkCountry(request.country);
    const { rows } = await this.guard(() =>
      this.pool.query<CountryRequestRow>(
        'INSERT INTO country_requests (country, email, comment, client, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING *',
        [request.country, request.email, request.comment, request.client, this.now()],
      ),
    );
    return toCountryRequest(rows[0]);
  }

  /** The latest country requests, newest first. */
  async countryRequests(limit = 1000): Promise<CountryRequest[]> {
    const { rows } = await this.guard(() =>
      this.pool.query<CountryRequestRow>('SELECT * FROM country_requests ORDER BY created_at DESC, id DESC LIMIT $1', [limit]),
    );
    return rows.map(toCountryRequest);
  }

  /** Requests per country, most asked first. */
  async countryDemand(): Promise<CountryDemand[]> {
    const { rows } = await this.guard(() =>
      this.pool.query<{ country: string; requests: number; latest_at: number }>(
        'SELECT country, count(*) AS requests, max(created_at) AS latest_at FROM country_requests GROUP BY country ORDER BY requests DESC, country',
      ),
    );
    return rows.map((r) => ({ country: r.country, requests: r.requests, latestAt: r.latest_at }));
  }

  async addRemovalRequest(request: NewRemovalRequest): Promise<RemovalRequest> {
    const r = newRemovalRow(request, this.now());
    const { rows } = await this.guard(() =>
      this.pool.query<RemovalRow>(
        `INSERT INTO removal_requests (id, business_id, registration_number, building_id, country, business_name, reason, contact, client, status, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'pending', $10) RETURNING *`,
        [
          r.id,
          r.business_id,
          r.registration_number,
          r.building_id,
          r.country,
          r.business_name,
          r.reason,
          r.contact,
          r.client,
          r.created_at,
        ],
      ),
    );
    return toRemoval(rows[0]);
  }

  async removalRequests(status?: RemovalStatus): Promise<RemovalRequest[]> {
    const { rows } = await this.guard(() =>
      status === undefined
        ? this.pool.query<RemovalRow>('SELECT * FROM removal_requests ORDER BY created_at, seq')
        : this.pool.query<RemovalRow>('SELECT * FROM removal_requests WHERE status = $1 ORDER BY created_at, seq', [status]),
    );
    return rows.map(toRemoval);
  }

  /** Approves or rejects a pending removal request (LedgerError invalid_state once decided). */
  async decideRemoval(id: string, decision: 'approved' | 'rejected', note: string | null = null): Promise<RemovalRequest> {
    const { rows } = await this.guard(() =>
      this.pool.query<RemovalRow>(
        "UPDATE removal_requests SET status = $1, decided_at = $2, decision_note = $3 WHERE id = $4 AND status = 'pending' RETURNING *",
        [decision, this.now(), note, id],
      ),
    );
    if (rows.length > 0) return toRemoval(rows[0]);
    const existing = await this.guard(() => this.pool.query<RemovalRow>('SELECT * FROM removal_requests WHERE id = $1', [id]));
    if (existing.rows.length === 0) throw new LedgerError('not_found', `No removal request ${id}.`);
    throw new LedgerError('invalid_state', `Removal request ${id} was already ${existing.rows[0].status}.`);
  }

  /** The businesses approved removals hide. */
  async approvedRemovals(): Promise<ApprovedRemovals> {
    const { rows } = await this.guard(() =>
      this.pool.query<{ business_id: string | null; registration_number: string | null }>(
        "SELECT business_id, registration_number FROM removal_requests WHERE status = 'approved'",
      ),
    );
    return approvedOf(rows);
  }

  /** Approved removals so far; a server polls it to apply new approvals at once. */
  async approvedRemovalCount(): Promise<number> {
    const { rows } = await this.guard(() =>
      this.pool.query<{ n: number }>("SELECT count(*) AS n FROM removal_requests WHERE status = 'approved'"),
    );
    return rows[0].n;
  }

  /** Stores a report order and its frozen report; returns the read token, shown once. */
  async createReportOrder(order: NewReportOrder): Promise<{ order: ReportOrder; token: string }> {
    const { row: r, token } = newOrderRow(order, this.now());
    const { rows } = await this.guard(() =>
      this.pool.query<OrderRow>(
        `INSERT INTO report_orders (id, building_id, country, snapshot_date, email, token_sha256, status, price_minor, price_currency, provider,
         provider_reference, report, client, created_at, paid_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) RETURNING *`,
        [
          r.id,
          r.building_id,
          r.country,
          r.snapshot_date,
          r.email,
          r.token_sha256,
          r.status,
          r.price_minor,
          r.price_currency,
          r.provider,
          r.provider_reference,
          r.report,
          r.client,
          r.created_at,
          r.paid_at,
        ],
      ),
    );
    return { order: toOrder(rows[0]), token };
  }

  /** The order and its report once paid, or null for an unknown order or a wrong token alike. */
  async readReport(orderId: string, token: string): Promise<{ order: ReportOrder; report: string | null } | null> {
    if (!isReportToken(token)) return null;
    const { rows } = await this.guard(() => this.pool.query<OrderRow>('SELECT * FROM report_orders WHERE id = $1', [orderId]));
    return readOrder(rows[0], token);
  }

  /** Marks a report order paid (idempotent); LedgerError not_found for an unknown order. */
  async markReportPaid(orderId: string, providerReference: string | null): Promise<{ order: ReportOrder; changed: boolean }> {
    const { rows } = await this.guard(() =>
      this.pool.query<OrderRow>(
        "UPDATE report_orders SET status = 'paid', paid_at = $1, provider_reference = coalesce($2, provider_reference) WHERE id = $3 AND status = 'pending' RETURNING *",
        [this.now(), providerReference, orderId],
      ),
    );
    if (rows.length > 0) return { order: toOrder(rows[0]), changed: true };
    const order = await this.reportOrder(orderId);
    if (order === null) throw new LedgerError('not_found', `No report order ${orderId}.`);
    return { order, changed: false };
  }

  /** The order (never its token), or null. */
  async reportOrder(orderId: string): Promise<ReportOrder | null> {
    const { rows } = await this.guard(() => this.pool.query<OrderRow>('SELECT * FROM report_orders WHERE id = $1', [orderId]));
    return rows.length === 0 ? null : toOrder(rows[0]);
  }

  /** The latest orders, newest first (never their tokens). */
  async reportOrders(limit = 1000): Promise<ReportOrder[]> {
    const { rows } = await this.guard(() =>
      this.pool.query<OrderRow>('SELECT * FROM report_orders ORDER BY created_at DESC, seq DESC LIMIT $1', [limit]),
    );
    return rows.map(toOrder);
  }

  /** Every breach of the ledger's invariants, as Credits.audit checks them; empty when sound. */
  async audit(): Promise<string[]> {
    const problems: string[] = [];
    const all = async <T extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<T[]> =>
      (await this.guard(() => this.pool.query<T>(sql, params))).rows;
    for (const g of await all<{ id: number; amount: number; remaining: number; spent: number }>(`
        SELECT g.id, g.amount, g.remaining, coalesce(sum(e.credits), 0)::bigint AS spent
          FROM grants g LEFT JOIN charge_entries e ON e.grant_id = g.id
         GROUP BY g.id HAVING g.amount - coalesce(sum(e.credits), 0) != g.remaining`)) {
      problems.push(`grant ${g.id}: amount ${g.amount} − spent ${g.spent} ≠ remaining ${g.remaining}`);
    }
    for (const c of await all<{ id: number; credits: number; entries: number; opened: number }>(`
        SELECT c.id, c.credits,
               (SELECT coalesce(sum(credits), 0)::bigint FROM charge_entries WHERE charge_id = c.id) AS entries,
               (SELECT count(*) FROM charged_buildings WHERE charge_id = c.id) AS opened
          FROM charges c`)) {
      if (c.credits !== c.entries || c.credits !== c.opened)
        problems.push(`charge ${c.id}: credits ${c.credits}, entries ${c.entries}, openings ${c.opened}`);
    }
    for (const e of await all<{ charge_id: number; grant_id: number }>(`
        SELECT e.charge_id, e.grant_id FROM charge_entries e
          JOIN charges c ON c.id = e.charge_id JOIN grants g ON g.id = e.grant_id
         WHERE g.workspace_id != c.workspace_id OR g.granted_at > c.at OR (g.expires_at IS NOT NULL AND g.expires_at <= c.at)`)) {
      problems.push(`charge ${e.charge_id} drew on grant ${e.grant_id}, which it could not use`);
    }
    for (const d of await all<{ workspace_id: string; building_id: string; a: number; b: number }>(
      `
        SELECT workspace_id, building_id, a, b FROM (
          SELECT c.workspace_id, cb.building_id, c.at AS b,
                 lag(c.at) OVER (PARTITION BY c.workspace_id, cb.building_id ORDER BY c.at, c.id) AS a
            FROM charged_buildings cb JOIN charges c ON c.id = cb.charge_id) t
         WHERE a IS NOT NULL AND b < a + $1`,
      [FREE_REOPEN_MS],
    )) {
      problems.push(`building ${d.building_id} charged twice to ${d.workspace_id} within 365 days (${d.a}, ${d.b})`);
    }
    return problems;
  }

  // ---- internals ------------------------------------------------------------------------

  private async guard<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw asPgUnavailable(err) ?? err;
    }
  }

  /** Runs `fn` in a transaction, committed, on one connection; deadlocks are tried again. */
  private async write<T>(fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    return this.transaction(async (c) => ({ rollback: false, value: await fn(c) }));
  }

  /** Runs `fn` in a transaction that it commits or rolls back; a deadlock or serialisation failure runs it again. */
  private async transaction<T>(fn: (c: pg.PoolClient) => Promise<{ rollback: boolean; value: T }>): Promise<T> {
    return this.guard(async () => {
      for (let attempt = 1; ; attempt++) {
        const c = await this.pool.connect();
        let broken: unknown = undefined;
        try {
          await c.query('BEGIN');
          const { rollback, value } = await fn(c);
          await c.query(rollback ? 'ROLLBACK' : 'COMMIT');
          return value;
        } catch (err) {
          await c.query('ROLLBACK').catch((e: unknown) => {
            broken = e;
          });
          const code = (err as { code?: string }).code;
          if (code !== undefined && RETRY_STATES.has(code) && attempt < RETRIES) continue;
          throw err;
        } finally {
          // A connection that failed mid-transaction is not given back to the pool.
          c.release(broken instanceof Error ? broken : undefined);
        }
      }
    });
  }

  private async getWorkspace(q: Query, workspaceId: string): Promise<Workspace> {
    const { rows } = await this.guard(() => q.query<WorkspaceRow>('SELECT * FROM workspaces WHERE id = $1', [workspaceId]));
    if (rows.length === 0) throw new LedgerError('not_found', `No workspace ${workspaceId}.`);
    return toWorkspace(rows[0]);
  }

  private async updateWorkspace(workspaceId: string, sql: string, params: unknown[]): Promise<void> {
    const { rowCount } = await this.guard(() => this.pool.query(sql, [workspaceId, ...params]));
    if (rowCount === 0) throw new LedgerError('not_found', `No workspace ${workspaceId}.`);
  }

  private async member(q: Query, workspaceId: string, idOrEmail: string): Promise<Member> {
    const { rows } = idOrEmail.startsWith('mem_')
      ? await q.query<MemberRow>('SELECT * FROM members WHERE workspace_id = $1 AND id = $2', [workspaceId, idOrEmail])
      : await q.query<MemberRow>('SELECT * FROM members WHERE workspace_id = $1 AND email = $2 AND left_at IS NULL', [
          workspaceId,
          normaliseEmail(idOrEmail),
        ]);
    if (rows.length === 0) throw new LedgerError('not_found', `No member ${idOrEmail} in workspace ${workspaceId}.`);
    return toMember(rows[0]);
  }

  private async openedAt(q: Query, workspaceId: string, ids: readonly string[]): Promise<Map<string, number>> {
    const { rows } = await q.query<{ building_id: string; opened_at: number }>(
      'SELECT building_id, opened_at FROM openings WHERE workspace_id = $1 AND building_id = ANY($2::text[])',
      [workspaceId, ids],
    );
    return new Map(rows.map((r) => [r.building_id, r.opened_at]));
  }

  private async balanceIn(q: Query, workspaceId: string, now: number): Promise<number> {
    const { rows } = await q.query<{ n: number }>(
      'SELECT coalesce(sum(remaining), 0)::bigint AS n FROM grants WHERE workspace_id = $1 AND remaining > 0 AND (expires_at IS NULL OR expires_at > $2)',
      [workspaceId, now],
    );
    return rows[0].n;
  }

  /** This month's plan grant, once: two replicas creating it together meet on its unique index. */
  private async ensurePlanGrant(q: Query, workspaceId: string, now: number): Promise<void> {
    const { rows } = await q.query<{ plan: string | null }>('SELECT plan FROM workspaces WHERE id = $1', [workspaceId]);
    if (rows.length === 0) throw new LedgerError('not_found', `No workspace ${workspaceId}.`);
    const allowance = planAllowance(rows[0].plan);
    if (allowance <= 0) return;
    await q.query(
      `INSERT INTO grants (workspace_id, kind, amount, remaining, granted_at, expires_at, period, plan)
      VALUES ($1, 'plan', $2, $2, $3, $4, $5, $6) ON CONFLICT (workspace_id, period) WHERE kind = 'plan' DO NOTHING`,
      [workspaceId, allowance, now, startOfNextUtcMonth(now), utcMonth(now), rows[0].plan],
    );
  }
}
