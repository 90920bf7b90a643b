/**
 * The verdict of spec section 8's limits and the headers every authenticated response carries,
 * from a decision of the per-key window and one of the workspace's daily quota: one wording for
 * the SQLite ledger's limits (in this process) and the fleet's (in Redis).
 */
import type { LimitDecision } from './limits.ts';

export type LimitsResult =
  | { ok: true; headers: Record<string, string> }
  | {
      ok: false;
      status: 429;
      code: 'rate_limited' | 'quota_exceeded';
      message: string;
      retryAfterS: number;
      headers: Record<string, string>;
    };

/** The RateLimit-Policy header of the limits. */
export function rateLimitPolicy(perKeyPerMinute: number, dailyQuota: number): string {
  return `"key";q=${perKeyPerMinute};w=60, "workspace";q=${dailyQuota};w=86400`;
}

/**
 * `key`: the per-key decision; `quota`: the workspace's day (`ok` false: this request is refused
 * by it); `dayResetS`: seconds to 00:00 UTC.
 */
export function limitsResult(
  key: LimitDecision,
  quota: { ok: boolean; used: number; limit: number },
  dayResetS: number,
  policy: string,
): LimitsResult {
  const quotaRemaining = Math.max(0, quota.limit - quota.used);
  const headers: Record<string, string> = {
    'RateLimit-Limit': String(key.limit),
    'RateLimit-Remaining': String(key.remaining),
    'RateLimit-Reset': String(key.resetS),
    'X-Daily-Quota-Limit': String(quota.limit),
    'X-Daily-Quota-Remaining': String(quotaRemaining),
    'RateLimit-Policy': policy,
    RateLimit: `"key";r=${key.remaining};t=${key.resetS}, "workspace";r=${quotaRemaining};t=${dayResetS}`,
  };
  if (!key.ok) {
    headers['Retry-After'] = String(key.retryAfterS);
    return {
      ok: false,
      status: 429,
      code: 'rate_limited',
      retryAfterS: key.retryAfterS,
      headers,
      message: `More than ${key.limit} requests a minute with this API key; retry in ${key.retryAfterS} s.`,
    };
  }
  if (!quota.ok) {
    headers['Retry-After'] = String(dayResetS);
    return {
      ok: false,
      status: 429,
      code: 'quota_exceeded',
      retryAfterS: dayResetS,
      headers,
      message: `This workspace has made its ${quota.limit} requests of the day; the quota resets at 00:00 UTC, in ${dayResetS} s.`,
    };
  }
  return { ok: true, headers };
}
