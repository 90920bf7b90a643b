/**
 * Debian's HAProxy in front of a fleet: run in the foreground (-db) on the configuration
 * haproxy.ts writes, in a temporary folder. Its own messages (a replica marked down or up) and
 * the lines of requests it retried or failed go to the fleet's log. Stopped softly (SIGUSR1: it
 * stops listening and lets the requests in flight finish), then hard after a grace.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';

/** A request's log line (haproxy.ts): the client's address and port, then the date in brackets. */
const REQUEST_LINE = /^\S+:\d+ \[\d/;

export function haproxyBinary(): string {
  for (const p of ['/usr/sbin/haproxy', '/usr/bin/haproxy', '/usr/local/sbin/haproxy']) if (existsSync(p)) return p;
  throw new Error('HAProxy is not installed (no /usr/sbin/haproxy): apt-get install -y haproxy');
}

export interface ProxyProcess {
  readonly pid: number | undefined;
  /** Resolves when HAProxy ends, with whether the fleet asked it to. */
  readonly ended: Promise<{ asked: boolean; code: number | null; signal: NodeJS.Signals | null }>;
  stop(graceMs: number): Promise<void>;
}

function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, host, () => {
      s.end();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/** Starts HAProxy on `config` (checked first with `haproxy -c`); resolves once `host:port` accepts connections. */
export async function runHaproxy(config: string, host: string, port: number, log: Logger): Promise<ProxyProcess> {
  const binary = haproxyBinary();
  const dir = mkdtempSync(join(tmpdir(), 'edifice-fleet-haproxy-'));
  const file = join(dir, 'haproxy.cfg');
  writeFileSync(file, config);
  try {
    execFileSync(binary, ['-c', '-q', '-f', file], { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`HAProxy refused the fleet's configuration: ${String((err as { stderr?: Buffer }).stderr ?? err).trim()}`, {
      cause: err,
    });
  }
  const child: ChildProcess = spawn(binary, ['-db', '-f', file], { stdio: ['ignore', 'pipe', 'pipe'] });
  let asked = false;
  const ended = new Promise<{ asked: boolean; code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      rmSync(dir, { recursive: true, force: true });
      resolve({ asked, code, signal });
    }),
  );
  for (const stream of [child.stdout!, child.stderr!]) {
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      for (const line of chunk.split('\n')) {
        if (line.trim() === '') continue;
        const request = REQUEST_LINE.test(line);
        // Its log (stdout) repeats stderr's messages without their level: only its request lines are news.
        if (stream === child.stdout && !request) continue;
        // "[WARNING] … Server replicas/r1 is DOWN", "[ALERT] …", and a request HAProxy retried or
        // failed ("127.0.0.1:40312 [07/Dec/2026:08:37:45.630] edifice replicas/r2 … 503 … sC-- …"):
        // the operator's attention; the rest is news.
        if (request || /\[(WARNING|ALERT)\]/.test(line)) log.warn({ haproxy: line.trim() }, 'haproxy');
        else log.info({ haproxy: line.trim() }, 'haproxy');
      }
    });
  }
  let exited = false;
  void ended.then(() => {
    exited = true;
  });
  for (let i = 0; ; i++) {
    if (await accepts(host, port)) break;
    if (exited || i >= 200) {
      child.kill('SIGKILL');
      throw new Error(`HAProxy did not listen on ${host}:${port} within 10 s`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    pid: child.pid,
    ended,
    stop: async (graceMs) => {
      if (exited) return;
      asked = true;
      const hard = setTimeout(() => child.kill('SIGTERM'), graceMs);
      child.kill('SIGUSR1');
      await ended;
      clearTimeout(hard);
    },
  };
}
