/**
 * The quick start's demo key: made only when the server generates the demo country into the
 * default, empty ./snapshots (a fresh clone), printed with a curl line that works; never made or
 * printed beside real snapshots, nor kept once real snapshots join a running demo's folder; and
 * once revoked, never revived by a later start.
 */
import { cpSync, existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Ledger } from '../src/ledger/index.ts';
import { getFresh, killServerProcesses, removeDir, startServerProcess, syntheticSnapshots, waitForOutput } from './http-helpers.ts';

const dirs: string[] = [];
afterAll(() => {
  killServerProcesses();
  for (const d of dirs) removeDir(d);
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'edifice-demo-'));
  dirs.push(dir);
  return dir;
}

/** Starts the server in `cwd`, waits for its banner, stops it (SIGTERM, exit 0); returns what it printed and what it served meanwhile. */
async function startAndStop(
  cwd: string,
  env: NodeJS.ProcessEnv,
  whileUp: (base: string, output: string) => Promise<void> = async () => {},
): Promise<string> {
  const server = await startServerProcess(
    { EDIFICE_WORKERS: '0', EDIFICE_DEMO_BUILDINGS: '1000', EDIFICE_LOG_LEVEL: 'info', ...env },
    [],
    cwd,
  );
  const exited = new Promise<number | null>((resolve) => server.child.once('exit', (code) => resolve(code)));
  await waitForOutput(server.output, /Edifice is listening[^]*\n\n/);
  await whileUp(server.base, server.output());
  server.child.kill('SIGTERM');
  expect(await exited, server.output()).toBe(0);
  return server.output();
}

const KEY = /\bedf_[A-Za-z0-9_]{20,}/;

