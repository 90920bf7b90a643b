/**
 * Request-rate limits held in memory: GCRA (the generic cell rate algorithm), used per API key
 * (60 a minute) and per client address (120 a minute on /public, 20 an hour for country
 * requests).
 *
 * GCRA keeps one number per key, the theoretical arrival time `tat`. With `limit` requests per
 * `periodMs`, each request advances `tat` by `T = periodMs / limit`; a request is allowed while
 * `max(tat, now) + T − now ≤ periodMs`. It behaves as a bucket of `limit` tokens refilled one
 * every T: a full burst of `limit` passes, then one request every T — a burst straddling a
 * window edge cannot double the limit as with fixed windows.
 *
 * State is bounded: an LRU of `maxKeys` entries. An evicted key starts again with a full bucket
 * (so the bound errs towards letting requests through, never towards refusing them).
 */
import { isIPv4, isIPv6 } from 'node:net';
import { LRUCache } from 'lru-cache';

export interface GcraOptions {
  /** Requests allowed per period (also the largest burst). */
  limit: number;
  periodMs: number;
  /** Keys tracked at once; default 100,000. */
  maxKeys?: number;
}

export interface GcraDecision {
  ok: boolean;
  limit: number;
  /** Requests that could still be made at once after this one. */
  remaining: number;
  /** Seconds until the bucket is full again (the "reset" of the RateLimit headers). */
  resetS: number;
  /** When refused: seconds until this request would be allowed (at least 1). 0 when allowed. */
  retryAfterS: number;
}

export class GcraLimiter {
  readonly limit: number;
  readonly periodMs: number;
  private readonly intervalMs: number;
  private readonly tats: LRUCache<string, number>;

  constructor(options: GcraOptions) {
    const { limit, periodMs, maxKeys = 100_000 } = options;
    if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`limit must be a whole number of at least 1, got ${limit}.`);
    if (!(periodMs > 0) || !Number.isFinite(periodMs)) throw new RangeError(`periodMs must be a positive number, got ${periodMs}.`);
    if (!Number.isSafeInteger(maxKeys) || maxKeys < 1) throw new RangeError(`maxKeys must be a whole number of at least 1, got ${maxKeys}.`);
    this.limit = limit;
    this.periodMs = periodMs;
    this.intervalMs = periodMs / limit;
    this.tats = new LRUCache<string, number>({ max: maxKeys });
  }

  /** Counts one request of `key` at `now` (ms) if allowed. */
  take(key: string, now: number): GcraDecision {
    const tat = Math.max(this.tats.get(key) ?? now, now);
    const next = tat + this.intervalMs;
    if (next - now > this.periodMs) {
      return {
        ok: false, limit: this.limit, remaining: 0, resetS: Math.ceil((tat - now) / 1000),
        retryAfterS: Math.max(1, Math.ceil((next - now - this.periodMs) / 1000)),
      };
    }
    this.tats.set(key, next);
    return { ok: true, limit: this.limit, ...this.state(next, now), retryAfterS: 0 };
  }

  /** The state of `key` at `now` without counting a request. */
  peek(key: string, now: number): GcraDecision {
    const tat = Math.max(this.tats.get(key) ?? now, now);
    return { ok: true, limit: this.limit, ...this.state(tat, now), retryAfterS: 0 };
  }

  /** Keys currently tracked (for tests and metrics). */
  get size(): number {
    return this.tats.size;
  }

  private state(tat: number, now: number): { remaining: number; resetS: number } {
    // Tiny epsilon: intervals such as 60,000 / 120 are exact, but 3,600,000 / 7 is not.
    const remaining = Math.floor((this.periodMs - (tat - now)) / this.intervalMs + 1e-9);
    return { remaining: Math.max(0, Math.min(this.limit, remaining)), resetS: Math.ceil((tat - now) / 1000) };
  }
}

/**
 * The bucket a client address is limited under: an IPv4 address as it is (IPv4-mapped IPv6
 * included), an IPv6 address by its /56 prefix (one household or site usually gets a /56 or
 * larger, and can pick any address in it). Anything else is returned unchanged.
 */
export function clientBucket(address: string): string {
  const a = address.trim();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(a);
  if (mapped && isIPv4(mapped[1])) return mapped[1];
  if (isIPv4(a)) return a;
  const bare = a.replace(/%.*$/, ''); // zone index (fe80::1%eth0)
  if (!isIPv6(bare)) return a;
  const groups = expandIPv6(bare);
  const g3 = groups[3] & 0xff00;
  return `${groups[0].toString(16)}:${groups[1].toString(16)}:${groups[2].toString(16)}:${g3.toString(16)}::/56`;
}

function expandIPv6(address: string): number[] {
  let text = address;
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number);
    text = text.slice(0, v4.index) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const left = head ? head.split(':') : [];
  const right = tail === undefined ? [] : tail ? tail.split(':') : [];
  const zeros = tail === undefined ? [] : new Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...zeros, ...right].map((h) => parseInt(h, 16));
}
