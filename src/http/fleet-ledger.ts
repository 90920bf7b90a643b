/**
 * A replica of a fleet: keys, credits and charges in PostgreSQL (PgLedger), the per-key and
 * per-address limits and the daily quota in Redis (RedisLimits; without EDIFICE_REDIS, in this process alone). The
 * server awaits `admit` before it computes a page, and a page that may cost credits is answered
 * once `chargePages` has committed its transaction.
 *
 * Keys: PgLedger keeps a key's row for a few seconds (keyCacheTtlMs), so PostgreSQL is asked
 * about a key at most once in that time per replica; a revoked key stops within it across the
 * fleet. While PostgreSQL cannot be reached, a key this replica authenticated in the last
 * `OUTAGE_KEY_MS` goes on being accepted: nothing can revoke it meanwhile, as revocations are
 * written to PostgreSQL.
 *
 * Openings: what this replica charged (and PostgreSQL answered) is kept in memory, by workspace,
 * with the last balance it read. While PostgreSQL cannot be reached, a page of buildings all
 * known opened here in the last 365 days is answered free with that balance; any other page is
 * 503 `unavailable`.
 */
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import {
  asUnavailable,
  WindowLimiter,
  type AuthResult,
  type ChargeOutcome,
  type ChargePage,
  type LimitDecision,
  type PgLedger,
  type QuotaDecision,
  type RedisLimits,
} from '../ledger/index.ts';
import { MINUTE_MS, startOfNextUtcDay, utcDay, type Clock } from '../ledger/clock.ts';
import { FREE_REOPEN_MS } from '../ledger/credits.ts';
import { hashKey } from '../ledger/keys.ts';
import { limitsResult, rateLimitPolicy } from '../ledger/limits-result.ts';
import { redisAddressLimits, type AddressLimits } from './address-limits.ts';
import { admitted, suspended, unauthenticated, type Admission } from './admission.ts';
import { PageCharges } from './page-charges.ts';

/** How long a key authenticated here stays accepted while PostgreSQL cannot be reached. */
export const OUTAGE_KEY_MS = 10 * MINUTE_MS;
/** How often the daily quota's counts are written to PostgreSQL for the usage report. */
const PERSIST_EVERY_MS = 1_000;

/** The limits of a fleet's replica: shared in Redis, or this process's alone. */
export interface FleetLimits {
  key(keyId: string): Promise<LimitDecision>;
  quota(workspaceId: string): Promise<QuotaDecision>;
  /** The per-address limits of the open routes when shared in Redis; else the server's own. */
  addresses?: AddressLimits;
  /** Decisions taken alone because Redis could not be reached (for /metrics). */
  fallbacks(): number;
}

export function redisFleetLimits(redis: RedisLimits, perKeyPerMinute: number, dailyQuota: number): FleetLimits {
  const key = redis.window('key', perKeyPerMinute, MINUTE_MS);
  const quota = redis.dailyQuota(dailyQuota);
  return {
    key: (id) => key.take(id),
    quota: (id) => quota.take(id),
    addresses: redisAddressLimits(redis),
    fallbacks: () => redis.fallbacks,
  };
}

/** One replica alone (no Redis): the limits of this process, as the SQLite server's. */
export function localFleetLimits(perKeyPerMinute: number, dailyQuota: number, now: Clock = Date.now): FleetLimits {
  const key = new WindowLimiter({ limit: perKeyPerMinute, periodMs: MINUTE_MS });
  let day = '';
  let counts = new Map<string, number>();
  return {
    key: async (id) => key.take(id, now()),
    quota: async (id) => {
      const t = now();
      if (utcDay(t) !== day) {
        day = utcDay(t);
        counts = new Map();
      }
      const used = counts.get(id) ?? 0;
      const resetS = Math.ceil((startOfNextUtcDay(t) - t) / 1000);
      if (used >= dailyQuota) return { ok: false, limit: dailyQuota, used, resetS };
      counts.set(id, used + 1);
      return { ok: true, limit: dailyQuota, used: used + 1, resetS };
    },
    fallbacks: () => 0,
  };
}

interface Known {
  /** Building id → when this workspace opened it, as PostgreSQL answered. */
  openings: Map<string, number>;
  balance: number;
}

export class FleetLedger {
  private readonly policy: string;
  /** Keys authenticated here, by the SHA-256 of the key (never the key itself). */
  private readonly keys = new LRUCache<string, { auth: AuthResult & { ok: true }; at: number }>({ max: 10_000 });
  private readonly known = new LRUCache<string, Known>({ max: 10_000 });
  /** Pages answered without PostgreSQL, for /metrics. */
  answeredAlone = 0;
  /** The day's request counts of the quota not yet written to PostgreSQL (for usage), by workspace and day. */
  private requests = new Map<string, { workspaceId: string; day: string; requests: number }>();
  private readonly persistTimer: NodeJS.Timeout;

