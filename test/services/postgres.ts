/**
 * A throwaway PostgreSQL for tests: a new cluster (initdb) in a temporary folder, started with
 * pg_ctl on a free loopback port, its socket in that folder too, so the suite never touches a
 * database of the machine's. PostgreSQL refuses to run as root: as root, the cluster belongs to
 * the `postgres` user (Debian's package makes it) and its commands run as that user.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { freePort } from './ports.ts';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestPostgres {
  /** `postgres://…` of the cluster's `postgres` database. */
  url: string;
  port: number;
  /** Stops the server (fast shutdown): clients then see their connections fail. */
  stop(): void;
  /** Starts it again on the same port and data. */
  start(): void;
  /** Stops it and removes its folder. */
  destroy(): void;
}

/** The folder of PostgreSQL's programs: the newest of Debian's, else wherever pg_ctl is on PATH. */
export function postgresBin(): string {
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
      .sort((a, b) => Number(b) - Number(a));
    if (versions.length > 0) return join(root, versions[0], 'bin');
  }
  for (const dir of (process.env.PATH ?? '').split(':')) if (existsSync(join(dir, 'initdb'))) return dir;
  throw new Error('PostgreSQL is not installed (no initdb): apt-get install -y postgresql');
}

/**
 * Makes `dir` a folder PostgreSQL may keep a cluster in (as root: the `postgres` user's, mode
 * 0700), and gives the runner of its programs (as that user when root).
 */
export function postgresFolder(dir: string, timeoutMs: number): (program: string, args: string[]) => void {
  const bin = postgresBin();
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    chownSync(dir, uid, gid);
  }
  chmodSync(dir, 0o700);
  return (program, args) => {
    const cmd = asRoot ? ['runuser', '-u', 'postgres', '--', join(bin, program), ...args] : [join(bin, program), ...args];
    execFileSync(cmd[0], cmd.slice(1), { stdio: ['ignore', 'ignore', 'pipe'], timeout: timeoutMs });
  };
}

/**
 * `durable`: commits wait for their fsync, as in production (for benchmarks); tests run without
 * (fsync=off), which changes no behaviour they check.
 */
export async function startPostgres(how: { durable?: boolean } = {}): Promise<TestPostgres> {
  const dir = mkdtempSync(join(tmpdir(), 'edifice-pg-'));
  const data = join(dir, 'data');
  const run = postgresFolder(dir, 60_000);
  run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
  const port = await freePort();
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 ${how.durable ? '' : '-c fsync=off '}-c max_connections=200 -c shared_buffers=32MB`;
  const start = (): void => run('pg_ctl', ['-D', data, '-o', options, '-l', join(dir, 'log'), '-w', '-t', '60', 'start']);
  const stop = (): void => run('pg_ctl', ['-D', data, '-m', 'fast', '-w', '-t', '60', 'stop']);
  start();
  let running = true;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    stop: () => {
      if (running) stop();
      running = false;
    },
    start: () => {
      if (!running) start();
      running = true;
    },
    destroy: () => {
      try {
        if (running) stop();
      } finally {
        running = false;
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
