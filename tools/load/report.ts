/**
 * What a load run measured, and how it is printed.
 *
 * A `Recorder` lives in each load thread: latency histograms (HdrHistogram, microseconds, 3
 * significant digits) for the whole run and per request kind, counts by status and error code
 * per kind, credits charged (the sum of `X-Credits-Charged`) and bytes. Threads send theirs to
 * the main thread as plain data (`RecorderData`, histograms as compressed base64), where they
 * are merged into one `LoadReport`.
 *
 * Error codes: authenticated endpoints answer `{error: {code, message, parameter}}`, the public
 * ones `{error: "<code>"}` (spec 7); both are read. A failure without a response counts under
 * status 0 with the client's code (connect, reset, timeout, protocol).
 */
import hdr from 'hdr-histogram-js';
import { KINDS, type Kind, type Weights } from './mix.ts';

type Histogram = ReturnType<typeof hdr.build>;

const newHistogram = (): Histogram =>
  hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 3_600_000_000, numberOfSignificantValueDigits: 3, useWebAssembly: false });

/** The error code of a non-2xx JSON body, in either of the spec's two formats; '-' when none. */
export function errorCode(body: Buffer | null): string {
  if (body === null || body.length === 0) return '-';
  try {
    const doc = JSON.parse(body.toString('utf8')) as { error?: unknown };
    const e = doc.error;
    if (typeof e === 'string') return e;
    if (e && typeof e === 'object' && typeof (e as { code?: unknown }).code === 'string') return (e as { code: string }).code;
  } catch {
    // Not JSON (a proxy's HTML page, say).
  }
  return '-';
}

export interface RecorderData {
  histogram: string;
  /** 2xx answers by what they charged (`X-Credits-Charged`): nothing, or something. */
  free: string;
  charged: string;
  /** Fixed rate: how late requests went out on a free connection, against their due time. */
  lag: string;
  kinds: { histogram: string; count: number; ok: number; statuses: Record<string, number>; outcomes: Record<string, number> }[];
  credits: number;
  bytes: number;
  sent: number;
  /** Sends that were due (fixed rate) but waited for a free connection. */
  queued: number;
  /** Requests that were due (fixed rate) and never went out before the end: failures `0 not_sent`. */
  notSent: number;
  maxConnections: number;
  walksStarted: number;
  walksFinished: number;
}

export class Recorder {
  private readonly all = newHistogram();
  private readonly free = newHistogram();
  private readonly charged = newHistogram();
  private readonly lateness = newHistogram();
  // Statuses by index (0: no response), so counting one costs no lookup.
  private readonly perKind = KINDS.map(() => ({
    histogram: newHistogram(),
    count: 0,
    ok: 0,
    statuses: new Float64Array(600),
    outcomes: new Map<string, number>(),
  }));
  credits = 0;
  bytes = 0;
  sent = 0;
  queued = 0;
  notSent = 0;
  maxConnections = 0;

  /** One answered request: latency in ms, its status, and the error body's code for non-2xx. */
  response(kind: number, ms: number, status: number, credits: number, body: Buffer | null): void {
    const us = Math.max(1, Math.round(ms * 1000));
    this.all.recordValue(us);
    const k = this.perKind[kind];
    k.histogram.recordValue(us);
    k.count++;
    k.statuses[status]++;
    this.credits += credits;
    if (status >= 200 && status < 300) {
      k.ok++;
      (credits > 0 ? this.charged : this.free).recordValue(us);
      return;
    }
    const key = `${status} ${errorCode(body)}`;
    k.outcomes.set(key, (k.outcomes.get(key) ?? 0) + 1);
  }

  /** Fixed rate: a request went out `ms` after it was due (timer granularity, a busy client). */
  lag(ms: number): void {
    this.lateness.recordValue(Math.max(1, Math.round(ms * 1000)));
  }

  /** A request that got no response (`code`: connect, reset, timeout, protocol). */
  failure(kind: number, ms: number, code: string): void {
    const us = Math.max(1, Math.round(ms * 1000));
    this.all.recordValue(us);
    const k = this.perKind[kind];
    k.histogram.recordValue(us);
    k.count++;
    k.statuses[0]++;
    if (code === 'not_sent') this.notSent++;
    const key = `0 ${code}`;
    k.outcomes.set(key, (k.outcomes.get(key) ?? 0) + 1);
  }

