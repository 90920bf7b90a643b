/**
 * Signals reach the server. `bin/edifice`, the entry point for supervisors, `exec`s Node, so the
 * PID a supervisor holds is the server's: a SIGTERM to it stops the server with its workers and
 * leaves no process behind and the port free (`npm start` runs npm, sh and tsx before Node, and a
 * signal to the first orphans a serving Node). A SIGHUP during the start is kept and acted on
 * (a rescan) once the server is up, rather than ending the process by its default action.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, killServerProcesses, removeDir, syntheticSnapshots, trackServerProcess, waitForOutput } from './http-helpers.ts';

const dirs: string[] = [];
afterAll(() => {
  killServerProcesses();
  for (const d of dirs) removeDir(d);
});

/** Starts `bin/edifice` as a supervisor would: the PID it gets is the one it signals. */
function startEntryPoint(env: NodeJS.ProcessEnv) {
  const child = trackServerProcess(
    spawn(join(ROOT, 'bin', 'edifice'), [], {
      cwd: ROOT,
      env: { ...process.env, NODE: process.execPath, EDIFICE_PORT: '0', EDIFICE_METRICS_PORT: '0', EDIFICE_LOG_LEVEL: 'info', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let out = '';
  child.stdout!.on('data', (c: Buffer) => {
    out += c.toString();
  });
  child.stderr!.on('data', (c: Buffer) => {
    out += c.toString();
  });
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, output: () => out, exited };
}

/** PIDs of the processes whose environment holds `marker` (readable: this user's). */
function processesMarked(marker: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/environ`, 'latin1').includes(marker)) found.push(Number(name));
    } catch {
      // Gone meanwhile, or another user's.
    }
  }
  return found;
}

/** The parent PID of a process (field 4 of /proc/<pid>/stat, after the command's parenthesis). */
function parentOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

describe('the operator entry point, bin/edifice', () => {
  it(
    'is the server process itself: SIGTERM to its PID stops the server, no node process is left, the port is free',
    { timeout: 120_000 },
    async () => {
      const dir = await syntheticSnapshots(1000);
      dirs.push(dir);
      const marker = `EDIFICE_TEST_MARK=${Math.random().toString(36).slice(2)}`;
      const [name, value] = marker.split('=');
      const server = startEntryPoint({
        EDIFICE_SNAPSHOTS: join(dir, 'snapshots'),
        EDIFICE_LEDGER: join(dir, 'ledger.db'),
        EDIFICE_WORKERS: '2',
        [name]: value,
      });
      await waitForOutput(server.output, /listening on [^\s]+:(\d+)/);
      const port = Number(/listening on [^\s]+:(\d+)/.exec(server.output())![1]);
      // The PID the supervisor holds is Node's, not a shell's or a wrapper's.
      expect(realpathSync(readlinkSync(`/proc/${server.child.pid}/exe`))).toBe(realpathSync(process.execPath));
      // Nothing stands between: every other process of its tree is its own child (tsx's esbuild service).
      for (const pid of processesMarked(marker)) if (pid !== server.child.pid) expect(parentOf(pid)).toBe(server.child.pid);
      expect(await portFree(port)).toBe(false);

      server.child.kill('SIGTERM');
      expect(await server.exited, server.output()).toEqual({ code: 0, signal: null });
      // Its children end with it (esbuild's when its stdin closes): none is left running, however long we look (5 s).
      const until = Date.now() + 5_000;
      while (processesMarked(marker).length > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
      expect(processesMarked(marker)).toEqual([]);
      expect(await portFree(port)).toBe(true);
    },
  );

  it('keeps a SIGHUP that comes during the start and rescans once up, instead of ending', { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'edifice-hup-'));
    dirs.push(dir);
    const server = startEntryPoint({
      EDIFICE_SNAPSHOTS: join(dir, 'snapshots'),
      EDIFICE_LEDGER: join(dir, 'ledger.db'),
      EDIFICE_WORKERS: '1',
      EDIFICE_DEMO: '1',
      EDIFICE_DEMO_BUILDINGS: '20000',
    });
    await waitForOutput(server.output, /generating the synthetic demo country/);
    server.child.kill('SIGHUP');
    await waitForOutput(server.output, /"event":"snapshot_rescan"/);
    await waitForOutput(server.output, /Edifice is listening/);
    expect(server.output()).toMatch(/asked to rescan the snapshots while starting/);
    server.child.kill('SIGTERM');
    expect(await server.exited, server.output()).toEqual({ code: 0, signal: null });
  });
});
