/**
 * Stopping a server (SIGTERM, as an operator or a supervisor does). With worker threads, while
 * the ledger thread is inside SQLite, waiting for a write lock another process holds on the ledger
 * file, with a worker's request waiting for it. A thread terminated from outside while in SQLite
 * aborts the whole process when the statement fails (better-sqlite3 throws into a terminating
 * isolate), and one stopped holding the server's write lock leaves it taken: the server must
 * instead stop its threads by asking them, and exit 0. Clients on keep-alive connections are told
 * `Connection: close` once the server is stopping. On the main thread alone (EDIFICE_WORKERS=0) a
 * request still arriving is answered too. A SIGTERM during the start waits for it to finish.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { request, Agent } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from '../src/catalog/catalog.ts';
import { Ledger } from '../src/ledger/index.ts';
import { killServerProcesses, removeDir, startServerProcess, syntheticSnapshots, workspaceWithKey } from './http-helpers.ts';

let dir = '';

afterAll(() => {
  killServerProcesses();
  if (dir) removeDir(dir);
});

interface Answer {
  status: number;
  connection: string | undefined;
}

function post(agent: Agent, url: string, body: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', agent, headers: { 'Content-Type': 'application/json' } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe("SIGTERM while a request waits for the ledger file's lock", () => {
  it('exits 0 once the wait ends, answering that request with Connection: close and refusing the next', { timeout: 120_000 }, async () => {
    dir = await syntheticSnapshots(1000);
    const ledgerPath = join(dir, 'ledger.db');
    Ledger.open(ledgerPath).close();
    const server = await startServerProcess(
      { EDIFICE_SNAPSHOTS: join(dir, 'snapshots'), EDIFICE_LEDGER: ledgerPath, EDIFICE_WORKERS: '2' },
      [],
    );
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
      server.child.once('exit', (code, signal) => resolve({ code, signal })),
    );

    // Another process (the admin CLI, say) holds the file's write lock from before the request
    // until the server has exited.
    const holder = new Database(ledgerPath);
    holder.exec('BEGIN IMMEDIATE');
    try {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      const url = `${server.base}/public/country-requests`;
      const first = post(agent, url, '{"country":"PT"}');
      // The write is now in SQLite's busy handler, in the ledger thread, for the lock's 5 s
      // timeout (2 s: time enough for the request to reach it on a busy machine, 3 s left).
      await new Promise((r) => setTimeout(r, 2_000));
      server.child.kill('SIGTERM');
      // Answered once the busy timeout ends, by a worker that knows by then it is stopping (not
      // waiting in SQLite itself, where the pool would terminate it after its 5 s grace).
      expect(await first).toEqual({ status: 503, connection: 'close' });
      const outcome = (a: Promise<Answer>) => a.catch((err: NodeJS.ErrnoException) => err.code);
      const second = await outcome(post(agent, url, '{"country":"PT"}'));
      const { code, signal } = await exited;
      expect({ code, signal }, server.output()).toEqual({ code: 0, signal: null });
      expect(server.output()).not.toMatch(/FATAL|did not stop/);
      expect(second).toMatch(/^(ECONNREFUSED|ECONNRESET)$/);
      agent.destroy();
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
    // Nothing was written: the request that waited was refused.
    const db = new Database(ledgerPath, { readonly: true });
    expect((db.prepare('SELECT count(*) AS n FROM country_requests').get() as { n: number }).n).toBe(0);
    db.close();
  });
});

describe('SIGTERM to a server on the main thread alone while a request body is arriving', () => {
  it('stops accepting, answers the request once its body is in, with Connection: close, and exits 0', { timeout: 120_000 }, async () => {
    const stopDir = await syntheticSnapshots(500);
    try {
      const ledgerPath = join(stopDir, 'ledger.db');
      const server = await startServerProcess(
        { EDIFICE_SNAPSHOTS: join(stopDir, 'snapshots'), EDIFICE_LEDGER: ledgerPath, EDIFICE_WORKERS: '0' },
        [],
      );
      const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
        server.child.once('exit', (code, signal) => resolve({ code, signal })),
      );
      const { port } = new URL(server.base);
      const body = '{"country":"PT"}';
      const socket = connect(Number(port), '127.0.0.1');
      let answer = '';
      socket.on('data', (chunk) => {
        answer += chunk.toString();
      });
      const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      socket.on('error', () => {});
      await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
      socket.write(
        `POST /v1/public/country-requests HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`,
      );
      await new Promise((r) => setTimeout(r, 500));
      server.child.kill('SIGTERM');
      await new Promise((r) => setTimeout(r, 500));
      // Stopping: a new connection is refused, the one in flight is still served.
      const refused = await new Promise<string>((resolve) => {
        const probe = connect(Number(port), '127.0.0.1');
        probe.once('connect', () => {
          probe.destroy();
          resolve('connected');
        });
        probe.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
      });
      socket.write(body.slice(5));
      await ended;
      const { code, signal } = await exited;
      expect({ code, signal }, server.output()).toEqual({ code: 0, signal: null });
      expect(refused).toBe('ECONNREFUSED');
      expect(answer).toMatch(/^HTTP\/1\.1 201 /);
      expect(answer).toMatch(/\r\nConnection: close\r\n/i);
      const db = new Database(ledgerPath, { readonly: true });
      expect(db.prepare('SELECT country FROM country_requests').all()).toEqual([{ country: 'PT' }]);
      db.close();
    } finally {
      removeDir(stopDir);
    }
  });
});

/** A connection kept open: `send` writes a request and resolves with what arrives until `until` matches it, or the connection ends. */
function keptOpen(port: number): Promise<{ send(request: string, until?: RegExp): Promise<string> }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let got = '';
    let waiter: (() => void) | null = null;
    socket.on('data', (chunk) => {
      got += chunk.toString('latin1');
      waiter?.();
    });
    socket.on('close', () => waiter?.());
    socket.on('error', () => {});
    socket.once('error', reject);
    socket.once('connect', () =>
      resolve({
        send: (request, until) =>
          new Promise((done) => {
            got = '';
            // Closed already (the server went away): nothing more will come, so say so now rather than wait forever.
            if (socket.destroyed) return done(got);
            waiter = () => {
              if (socket.destroyed || (until && until.test(got))) {
                waiter = null;
                done(got);
              }
            };
            socket.write(request);
          }),
      }),
    );
  });
}

