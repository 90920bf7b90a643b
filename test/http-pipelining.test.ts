/**
 * Requests pipelined behind a page that costs credits. uWebSockets.js answers pipelined requests
 * only while each is answered before the next is read; a charged page is answered after its
 * commit, so a request read behind it makes uWS close the connection, neither answered. The
 * workspace must then not pay for the page it never received: credits taken are exactly those
 * of the answers that arrived. On one thread and with worker threads (whose pages go to the
 * ledger thread).
 */
import { connect } from 'node:net';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from '../src/catalog/catalog.ts';
import { loadConfig } from '../src/config.ts';
import { startWorkers } from '../src/http/worker-pool.ts';
import { Ledger } from '../src/ledger/index.ts';
import { removeDir, startTestServer, syntheticSnapshots, workspaceWithKey } from './http-helpers.ts';

const dirs: string[] = [];
afterAll(() => dirs.forEach(removeDir));

const BBOX = '9.4,47.0,9.7,47.3';

/** Writes `requests` in one write on one connection; resolves with every byte received until the server closes it (or 5 s). */
function pipelined(port: number, requests: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let got = '';
    const timer = setTimeout(() => socket.destroy(), 5_000);
    socket.on('data', (chunk) => { got += chunk.toString('latin1'); });
    socket.on('error', () => {});
    socket.on('close', () => { clearTimeout(timer); resolve(got); });
    socket.once('connect', () => socket.write(requests.join('')));
    socket.once('error', reject);
  });
}

const request = (path: string, key: string) => `GET /v1${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\n\r\n`;

/** The X-Credits-Charged of every response in `raw`. */
function chargedIn(raw: string): number[] {
  return [...raw.matchAll(/^HTTP\/1\.1 (\d{3})[^]*?\r\nX-Credits-Charged: (\d+)\r\n/gim)].map((m) => Number(m[2]));
}

async function remaining(port: number, key: string): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${port}/v1/buildings?bbox=0,0,0.01,0.01`, { headers: { Authorization: `Bearer ${key}` } });
  expect(res.status).toBe(200);
  return Number(res.headers.get('X-Credits-Remaining'));
}

/** Pipelines charged pages behind one another and checks each workspace paid for exactly what it got. */
async function payOnlyForAnswers(port: number, ledger: Ledger): Promise<void> {
  for (let round = 0; round < 4; round++) {
    const { key } = workspaceWithKey(ledger, 1_000, `pipe${round}`);
    const before = await remaining(port, key);
    const raw = await pipelined(port, [
      request(`/buildings?bbox=${BBOX}&sort=area&limit=7&offset=${20 * round}`, key),
      request(`/buildings?bbox=${BBOX}&sort=height&limit=3&offset=${20 * round}`, key),
    ]);
    const charged = chargedIn(raw);
    expect(before - await remaining(port, key), raw.slice(0, 200)).toBe(charged.reduce((a, b) => a + b, 0));
  }
  expect(ledger.audit()).toEqual([]);
}

describe('requests pipelined behind a charged page', () => {
  it('on one thread: the workspace pays only for the answers it received', { timeout: 60_000 }, async () => {
    const dir = await syntheticSnapshots(2000, 11);
    dirs.push(dir);
    const t = await startTestServer(dir);
    try {
      await payOnlyForAnswers(t.server.port, t.ledger);
    } finally {
      t.close();
    }
  });

  it('with worker threads: the workspace pays only for the answers it received', { timeout: 60_000 }, async () => {
    const dir = await syntheticSnapshots(2000, 12);
    dirs.push(dir);
    const config = { ...loadConfig({}), port: 0, snapshotsDir: join(dir, 'snapshots'), ledgerPath: join(dir, 'ledger.db') };
    const catalog = Catalog.open(config.snapshotsDir, { log: () => {} });
    const ledger = Ledger.open(config.ledgerPath);
    const pool = await startWorkers({ config, catalog, ledger, log: pino({ level: 'silent' }), workers: 2 });
    try {
      await payOnlyForAnswers(pool.port, ledger);
    } finally {
      await pool.close(2_000);
      ledger.close();
    }
  });
});
