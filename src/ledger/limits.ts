/**
 * Request-rate limits held in memory, exact over a sliding window: at most `limit` requests in
 * ANY `periodMs` window (spec 8: 60 a minute per API key, 120 a minute per client address on
 * /public, and the other limits per address). A token bucket or GCRA with a burst of `limit`
 * lets almost twice the limit through in one window; a log of recent requests does not.
 *
 * Each key keeps a ring of its recent requests as runs (the start of a time grain, requests in
 * it). With limits up to RING_MAX the grain is 1 ms, so the ring is the exact log of the last
 * `limit` requests; above it (limits raised for load tests), the period is cut into RING_MAX
 * grains and a grain counts until its last millisecond has left the window: never more than the
 * limit in any window, at worst one grain stricter than exact.
 *
 * The state is a fixed table in a SharedArrayBuffer, so that every worker thread of a server
 * counts against the same rings (a key cannot get its 60 a minute from each thread): a 64-bit
 * hash of the key, its ring and its newest request per slot, open addressing over a short probe
 * window, one lock word taken with Atomics around each decision. It is bounded: a slot whose
 * newest request has left the window is the same as no slot, so it is reused freely; when every
 * slot of the probe window is live, the one with the fewest requests is dropped (so the bound
 * errs towards letting requests through, never towards refusing them).
 */
import { isIPv4, isIPv6 } from 'node:net';

export interface WindowLimiterOptions {
  /** Requests allowed in any window of `periodMs`. */
  limit: number;
  periodMs: number;
  /** Keys tracked at once; default 100,000. */
  maxKeys?: number;
  /** The table of a limiter made in another thread (its `table`), to count against the same rings. */
  table?: SharedArrayBuffer;
}

export interface LimitDecision {
  ok: boolean;
  limit: number;
  /** Requests that could still be made at once after this one. */
  remaining: number;
  /** Seconds until every counted request has left the window, at most the period (the "reset" of the RateLimit headers). */
  resetS: number;
  /** When refused: seconds until this request would be allowed (at least 1). 0 when allowed. */
  retryAfterS: number;
}

/** What the HTTP layer asks of a limit, whatever holds its state. */
export interface RateLimiter {
  readonly limit: number;
  readonly periodMs: number;
  /** Counts one request of `key` at `now` (ms) if allowed. */
  take(key: string, now: number): LimitDecision;
  /** The state of `key` at `now` without counting a request. */
  peek(key: string, now: number): LimitDecision;
}

/** The longest ring a key keeps: limits up to this are exact to the millisecond. */
export const RING_MAX = 240;
const PROBE = 16;
/** Bytes before the slots: the lock word, padded to 8 for the Float64Array that follows. */
const HEADER = 8;
/** Words of a slot's header: hash (2), ring head, runs in the ring, requests in the ring. */
const META = 5;

/** 64-bit hash of a key as two 32-bit halves (FNV-1a and a second multiplier); never 0,0. */
function hashKey(key: string, out: Uint32Array): void {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ key.length;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 15;
  }
  out[0] = a >>> 0;
  out[1] = (b | 1) >>> 0;
}

export class WindowLimiter implements RateLimiter {
  readonly limit: number;
  readonly periodMs: number;
  /** The shared state: give it to another thread's limiter (`options.table`). */
  readonly table: SharedArrayBuffer;
  /** Milliseconds of one grain of the ring: 1 when exact. */
  private readonly grainMs: number;
  /** A run has left the window once it is this old (ms). */
  private readonly spanMs: number;
  private readonly ring: number;
  private readonly capacity: number;
  private readonly lock: Int32Array;
  private readonly newest: Float64Array;
  private readonly meta: Uint32Array;
  /** Per slot, `ring` runs of two words: the grain's start (ms, mod 2^32) and its requests. */
  private readonly runs: Uint32Array;
  private readonly hash = new Uint32Array(2);