describe('SIGTERM to a server with a worker, then a request on a connection opened before', () => {
  it(
    'answers a charged page and a country request that arrive after the stop, with Connection: close, and exits 0',
    { timeout: 120_000 },
    async () => {
      const stopDir = await syntheticSnapshots(500, 8);
      try {
        const ledgerPath = join(stopDir, 'ledger.db');
        const setup = Ledger.open(ledgerPath);
        const { key, workspaceId } = workspaceWithKey(setup, 100);
        setup.close();
        const server = await startServerProcess(
          { EDIFICE_SNAPSHOTS: join(stopDir, 'snapshots'), EDIFICE_LEDGER: ledgerPath, EDIFICE_WORKERS: '1' },
          [],
        );
        const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
          server.child.once('exit', (code, signal) => resolve({ code, signal })),
        );
        const port = Number(new URL(server.base).port);
        const [a, b] = await Promise.all([keptOpen(port), keptOpen(port)]);
        const health = 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n';
        expect(await a.send(health, /"alive"/)).toMatch(/^HTTP\/1\.1 200 /);
        expect(await b.send(health, /"alive"/)).toMatch(/^HTTP\/1\.1 200 /);
        server.child.kill('SIGTERM');
        await new Promise((r) => setTimeout(r, 300));
        // Each waits for the ledger thread, its connection paused, in a worker that has stopped listening.
        const body = '{"country":"PT"}';
        const [page, posted] = await Promise.all([
          a.send(`GET /v1/buildings?bbox=9.4,47.0,9.7,47.3&limit=4 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\n\r\n`),
          b.send(
            `POST /v1/public/country-requests HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
          ),
        ]);
        const { code, signal } = await exited;
        expect({ code, signal }, server.output()).toEqual({ code: 0, signal: null });
        expect(page).toMatch(/^HTTP\/1\.1 200 [^]*\r\nX-Credits-Charged: 4\r\n/i);
        expect(page).toMatch(/\r\nConnection: close\r\n/i);
        expect(posted).toMatch(/^HTTP\/1\.1 201 [^]*\r\nConnection: close\r\n/i);
        const check = Ledger.open(ledgerPath);
        expect(check.balance(workspaceId)).toBe(105 - 4);
        expect(check.countryRequests().map((r) => r.country)).toEqual(['PT']);
        check.close();
      } finally {
        removeDir(stopDir);
      }
    },
  );
});

describe('SIGTERM while the server starts', () => {
  it('finishes starting (the demo country written whole), then stops and exits 0 without listening on', { timeout: 120_000 }, async () => {
    const startDir = mkdtempSync(join(tmpdir(), 'edifice-stop-start-'));
    try {
      const snapshots = join(startDir, 'snapshots');
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
        cwd: fileURLToPath(new URL('..', import.meta.url)),
        env: {
          ...process.env,
          EDIFICE_SNAPSHOTS: snapshots,
          EDIFICE_LEDGER: join(startDir, 'ledger.db'),
          EDIFICE_PORT: '0',
          EDIFICE_METRICS_PORT: '0',
          EDIFICE_WORKERS: '1',
          EDIFICE_LOG_LEVEL: 'info',
          EDIFICE_DEMO_BUILDINGS: '20000',
          EDIFICE_DEMO: '1',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
        child.once('exit', (code, signal) => resolve({ code, signal })),
      );
      // SIGTERM as soon as the start says it is generating the demo country: seconds before it listens.
      let sent = false;
      const signalled = new Promise<void>((resolve) => {
        const read = (chunk: Buffer) => {
          out += chunk.toString();
          // Once: a second SIGTERM ends the process at once, by design.
          if (!sent && out.includes('generating the synthetic demo country')) {
            sent = true;
            child.kill('SIGTERM');
            resolve();
          }
        };
        child.stdout.on('data', read);
        child.stderr.on('data', read);
      });
      await Promise.race([signalled, exited]);
      const { code, signal } = await exited;
      // Not ended by the signal's default action: the stop is in place from the start.
      expect({ code, signal }, out).toEqual({ code: 0, signal: null });
      expect(out).toMatch(/asked to stop while starting/);
      expect(out).not.toMatch(/Edifice is listening/);
      // Nothing left half done: the demo country loads whole, the ledger opens.
      const catalog = Catalog.open(snapshots);
      expect(catalog.view().snapshots.map((v) => v.rows)).toEqual([20_000]);
      Ledger.open(join(startDir, 'ledger.db')).close();
    } finally {
      removeDir(startDir);
    }
  });
});
