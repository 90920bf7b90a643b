/**
 * When requests are sent.
 *
 * - Fixed rate (open loop): the i-th request is due at `start + i / rate`, whatever happened to
 *   the ones before. A request that cannot go out when due (every connection busy) waits in a
 *   queue, and its latency still counts from when it was due. Measuring from the actual send
 *   time instead would hide exactly the stalls a slow server causes (coordinated omission: the
 *   client stops asking while the server is stuck, and the stuck period is never sampled).
 * - As fast as possible (closed loop): N connections, each sends its next request when its
 *   previous answer arrives; latency counts from the send. Its requests/s is the peak.
 */
export class FixedRate {
  /** Interval between due times, ms. */
  readonly intervalMs: number;
  private issued = 0;

  constructor(
    readonly ratePerSecond: number,
    readonly startMs: number,
    readonly limit: number,
  ) {
    if (!(ratePerSecond > 0)) throw new RangeError(`FixedRate: rate must be > 0, got ${ratePerSecond}.`);
    this.intervalMs = 1000 / ratePerSecond;
  }

  /** Due time of request `i`, in performance.now() ms. */
  dueAt(i: number): number {
    return this.startMs + i * this.intervalMs;
  }

  /** How many requests are due by `nowMs` and not yet taken; takes them. Their indexes run from `taken - n`. */
  take(nowMs: number): number {
    const due = Math.min(this.limit, Math.floor((nowMs - this.startMs) / this.intervalMs) + 1);
    const n = Math.max(0, due - this.issued);
    this.issued += n;
    return n;
  }

  get taken(): number {
    return this.issued;
  }

  /** ms until the next request is due (0 when one is due now). */
  untilNext(nowMs: number): number {
    return Math.max(0, this.dueAt(this.issued) - nowMs);
  }
}