  constructor(options: WindowLimiterOptions) {
    const { limit, periodMs, maxKeys = 100_000 } = options;
    if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`limit must be a whole number of at least 1, got ${limit}.`);
    if (!Number.isSafeInteger(periodMs) || periodMs < 1 || periodMs > 86_400_000)
      throw new RangeError(`periodMs must be a whole number of ms from 1 to 86,400,000, got ${periodMs}.`);
    if (!Number.isSafeInteger(maxKeys) || maxKeys < 1)
      throw new RangeError(`maxKeys must be a whole number of at least 1, got ${maxKeys}.`);
    this.limit = limit;
    this.periodMs = periodMs;
    this.capacity = maxKeys;
    const exact = limit <= RING_MAX;
    this.grainMs = exact ? 1 : Math.ceil(periodMs / RING_MAX);
    // A grain counts while any of its milliseconds is inside the window.
    this.spanMs = periodMs + this.grainMs - 1;
    // Coarse: the grains of one window, plus the current one.
    this.ring = exact ? limit : Math.ceil(this.spanMs / this.grainMs) + 1;
    const bytes = HEADER + 8 * maxKeys + 4 * META * maxKeys + 8 * this.ring * maxKeys;
    if (options.table !== undefined && options.table.byteLength !== bytes) {
      throw new RangeError(`table holds ${options.table.byteLength} bytes; a limiter of ${limit} over ${maxKeys} keys needs ${bytes}.`);
    }
    this.table = options.table ?? new SharedArrayBuffer(bytes);
    this.lock = new Int32Array(this.table, 0, 1);
    this.newest = new Float64Array(this.table, HEADER, maxKeys);
    this.meta = new Uint32Array(this.table, HEADER + 8 * maxKeys, META * maxKeys);
    this.runs = new Uint32Array(this.table, HEADER + 8 * maxKeys + 4 * META * maxKeys, 2 * this.ring * maxKeys);
  }

  take(key: string, now: number): LimitDecision {
    const t = Math.floor(now);
    this.acquire();
    try {
      const slot = this.slot(key, t);
      this.expire(slot, t);
      const m = META * slot;
      if (this.meta[m + 4] >= this.limit) {
        const retry = this.oldestStart(slot) + this.spanMs - t;
        return {
          ok: false,
          limit: this.limit,
          remaining: 0,
          resetS: this.resetS(slot, t),
          retryAfterS: Math.max(1, Math.ceil(retry / 1000)),
        };
      }
      const start = t - (((t % this.grainMs) + this.grainMs) % this.grainMs);
      const used = this.meta[m + 3];
      const base = 2 * this.ring * slot;
      const last = used === 0 ? -1 : (this.meta[m + 2] + used - 1) % this.ring;
      // A full ring cannot meet a new grain while the clock moves forward (runs ≤ live requests <
      // limit when exact; at most `ring` grains fit in a window when coarse); a clock set back
      // adds to the newest run, which only keeps the request longer.
      if (last >= 0 && (this.runs[base + 2 * last] === start >>> 0 || used === this.ring)) {
        this.runs[base + 2 * last + 1]++;
      } else {
        const at = (this.meta[m + 2] + used) % this.ring;
        this.runs[base + 2 * at] = start >>> 0;
        this.runs[base + 2 * at + 1] = 1;
        this.meta[m + 3] = used + 1;
      }
      this.meta[m + 4]++;
      if (start > this.newest[slot]) this.newest[slot] = start;
      return { ok: true, limit: this.limit, remaining: this.limit - this.meta[m + 4], resetS: this.resetS(slot, t), retryAfterS: 0 };
    } finally {
      this.release();
    }
  }

  peek(key: string, now: number): LimitDecision {
    const t = Math.floor(now);
    this.acquire();
    try {
      const slot = this.slot(key, t);
      this.expire(slot, t);
      const remaining = Math.max(0, this.limit - this.meta[META * slot + 4]);
      return { ok: true, limit: this.limit, remaining, resetS: this.resetS(slot, t), retryAfterS: 0 };
    } finally {
      this.release();
    }
  }

  /** Slots in use (for tests and metrics). */
  get size(): number {
    let n = 0;
    for (let i = 0; i < this.capacity; i++) if (this.meta[META * i + 1] !== 0) n++;
    return n;
  }

  /** Whether every request of the slot has left the window at `t`. */
  private spent(i: number, t: number): boolean {
    return this.meta[META * i + 4] === 0 || t - this.newest[i] >= this.spanMs;
  }

  /**
   * The slot of `key`, claimed if it has none: the first empty or spent slot of its probe window,
   * else the one holding the fewest requests. A claimed slot starts empty. Lock held.
   */
  private slot(key: string, t: number): number {
    hashKey(key, this.hash);
    const lo = this.hash[0];
    const hi = this.hash[1];
    const window = Math.min(PROBE, this.capacity);
    const start = lo % this.capacity;
    let free = -1;
    let fewest = -1;
    for (let k = 0; k < window; k++) {
      const i = (start + k) % this.capacity;
      const m = META * i;
      if (this.meta[m] === lo && this.meta[m + 1] === hi) return i;
      if (free < 0 && (this.meta[m + 1] === 0 || this.spent(i, t))) free = i;
      if (fewest < 0 || this.meta[m + 4] < this.meta[META * fewest + 4]) fewest = i;
    }
    const i = free >= 0 ? free : fewest;
    const m = META * i;
    this.meta[m] = lo;
    this.meta[m + 1] = hi;
    this.meta[m + 2] = 0;
    this.meta[m + 3] = 0;
    this.meta[m + 4] = 0;
    this.newest[i] = 0;
    return i;
  }

  /** Drops the runs that have left the window at `t`, oldest first. Lock held. */
  private expire(i: number, t: number): void {
    const m = META * i;
    if (this.spent(i, t)) {
      this.meta[m + 2] = 0;
      this.meta[m + 3] = 0;
      this.meta[m + 4] = 0;
      return;
    }
    const base = 2 * this.ring * i;
    const t32 = t >>> 0;
    while (this.meta[m + 3] > 0) {
      const head = this.meta[m + 2];
      // Ages of live runs are under two windows, far inside a signed 32-bit span: wrap-safe.
      const age = (t32 - this.runs[base + 2 * head]) | 0;
      if (age < this.spanMs) break;
      this.meta[m + 4] -= this.runs[base + 2 * head + 1];
      this.meta[m + 2] = (head + 1) % this.ring;
      this.meta[m + 3]--;
    }
  }

  /** The start (ms) of the slot's oldest run, in the clock's terms. Lock held; ring not empty. */
  private oldestStart(i: number): number {
    const start32 = this.runs[2 * this.ring * i + 2 * this.meta[META * i + 2]];
    const newest = this.newest[i];
    return newest - (((newest >>> 0) - start32) | 0);
  }

  private acquire(): void {
    while (Atomics.compareExchange(this.lock, 0, 0, 1) !== 0) Atomics.wait(this.lock, 0, 1, 1);
  }

  private release(): void {
    Atomics.store(this.lock, 0, 0);
    Atomics.notify(this.lock, 0, 1);
  }

  /** Never past the period itself: a coarse grain outlives it by under a grain, which a "minute window" should not show. */
  private resetS(i: number, t: number): number {
    if (this.meta[META * i + 4] === 0) return 0;
    return Math.max(0, Math.ceil(Math.min(this.periodMs, this.newest[i] + this.spanMs - t) / 1000));
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