  data(walksStarted: number, walksFinished: number): RecorderData {
    return {
      histogram: hdr.encodeIntoCompressedBase64(this.all),
      free: hdr.encodeIntoCompressedBase64(this.free),
      charged: hdr.encodeIntoCompressedBase64(this.charged),
      lag: hdr.encodeIntoCompressedBase64(this.lateness),
      kinds: this.perKind.map((k) => ({
        histogram: hdr.encodeIntoCompressedBase64(k.histogram),
        count: k.count,
        ok: k.ok,
        outcomes: Object.fromEntries(k.outcomes),
        statuses: Object.fromEntries([...k.statuses.entries()].filter(([, n]) => n > 0).map(([status, n]) => [String(status), n])),
      })),
      credits: this.credits,
      bytes: this.bytes,
      sent: this.sent,
      queued: this.queued,
      notSent: this.notSent,
      maxConnections: this.maxConnections,
      walksStarted,
      walksFinished,
    };
  }
}

export interface Percentiles {
  p50: number;
  p90: number;
  p99: number;
  'p99.9': number;
  max: number;
  mean: number;
}

export interface KindReport {
  count: number;
  ok: number;
  p50_ms: number;
  p99_ms: number;
  /** "status code" → count, for every non-2xx answer and every failure (status 0). */
  errors: Record<string, number>;
}

export interface LoadReport {
  target: string;
  mode: 'max' | 'rate';
  /** Requests a second asked for (rate mode), null in max mode. */
  rate: number | null;
  connections: number;
  /** Connections the client opened (rate mode opens more when every one is busy). */
  connections_opened: number;
  threads: number;
  seed: number;
  mix: Weights;
  duration_s: number;
  /** Requests written / answered or failed (those never sent included: `not_sent`). */
  sent: number;
  completed: number;
  /**
   * Fixed rate: requests that were due but never went out before the end, the client having
   * fallen behind; failures `0 not_sent`, left out of `rps` and of the requests the report counts.
   */
  not_sent: number;
  ok: number;
  rps: number;
  latency_ms: Percentiles;
  /** 2xx answers split by `X-Credits-Charged`: those that charged nothing, and those that charged credits. */
  by_charge: { free: Percentiles & { count: number }; charged: Percentiles & { count: number } };
  kinds: Partial<Record<Kind, KindReport>>;
  /** Answers and failures by HTTP status over the whole run ("0": no response). */
  statuses: Record<string, number>;
  /** Every non-2xx answer and failure by "status code". */
  errors: Record<string, number>;
  credits_charged: number;
  bytes_received: number;
  walks: { started: number; finished: number; pages: number };
  /** Fixed rate: requests that were due while every connection was busy (they waited; their latency counts from when they were due). */
  queued: number;
  /**
   * Fixed rate: how late the client sent requests that had a free connection (its timers fire
   * on a 1 ms grid); part of every latency above. Null in max mode.
   */
  send_lag_ms: { p50: number; p99: number; max: number } | null;
  /** CPU of the load generator's process over the run, as a share of one core (1 = one core busy). */
  client_cpu_cores: number;
  discovery: { requests: number; credits: number; statuses: Record<string, number>; buildings: number; cells: number };
  warnings: string[];
}

const round = (v: number, d = 3) => Math.round(v * 10 ** d) / 10 ** d;
const num = (v: number) => v.toLocaleString('en');

function percentiles(h: Histogram): Percentiles {
  if (h.totalCount === 0) return { p50: 0, p90: 0, p99: 0, 'p99.9': 0, max: 0, mean: 0 };
  const ms = (us: number) => round(us / 1000);
  return {
    p50: ms(h.getValueAtPercentile(50)),
    p90: ms(h.getValueAtPercentile(90)),
    p99: ms(h.getValueAtPercentile(99)),
    'p99.9': ms(h.getValueAtPercentile(99.9)),
    max: ms(h.maxValue),
    mean: ms(h.mean),
  };
}

