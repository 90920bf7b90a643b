/**
 * Credits: grants, charges and opened buildings (spec 3 and 8, DESIGN "Ledger").
 *
 * - Every distinct building a page returns costs 1 credit, unless this workspace had a charged
 *   opening of it less than 365 days ago (free while `now - opened_at < 365 × 24 h`). Only
 *   charged openings are recorded, so a free return does not extend the 365 days.
 * - A page is charged all or nothing, in one BEGIN IMMEDIATE transaction; with too few usable
 *   credits nothing is written and the answer is 402 insufficient_credits.
 * - Credits come in grants, usable while `expires_at` is NULL or later than now, and spent
 *   earliest expiry first (never-expiring last, then oldest first):
 *     welcome  5 credits once per new workspace, usable for 30 × 24 h from its creation;
 *     plan     the plan's monthly allowance for the current UTC month, created on first need,
 *              expiring at 00:00 UTC on the 1st of the next month;
 *     bought, manual  from the admin CLI (or billing), with an optional expiry.
 * - Each charge records one entry per grant it drew on, so for every grant
 *   `amount − Σ entries = remaining ≥ 0`, and the balance is Σ remaining over usable grants.
 */
import { DAY_MS, type Clock, startOfNextUtcMonth, utcDay, utcMonth } from './clock.ts';
import type { Db } from './db.ts';
import { LedgerError } from './errors.ts';
import { OpenedIndex } from './opened-index.ts';
import { SharedOpenings } from './shared-openings.ts';
import { planAllowance } from './workspaces.ts';

export const WELCOME_CREDITS = 5;
export const WELCOME_VALID_MS = 30 * DAY_MS;
/** Workspaces whose plan is remembered (planKnown); past this, the memory starts again. */
const PLAN_KNOWN_MAX = 100_000;
/**
 * How long a workspace read without a plan allowance is taken to stay so: a plan given to it by
 * another process (the admin CLI) applies within this; one given through this Ledger, at once.
 */
export const PLAN_RECHECK_MS = 1_000;

/** A building charged at t is free again until t + 365 days (exclusive). */
export const FREE_REOPEN_MS = 365 * DAY_MS;
/**
 * How long the in-memory openings keep one: a day past its 365, so that a clock stepped back
 * (NTP, a VM resumed) still finds an opening that had just expired and does not charge it again.
 */
const KEEP_OPENING_MS = FREE_REOPEN_MS + DAY_MS;
/** The largest single grant, so that sums stay exact integers. */
export const MAX_GRANT = 1_000_000_000;
/** The latest openings of the file the charging connection puts in the shared table as it starts (`loadOpenings`). */
export const SHARE_LATEST_MAX = 200_000;

export type GrantKind = 'welcome' | 'plan' | 'bought' | 'manual';

export interface Grant {
  id: number;
  workspaceId: string;
  kind: GrantKind;
  amount: number;
  remaining: number;
  grantedAt: number;
  expiresAt: number | null;
  /** Plan grants: the month (YYYY-MM) they belong to. */
  period: string | null;
  plan: string | null;
  note: string | null;
}

export type ChargeResult =
  | { ok: true; charged: number; remaining: number; /** null when nothing was charged (no row is written) */ chargeId: number | null }
  | { ok: false; status: 402; code: 'insufficient_credits'; message: string; needed: number; remaining: number };

/**
 * The refusal of a page whose `needed` new buildings exceed the request's max_credits or the
 * `available` credits (both ledgers write it); null when the page may be charged.
 */
export function chargeRefusal(needed: number, available: number, maxCredits: number | undefined): ChargeResult | null {
  const holds = `This answer holds ${needed} building${needed === 1 ? '' : 's'} not opened in the last 365 days, `;
  let why: string;
  if (maxCredits !== undefined && needed > maxCredits) why = `more than max_credits (${maxCredits})`;
  else if (available < needed) why = `and the workspace has ${available} credit${available === 1 ? '' : 's'} left`;
  else return null;
  return {
    ok: false,
    status: 402,
    code: 'insufficient_credits',
    needed,
    remaining: available,
    message: `${holds}${why}. Nothing was charged.`,
  };
}

export interface CreditUsage {
  day: string;
  credits: number;
  charges: number;
  buildings: number;
}

