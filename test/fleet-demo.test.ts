/**
 * `npm run fleet` on an empty snapshots folder, as on a fresh clone: the fleet generates the demo
 * country and the demo key once, before its replicas start (no replica generates anything), and
 * prints a curl line whose request works through HAProxy; SIGHUP reaches every replica; SIGTERM
 * stops the replicas and HAProxy and exits 0; a second start reuses the key.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDir, ROOT, TSX_LOADER } from './http-helpers.ts';
import { freePort } from './services/ports.ts';
import { startPostgres, type TestPostgres } from './services/postgres.ts';
import { startRedis, type TestRedis } from './services/redis.ts';

let pg: TestPostgres;
let redis: TestRedis;
let dir: string;
let port: number;
const pids = new Set<number>();

beforeAll(async () => {
  [pg, redis, port] = await Promise.all([startPostgres(), startRedis(), freePort()]);
  dir = mkdtempSync(join(tmpdir(), 'edifice-fleet-demo-'));
}, 60_000);

afterAll(async () => {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // ended with its fleet, as it should
    }
  }
  pg?.destroy();
  await redis?.destroy();
  if (dir) removeDir(dir);
});

/** Starts the fleet in `dir`; resolves with its output once the banner is out. */
function startFleet() {
  const child = spawn(process.execPath, ['--import', TSX_LOADER, join(ROOT, 'tools/fleet.ts')], {
    cwd: dir,
    env: {
      ...process.env,
      EDIFICE_PORT: String(port),
      EDIFICE_LEDGER: pg.url,
      EDIFICE_REDIS: redis.url,
      EDIFICE_REPLICAS: '2',
      EDIFICE_SNAPSHOTS: join(dir, 'snapshots'),
      EDIFICE_DEMO: '1',
      EDIFICE_DEMO_BUILDINGS: '1000',
      EDIFICE_WARMUP_REQUESTS: '0',
      EDIFICE_METRICS_PORT: '0',
      EDIFICE_LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  pids.add(child.pid!);
  let out = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const lines = () => out.split('\n');
  const banner = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no banner in 90 s:\n${out}`)), 90_000);
    const read = (c: Buffer) => {
      out += c.toString();
      for (const m of out.matchAll(/"(?:replicaPid|haproxyPid)":(\d+)/g)) pids.add(Number(m[1]));
      if (/SIGHUP to pid/.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', read);
    child.stderr!.on('data', read);
    void exited.then((code) => reject(new Error(`the fleet ended (${code}):\n${out}`)));
  });
  return { child, banner, exited, output: () => out, lines };
}

describe('npm run fleet on an empty snapshots folder', () => {
  it('makes the demo once, before the replicas; its curl line works through HAProxy; SIGHUP reaches every replica; SIGTERM stops all', async () => {
    const fleet = startFleet();
    await fleet.banner;
    const json = fleet
      .lines()
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { msg?: string; replica?: string; event?: string });
    expect(json.filter((l) => l.msg === 'demo snapshot written' && l.replica === undefined)).toHaveLength(1);
    expect(json.filter((l) => l.replica !== undefined && /generating|demo/.test(l.msg ?? ''))).toEqual([]);
    const curl = fleet.lines().find((l) => l.trim().startsWith('curl '))!;
    const [, key, url] = /Bearer (\S+)' '([^']+)'/.exec(curl)!;
    expect(url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${port}/v1/buildings\\?bbox=[-0-9.,]+&limit=3$`));
    const answer = await fetch(url, { headers: { Authorization: `Bearer ${key}` } });
    const body = (await answer.json()) as { data: unknown[]; links: { next: string | null } };
    expect(answer.status).toBe(200);
    expect(answer.headers.get('x-edifice-replica')).toMatch(/^r[12]$/);
    expect(body.data.length).toBe(3);
    // Links name the fleet's address, not a replica's.
    expect(body.links.next).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${port}/v1/`));

    fleet.child.kill('SIGHUP');
    await expect
      .poll(
        () =>
          new Set(
            fleet
              .lines()
              .filter((l) => l.includes('"event":"snapshot_rescan"'))
              .map((l) => JSON.parse(l).replica),
          ).size,
        {
          timeout: 20_000,
        },
      )
      .toBe(2);

    fleet.child.kill('SIGTERM');
    expect(await fleet.exited).toBe(0);
    for (const pid of pids) expect(() => process.kill(pid, 0)).toThrow();
    pids.clear();

    const again = startFleet();
    await again.banner;
    expect(again.output()).toContain(`Demo key: ${key}`);
    expect(again.output()).not.toContain('created with');
    expect(again.output()).not.toContain('demo snapshot written');
    again.child.kill('SIGTERM');
    expect(await again.exited).toBe(0);
  }, 240_000);
});
