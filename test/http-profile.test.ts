/**
 * Profiling a server started as `npm start` starts it: Node's --cpu-prof given to the process
 * reaches its threads, so that the profile of a server with workers holds the serving (each
 * worker and the ledger thread write their own), not only the main thread, which waits.
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from '../src/catalog/catalog.ts';
import { threadArgv } from '../src/thread-argv.mjs';
import { Ledger } from '../src/ledger/index.ts';
import { getFresh, killServerProcesses, removeDir, startServerProcess, syntheticSnapshots, workspaceWithKey } from './http-helpers.ts';

const dirs: string[] = [];

afterAll(() => {
  killServerProcesses();
  for (const d of dirs) removeDir(d);
});

describe('threadArgv', () => {
  it("keeps the process's profiling options with their values, but for file names, and nothing else", () => {
    const argv = [
      '--single-threaded-gc',
      '--import',
      'tsx',
      '--cpu-prof',
      '--cpu-prof-dir',
      '/tmp/p',
      '--cpu-prof-interval=500',
      '--heap-prof',
      '--heap-prof-name',
      'h.heapprofile',
      '--enable-source-maps',
    ];
    expect(threadArgv(argv)).toEqual(['--cpu-prof', '--cpu-prof-dir', '/tmp/p', '--cpu-prof-interval=500', '--heap-prof']);
    expect(threadArgv(['--cpu-prof', '--cpu-prof-name=main.cpuprofile', '--heap-prof-dir=/tmp/h'])).toEqual([
      '--cpu-prof',
      '--heap-prof-dir=/tmp/h',
    ]);
    expect(threadArgv(['--single-threaded-gc', '--import', 'tsx'])).toEqual([]);
  });
});

/** Names of the scripts a V8 CPU profile ran functions of, by file name. */
function scriptsOf(file: string): Set<string> {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as { nodes: { callFrame: { url: string } }[] };
  return new Set(profile.nodes.map((n) => n.callFrame.url.split('/').pop()!).filter((name) => name !== ''));
}

describe('a server started with --cpu-prof', () => {
  it('writes a profile for each worker and the ledger thread, holding their code', { timeout: 120_000 }, async () => {
    const dir = await syntheticSnapshots(1000);
    dirs.push(dir);
    const profiles = mkdtempSync(join(tmpdir(), 'edifice-profiles-'));
    dirs.push(profiles);
    const ledgerPath = join(dir, 'ledger.db');
    const ledger = Ledger.open(ledgerPath);
    const { key } = workspaceWithKey(ledger, 1_000);
    ledger.close();
    const server = await startServerProcess(
      { EDIFICE_SNAPSHOTS: join(dir, 'snapshots'), EDIFICE_LEDGER: ledgerPath, EDIFICE_WORKERS: '2' },
      ['--cpu-prof', '--cpu-prof-dir', profiles],
    );
    const exited = new Promise<number | null>((resolve) => server.child.once('exit', (code) => resolve(code)));
    const origin = server.base.replace(/\/v1$/, '');
    const snapshot = Catalog.open(join(dir, 'snapshots'), { log: () => {} }).view().snapshots[0];
    const at = `/v1/buildings/at?lat=${snapshot.lat[0]}&lon=${snapshot.lon[0]}&radius_m=1&limit=1`;
    const answer = await getFresh(origin, at, { Authorization: `Bearer ${key}` });
    expect(answer.status).toBe(200);
    expect(answer.headers['x-credits-charged']).toBe('1');
    server.child.kill('SIGTERM');
    expect(await exited).toBe(0);

    const files = readdirSync(profiles).filter((f) => f.endsWith('.cpuprofile'));
    const scripts = files.map((f) => scriptsOf(join(profiles, f)));
    expect(scripts.filter((s) => s.has('http-worker.mjs')).length).toBe(2);
    expect(scripts.filter((s) => s.has('http-ledger-thread.mjs')).length).toBe(1);
  });
});