/** One page to charge: the buildings an answer returns. */
export interface ChargePage {
  workspaceId: string;
  keyId: string | null;
  buildingIds: readonly string[];
  route: string;
  /** The most the page may cost (a bulk export's max_credits): above it, nothing is charged (402). */
  maxCredits?: number;
}

/** A page charged, and what the ledger knows of its buildings once that is committed. */
export interface ChargeOutcome {
  result: ChargeResult;
  /**
   * For each of the page's buildingIds, in order: when this workspace last had it charged (this
   * page's charge included) if that was in the last 365 days, else 0. The shared openings get
   * them too, so that every worker answers the next page of these buildings itself.
   */
  openedAt: number[];
}

/** A row of `grants`, as either engine returns it. */
export interface GrantRow {
  id: number;
  workspace_id: string;
  kind: GrantKind;
  amount: number;
  remaining: number;
  granted_at: number;
  expires_at: number | null;
  period: string | null;
  plan: string | null;
  note: string | null;
}
export const toGrant = (r: GrantRow): Grant => ({
  id: r.id,
  workspaceId: r.workspace_id,
  kind: r.kind,
  amount: r.amount,
  remaining: r.remaining,
  grantedAt: r.granted_at,
  expiresAt: r.expires_at,
  period: r.period,
  plan: r.plan,
  note: r.note,
});

/** `byDistinct` (in the order of `distinct`, the distinct ids of `ids`) in the order of `ids`, duplicates repeated. */
function inPageOrder(ids: readonly string[], distinct: Set<string>, byDistinct: number[]): number[] {
  if (ids.length === distinct.size) return byDistinct; // no duplicate: the same order
  const at = new Map<string, number>();
  let j = 0;
  for (const id of distinct) at.set(id, byDistinct[j++]);
  return ids.map((id) => at.get(id)!);
}

function checkBuildingIdList(buildingIds: readonly string[]): void {
  if (!Array.isArray(buildingIds)) throw new TypeError('buildingIds must be an array of building ids.');
  for (const id of buildingIds) {
    if (typeof id !== 'string' || id.length === 0 || id.length > 128) {
      throw new TypeError(`A building id is a string of 1 to 128 characters, got ${JSON.stringify(id)}.`);
    }
  }
}

function checkBuildingIds(buildingIds: readonly string[]): Set<string> {
  checkBuildingIdList(buildingIds);
  return new Set(buildingIds);
}

export class Credits {
  private readonly selectPlan;
  private readonly selectPlanGrant;
  private readonly insertGrant;
  private readonly insertPlanGrant;
  private readonly selectBalance;
  private readonly selectSpendable;
  private readonly selectGrants;
  private readonly selectGrant;
  private readonly selectOpeningsAfter;
  private readonly selectOpeningsCount;
  private readonly insertCharge;
  private readonly debitGrant;
  private readonly insertEntry;
  private readonly insertOpenings;
  private readonly selectUsage;
  private readonly chargeTx;
  /**
   * The openings shared by the threads of a server (shared-openings.ts): the connection that
   * charges writes each commit's into it, the others answer free pages from it. Null in a
   * process of one thread, which charges itself and reads its own `index`.
   */
  private readonly shared: SharedOpenings | null;
  /**
   * Every opening in the file, read on the first charge and kept in step under the write lock
   * (see `catchUp`); a transaction that fails undoes its openings here too. Null until the
   * first charge, and again after a failed one whose changes could not be undone.
   */
  private index: OpenedIndex | null = null;
  /**
   * What is known of a workspace's plan: its grant of the month `granted` is in the file, or (null)
   * it had no allowance when read at `at`. A page answered free reads the balance; kept here, the
   * plan and its grant are not one or two more statements on each.
   */
  private readonly planKnown = new Map<string, { granted: string | null; at: number }>();

