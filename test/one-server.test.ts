/**
 * One server per port and per ledger file. uWebSockets.js listens with SO_REUSEPORT, so a second
 * server on a taken port would start without a word while the kernel split the connections
 * (every limit doubled); two servers on one ledger would each count the limits alone. The second
 * is refused with one line and exit 1, the server's own workers still share their port, the admin
 * CLI still opens the ledger while a server runs, and a killed server leaves no stale lock.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { Catalog } from '../src/catalog/catalog.ts';
import { loadConfig } from '../src/config.ts';
import { Ledger } from '../src/ledger/index.ts';
import { holdPort } from '../src/http/port.ts';
import { startServer } from '../src/http/server.ts';
import {
  ROOT,
  TSX_LOADER,
  getFresh,
  killServerProcesses,
  removeDir,
  startServerProcess,
  syntheticSnapshots,
  trackServerProcess,
} from './http-helpers.ts';

const dirs: string[] = [];
afterAll(() => {
  killServerProcesses();
  for (const d of dirs) removeDir(d);
});

/** Runs a command of the project until it exits or prints that it listens; at most 60 s. */
function run(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; listening: boolean; stdout: string; stderr: string }> {
  const child = trackServerProcess(
    spawn(process.execPath, ['--import', TSX_LOADER, ...args], {
      cwd: ROOT,
      env: { ...process.env, EDIFICE_LOG_LEVEL: 'warn', EDIFICE_METRICS_PORT: '0', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let stdout = '';
  let stderr = '';
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
    }, 60_000);
    child.stdout!.on('data', (c: Buffer) => {
      stdout += c.toString();
      if (/listening on/.test(stdout)) {
        clearTimeout(timer);
        child.kill('SIGKILL');
        resolve({ code: null, listening: true, stdout, stderr });
      }
    });
    child.stderr!.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, listening: false, stdout, stderr });
    });
  });
}

async function twoFolders(): Promise<[string, string]> {
  const a = await syntheticSnapshots(1000);
  const b = await syntheticSnapshots(1000, 8);
  dirs.push(a, b);
  return [a, b];
}

describe('one server per port', () => {
  it(
    'refuses a second server on the port a server with workers listens on, with one line naming the port, exit 1',
    { timeout: 180_000 },
    async () => {
      const [a, b] = await twoFolders();
      const first = await startServerProcess(
        { EDIFICE_SNAPSHOTS: join(a, 'snapshots'), EDIFICE_LEDGER: join(a, 'ledger.db'), EDIFICE_WORKERS: '2' },
        [],
      );
      const port = new URL(first.base).port;
      // Its two workers share the port: fresh connections are answered, whichever worker takes them.
      for (let i = 0; i < 6; i++) expect((await getFresh(first.base, '/openapi.json')).status).toBe(200);
      for (const workers of ['2', '0']) {
        const second = await run(['src/main.ts'], {
          EDIFICE_SNAPSHOTS: join(b, 'snapshots'),
          EDIFICE_LEDGER: join(b, `ledger-${workers}.db`),
          EDIFICE_WORKERS: workers,
          EDIFICE_PORT: port,
        });
        expect({ listening: second.listening, code: second.code }, second.stdout + second.stderr).toEqual({ listening: false, code: 1 });
        expect(second.stderr.trim()).toBe(
          `edifice: Port ${port} on 127.0.0.1 is taken: another process listens there (stop it, or set EDIFICE_PORT).`,
        );
      }
      expect((await getFresh(first.base, '/openapi.json')).status).toBe(200);
      first.child.kill('SIGTERM');
    },
  );

  it('a server on the main thread alone holds its port exclusively too', { timeout: 120_000 }, async () => {
    const [a, b] = await twoFolders();
    const first = await startServerProcess(
      { EDIFICE_SNAPSHOTS: join(a, 'snapshots'), EDIFICE_LEDGER: join(a, 'ledger.db'), EDIFICE_WORKERS: '0' },
      [],
    );
    const port = new URL(first.base).port;
    const second = await run(['src/main.ts'], {
      EDIFICE_SNAPSHOTS: join(b, 'snapshots'),
      EDIFICE_LEDGER: join(b, 'ledger.db'),
      EDIFICE_WORKERS: '1',
      EDIFICE_PORT: port,
    });
    expect({ listening: second.listening, code: second.code }, second.stdout + second.stderr).toEqual({ listening: false, code: 1 });
    expect(second.stderr).toContain(`Port ${port} on 127.0.0.1 is taken`);
    first.child.kill('SIGTERM');
  });
});

describe('the listen itself', () => {
  it(
    'is exclusive: a server, or a pool holding its port, is refused on a port taken, and takes it once free',
    { timeout: 60_000 },
    async () => {
      const [a] = await twoFolders();
      const catalog = Catalog.open(join(a, 'snapshots'), { log: () => {} });
      const ledger = Ledger.open(join(a, 'ledger.db'));
      const serve = (port: number) =>
        startServer({
          config: { ...loadConfig({ EDIFICE_WARMUP_REQUESTS: '0' }), port },
          catalog,
          ledger,
          log: pino({ level: 'silent' }),
        });
      try {
        const first = await serve(0);
        await expect(serve(first.port)).rejects.toThrow(`Port ${first.port} on 127.0.0.1 is taken`);
        await expect(holdPort('127.0.0.1', first.port)).rejects.toThrow(`Port ${first.port} on 127.0.0.1 is taken`);
        first.close();
        // A pool holds its port while its workers start: no other server takes it meanwhile.
        const held = await holdPort('127.0.0.1', first.port);
        await expect(serve(held.port)).rejects.toThrow(`Port ${held.port} on 127.0.0.1 is taken`);
        held.release();
        const again = await serve(held.port);
        expect(again.port).toBe(held.port);
        again.close();
      } finally {
        ledger.close();
      }
    },
  );
});

describe('one server per ledger file', () => {
  it(
    'refuses a second server on the ledger of a running one; the admin CLI still opens it; a killed server leaves no lock',
    { timeout: 180_000 },
    async () => {
      const [a] = await twoFolders();
      const env = { EDIFICE_SNAPSHOTS: join(a, 'snapshots'), EDIFICE_LEDGER: join(a, 'ledger.db'), EDIFICE_WORKERS: '1' };
      const first = await startServerProcess(env, []);
      const second = await run(['src/main.ts'], { ...env, EDIFICE_PORT: '0' });
      expect({ listening: second.listening, code: second.code }, second.stdout + second.stderr).toEqual({ listening: false, code: 1 });
      expect(second.stderr.split('\n').filter(Boolean)).toHaveLength(1);
      expect(second.stderr).toMatch(/^edifice: The ledger .*ledger\.db is in use by another Edifice server/);

      const admin = await run(
        ['tools/admin.ts', '--ledger', join(a, 'ledger.db'), 'create-workspace', '--name', 'Ops', '--member', 'ops@example.com'],
        {},
      );
      expect(admin.code, admin.stdout + admin.stderr).toBe(0);

      first.child.kill('SIGKILL');
      await new Promise((resolve) => first.child.once('exit', resolve));
      const third = await startServerProcess(env, []);
      expect((await getFresh(new URL(third.base).origin, '/readyz')).status).toBe(200);
      third.child.kill('SIGTERM');
    },
  );
});
