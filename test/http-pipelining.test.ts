/**
 * Requests pipelined behind a page that costs credits. uWebSockets.js answers pipelined requests
 * only while each is answered before the next is read; a charged page is answered after its
 * commit, so a request read behind it makes uWS close the connection, neither answered. Written
 * in one write, both are read at once: the workspace must then not pay for the page it never
 * received. Written apart, the second waits unread (the connection paused) until the first is
 * answered: both are answered. Either way the credits taken are exactly those of the answers that
 * arrived. On one thread and with worker threads (whose pages go to the ledger thread). The same
 * for a country request (a write, with workers done by the ledger thread): stored when answered.
 */
import { connect } from 'node:net';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from '../src/catalog/catalog.ts';
import { loadConfig } from '../src/config.ts';
import { startWorkers } from '../src/http/worker-pool.ts';
import { Ledger } from '../src/ledger/index.ts';
import { killServerProcesses, removeDir, startServerProcess, syntheticSnapshots, workspaceWithKey } from './http-helpers.ts';

const dirs: string[] = [];
afterAll(() => {
  killServerProcesses();
  dirs.forEach(removeDir);
});

const BBOX = '9.4,47.0,9.7,47.3';

/**
 * Writes `requests` on one connection, in one write (gapMs 0) or gapMs apart; resolves with every
 * byte received until the server closes it (or 5 s).
 */
function pipelined(port: number, requests: string[], gapMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let got = '';
    const timer = setTimeout(() => socket.destroy(), 5_000);
    socket.on('data', (chunk) => {
      got += chunk.toString('latin1');
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(got);
    });
    socket.once('connect', () => {
      if (gapMs === 0) socket.write(requests.join(''));
      else requests.forEach((r, i) => setTimeout(() => socket.write(r), i * gapMs));
    });
    socket.once('error', reject);
  });
}

const request = (path: string, key: string, last = false) =>
  `GET /v1${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\n${last ? 'Connection: close\r\n' : ''}\r\n`;

/** The X-Credits-Charged of every response in `raw`. */
function chargedIn(raw: string): number[] {
  // Not anchored to a line: a response follows the previous body directly.
  return [...raw.matchAll(/HTTP\/1\.1 \d{3} [^]*?\r\nX-Credits-Charged: (\d+)\r\n/gi)].map((m) => Number(m[1]));
}

async function remaining(port: number, key: string): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${port}/v1/buildings?bbox=0,0,0.01,0.01`, { headers: { Authorization: `Bearer ${key}` } });
  expect(res.status).toBe(200);
  return Number(res.headers.get('X-Credits-Remaining'));
}

/**
 * Pipelines charged pages behind one another and checks each workspace paid for exactly what it
 * got; written apart (gapMs > 0, less than a commit with workers), each is answered.
 */
async function payOnlyForAnswers(port: number, ledger: Ledger, gapMs: number): Promise<void> {
  let answered = 0;
  // Written apart, a busy client can still send both at once: more rounds until one pair went apart.
  for (let round = 0; round < 4 || (gapMs > 0 && answered === 0 && round < 16); round++) {
    const { key } = workspaceWithKey(ledger, 1_000, `pipe${gapMs}-${round}`);
    const before = await remaining(port, key);
    const raw = await pipelined(
      port,
      [
        request(`/buildings?bbox=${BBOX}&sort=area&limit=7&offset=${20 * round}`, key),
        request(`/buildings?bbox=${BBOX}&sort=height&limit=3&offset=${20 * round}`, key, true),
      ],
      gapMs,
    );
    const charged = chargedIn(raw);
    expect(before - (await remaining(port, key)), raw.slice(0, 200)).toBe(charged.reduce((a, b) => a + b, 0));
    // Both, or (read together after all, on a busy machine) neither.
    expect([0, 2], raw.slice(0, 200)).toContain(charged.length);
    answered += charged.length;
  }
  if (gapMs > 0) expect(answered).toBeGreaterThan(0);
  expect(ledger.audit()).toEqual([]);
}

/**
 * A country request with a request pipelined behind it, written together: stored exactly when
 * answered (a write whose connection uWS closed before it was sent is not made).
 */
async function storedOnlyWhenAnswered(port: number, ledger: Ledger): Promise<void> {
  const body = (c: string) => `{"country":"${c}"}`;
  for (const country of ['PT', 'ES', 'FR', 'DE']) {
    const raw = await pipelined(
      port,
      [
        `POST /v1/public/country-requests HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body(country).length}\r\n\r\n${body(country)}`,
        'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n',
      ],
      0,
    );
    const created = raw.match(/HTTP\/1\.1 201 /g)?.length ?? 0;
    // A write made regardless would be done by the time a later one is answered (one writer, in order).
    const later = await fetch(`http://127.0.0.1:${port}/v1/public/country-requests`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: body('SE'),
    });
    expect(later.status).toBe(201);
    expect(ledger.countryRequests().filter((r) => r.country === country).length, raw.slice(0, 200)).toBe(created);
  }
}

describe('requests pipelined behind a charged page', () => {
  it('on one thread: the workspace pays only for the answers it received', { timeout: 90_000 }, async () => {
    // In a process of its own: in this one, the client's timers would run in the server's turns.
    const dir = await syntheticSnapshots(2000, 11);
    dirs.push(dir);
    const ledgerPath = join(dir, 'ledger.db');
    const ledger = Ledger.open(ledgerPath);
    try {
      const server = await startServerProcess(
        { EDIFICE_SNAPSHOTS: join(dir, 'snapshots'), EDIFICE_LEDGER: ledgerPath, EDIFICE_WORKERS: '0' },
        [],
      );
      const port = Number(new URL(server.base).port);
      await payOnlyForAnswers(port, ledger, 0);
      await payOnlyForAnswers(port, ledger, 2);
      await storedOnlyWhenAnswered(port, ledger);
      server.child.kill('SIGTERM');
    } finally {
      ledger.close();
    }
  });

  it('with worker threads: the workspace pays only for the answers it received', { timeout: 90_000 }, async () => {
    const dir = await syntheticSnapshots(2000, 12);
    dirs.push(dir);
    const config = { ...loadConfig({}), port: 0, snapshotsDir: join(dir, 'snapshots'), ledgerPath: join(dir, 'ledger.db') };
    const catalog = Catalog.open(config.snapshotsDir, { log: () => {} });
    const ledger = Ledger.open(config.ledgerPath);
    const pool = await startWorkers({ config, catalog, ledger, log: pino({ level: 'silent' }), workers: 2 });
    await pool.allListening();
    try {
      await payOnlyForAnswers(pool.port, ledger, 0);
      await payOnlyForAnswers(pool.port, ledger, 2);
      await storedOnlyWhenAnswered(pool.port, ledger);
    } finally {
      await pool.close(2_000);
      ledger.close();
    }
  });
});