  /** `exclusive` runs a write holding the server's write lock (write-lock.ts). */
  constructor(
    private readonly db: Db,
    private readonly now: Clock,
    private readonly exclusive: <T>(fn: () => T) => T = (fn) => fn(),
    shared: SharedOpenings | null = null,
  ) {
    this.shared = shared;
    this.selectPlan = db.prepare<[string], { plan: string | null }>('SELECT plan FROM workspaces WHERE id = ?');
    this.selectPlanGrant = db.prepare<[string, string], { id: number }>(
      "SELECT id FROM grants WHERE workspace_id = ? AND kind = 'plan' AND period = ?",
    );
    this.insertGrant = db.prepare(`INSERT INTO grants (workspace_id, kind, amount, remaining, granted_at, expires_at, note)
      VALUES (?, ?, ?, ?, ?, ?, ?)`);
    this.insertPlanGrant =
      db.prepare(`INSERT OR IGNORE INTO grants (workspace_id, kind, amount, remaining, granted_at, expires_at, period, plan)
      VALUES (?, 'plan', ?, ?, ?, ?, ?, ?)`);
    this.selectBalance = db.prepare<[string, number], { n: number }>(`SELECT COALESCE(SUM(remaining), 0) AS n FROM grants
      WHERE workspace_id = ? AND remaining > 0 AND (expires_at IS NULL OR expires_at > ?)`);
    this.selectSpendable = db.prepare<[string, number], { id: number; remaining: number }>(`SELECT id, remaining FROM grants
      WHERE workspace_id = ? AND remaining > 0 AND (expires_at IS NULL OR expires_at > ?)
      ORDER BY expires_at IS NULL, expires_at, id`);
    this.selectGrants = db.prepare<[string], GrantRow>('SELECT * FROM grants WHERE workspace_id = ? ORDER BY id');
    this.selectGrant = db.prepare<[number], GrantRow>('SELECT * FROM grants WHERE id = ?');
    this.selectOpeningsAfter = db
      .prepare<[number], [number, string, string, number]>(
        'SELECT id, workspace_id, building_id, opened_at FROM openings WHERE id > ? ORDER BY id',
      )
      .raw();
    // Rows are never deleted, so the last id counts them (an upper bound of what is still needed).
    this.selectOpeningsCount = db.prepare<[], { n: number }>('SELECT coalesce(max(id), 0) AS n FROM openings');
    this.insertCharge = db.prepare(`INSERT INTO charges (workspace_id, key_id, route, at, day, buildings, credits)
      VALUES (?, ?, ?, ?, ?, ?, ?)`);
    this.debitGrant = db.prepare('UPDATE grants SET remaining = remaining - ? WHERE id = ? AND remaining >= ?');
    this.insertEntry = db.prepare('INSERT INTO charge_entries (charge_id, grant_id, credits) VALUES (?, ?, ?)');
    // A page's openings in one statement: the ids travel as a JSON array.
    this.insertOpenings = db.prepare<[{ workspaceId: string; ids: string; now: number; chargeId: number }]>(`INSERT INTO openings
      (workspace_id, building_id, opened_at, charge_id) SELECT @workspaceId, j.value, @now, @chargeId FROM json_each(@ids) AS j`);
    this.selectUsage = db.prepare<[string, string, string], CreditUsage>(`SELECT day, SUM(credits) AS credits, COUNT(*) AS charges,
      SUM(buildings) AS buildings FROM charges WHERE workspace_id = ? AND day >= ? AND day <= ? GROUP BY day ORDER BY day`);
    this.chargeTx = db.transaction(
      (
        pages: readonly { workspaceId: string; keyId: string | null; distinct: Set<string>; route: string; maxCredits?: number }[],
        now: number,
      ) => {
        const index = this.catchUp(now);
        index.begin(); // what follows is this transaction's, undone if it fails
        return pages.map((p) => this.chargeInTransaction(index, p.workspaceId, p.keyId, p.distinct, p.route, now, p.maxCredits));
      },
    );
  }

  /** The welcome grant of a new workspace (at most one per workspace: a unique index says so). */
  grantWelcome(workspaceId: string, at: number): void {
    this.insertGrant.run(workspaceId, 'welcome', WELCOME_CREDITS, WELCOME_CREDITS, at, at + WELCOME_VALID_MS, null);
  }