describe('the demo key', () => {
  it(
    'a fresh clone (no snapshot in ./snapshots) gets the demo country and a key whose curl line works; revoked, it stays revoked',
    { timeout: 120_000 },
    async () => {
      const cwd = tempDir();
      const first = await startAndStop(cwd, {}, async (base, output) => {
        const key = /Demo key: (\S+)/.exec(output)![1];
        const curl = /curl -s -H 'Authorization: Bearer (\S+)' '([^']+)'/.exec(output)!;
        expect(curl[1]).toBe(key);
        const url = new URL(curl[2]);
        const page = await getFresh(url.origin, url.pathname + url.search, { Authorization: `Bearer ${key}` });
        expect(page.status).toBe(200);
        expect(page.body.data).toHaveLength(3);
      });
      const key = /Demo key: (\S+)/.exec(first)![1];
      expect(existsSync(join(cwd, 'snapshots', '.edifice-demo.json'))).toBe(true);

      // A second start reuses it.
      const second = await startAndStop(cwd, {});
      expect(/Demo key: (\S+)/.exec(second)![1]).toBe(key);

      const ledger = Ledger.open(join(cwd, 'data', 'ledger.db'));
      const [demo] = ledger.listWorkspaces();
      const [keyInfo] = ledger.listKeys(demo.id);
      ledger.revokeKey(keyInfo.keyId);
      ledger.close();

      for (let start = 0; start < 2; start++) {
        const later = await startAndStop(cwd, {});
        expect(later).toMatch(/demo key [^ ]+ of workspace [^ ]+ was revoked/);
        expect(later).not.toMatch(KEY);
      }
      const after = Ledger.open(join(cwd, 'data', 'ledger.db'));
      expect(after.listWorkspaces()).toHaveLength(1);
      expect(after.listKeys(demo.id).map((k) => k.status)).toEqual(['revoked']);
      after.close();
      expect(existsSync(join(cwd, 'data', 'demo-key.txt'))).toBe(false);
    },
  );

  it(
    'serving real snapshots (named by EDIFICE_SNAPSHOTS, or put in ./snapshots) makes no demo and prints no key',
    { timeout: 120_000 },
    async () => {
      const real = await syntheticSnapshots(1000);
      dirs.push(real);
      const named = await startAndStop(tempDir(), { EDIFICE_SNAPSHOTS: join(real, 'snapshots'), EDIFICE_LEDGER: join(real, 'ledger.db') });
      expect(named).not.toMatch(KEY);
      expect(named).not.toMatch(/Demo/);

      const cwd = tempDir();
      cpSync(join(real, 'snapshots'), join(cwd, 'snapshots'), { recursive: true });
      const local = await startAndStop(cwd, {});
      expect(local).not.toMatch(KEY);
      expect(local).not.toMatch(/generating the synthetic demo country/);

      for (const path of [join(real, 'ledger.db'), join(cwd, 'data', 'ledger.db')]) {
        const ledger = Ledger.open(path);
        expect(ledger.listWorkspaces()).toEqual([]);
        ledger.close();
      }
      expect(existsSync(join(cwd, 'data', 'demo-key.txt'))).toBe(false);
    },
  );

  it(
    'a running demo whose folder gains a real snapshot revokes its key at the rescan (SIGHUP), in every worker',
    { timeout: 120_000 },
    async () => {
      const cwd = tempDir();
      const server = await startServerProcess({ EDIFICE_WORKERS: '2', EDIFICE_DEMO_BUILDINGS: '1000', EDIFICE_LOG_LEVEL: 'info' }, [], cwd);
      const exited = new Promise<number | null>((resolve) => server.child.once('exit', (code) => resolve(code)));
      await waitForOutput(server.output, /Edifice is listening[^]*\n\n/);
      const key = /Demo key: (\S+)/.exec(server.output())![1];
      const curl = /curl -s -H 'Authorization: Bearer \S+' '([^']+)'/.exec(server.output())!;
      const url = new URL(curl[1]);
      const ask = () => getFresh(url.origin, url.pathname + url.search, { Authorization: `Bearer ${key}` });
      expect((await ask()).status).toBe(200);

      // A real snapshot, of another country, put beside the demo's; the demo's own files stay.
      const real = await syntheticSnapshots(1000, 11, 'XB');
      dirs.push(real);
      cpSync(join(real, 'snapshots', 'XB'), join(cwd, 'snapshots', 'XB'), { recursive: true });
      server.child.kill('SIGHUP');
      await waitForOutput(
        server.output,
        /demo workspace's keys are revoked: the snapshots folder now holds snapshots the demo did not generate/,
      );
      expect(existsSync(join(cwd, 'data', 'demo-key.txt'))).toBe(false);
      // Each worker's key cache keeps a key for at most 2 s: every answer after that is 401, whichever worker answers.
      const deadline = Date.now() + 10_000;
      let status = 200;
      while (Date.now() < deadline && status !== 401) {
        await new Promise((r) => setTimeout(r, 200));
        status = (await ask()).status;
      }
      expect(status).toBe(401);
      await new Promise((r) => setTimeout(r, 2_100));
      for (let i = 0; i < 20; i++) expect((await ask()).status).toBe(401);

      server.child.kill('SIGTERM');
      expect(await exited, server.output()).toBe(0);
      const ledger = Ledger.open(join(cwd, 'data', 'ledger.db'));
      expect(ledger.authenticate(key).ok).toBe(false);
      ledger.close();
      // The next start is no demo: it serves both countries and prints no key.
      const next = await startAndStop(cwd, {});
      expect(next).not.toMatch(KEY);
    },
  );

  it(
    'a demo ledger later serving real snapshots has its demo key revoked, and a return to the demo does not revive it',
    { timeout: 120_000 },
    async () => {
      const cwd = tempDir();
      const demo = await startAndStop(cwd, {});
      const key = /Demo key: (\S+)/.exec(demo)![1];
      const real = await syntheticSnapshots(1000);
      dirs.push(real);
      const serving = await startAndStop(cwd, { EDIFICE_SNAPSHOTS: join(real, 'snapshots') });
      expect(serving).toMatch(/demo workspace's keys are revoked/);
      expect(serving).not.toMatch(KEY);
      const back = await startAndStop(cwd, {});
      expect(back).toMatch(/was revoked/);
      expect(back).not.toContain(key);
      const ledger = Ledger.open(join(cwd, 'data', 'ledger.db'));
      expect(ledger.authenticate(key).ok).toBe(false);
      ledger.close();
    },
  );
});
