/**
 * Request-rate limits and the daily quota shared by the replicas of a fleet, in Redis
 * (EDIFICE_REDIS=redis://…), through ioredis. The same rules as the in-memory limiter
 * (limits.ts): at most N requests in ANY window, each key's recent requests kept as runs (the
 * start of a grain, its requests: one millisecond per grain up to RING_MAX, else 1/RING_MAX of
 * the period), in one hash per key. Each decision is one Lua script, atomic in Redis, on Redis's
 * clock (TIME), so replicas whose clocks differ still count one window.
 *
 * Redis unreachable (down, restarting, slower than `commandTimeoutMs`): each replica decides
 * alone, on its own in-memory limiter at 1/N of each limit (N = the replicas of the fleet), so
 * the fleet together never lets a key exceed its limit; the quota likewise, per replica, per UTC
 * day of its own clock. `onFallback` hears the first failure of each outage (to log it) and
 * `fallbacks` counts the decisions taken alone (for /metrics). Never an error to the caller.
 */
import type { Redis } from 'ioredis';
import { type Clock, startOfNextUtcDay, utcDay } from './clock.ts';
import { type LimitDecision, RING_MAX, WindowLimiter } from './limits.ts';

export interface RedisLimitsOptions {
  /** The replicas of the fleet: alone, each allows 1/replicas of every limit. */
  replicas: number;
  /** Prefix of every key written. Default `edifice:`. */
  prefix?: string;
  /** A Redis answer slower than this (ms) is taken as Redis away. Default 250. */
  commandTimeoutMs?: number;
  /** The clock of the decisions taken alone. Default Date.now. */
  now?: Clock;
  /** The first failure of each outage, and the return (null). */
  onFallback?: (err: Error | null) => void;
}

export interface AsyncLimiter {
  readonly limit: number;
  readonly periodMs: number;
  take(key: string): Promise<LimitDecision>;
}

export interface QuotaDecision {
  ok: boolean;
  limit: number;
  used: number;
  /** Seconds to 00:00 UTC. */
  resetS: number;
}

/**
 * KEYS[1]: the key's hash of runs. ARGV: limit, period (ms), grain (ms). Returns
 * {allowed, remaining, ms until the window empties, ms until the oldest run leaves (refused)}.
 */
const WINDOW_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local limit, period, grain = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local span = period + grain - 1
local runs = redis.call('HGETALL', KEYS[1])
local total, oldest, newest = 0, nil, nil
for i = 1, #runs, 2 do
  local start = tonumber(runs[i])
  if now - start >= span then
    redis.call('HDEL', KEYS[1], runs[i])
  else
    total = total + tonumber(runs[i + 1])
    if oldest == nil or start < oldest then oldest = start end
    if newest == nil or start > newest then newest = start end
  end
end
if total >= limit then
  return {0, 0, newest + span - now, oldest + span - now}
