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
 * The state is a fixed table in a SharedArrayBuffer, so that every worker thread of a server
 * counts against the same buckets (a key cannot get its 60 a minute from each thread): a 64-bit
 * hash of the key and its `tat` per slot, open addressing over a short probe window, one lock
 * word taken with Atomics around each decision. It is bounded: a slot whose `tat` has passed
 * holds a full bucket, the same as no slot, so it is reused freely; when every slot of the window
 * is live, the one closest to full is dropped (so the bound errs towards letting requests
 * through, never towards refusing them).
 */
import { isIPv4, isIPv6 } from 'node:net';

export interface GcraOptions {
  /** Requests allowed per period (also the largest burst). */
  limit: number;
  periodMs: number;
  /** Keys tracked at once; default 100,000. */
  maxKeys?: number;
  /** The table of a limiter made in another thread (its `table`), to count against the same buckets. */
  table?: SharedArrayBuffer;
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

const PROBE = 16;
/** Bytes before the slots: the lock word, padded to 8 for the Float64Array that follows. */
const HEADER = 8;

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

export class GcraLimiter {
  readonly limit: number;
  readonly periodMs: number;
  /** The shared state: give it to another thread's limiter (`options.table`). */
  readonly table: SharedArrayBuffer;
  private readonly intervalMs: number;
  private readonly capacity: number;
  private readonly lock: Int32Array;
  private readonly keys: Uint32Array;
  private readonly tats: Float64Array;
  private readonly hash = new Uint32Array(2);

  constructor(options: GcraOptions) {
    const { limit, periodMs, maxKeys = 100_000 } = options;
    if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`limit must be a whole number of at least 1, got ${limit}.`);
    if (!(periodMs > 0) || !Number.isFinite(periodMs)) throw new RangeError(`periodMs must be a positive number, got ${periodMs}.`);
    if (!Number.isSafeInteger(maxKeys) || maxKeys < 1) throw new RangeError(`maxKeys must be a whole number of at least 1, got ${maxKeys}.`);
    this.limit = limit;
    this.periodMs = periodMs;
    this.intervalMs = periodMs / limit;
    this.capacity = maxKeys;
    const bytes = HEADER + 8 * maxKeys + 8 * maxKeys;
    if (options.table !== undefined && options.table.byteLength !== bytes) {
      throw new RangeError(`table holds ${options.table.byteLength} bytes; a limiter of ${maxKeys} keys needs ${bytes}.`);
    }
    this.table = options.table ?? new SharedArrayBuffer(bytes);
    this.lock = new Int32Array(this.table, 0, 1);
    this.tats = new Float64Array(this.table, HEADER, maxKeys);
    this.keys = new Uint32Array(this.table, HEADER + 8 * maxKeys, 2 * maxKeys);
  }

  /** Counts one request of `key` at `now` (ms) if allowed. */
  take(key: string, now: number): GcraDecision {
    this.acquire();
    try {
      const slot = this.slot(key, now);
      const tat = Math.max(this.tats[slot], now);
      const next = tat + this.intervalMs;
      if (next - now > this.periodMs) {
        return {
          ok: false, limit: this.limit, remaining: 0, resetS: Math.ceil((tat - now) / 1000),
          retryAfterS: Math.max(1, Math.ceil((next - now - this.periodMs) / 1000)),
        };
      }
      this.tats[slot] = next;
      return { ok: true, limit: this.limit, ...this.state(next, now), retryAfterS: 0 };
    } finally {
      this.release();
    }
  }

  /** The state of `key` at `now` without counting a request. */
  peek(key: string, now: number): GcraDecision {
    this.acquire();
    try {
      const tat = Math.max(this.tats[this.slot(key, now)], now);
      return { ok: true, limit: this.limit, ...this.state(tat, now), retryAfterS: 0 };
    } finally {
      this.release();
    }
  }

  /** Slots in use (for tests and metrics). */
  get size(): number {
    let n = 0;
    for (let i = 0; i < this.capacity; i++) if (this.keys[2 * i + 1] !== 0) n++;
    return n;
  }

  /**
   * The slot of `key`, claimed if it has none: the first empty or spent slot of its probe window,
   * else the one closest to full. A claimed slot starts with a full bucket (tat 0). Lock held.
   */
  private slot(key: string, now: number): number {
    hashKey(key, this.hash);
    const lo = this.hash[0];
    const hi = this.hash[1];
    const window = Math.min(PROBE, this.capacity);
    const start = lo % this.capacity;
    let free = -1;
    let oldest = -1;
    for (let k = 0; k < window; k++) {
      const i = (start + k) % this.capacity;
      if (this.keys[2 * i] === lo && this.keys[2 * i + 1] === hi) return i;
      if (free < 0 && (this.keys[2 * i + 1] === 0 || this.tats[i] <= now)) free = i;
      if (oldest < 0 || this.tats[i] < this.tats[oldest]) oldest = i;
    }
    const i = free >= 0 ? free : oldest;
    this.keys[2 * i] = lo;
    this.keys[2 * i + 1] = hi;
    this.tats[i] = 0;
    return i;
  }

  private acquire(): void {
    while (Atomics.compareExchange(this.lock, 0, 0, 1) !== 0) Atomics.wait(this.lock, 0, 1, 1);
  }

  private release(): void {
    Atomics.store(this.lock, 0, 0);
    Atomics.notify(this.lock, 0, 1);
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