/** What the run itself knows, beside the recorders: the report's settings, time and CPU. */
export type RunFacts = Pick<
  LoadReport,
  'target' | 'mode' | 'rate' | 'connections' | 'threads' | 'seed' | 'mix' | 'discovery' | 'warnings'
> & {
  seconds: number;
  cpuCores: number;
};

/** Merges the threads' recorders into the report. */
export function mergeReport(parts: readonly RecorderData[], facts: RunFacts): LoadReport {
  const all = newHistogram();
  const free = newHistogram();
  const charged = newHistogram();
  const lag = newHistogram();
  const kindH = KINDS.map(() => newHistogram());
  const kinds: Partial<Record<Kind, KindReport>> = {};
  const statuses: Record<string, number> = {};
  const errors: Record<string, number> = {};
  let credits = 0,
    bytes = 0,
    sent = 0,
    queued = 0,
    notSent = 0,
    completed = 0,
    ok = 0,
    started = 0,
    finished = 0,
    opened = 0;
  const add = (into: Record<string, number>, key: string, n: number) => {
    into[key] = (into[key] ?? 0) + n;
  };
  for (const p of parts) {
    all.add(hdr.decodeFromCompressedBase64(p.histogram, 32, false));
    free.add(hdr.decodeFromCompressedBase64(p.free, 32, false));
    charged.add(hdr.decodeFromCompressedBase64(p.charged, 32, false));
    lag.add(hdr.decodeFromCompressedBase64(p.lag, 32, false));
    credits += p.credits;
    bytes += p.bytes;
    sent += p.sent;
    queued += p.queued;
    notSent += p.notSent;
    opened += p.maxConnections;
    started += p.walksStarted;
    finished += p.walksFinished;
    p.kinds.forEach((k, i) => {
      if (k.count === 0) return;
      kindH[i].add(hdr.decodeFromCompressedBase64(k.histogram, 32, false));
      const r = (kinds[KINDS[i]] ??= { count: 0, ok: 0, p50_ms: 0, p99_ms: 0, errors: {} });
      r.count += k.count;
      r.ok += k.ok;
      completed += k.count;
      ok += k.ok;
      for (const [status, n] of Object.entries(k.statuses)) add(statuses, status, n);
      for (const [key, n] of Object.entries(k.outcomes)) {
        add(r.errors, key, n);
        add(errors, key, n);
      }
    });
  }
  const answered = completed - notSent;
  const limited = statuses['429'] ?? 0;
  const warnings =
    limited * 2 > answered
      ? [
          ...facts.warnings,
          `${num(limited)} of ${num(answered)} answers were 429: this run measured the rate limits, not the server. ` +
            'Against a private server, raise EDIFICE_KEY_PER_MINUTE and EDIFICE_DAILY_QUOTA (README, Load testing)',
        ]
      : facts.warnings;
  KINDS.forEach((name, i) => {
    const r = kinds[name];
    if (!r) return;
    r.p50_ms = round(kindH[i].getValueAtPercentile(50) / 1000);
    r.p99_ms = round(kindH[i].getValueAtPercentile(99) / 1000);
  });
  return {
    target: facts.target,
    mode: facts.mode,
    rate: facts.rate,
    connections: facts.connections,
    connections_opened: opened,
    threads: facts.threads,
    seed: facts.seed,
    mix: facts.mix,
    duration_s: round(facts.seconds),
    sent,
    completed,
    not_sent: notSent,
    ok,
    rps: round(answered / Math.max(facts.seconds, 1e-9), 1),
    latency_ms: percentiles(all),
    by_charge: {
      free: { ...percentiles(free), count: free.totalCount },
      charged: { ...percentiles(charged), count: charged.totalCount },
    },
    kinds,
    statuses,
    errors,
    credits_charged: credits,
    bytes_received: bytes,
    walks: { started, finished, pages: kinds.walk?.count ?? 0 },
    queued,
    send_lag_ms:
      facts.mode === 'rate'
        ? {
            p50: round(lag.getValueAtPercentile(50) / 1000),
            p99: round(lag.getValueAtPercentile(99) / 1000),
            max: round(lag.maxValue / 1000),
          }
        : null,
    client_cpu_cores: round(facts.cpuCores, 2),
    discovery: facts.discovery,
    warnings,
  };
}