  grant(
    workspaceId: string,
    amount: number,
    options: { kind: 'bought' | 'manual'; expiresAt?: number | null; note?: string | null },
  ): Grant {
    if (!Number.isSafeInteger(amount) || amount < 1 || amount > MAX_GRANT) {
      throw new RangeError(`A grant is a whole number of credits from 1 to ${MAX_GRANT}, got ${amount}.`);
    }
    if (options.kind !== 'bought' && options.kind !== 'manual') {
      throw new RangeError(`A grant's kind is bought or manual, got "${String(options.kind)}".`);
    }
    const now = this.now();
    const expiresAt = options.expiresAt ?? null;
    if (expiresAt !== null && (!Number.isSafeInteger(expiresAt) || expiresAt <= now)) {
      throw new RangeError(`expiresAt must be a time in the future (ms since epoch), got ${String(expiresAt)}.`);
    }
    if (!this.selectPlan.get(workspaceId)) throw new LedgerError('not_found', `No workspace ${workspaceId}.`);
    const { lastInsertRowid } = this.insertGrant.run(workspaceId, options.kind, amount, amount, now, expiresAt, options.note ?? null);
    return toGrant(this.selectGrant.get(Number(lastInsertRowid))!);
  }

  /**
   * Creates this month's plan grant if the workspace's plan has an allowance and none exists
   * yet for this month. Whatever plan is in force at that moment sets the month's allowance; a
   * plan changed later in the month takes effect on the 1st of the next month.
   */
  ensurePlanGrant(workspaceId: string, now: number): void {
    const period = utcMonth(now);
    const known = this.planKnown.get(workspaceId);
    if (
      known !== undefined &&
      (known.granted === period || (known.granted === null && now >= known.at && now - known.at < PLAN_RECHECK_MS))
    )
      return;
    const row = this.selectPlan.get(workspaceId);
    if (!row) throw new LedgerError('not_found', `No workspace ${workspaceId}.`);
    const allowance = planAllowance(row.plan);
    if (allowance <= 0) return this.rememberPlan(workspaceId, null, now);
    if (this.selectPlanGrant.get(workspaceId, period)) return this.rememberPlan(workspaceId, period, now);
    this.insertPlanGrant.run(workspaceId, allowance, allowance, now, startOfNextUtcMonth(now), period, row.plan);
  }

  /** A plan given through this Ledger applies at once. */
  forgetPlan(workspaceId: string): void {
    this.planKnown.delete(workspaceId);
  }

  /**
   * Only what was read outside a transaction: committed, so a grant stays (grants are never
   * deleted). One read inside could be this transaction's own insert, which may roll back.
   */
  private rememberPlan(workspaceId: string, granted: string | null, now: number): void {
    if (this.db.inTransaction) return;
    if (this.planKnown.size >= PLAN_KNOWN_MAX) this.planKnown.clear();
    this.planKnown.set(workspaceId, { granted, at: now });
  }

  /** Credits usable now: Σ remaining over grants with no expiry or expiring after now. */
  balance(workspaceId: string): number {
    const now = this.now();
    this.ensurePlanGrant(workspaceId, now);
    return this.selectBalance.get(workspaceId, now)!.n;
  }

  grants(workspaceId: string): Grant[] {
    return this.selectGrants.all(workspaceId).map(toGrant);
  }

  /**
   * Charges one page: 1 credit per distinct building not opened (charged) by this workspace in
   * the last 365 days. A page that costs nothing takes no write lock and writes nothing.
   */
  charge(workspaceId: string, keyId: string | null, buildingIds: readonly string[], route: string): ChargeResult {
    const free = this.free(workspaceId, buildingIds, route);
    return free ?? this.chargeAll([{ workspaceId, keyId, buildingIds, route }])[0].result;
  }

  /**
   * The answer to a charge that costs nothing, when this process already knows every building of
   * the page to be opened (openings are never deleted, so that stays true whatever other
   * connections do): no transaction, no SQL but the balance. Null otherwise: the page goes to
   * `chargeAll`, which looks in the file under the write lock, once.
   */
  free(workspaceId: string, buildingIds: readonly string[], route: string): ChargeResult | null {
    // No Set of the distinct ids, as a charge makes: a repeated id is only looked up twice, and
    // every page a worker answers is spared the Set's time and garbage.
    checkBuildingIdList(buildingIds);
    if (typeof route !== 'string' || route.length === 0 || route.length > 200) {
      throw new TypeError('route is a string of 1 to 200 characters.');
    }
    const since = this.now() - FREE_REOPEN_MS;
    const shared = this.shared;
    const index = this.index;
    for (const id of buildingIds) {
      if (shared !== null && shared.openedAt(workspaceId, id) > since) continue;
      if (index !== null && index.openedAt(workspaceId, id) > since) continue;
      return null;
    }
    return { ok: true, charged: 0, remaining: this.balance(workspaceId), chargeId: null };
  }

