/**
 * A hot swap under load, on a real server (src/main.ts, two worker threads, 127.0.0.1): while
 * clients keep asking, a newer snapshot (with its prepared file) is put in place and SIGHUP
 * sent; then a corrupt newer one. No request fails; the newer snapshot is served once loaded;
 * the corrupt one is refused and the newer one keeps serving.
 */
import { mkdtempSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from '../src/catalog/catalog.ts';
import { Ledger } from '../src/ledger/index.ts';
import { writeSyntheticCountry } from '../src/synth/generate.ts';
import { killServerProcesses, removeDir, startServerProcess, waitForOutput, workspaceWithKey } from './http-helpers.ts';

const BOUNDS: [number, number, number, number] = [9.4, 47.0, 9.7, 47.3];
const dirs: string[] = [];
afterAll(() => {
  killServerProcesses();
  for (const d of dirs) removeDir(d);
});

/** GET on a kept-alive connection of `agent`; the status, or the error's message. At most 10 s. */
function get(agent: Agent, url: string, key?: string): Promise<{ status: number; body: string } | { error: string }> {
  return new Promise((resolve) => {
    const req = request(url, { agent, headers: key ? { Authorization: `Bearer ${key}` } : {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks).toString() }));
      res.on('error', (err) => resolve({ error: err.message }));
    });
    req.setTimeout(10_000, () => req.destroy(new Error('no answer in 10 s')));
    req.on('error', (err) => resolve({ error: err.message }));
    req.end();
  });
}

describe('a hot swap under concurrent requests', () => {
  it('fails no request, serves the newer snapshot once loaded and refuses a corrupt one', { timeout: 180_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'edifice-swap-'));
    dirs.push(dir);
    const snapshots = join(dir, 'snapshots');
    await writeSyntheticCountry({ seed: 7, buildings: 4000, bounds: BOUNDS, outDir: snapshots });
    // The newer snapshot, with its prepared file, as a build would leave them, outside the served folder until the swap.
    const staging = join(dir, 'staging');
    const newer = await writeSyntheticCountry({ seed: 8, buildings: 5000, bounds: BOUNDS, date: '2026-11-22', outDir: staging });
    const staged = Catalog.open(staging, { log: () => {}, prepared: {} });
    await staged.whenPrepared();

    const ledgerPath = join(dir, 'ledger.db');
    const ledger = Ledger.open(ledgerPath);
    const { key } = workspaceWithKey(ledger, 1_000_000);
    ledger.close();
    const server = await startServerProcess(
      {
        EDIFICE_SNAPSHOTS: snapshots,
        EDIFICE_LEDGER: ledgerPath,
        EDIFICE_WORKERS: '2',
        EDIFICE_LOG_LEVEL: 'info',
        EDIFICE_KEY_PER_MINUTE: '1000000',
        EDIFICE_DAILY_QUOTA: '1000000',
      },
      ['--single-threaded-gc'],
    );
    const countries = async (): Promise<string> => {
      const r = await get(new Agent(), `${server.base}/public/countries`);
      expect('status' in r && r.status, JSON.stringify(r)).toBe(200);
      return (JSON.parse((r as { body: string }).body) as { data: { snapshotDate: string }[] }).data[0].snapshotDate;
    };
    expect(await countries()).toBe('2026-11-21');

    // Six clients, each on its own kept-alive connection, asking until told to stop (at most 4,000 requests in all).
    let stop = false;
    let sent = 0;
    const failures: string[] = [];
    const client = async (c: number): Promise<void> => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      for (let i = 0; !stop && sent < 4000; i++) {
        sent++;
        const lon = BOUNDS[0] + 0.3 * (((c * 7919 + i * 104729) % 1000) / 1000);
        const lat = BOUNDS[1] + 0.3 * (((c * 15485863 + i * 32452843) % 1000) / 1000);
        const bbox = [lon, lat, lon + 0.02, lat + 0.02].map((v) => v.toFixed(5)).join(',');
        const r = await get(agent, `${server.base}/buildings?bbox=${bbox}&limit=5&sort=${['volume', 'height'][i % 2]}`, key);
        if (!('status' in r) || r.status !== 200) failures.push(JSON.stringify(r).slice(0, 300));
      }
      agent.destroy();
    };
    const clients = Promise.all([0, 1, 2, 3, 4, 5].map(client));
    const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

    await pause(500);
    renameSync(join(staging, 'XA', '2026-11-22.edifice'), join(snapshots, 'XA', '2026-11-22.edifice'));
    renameSync(newer.path, join(snapshots, 'XA', '2026-11-22.arrow'));
    const beforeSwap = sent;
    server.child.kill('SIGHUP');
    await waitForOutput(server.output, /"event":"snapshot_loaded"[^\n]*"date":"2026-11-22"[^\n]*"from":"prepared"/);
    await pause(500);
    expect(await countries()).toBe('2026-11-22');

    // A corrupt newer snapshot: one flipped byte in the middle of its file.
    const corrupt = (await writeSyntheticCountry({ seed: 9, buildings: 3000, bounds: BOUNDS, date: '2026-11-23', outDir: staging })).path;
    const bytes = readFileSync(corrupt);
    bytes[bytes.length >> 1] ^= 0x40;
    writeFileSync(corrupt, bytes);
    renameSync(corrupt, join(snapshots, 'XA', '2026-11-23.arrow'));
    server.child.kill('SIGHUP');
    await waitForOutput(server.output, /"event":"snapshot_refused"[^\n]*"date":"2026-11-23"/);
    await pause(500);
    stop = true;
    await clients;

    expect(failures).toEqual([]);
    expect(sent - beforeSwap).toBeGreaterThan(20);
    expect(await countries()).toBe('2026-11-22');
    const refusal = server
      .output()
      .split('\n')
      .find((l) => l.includes('"snapshot_refused"'))!;
    expect(JSON.parse(refusal).reason).toMatch(/^checksum mismatch|^not an Arrow IPC file/);
    server.child.kill('SIGTERM');
  });
});