end
local start = now - (now % grain)
redis.call('HINCRBY', KEYS[1], tostring(start), 1)
redis.call('PEXPIRE', KEYS[1], span)
if newest == nil or start > newest then newest = start end
return {1, limit - total - 1, newest + span - now, 0}
`;

/** KEYS[1]: the workspace's counter prefix. ARGV: limit. Returns {allowed, used, s to 00:00 UTC}. */
const QUOTA_LUA = `
local t = redis.call('TIME')
local s = tonumber(t[1])
local day = math.floor(s / 86400)
local key = KEYS[1] .. ':' .. day
local limit = tonumber(ARGV[1])
local used = tonumber(redis.call('GET', key) or '0')
local reset = (day + 1) * 86400 - s
if used >= limit then return {0, used, reset} end
used = redis.call('INCR', key)
redis.call('EXPIRE', key, 172800)
return {1, used, reset}
`;

type Scripted = Redis & {
  edificeWindow(key: string, limit: number, periodMs: number, grainMs: number): Promise<[number, number, number, number]>;
  edificeQuota(key: string, limit: number): Promise<[number, number, number]>;
};

export class RedisLimits {
  /** Decisions taken alone, Redis being away. */
  fallbacks = 0;
  private readonly redis: Scripted;
  private readonly prefix: string;
  private readonly replicas: number;
  private readonly now: Clock;
  private readonly onFallback: (err: Error | null) => void;
  private away = false;

  private constructor(redis: Redis, options: RedisLimitsOptions) {
    this.redis = redis as Scripted;
    this.prefix = options.prefix ?? 'edifice:';
    this.replicas = options.replicas;
    this.now = options.now ?? Date.now;
    this.onFallback = options.onFallback ?? (() => undefined);
    this.redis.defineCommand('edificeWindow', { numberOfKeys: 1, lua: WINDOW_LUA });
    this.redis.defineCommand('edificeQuota', { numberOfKeys: 1, lua: QUOTA_LUA });
  }

  /**
   * Connects to `url` (redis://…), waiting up to the command timeout for a first answer; a
   * Redis that does not answer is reconnected to in the background, meanwhile each decision is
   * taken alone.
   */
  static async connect(url: string, options: RedisLimitsOptions): Promise<RedisLimits> {
    if (!Number.isSafeInteger(options.replicas) || options.replicas < 1)
      throw new RangeError(`replicas must be a whole number of at least 1, got ${options.replicas}.`);
    const timeout = options.commandTimeoutMs ?? 250;
    // Loaded here, not with the module: a server on SQLite, and each of its threads, never needs it.
    const { Redis } = await import('ioredis');
    const redis = new Redis(url, {
      // Never queue a decision behind a connection that is not there: answer alone at once.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: timeout,
      connectTimeout: 1_000,
      retryStrategy: (times) => Math.min(100 * times, 1_000),
      lazyConnect: true,
    });
    redis.on('error', () => undefined); // each failed command says so; reconnection goes on
    const limits = new RedisLimits(redis, options);
    await redis.connect().catch((err: Error) => limits.fellBack(err, false));
    return limits;
  }

  /** Whether the last decision was taken in Redis. */
  get shared(): boolean {
    return !this.away;
  }

  /** A limit of `limit` requests in any `periodMs`, under `name` (its keys' prefix). */
  window(name: string, limit: number, periodMs: number): AsyncLimiter {
    const local = new WindowLimiter({ limit: Math.max(1, Math.floor(limit / this.replicas)), periodMs });
    const grainMs = limit <= RING_MAX ? 1 : Math.ceil(periodMs / RING_MAX);
    const prefix = `${this.prefix}limit:${name}:`;
    return {
      limit,
      periodMs,
      take: async (key: string): Promise<LimitDecision> => {
        try {
          const [allowed, remaining, resetMs, retryMs] = await this.redis.edificeWindow(prefix + key, limit, periodMs, grainMs);
          this.back();
          return {
            ok: allowed === 1,
            limit,
            remaining,
            resetS: Math.max(0, Math.ceil(Math.min(periodMs, resetMs) / 1000)),
            retryAfterS: allowed === 1 ? 0 : Math.max(1, Math.ceil(retryMs / 1000)),
          };
        } catch (err) {
          this.fellBack(err as Error);
          // Its own headers: the limit this replica applies alone.
          return local.take(key, this.now());
        }
      },
    };
  }

  /** The daily quota of `limit` requests per workspace per UTC day (Redis's day). */
  dailyQuota(limit: number): { limit: number; take(workspaceId: string): Promise<QuotaDecision> } {
    const alone = Math.max(1, Math.floor(limit / this.replicas));
    let day = '';
    let counts = new Map<string, number>();
    return {
      limit,
      take: async (workspaceId: string): Promise<QuotaDecision> => {
        try {
          const [allowed, used, resetS] = await this.redis.edificeQuota(`${this.prefix}quota:${workspaceId}`, limit);
          this.back();
          return { ok: allowed === 1, limit, used, resetS };
        } catch (err) {
          this.fellBack(err as Error);
          const now = this.now();
          if (utcDay(now) !== day) {
            day = utcDay(now);
            counts = new Map();
          }
          const used = counts.get(workspaceId) ?? 0;
          const resetS = Math.ceil((startOfNextUtcDay(now) - now) / 1000);
          if (used >= alone) return { ok: false, limit: alone, used, resetS };
          counts.set(workspaceId, used + 1);
          return { ok: true, limit: alone, used: used + 1, resetS };
        }
      },
    };
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }

  private fellBack(err: Error, decided = true): void {
    if (decided) this.fallbacks++;
    if (!this.away) {
      this.away = true;
      this.onFallback(err);
    }
  }

  private back(): void {
    if (this.away) {
      this.away = false;
      this.onFallback(null);
    }
  }
}
