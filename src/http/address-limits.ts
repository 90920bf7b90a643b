/**
 * The per-client-address limits (spec 8 and the choices documented in the OpenAPI descriptions):
 * 120 requests a minute across /public, 20 country requests an hour (spec 8), and for the
 * operations the spec leaves open: 10 removal requests and 10 report orders an hour, 60 report
 * reads a minute. One sliding-window limiter each; their tables can be shared by the worker threads of a
 * server so that an address gets its allowance once, not once per thread. A replica of a fleet
 * with Redis counts them in Redis instead (`redisAddressLimits`), so an address gets its
 * allowance once from the whole fleet.
 */
import { WindowLimiter, type LimitDecision, type RedisLimits } from '../ledger/index.ts';

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;

export const ADDRESS_LIMITS = {
  public: { limit: 120, periodMs: MINUTE_MS },
  countryRequests: { limit: 20, periodMs: HOUR_MS },
  removalRequests: { limit: 10, periodMs: HOUR_MS },
  reportOrders: { limit: 10, periodMs: HOUR_MS },
  reportReads: { limit: 60, periodMs: MINUTE_MS },
} as const;

export type AddressLimit = keyof typeof ADDRESS_LIMITS;
export type AddressLimiters = Record<AddressLimit, WindowLimiter>;
export type AddressLimiterTables = Record<AddressLimit, SharedArrayBuffer>;

/** A per-address limit as the routes use it: decided at once in memory, awaited in Redis. */
export interface AddressLimiter {
  readonly limit: number;
  readonly periodMs: number;
  take(client: string, now: number): LimitDecision | Promise<LimitDecision>;
}
export type AddressLimits = Record<AddressLimit, AddressLimiter>;

/** The limits of a fleet's replica, in Redis (each decision one Lua script; Redis away, 1/N here). */
export function redisAddressLimits(redis: RedisLimits): AddressLimits {
  const out = {} as AddressLimits;
  for (const name of Object.keys(ADDRESS_LIMITS) as AddressLimit[]) {
    const { limit, periodMs } = ADDRESS_LIMITS[name];
    const shared = redis.window(`address:${name}`, limit, periodMs);
    out[name] = { limit, periodMs, take: (client) => shared.take(client) };
  }
  return out;
}

/**
 * Counts `client` against each limit in order, stopping at the first that refuses (the later ones
 * count nothing then): that limit and its decision, or null when all allow. At once when every
 * limit decides at once.
 */
export function takeAll(
  limits: readonly AddressLimiter[],
  client: string,
  now: number,
): { limit: AddressLimiter; decision: LimitDecision } | null | Promise<{ limit: AddressLimiter; decision: LimitDecision } | null> {
  for (let i = 0; i < limits.length; i++) {
    const decision = limits[i].take(client, now);
    if (decision instanceof Promise) {
      return decision.then((d) => (d.ok ? takeAll(limits.slice(i + 1), client, now) : { limit: limits[i], decision: d }));
    }
    if (!decision.ok) return { limit: limits[i], decision };
  }
  return null;
}

/** The limiters, on the given shared tables (another thread's), or on new ones. */
export function addressLimiters(tables?: AddressLimiterTables): AddressLimiters {
  const out = {} as AddressLimiters;
  for (const name of Object.keys(ADDRESS_LIMITS) as AddressLimit[]) {
    out[name] = new WindowLimiter({ ...ADDRESS_LIMITS[name], table: tables?.[name] });
  }
  return out;
}

export function addressLimiterTables(limiters: AddressLimiters): AddressLimiterTables {
  const out = {} as AddressLimiterTables;
  for (const name of Object.keys(limiters) as AddressLimit[]) out[name] = limiters[name].table;
  return out;
}
