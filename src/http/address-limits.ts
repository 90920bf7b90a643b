/**
 * The per-client-address limits (spec 8 and the choices documented in the OpenAPI descriptions):
 * 120 requests a minute across /public, 20 country requests an hour (spec 8), and for the
 * operations the spec leaves open: 10 removal requests and 10 report orders an hour, 60 report
 * reads a minute. One sliding-window limiter each; their tables can be shared by the worker threads of a
 * server so that an address gets its allowance once, not once per thread.
 */
import { WindowLimiter } from '../ledger/index.ts';

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
