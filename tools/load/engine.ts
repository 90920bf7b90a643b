/**
 * One load thread: its connections, its share of the schedule, its recorder. `runEngine` runs
 * until the duration or the request count is reached, waits a little for the answers still in
 * flight, and returns what it recorded.
 */
import { Connection, type ResponseSink } from './client.ts';
import { KINDS, Mix, nextPath, type Area, type Weights } from './mix.ts';
import { Recorder, type RecorderData } from './report.ts';
import { FixedRate } from './schedule.ts';

export interface EnginePlan {
  host: string;
  port: number;
  /** Value of the Host header. */
  hostHeader: string;
  /** Path prefix of the API, e.g. /v1. */
  base: string;
  keys: string[];
  area: Area;
  weights: Weights;
  seed: number;
  /** This thread's number: its own stream of the mix, its own first key. */
  stream: number;
  mode: 'max' | 'rate';
  /** This thread's share of the rate (rate mode). */
  rate: number;
  /** Max mode: connections kept busy. Rate mode: the most connections opened. */
  connections: number;
  durationMs: number;
  /** This thread's share of the request count. */
  requests: number;
  timeoutMs: number;
  /** Public pages carry X-Forwarded-For with one of this many addresses, in turn (0: none). */
  clientAddresses: number;
}

export interface EngineResult {
  data: RecorderData;
  seconds: number;
}

interface InFlight {
  kind: number;
  /** When it was due (rate mode) or sent (max mode), performance.now() ms. */
  from: number;
  learn: boolean;
}

const WALK = KINDS.indexOf('walk');
/** Kinds whose answers teach building ids and places for the public pages. */
const LEARN_FROM = new Set(['point', 'street', 'filters'].map((k) => KINDS.indexOf(k as (typeof KINDS)[number])));
/** How long answers still in flight at the end are waited for. */
const DRAIN_MS = 3000;

class Engine implements ResponseSink<InFlight> {
  private readonly recorder = new Recorder();
  private readonly mix: Mix;
  private readonly conns: Connection<InFlight>[] = [];
  private readonly idle: Connection<InFlight>[] = [];
  /** Rate mode: requests due while every connection was busy (planned, waiting). */
  private readonly backlog: { path: string; auth: boolean; pending: InFlight }[] = [];
  private backlogHead = 0;
  private readonly heads: string[];
  private readonly publicHeads: string[];
  private keyTurn: number;
  private addressTurn = 0;
  private stopping = false;
  private inFlight = 0;
  private startMs = 0;
  private endMs = 0;
  private schedule: FixedRate | null = null;
  private timer: NodeJS.Timeout | null = null;
  private watchdog: NodeJS.Timeout | null = null;
  private done: (() => void) | null = null;
  private readonly tickBound = () => this.tick();

  constructor(private readonly plan: EnginePlan) {
    this.mix = new Mix(plan.area, plan.weights, plan.seed, plan.stream, plan.base);
    // The request head after the path, one per key: no string building per header per request.
    const tail = (auth: string) =>
      ` HTTP/1.1\r\nHost: ${plan.hostHeader}\r\n${auth}Accept: application/json\r\nUser-Agent: edifice-loadtest\r\n\r\n`;
    this.heads = plan.keys.map((k) => tail(`Authorization: Bearer ${k}\r\n`));
    // 10.x.y.z: addresses of no real client, so a trusting server counts them apart.
    const address = (i: number) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
    this.publicHeads =
      plan.clientAddresses > 0
        ? Array.from({ length: plan.clientAddresses }, (_, i) => tail(`X-Forwarded-For: ${address(i + plan.stream * 65_536)}\r\n`))
        : [tail('')];
    this.keyTurn = plan.stream;
  }

  run(): Promise<EngineResult> {
    const p = this.plan;
    this.startMs = performance.now();
    this.endMs = this.startMs + p.durationMs;
    const finished = new Promise<void>((resolve) => {
      this.done = resolve;
    });
    this.watchdog = setInterval(() => this.check(), 100);
    if (p.mode === 'max') {
      for (let i = 0; i < p.connections && this.recorder.sent < p.requests; i++) this.dispatch(this.newConnection(), this.startMs);
    } else {
      this.schedule = new FixedRate(p.rate, this.startMs, p.requests);
      this.tick();
    }
    return finished.then(() => {
      const seconds = (performance.now() - this.startMs) / 1000;
      let bytes = 0;
      for (const c of this.conns) {
        bytes += c.bytesRead;
        c.close();
      }
      this.recorder.bytes = bytes;
      this.recorder.maxConnections = this.conns.length;
      return { data: this.recorder.data(this.mix.walksStarted, this.mix.walksFinished), seconds };
    });
  }

  private newConnection(): Connection<InFlight> {
    const c = new Connection<InFlight>(this.plan.host, this.plan.port, this);
    this.conns.push(c);
    return c;
  }

  /** Plans the next request of the mix and sends it on `conn`; `from` is when it was due. */
  private dispatch(conn: Connection<InFlight>, from: number): void {
    const req = this.mix.next();
    const learn = LEARN_FROM.has(req.kind) && (this.plan.area.ids.length < 2000 || (this.recorder.sent & 63) === 0);
    this.write(conn, req.path, req.auth, { kind: req.kind, from, learn });
  }

