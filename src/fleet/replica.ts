/**
 * One replica of a fleet: the server (src/main.ts) in a child process of its own on a fixed
 * loopback port, with EDIFICE_REPLICA naming it. Node runs the server directly (no npm or tsx
 * wrapper in between), so a signal sent to the child's PID is the server's. A replica that ends
 * without being asked is started again on the same port (HAProxy's configuration names it), after
 * a pause that grows while it keeps dying young.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** tsx's loader by its path, as bin/edifice runs the server. */
const TSX_LOADER = join(ROOT, 'node_modules/tsx/dist/loader.mjs');
const MAIN = join(ROOT, 'src/main.ts');
const ORPHAN_GUARD = join(ROOT, 'src/fleet/orphan-guard.ts');

/** A replica that lived less than this was dying young: its next start waits longer. */
const YOUNG_MS = 10_000;
const FIRST_PAUSE_MS = 250;
const LONGEST_PAUSE_MS = 15_000;
/** Lines of a replica's own output (not JSON log lines) kept to explain an exit. */
const TAIL_LINES = 20;

export interface ReplicaSpec {
  name: string;
  /** Loopback port of its API. */
  port: number;
  /** Its /metrics port; 0: none. */
  metricsPort: number;
  /** The environment it runs with; EDIFICE_PORT, EDIFICE_REPLICA and the metrics port are set here. */
  env: NodeJS.ProcessEnv;
}

export class Replica {
  private child: ChildProcess | null = null;
  private startedAt = 0;
  private pause = FIRST_PAUSE_MS;
  private timer: NodeJS.Timeout | null = null;
  private stopping = false;
  private supervised = false;
  private readonly tail: string[] = [];
  /** Times it was started again after an exit it was not asked for. */
  restarts = 0;

  constructor(
    readonly spec: ReplicaSpec,
    private readonly log: Logger,
    /** Where its JSON log lines go, each with "replica" added. */
    private readonly out: (line: string) => void,
  ) {}

  get name(): string {
    return this.spec.name;
  }

  /** The PID of the running server; null between an exit and its restart. */
  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  /** Its own last lines of output (banner, refusals on stderr), to explain an exit. */
  output(): string {
    return this.tail.join('\n');
  }

  /** Starts the server; from then on an exit not asked for restarts it once `supervise()` is called. */
  start(): void {
    const { spec } = this;
    const child = spawn(process.execPath, ['--single-threaded-gc', '--import', TSX_LOADER, '--import', ORPHAN_GUARD, MAIN], {
      cwd: process.cwd(),
      env: {
        ...spec.env,
        EDIFICE_HOST: '127.0.0.1',
        EDIFICE_PORT: String(spec.port),
        EDIFICE_METRICS_HOST: '127.0.0.1',
        EDIFICE_METRICS_PORT: String(spec.metricsPort),
        EDIFICE_REPLICA: spec.name,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    this.startedAt = Date.now();
    this.lines(child.stdout!, false);
    this.lines(child.stderr!, true);
    child.once('exit', (code, signal) => this.exited(child, code, signal));
    this.log.info({ replica: spec.name, replicaPid: child.pid, port: spec.port }, 'replica started');
  }

  /** Restart it whenever it ends without being asked. */
  supervise(): void {
    this.supervised = true;
  }

  /** Resolves once GET /readyz answers 200; rejects when the process ends first or `timeoutMs` passes. */
  async ready(timeoutMs: number): Promise<void> {
    const child = this.child;
    const until = Date.now() + timeoutMs;
    while (Date.now() < until) {
      if (child === null || child.exitCode !== null || child.signalCode !== null)
        throw new Error(`replica ${this.name} ended before it was ready:\n${this.output()}`);
      try {
        const r = await fetch(`http://127.0.0.1:${this.spec.port}/readyz`, { signal: AbortSignal.timeout(1_000) });
        await r.arrayBuffer();
        if (r.status === 200) return;
      } catch {
        // Not listening yet.
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`replica ${this.name} was not ready within ${Math.round(timeoutMs / 1000)} s:\n${this.output()}`);
  }

  /** Sends `signal` to the running server (SIGHUP: rescan the snapshots). */
  signal(signal: NodeJS.Signals): void {
    this.child?.kill(signal);
  }

  /** Stops it (SIGTERM: the server finishes what is in flight), SIGKILL after `graceMs`; no restart. */
  stop(graceMs: number): Promise<void> {
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    const child = this.child;
    if (child === null || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      const kill = setTimeout(() => {
        this.log.warn({ replica: this.name, replicaPid: child.pid, graceMs }, 'replica still running after its grace: killed');
        child.kill('SIGKILL');
      }, graceMs);
      child.once('exit', () => {
        clearTimeout(kill);
        resolve();
      });
      child.kill('SIGTERM');
    });
  }

  private exited(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (this.child === child) this.child = null;
    if (this.stopping) {
      this.log.info({ replica: this.name, replicaPid: child.pid, code, signal }, 'replica stopped');
      return;
    }
    if (!this.supervised) return; // the start waiting in ready() reports it
    const lived = Date.now() - this.startedAt;
    this.pause = lived < YOUNG_MS ? Math.min(LONGEST_PAUSE_MS, this.pause * 2) : FIRST_PAUSE_MS;
    this.log.error(
      {
        replica: this.name,
        replicaPid: child.pid,
        code,
        signal,
        livedMs: lived,
        restartInMs: this.pause,
        output: this.output() || undefined,
      },
      'replica ended without being asked: restarting it',
    );
    this.timer = setTimeout(() => {
      this.timer = null;
      if (this.stopping) return;
      this.restarts++;
      this.start();
    }, this.pause);
  }

  /** Splits a stream into lines: JSON log lines go out with the replica's name, the others into the tail. */
  private lines(stream: NodeJS.ReadableStream, isStderr: boolean): void {
    let rest = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      rest += chunk;
      let nl: number;
      while ((nl = rest.indexOf('\n')) >= 0) {
        const line = rest.slice(0, nl);
        rest = rest.slice(nl + 1);
        // HAProxy's health checks, every half second, are left out of the log unless they fail.
        if (line.includes('"route":"/readyz","status":200')) continue;
        if (line.startsWith('{') && line.endsWith('}')) this.out(`{"replica":${JSON.stringify(this.name)},${line.slice(1)}`);
        else if (line.trim() !== '') {
          this.tail.push(line);
          if (this.tail.length > TAIL_LINES) this.tail.shift();
          if (isStderr) this.log.warn({ replica: this.name, stderr: line }, 'replica wrote to stderr');
        }
      }
    });
  }
}
