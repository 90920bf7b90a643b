/**
 * Crash safety of charges over real HTTP: the server (`src/main.ts`, as `npm start` runs it) is
 * killed with SIGKILL in the middle of a load of charged requests from one workspace near the end
 * of its credits, then started again on the same ledger file. Every 200 that reached the client
 * must be charged exactly once (one opening per building it returned), the credits charged must
 * add up, and no grant may be negative. Started the first time without npm start's
 * `--single-threaded-gc`, it warns; the second time with it, it does not. And the server started
 * on uWebSockets.js's JS fallback, which cannot serve it, stops at once with the reason instead
 * of at its first request.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { Ledger } from '../src/ledger/index.ts';
import { killServerProcesses, removeDir, startServerProcess, syntheticSnapshots, workspaceWithKey } from './http-helpers.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const children: ChildProcess[] = [];
let dir = '';

afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  killServerProcesses();
  if (dir) removeDir(dir);
});

interface Received {
  offset: number;
  ids: string[];
  charged: number;
}

describe('kill -9 during charged requests', () => {
  it('every response that reached the client was charged exactly once; no grant is negative', { timeout: 240_000 }, async () => {
    dir = await syntheticSnapshots(6000, 3);
    const ledgerPath = join(dir, 'ledger.db');
    const env = {
      EDIFICE_SNAPSHOTS: join(dir, 'snapshots'),
      EDIFICE_LEDGER: ledgerPath,
      EDIFICE_KEY_PER_MINUTE: '1000000',
      EDIFICE_DAILY_QUOTA: '1000000',
    };
    const setup = Ledger.open(ledgerPath);
    const { workspaceId, key } = workspaceWithKey(setup, 2_500);
    setup.close();

    // Started as `node --import tsx src/main.ts`, without the flag npm start passes: it says so.
    const first = await startServerProcess(env, []);
    expect(first.output()).toMatch(/"level":40,.*"msg":"Node runs without --single-threaded-gc, which npm start passes/);
    const headers = { Authorization: `Bearer ${key}` };
    // Pages over the whole country, walking the ranking: each page returns up to 100 buildings,
    // mostly new ones, so credits run out after about 25 pages.
    const bbox = '9.4,47.0,9.7,47.3';
    const received: Received[] = [];
    let refused402 = 0;
    let lost = 0;
    let sent = 0;
    const one = async (offset: number): Promise<void> => {
      sent++;
      try {
        const res = await fetch(`${first.base}/buildings?bbox=${bbox}&limit=100&offset=${offset}`, { headers });
        const body = (await res.json()) as { data?: { building_id: string }[] };
        if (res.status === 200)
          received.push({ offset, ids: body.data!.map((b) => b.building_id), charged: Number(res.headers.get('x-credits-charged')) });
        else if (res.status === 402) refused402++;
        else throw new Error(`unexpected ${res.status}`);
      } catch (err) {
        if ((err as Error).message.startsWith('unexpected')) throw err;
        lost++; // the connection died with the server
      }
    };
    // Eight clients in parallel, each walking its own offsets (with overlaps, so some pages are partly free).
    const clients = Array.from({ length: 8 }, async (_, c) => {
      for (let k = 0; k < 60 && first.child.exitCode === null && first.child.signalCode === null; k++)
        await one(((c * 7 + k * 3) % 99) * 100);
    });
    // Kill once the credits have run out for some requests, while others are in flight.
    while (received.length + refused402 < 45) await new Promise((r) => setTimeout(r, 5));
    first.child.kill('SIGKILL');
    await Promise.all(clients);
    expect(received.length).toBeGreaterThanOrEqual(20);
    expect(refused402).toBeGreaterThan(0);

    // Restart on the same ledger: it opens, reads the openings back, and serves a page the client
    // got before the crash for nothing (every building of it is opened).
    const second = await startServerProcess({ ...env, EDIFICE_LOG_LEVEL: 'info' }, ['--single-threaded-gc']);
    expect(second.output()).not.toContain('single-threaded-gc');
    const again = await fetch(`${second.base}/buildings?bbox=${bbox}&limit=100&offset=${received[0].offset}`, { headers });
    expect(again.status).toBe(200);
    expect(again.headers.get('x-credits-charged')).toBe('0');
    expect(((await again.json()) as { data: { building_id: string }[] }).data.map((b) => b.building_id)).toEqual(received[0].ids);
    const ready = /"openings":(\d+),"shared":(\d+),"loadMs":\d+,"priority":{[^}]*},"msg":"ledger thread ready/.exec(second.output());
    expect(ready, second.output()).not.toBeNull();
    second.child.kill('SIGTERM');

    const ledger = Ledger.open(ledgerPath);
    try {
      expect(ledger.audit()).toEqual([]);
    } finally {
      ledger.close();
    }
    const db = new Database(ledgerPath, { readonly: true });
    try {
      const negative = db.prepare('SELECT count(*) AS n FROM grants WHERE remaining < 0').get() as { n: number };
      expect(negative.n).toBe(0);
      const openings = new Map<string, number>();
      for (const row of db
        .prepare('SELECT building_id, count(*) AS n FROM openings WHERE workspace_id = ? GROUP BY building_id')
        .all(workspaceId) as { building_id: string; n: number }[]) {
        openings.set(row.building_id, row.n);
      }
      const charged = (
        db.prepare('SELECT coalesce(sum(credits), 0) AS c FROM charges WHERE workspace_id = ?').get(workspaceId) as { c: number }
      ).c;
      // Every building of every response the client got is opened exactly once.
      for (const r of received) for (const id of r.ids) expect(openings.get(id), id).toBe(1);
      // What the client was told it paid is in the ledger (requests whose answer was lost may be charged too).
      const told = received.reduce((s, r) => s + r.charged, 0);
      expect(told).toBeLessThanOrEqual(charged);
      expect(charged).toBe(openings.size);
      // What the restarted server read, and shared with its workers: every opening.
      expect([Number(ready![1]), Number(ready![2])]).toEqual([openings.size, openings.size]);
      expect(charged).toBeLessThanOrEqual(2_500 + 5);
    } finally {
      db.close();
    }
    process.stdout.write(
      `http-crash: ${sent} sent, ${received.length} answered 200, ${refused402} answered 402, ${lost} lost with the server\n`,
    );
  });
});

describe("on uWebSockets.js's JS fallback", () => {
  it('refuses to start, naming the cause and the remedy, instead of ending at the first request', { timeout: 120_000 }, async () => {
    const snapshots = await syntheticSnapshots(1000);
    for (const workers of ['0', '2']) {
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
        cwd: ROOT,
        env: {
          ...process.env,
          UWS_USE_FALLBACK: '1',
          EDIFICE_WORKERS: workers,
          EDIFICE_PORT: '0',
          EDIFICE_METRICS_PORT: '0',
          EDIFICE_LOG_LEVEL: 'warn',
          EDIFICE_SNAPSHOTS: join(snapshots, 'snapshots'),
          EDIFICE_LEDGER: join(snapshots, `ledger-${workers}.db`),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.push(child);
      let out = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString();
      });
      child.stderr!.on('data', (chunk: Buffer) => {
        out += chunk.toString();
      });
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      expect(code, out).toBe(1);
      expect(out).toMatch(
        /edifice: (a worker could not start: )?UWS_USE_FALLBACK asks for uWebSockets\.js's JS fallback, which cannot serve this API/,
      );
      expect(out).toContain('Run Node 20');
      expect(out).not.toMatch(/listening on/);
    }
    removeDir(snapshots);
  });
});