const pad = (s: string, n: number) => s.padEnd(n);
const lpad = (s: string, n: number) => s.padStart(n);

/** The report for people: a few lines, then a table per request kind. */
export function formatReport(r: LoadReport): string {
  const l = r.latency_ms;
  const lines = [
    `target ${r.target}; ${r.mode === 'rate' ? `fixed rate ${num(r.rate!)}/s (latency from the scheduled send time)` : 'as fast as possible'}, ` +
      `${r.connections} connections, ${r.threads} thread${r.threads === 1 ? '' : 's'}, seed ${r.seed}`,
    `mix ${KINDS.map((k) => `${k}=${r.mix[k]}`).join(',')}`,
    `${num(r.completed - r.not_sent)} requests in ${r.duration_s.toFixed(1)} s = ${num(r.rps)} requests/s; ${num(r.ok)} 2xx; ` +
      `${num(r.sent - (r.completed - r.not_sent))} unanswered at the end${r.mode === 'rate' ? `; ${num(r.queued)} waited for a connection; ${num(r.connections_opened)} connections opened` : ''}` +
      (r.not_sent > 0 ? `; ${num(r.not_sent)} due but never sent (the client fell behind the rate)` : ''),
    ...(r.send_lag_ms
      ? [
          `send lag ms (the client's own lateness against the schedule, part of the latency): p50 ${r.send_lag_ms.p50}  p99 ${r.send_lag_ms.p99}  max ${r.send_lag_ms.max}`,
        ]
      : []),
    `latency ms: p50 ${l.p50}  p90 ${l.p90}  p99 ${l.p99}  p99.9 ${l['p99.9']}  max ${l.max}  mean ${l.mean}`,
    `2xx by X-Credits-Charged: free ${num(r.by_charge.free.count)} (p50 ${r.by_charge.free.p50}, p99 ${r.by_charge.free.p99} ms), ` +
      `charged ${num(r.by_charge.charged.count)} (p50 ${r.by_charge.charged.p50}, p99 ${r.by_charge.charged.p99} ms)`,
    `credits charged ${num(r.credits_charged)}; received ${(r.bytes_received / 2 ** 20).toFixed(1)} MiB; ` +
      `walks started ${num(r.walks.started)}, finished ${num(r.walks.finished)}, pages ${num(r.walks.pages)}`,
    `client CPU ${r.client_cpu_cores.toFixed(2)} cores (the load generator's own process)`,
    `discovery: ${r.discovery.requests} requests, ${num(r.discovery.credits)} credits, ${r.discovery.cells} cells, ${num(r.discovery.buildings)} buildings seen`,
    '',
    `| ${pad('kind', 8)} | ${lpad('requests', 9)} | ${lpad('2xx', 9)} | ${lpad('p50 ms', 8)} | ${lpad('p99 ms', 8)} | errors (status code: count)`,
    `|${'-'.repeat(10)}|${'-'.repeat(10)}:|${'-'.repeat(10)}:|${'-'.repeat(9)}:|${'-'.repeat(9)}:|${'-'.repeat(28)}`,
  ];
  for (const k of KINDS) {
    const s = r.kinds[k];
    if (!s) continue;
    const errs = Object.entries(s.errors)
      .sort((a, b) => b[1] - a[1])
      .map(([key, n]) => `${key}: ${num(n)}`)
      .join(', ');
    lines.push(
      `| ${pad(k, 8)} | ${lpad(num(s.count), 9)} | ${lpad(num(s.ok), 9)} | ${lpad(String(s.p50_ms), 8)} | ${lpad(String(s.p99_ms), 8)} | ${errs || '-'}`,
    );
  }
  const errs = Object.entries(r.errors).sort((a, b) => b[1] - a[1]);
  lines.push('', `errors by status and code: ${errs.length === 0 ? 'none' : errs.map(([key, n]) => `${key}: ${num(n)}`).join(', ')}`);
  for (const w of r.warnings) lines.push(`warning: ${w}`);
  return lines.join('\n');
}