  /**
   * For the connection that charges: the outcome of a page every building of which it knows to be
   * opened in the 365 days (its index holds only what was committed), with no transaction, and
   * their openings shared again (a worker asked because its table had forgotten them). Null
   * otherwise, and before the first charge has read the file: the page goes to `chargeAll`.
   */
  knownFree(page: ChargePage): ChargeOutcome | null {
    const index = this.index;
    if (index === null) return null;
    const { workspaceId, buildingIds } = page;
    checkBuildingIdList(buildingIds);
    const since = this.now() - FREE_REOPEN_MS;
    const openedAt = new Array<number>(buildingIds.length);
    for (let i = 0; i < buildingIds.length; i++) {
      openedAt[i] = index.openedAt(workspaceId, buildingIds[i]);
      if (!(openedAt[i] > since)) return null;
    }
    const shared = this.shared;
    // Under the lock: one writer of the table, and the month's plan grant, which balance may
    // create, queues with the other writers of this server rather than in SQLite's busy handler.
    return this.exclusive(() => {
      if (shared !== null) for (let i = 0; i < buildingIds.length; i++) shared.add(workspaceId, buildingIds[i], openedAt[i]);
      return { result: { ok: true, charged: 0, remaining: this.balance(workspaceId), chargeId: null }, openedAt };
    });
  }

  /**
   * Charges several pages in one transaction, in order: each is all or nothing on its own (a page
   * the credits left cannot cover writes nothing and gets 402), and one commit (one fsync) makes
   * them all durable together. A failure rolls every one of them back.
   */
  chargeAll(pages: readonly ChargePage[]): ChargeOutcome[] {
    const now = this.now();
    const checked = pages.map((p) => {
      if (typeof p.route !== 'string' || p.route.length === 0 || p.route.length > 200)
        throw new TypeError('route is a string of 1 to 200 characters.');
      return { ...p, distinct: checkBuildingIds(p.buildingIds) };
    });
    let done;
    try {
      done = this.exclusive(() => {
        const outcomes = this.chargeTx.immediate(checked, now);
        // Committed (unless called inside an outer transaction, where immediate is a savepoint):
        // the other threads may answer from these now. Under the lock: one writer. Not sharing
        // only sends pages to this thread; a failure here must not report committed charges as failed.
        if (this.shared !== null && !this.db.inTransaction) {
          try {
            this.share(checked, outcomes, now);
          } catch {
            // nothing to undo: what was written is committed
          }
        }
        return outcomes;
      });
    } catch (err) {
      // Rolled back: so are its openings in memory, or, if the table grew meanwhile, all of it.
      if (this.index !== null && !this.index.rollback()) this.index = null;
      throw err;
    }
    this.index?.commit();
    return done.map((d, i) => ({ result: d.result, openedAt: inPageOrder(checked[i].buildingIds, checked[i].distinct, d.openedAt) }));
  }

  /**
   * Reads the file's openings into memory now rather than at the first charge, which would
   * otherwise wait for them (seconds for millions). Says how many are held and
   * how long reading them took, for the start-up log.
   */
  loadOpenings(shareMax = SHARE_LATEST_MAX): { openings: number; shared: number; loadMs: number } {
    const started = performance.now();
    const openings = this.catchUp(this.now()).size;
    const shared = this.shareLatestOpenings(shareMax);
    return { openings, shared, loadMs: Math.round(performance.now() - started) };
  }

  /**
   * Puts the file's latest `max` openings of the last 365 days in the shared table, for the
   * connection that charges, before the workers' first page: without them, a restarted server
   * would send every page to the ledger thread until its answers filled the table.
   */
  shareLatestOpenings(max = SHARE_LATEST_MAX): number {
    const shared = this.shared;
    if (shared === null) return 0;
    const now = this.now();
    return this.exclusive(() => {
      const last = this.selectOpeningsCount.get()!.n;
      let n = 0;
      // Rows are never deleted and ids are given in commit order: the latest max rows are the ids past last - max.
      for (const [, workspaceId, buildingId, at] of this.selectOpeningsAfter.iterate(Math.max(0, last - max))) {
        if (at > now - FREE_REOPEN_MS) {
          shared.add(workspaceId, buildingId, at);
          n++;
        }
      }
      return n;
    });
  }

