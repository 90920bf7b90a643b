/**
 * The servers of `bench:http`, each in its own child process (so the load generator and the
 * server never share a thread): start, wait until it listens, read its CPU time, stop.
 * A child's stdout and stderr go to a log file in the run's folder (Edifice logs one line per
 * request, as it would in production); the port is read from its "listening" line.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Catalog } from '../../src/catalog/catalog.ts';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface Child {
  name: string;
  pid: number;
  port: number;
  log: string;
  /** CPU seconds (user + system, every thread) the child has used so far. */
  cpuSeconds(): number;
  /** SIGTERM, then waits for the exit (a --cpu-prof child writes its profile on the way out). */
  stop(): Promise<void>;
}

const TICKS_PER_SECOND = 100;

function cpuSecondsOf(pid: number): number {
  // /proc/<pid>/stat: fields 14 and 15 are utime and stime in clock ticks; the command name
  // (field 2) may hold spaces, so count from the closing parenthesis.
  const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/**
 * Makes sure the newest snapshot of each country under `dir` has its prepared file beside it, as
 * a server's first start writes it (reading one that matches costs a fraction of a second): every
 * server of a run then starts with its whole store, where one started from the Arrow file alone
 * reads cold fields from that file until its cold blob is encoded, seconds after it listens.
 */
export async function ensurePrepared(dir: string): Promise<void> {
  await Catalog.open(dir, { prepared: {}, log: () => {} }).whenPrepared();
}

export async function startChild(
  name: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  log: string,
  listening: RegExp,
  timeoutMs = 600_000,
): Promise<Child> {
  const fd = openSync(log, 'w');
  const child: ChildProcess = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  let exited: number | null | undefined;
  const exit = new Promise<void>((resolve) =>
    child.on('exit', (code) => {
      exited = code;
      resolve();
    }),
  );
  const t0 = performance.now();
  let port = 0;
  while (port === 0) {
    if (exited !== undefined)
      throw new Error(`${name} exited with code ${exited} before listening; see ${log}:\n${readFileSync(log, 'utf8').slice(-2000)}`);
    if (performance.now() - t0 > timeoutMs) {
      child.kill('SIGKILL');
      throw new Error(`${name} did not listen within ${timeoutMs / 1000} s; see ${log}`);
    }
    await new Promise((r) => setTimeout(r, 100));
    const m = listening.exec(readFileSync(log, 'utf8'));
    if (m) port = Number(m[1]);
  }
  return {
    name,
    pid: child.pid!,
    port,
    log,
    cpuSeconds: () => cpuSecondsOf(child.pid!),
    stop: async () => {
      if (exited === undefined) child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exit;
      clearTimeout(killer);
    },
  };
}