  private write(conn: Connection<InFlight>, path: string, auth: boolean, pending: InFlight): void {
    let tail: string;
    if (auth && this.heads.length > 0) tail = this.heads[this.keyTurn++ % this.heads.length];
    else tail = this.publicHeads[this.addressTurn++ % this.publicHeads.length];
    this.recorder.sent++;
    this.inFlight++;
    conn.send(`GET ${path}${tail}`, pending, pending.learn || pending.kind === WALK);
  }

  /** Rate mode: sends every request due by now, then sleeps until the next one is due. */
  private tick(): void {
    this.timer = null;
    if (this.stopping) return;
    const s = this.schedule!;
    const now = performance.now();
    if (now >= this.endMs) return this.stop();
    const first = s.taken;
    const n = s.take(now);
    for (let i = 0; i < n; i++) {
      const due = s.dueAt(first + i);
      let conn = this.idle.pop();
      if (conn === undefined && this.conns.length < this.plan.connections) conn = this.newConnection();
      if (conn !== undefined) {
        this.recorder.lag(now - due);
        this.dispatch(conn, due);
      } else {
        const req = this.mix.next();
        this.backlog.push({ path: req.path, auth: req.auth, pending: { kind: req.kind, from: due, learn: false } });
        this.recorder.queued++;
      }
    }
    if (s.taken >= this.plan.requests) {
      // Every request of the count is out (or waiting); end when the answers are in.
      this.maybeDone();
      return;
    }
    // Timers have a granularity of 1 ms. Waiting less than that would mean spinning on
    // setImmediate, which costs the client a large share of a core at any rate. So what falls
    // due meanwhile goes out at the next timer, up to ~1 ms late; the lateness counts in the
    // latency (measured from the due time) and is reported apart.
    this.timer = setTimeout(this.tickBound, Math.max(1, Math.floor(s.untilNext(performance.now()))));
  }

  onResponse(conn: Connection<InFlight>, p: InFlight, status: number, credits: number, body: Buffer | null): void {
    this.inFlight--;
    this.recorder.response(p.kind, performance.now() - p.from, status, credits, body);
    if (body !== null && status >= 200 && status < 300) {
      if (p.kind === WALK) this.mix.walked(nextPath(body));
      else if (p.learn) this.mix.learn(body);
    } else if (p.kind === WALK) this.mix.walked(null);
    this.next(conn);
  }

  onFailure(conn: Connection<InFlight>, p: InFlight, code: string): void {
    this.inFlight--;
    this.recorder.failure(p.kind, performance.now() - p.from, code);
    if (p.kind === WALK) this.mix.walked(null);
    this.next(conn);
  }

  /** A connection is free: give it the next request, or park it. */
  private next(conn: Connection<InFlight>): void {
    if (this.stopping) return this.maybeDone();
    if (this.plan.mode === 'max') {
      if (performance.now() >= this.endMs) return this.stop();
      if (this.recorder.sent < this.plan.requests) return this.dispatch(conn, performance.now());
      return this.maybeDone();
    }
    if (this.backlogHead < this.backlog.length) {
      const b = this.backlog[this.backlogHead++];
      if (this.backlogHead > 4096 && this.backlogHead * 2 > this.backlog.length) {
        this.backlog.splice(0, this.backlogHead);
        this.backlogHead = 0;
      }
      this.write(conn, b.path, b.auth, b.pending);
      return;
    }
    this.idle.push(conn);
    if (this.schedule!.taken >= this.plan.requests) this.maybeDone();
  }

  /** Per-request timeouts, and the end of the run. */
  private check(): void {
    const now = performance.now();
    for (const c of this.conns) if (c.busy && now - c.sentAt > this.plan.timeoutMs) c.abort('timeout');
    if (!this.stopping && now >= this.endMs) this.stop();
    else if (this.stopping && now >= this.endMs + DRAIN_MS) this.finish();
  }

  private stop(): void {
    if (this.stopping) return;
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    // Requests that were due but never went out: failures, so a backlog is never hidden.
    const now = performance.now();
    for (let i = this.backlogHead; i < this.backlog.length; i++) {
      const b = this.backlog[i];
      this.recorder.failure(b.pending.kind, now - b.pending.from, 'not_sent');
    }
    this.backlog.length = 0;
    this.backlogHead = 0;
    this.endMs = Math.min(this.endMs, now);
    this.maybeDone();
  }

  private maybeDone(): void {
    if (this.inFlight > 0) return;
    if (!this.stopping) {
      // Count reached with nothing in flight.
      this.stopping = true;
      if (this.timer) clearTimeout(this.timer);
    }
    this.finish();
  }

  private finish(): void {
    const done = this.done;
    if (done === null) return;
    this.done = null;
    if (this.watchdog) clearInterval(this.watchdog);
    // Whatever is still unanswered after the drain is a timeout.
    for (const c of this.conns) if (c.busy) c.abort('timeout');
    done();
  }
}

export function runEngine(plan: EnginePlan): Promise<EngineResult> {
  return new Engine(plan).run();
}