  /**
   * Into the shared table: the openings this commit made, and every opening of a page that cost
   * nothing (a worker sent it for want of one of them). The earlier openings of a page that was
   * charged are in the table already unless it forgot them, and adding them all again costs a
   * share of a core under load; one forgotten comes back through `knownFree`.
   */
  private share(
    pages: readonly { workspaceId: string; distinct: Set<string> }[],
    outcomes: readonly { result: ChargeResult; openedAt: number[] }[],
    now: number,
  ): void {
    const shared = this.shared!;
    const since = now - FREE_REOPEN_MS;
    for (let i = 0; i < pages.length; i++) {
      const { result, openedAt } = outcomes[i];
      if (!result.ok) continue;
      const all = result.charged === 0;
      let j = 0;
      for (const id of pages[i].distinct) {
        const at = openedAt[j++];
        if (at > since && (all || at === now)) shared.add(pages[i].workspaceId, id, at);
      }
    }
  }

  /**
   * The index with every opening committed so far, inside a write transaction: the rows other
   * connections appended since this one last looked are read (openings are only ever appended,
   * and the write lock is held, so none can be added meanwhile); on the first call, all of them.
   */
  private catchUp(now: number): OpenedIndex {
    let index = this.index;
    if (index === null) {
      index = new OpenedIndex();
      index.reserve(this.selectOpeningsCount.get()!.n);
    }
    const keepSince = now - KEEP_OPENING_MS;
    for (const [id, workspaceId, buildingId, at] of this.selectOpeningsAfter.iterate(index.lastRowId)) {
      if (at > keepSince) index.add(workspaceId, buildingId, at, keepSince);
      index.lastRowId = id;
    }
    this.index = index;
    return index;
  }

  /**
   * The ids of `distinct` this workspace has no charged opening of in the 365 days before `now`;
   * `openedAt` gets, in the order of `distinct`, the time of each one's opening in those days (0: none).
   */
  private fresh(index: OpenedIndex, workspaceId: string, distinct: Set<string>, now: number, openedAt: number[]): string[] {
    const since = now - FREE_REOPEN_MS;
    const fresh: string[] = [];
    let j = 0;
    for (const id of distinct) {
      const at = index.openedAt(workspaceId, id);
      if (at > since) openedAt[j++] = at;
      else {
        openedAt[j++] = 0;
        fresh.push(id);
      }
    }
    return fresh;
  }

  /** Charges one page inside chargeTx; openedAt in the order of `distinct` (ChargeOutcome). */
  private chargeInTransaction(
    index: OpenedIndex,
    workspaceId: string,
    keyId: string | null,
    distinct: Set<string>,
    route: string,
    now: number,
    maxCredits?: number,
  ): { result: ChargeResult; openedAt: number[] } {
    this.ensurePlanGrant(workspaceId, now);
    const openedAt = new Array<number>(distinct.size);
    const fresh = this.fresh(index, workspaceId, distinct, now, openedAt);
    const needed = fresh.length;
    const spendable = this.selectSpendable.all(workspaceId, now);
    let available = 0;
    for (const g of spendable) available += g.remaining;
    if (needed === 0) return { result: { ok: true, charged: 0, remaining: available, chargeId: null }, openedAt };
    const refused = chargeRefusal(needed, available, maxCredits);
    if (refused !== null) return { openedAt, result: refused };
    const chargeId = Number(this.insertCharge.run(workspaceId, keyId, route, now, utcDay(now), distinct.size, needed).lastInsertRowid);
    let left = needed;
    for (const g of spendable) {
      const take = Math.min(g.remaining, left);
      if (this.debitGrant.run(take, g.id, take).changes !== 1) throw new Error(`Grant ${g.id} changed under a write lock.`);
      this.insertEntry.run(chargeId, g.id, take);
      left -= take;
      if (left === 0) break;
    }
    const { lastInsertRowid } = this.insertOpenings.run({ workspaceId, ids: JSON.stringify(fresh), now, chargeId });
    // Ours are the file's last rows (the write lock is held); a rollback undoes them here too.
    for (const id of fresh) index.add(workspaceId, id, now, now - KEEP_OPENING_MS);
    index.lastRowId = Number(lastInsertRowid);
    for (let j = 0; j < openedAt.length; j++) if (openedAt[j] === 0) openedAt[j] = now;
    return { result: { ok: true, charged: needed, remaining: available - needed, chargeId }, openedAt };
  }