  constructor(
    readonly engine: PgLedger,
    readonly limits: FleetLimits,
    private readonly options: { perKeyPerMinute: number; dailyQuota: number; log: Logger; now?: Clock; openingsPerWorkspace?: number },
  ) {
    this.policy = rateLimitPolicy(options.perKeyPerMinute, options.dailyQuota);
    this.persistTimer = setInterval(() => void this.persistRequests(), PERSIST_EVERY_MS);
    this.persistTimer.unref();
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  /** Key → limits → quota (a refused key counts nothing; a request over the key's limit is not counted in the quota). */
  async admit(token: string | undefined): Promise<Admission> {
    const auth = await this.authenticate(token);
    if (!auth.ok && auth.status === 401) return unauthenticated(auth, token);
    const key = await this.limits.key(auth.keyId);
    const quota = key.ok ? await this.limits.quota(auth.workspaceId) : null;
    const now = this.now();
    if (quota?.ok) this.counted(auth.workspaceId, utcDay(now), quota.used);
    const dayResetS = quota?.resetS ?? Math.ceil((startOfNextUtcDay(now) - now) / 1000);
    const result = limitsResult(key, quota ?? { ok: true, used: 0, limit: this.options.dailyQuota }, dayResetS, this.policy);
    if (!auth.ok) {
      // Suspended: refused, with the headers of the limits (its request counted in the key's minute, not in the quota).
      return suspended(auth, result.headers);
    }
    return admitted(auth, result);
  }

  private async authenticate(token: string | undefined): Promise<AuthResult> {
    try {
      const auth = await this.engine.authenticate(token);
      if (auth.ok && token !== undefined) this.keys.set(hashKey(token).toString('base64'), { auth, at: this.now() });
      return auth;
    } catch (err) {
      if (!asUnavailable(err) || token === undefined) throw err;
      const kept = this.keys.get(hashKey(token).toString('base64'));
      if (!kept || this.now() - kept.at > OUTAGE_KEY_MS) throw err;
      return kept.auth;
    }
  }

  /** The credits usable now; PostgreSQL away, the last balance this replica read, if any. */
  async balance(workspaceId: string): Promise<number | null> {
    try {
      const balance = await this.engine.balance(workspaceId);
      const known = this.known.get(workspaceId);
      if (known) known.balance = balance;
      return balance;
    } catch {
      return this.known.get(workspaceId)?.balance ?? null;
    }
  }

  /** How the server charges its pages: each page in its own transaction, answered once committed. */
  pageCharges(): PageCharges {
    return new PageCharges({ free: () => null, chargePages: () => [] }, { remote: (pages) => this.chargePages(pages) });
  }

  /** Each page's outcome, or the error that refused it (503 for PostgreSQL away, unless known free here). */
  async chargePages(pages: readonly ChargePage[]): Promise<(ChargeOutcome | Error)[]> {
    return Promise.all(
      pages.map(async (page) => {
        try {
          const [outcome] = await this.engine.chargePages([page]);
          this.remember(page, outcome);
          return outcome;
        } catch (err) {
          const alone = asUnavailable(err) ? this.knownFree(page) : null;
          if (alone) {
            this.answeredAlone++;
            return alone;
          }
          return err instanceof Error ? err : new Error(String(err));
        }
      }),
    );
  }

  private remember(page: ChargePage, outcome: ChargeOutcome): void {
    let known = this.known.get(page.workspaceId);
    if (!known) {
      known = { openings: new Map(), balance: outcome.result.remaining };
      this.known.set(page.workspaceId, known);
    }
    known.balance = outcome.result.remaining;
    const max = this.options.openingsPerWorkspace ?? 100_000;
    for (let i = 0; i < page.buildingIds.length; i++) {
      const at = outcome.openedAt[i];
      if (at <= 0) continue;
      const openings = known.openings;
      openings.delete(page.buildingIds[i]); // kept in order of use: the oldest go first
      openings.set(page.buildingIds[i], at);
      if (openings.size > max) openings.delete(openings.keys().next().value!);
    }
  }

  private knownFree(page: ChargePage): ChargeOutcome | null {
    const known = this.known.get(page.workspaceId);
    if (!known) return null;
    const since = this.now() - FREE_REOPEN_MS;
    const openedAt: number[] = [];
    for (const id of page.buildingIds) {
      const at = known.openings.get(id);
      if (at === undefined || at <= since) return null;
      openedAt.push(at);
    }
    return { result: { ok: true, charged: 0, remaining: known.balance, chargeId: null }, openedAt };
  }

  /** `used`: the quota's count of the day (the fleet's, from Redis): PostgreSQL keeps the highest it hears. */
  private counted(workspaceId: string, day: string, used: number): void {
    const id = `${workspaceId} ${day}`;
    const known = this.requests.get(id);
    if (known) known.requests = Math.max(known.requests, used);
    else this.requests.set(id, { workspaceId, day, requests: used });
  }

  /** Writes the counts of the quota for the usage report; those PostgreSQL could not take wait for the next time. */
  private async persistRequests(): Promise<void> {
    if (this.requests.size === 0) return;
    const counts = this.requests;
    this.requests = new Map();
    try {
      await this.engine.persistRequests([...counts.values()]);
    } catch (err) {
      for (const [id, c] of counts) if (!this.requests.has(id)) this.requests.set(id, c);
      if (!asUnavailable(err)) this.options.log.warn({ err }, 'cannot write the request counts of the daily quota; will retry');
    }
  }

  /** Whether PostgreSQL answers now (for /readyz). */
  async reachable(): Promise<boolean> {
    try {
      await this.engine.ping();
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    clearInterval(this.persistTimer);
    await this.persistRequests();
    await this.engine.close();
  }
}