  usage(workspaceId: string, fromDay: string, toDay: string): CreditUsage[] {
    return this.selectUsage.all(workspaceId, fromDay, toDay);
  }

  /**
   * Checks the invariants over the whole ledger and lists every breach (empty when sound):
   * no grant below zero or above its amount; for every grant amount − Σ entries = remaining;
   * for every charge credits = Σ entries = openings recorded; entries only draw on grants of the
   * charge's workspace that were usable at the charge's time; no building charged twice by one
   * workspace within 365 days.
   */
  audit(): string[] {
    const problems: string[] = [];
    const all = <T>(sql: string, ...params: unknown[]): T[] => this.db.prepare(sql).all(...params) as T[];
    for (const g of all<GrantRow>('SELECT * FROM grants WHERE remaining < 0 OR remaining > amount')) {
      problems.push(`grant ${g.id}: remaining ${g.remaining} outside 0..${g.amount}`);
    }
    for (const g of all<{ id: number; amount: number; remaining: number; spent: number }>(`
        SELECT g.id, g.amount, g.remaining, COALESCE(SUM(e.credits), 0) AS spent
          FROM grants g LEFT JOIN charge_entries e ON e.grant_id = g.id
         GROUP BY g.id HAVING g.amount - spent != g.remaining`)) {
      problems.push(`grant ${g.id}: amount ${g.amount} − spent ${g.spent} ≠ remaining ${g.remaining}`);
    }
    for (const c of all<{ id: number; credits: number; entries: number; opened: number }>(`
        SELECT c.id, c.credits,
               (SELECT COALESCE(SUM(credits), 0) FROM charge_entries WHERE charge_id = c.id) AS entries,
               (SELECT COUNT(*) FROM openings WHERE charge_id = c.id) AS opened
          FROM charges c WHERE c.credits != entries OR c.credits != opened`)) {
      problems.push(`charge ${c.id}: credits ${c.credits}, entries ${c.entries}, openings ${c.opened}`);
    }
    for (const e of all<{ charge_id: number; grant_id: number }>(`
        SELECT e.charge_id, e.grant_id FROM charge_entries e
          JOIN charges c ON c.id = e.charge_id JOIN grants g ON g.id = e.grant_id
         WHERE g.workspace_id != c.workspace_id OR g.granted_at > c.at OR (g.expires_at IS NOT NULL AND g.expires_at <= c.at)`)) {
      problems.push(`charge ${e.charge_id} drew on grant ${e.grant_id}, which it could not use`);
    }
    for (const o of all<{ charge_id: number; building_id: string }>(`
        SELECT o.charge_id, o.building_id FROM openings o JOIN charges c ON c.id = o.charge_id
         WHERE o.workspace_id != c.workspace_id OR o.opened_at != c.at`)) {
      problems.push(`opening of ${o.building_id} disagrees with charge ${o.charge_id}`);
    }
    // Each opening against the one before it of the same building: a sort, as no index holds
    // (workspace, building) any more. Two openings at the same instant are a breach too.
    for (const d of all<{ workspace_id: string; building_id: string; a: number; b: number }>(
      `
        SELECT workspace_id, building_id, a, b FROM (
          SELECT workspace_id, building_id, opened_at AS b,
                 LAG(opened_at) OVER (PARTITION BY workspace_id, building_id ORDER BY opened_at) AS a FROM openings)
         WHERE a IS NOT NULL AND b < a + ?`,
      FREE_REOPEN_MS,
    )) {
      problems.push(`building ${d.building_id} charged twice to ${d.workspace_id} within 365 days (${d.a}, ${d.b})`);
    }
    return problems;
  }
}
