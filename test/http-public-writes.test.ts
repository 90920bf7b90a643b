/**
 * The open operations' writes on a server with worker threads go to the ledger thread: while one
 * waits for the ledger file's write lock (another process holding it, up to the busy timeout),
 * the worker that took it goes on answering. One worker, so that both requests reach the same.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { Ledger } from '../src/ledger/index.ts';
import { killServerProcesses, removeDir, startServerProcess, syntheticSnapshots } from './http-helpers.ts';

let dir = '';

afterAll(() => {
  killServerProcesses();
  if (dir) removeDir(dir);
});

const countryRequest = (base: string, country: string) =>
  fetch(`${base}/public/country-requests`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ country }),
  });

describe("a country request waiting for the ledger file's lock", () => {
  it(
    'does not hold up the worker: a page asked after it is answered first; refused 503 at the busy timeout, stored once the lock is free',
    { timeout: 120_000 },
    async () => {
      dir = await syntheticSnapshots(1000);
      const ledgerPath = join(dir, 'ledger.db');
      Ledger.open(ledgerPath).close();
      const server = await startServerProcess(
        { EDIFICE_SNAPSHOTS: join(dir, 'snapshots'), EDIFICE_LEDGER: ledgerPath, EDIFICE_WORKERS: '1' },
        [],
      );

      const holder = new Database(ledgerPath);
      holder.exec('BEGIN IMMEDIATE');
      const order: string[] = [];
      let waiting: Response;
      try {
        const post = countryRequest(server.base, 'PT').then((res) => {
          order.push('country request');
          return res;
        });
        // Well inside the 5 s the write waits.
        await new Promise((r) => setTimeout(r, 1_000));
        const page = await fetch(`${server.base}/public/countries`);
        order.push('page');
        expect(page.status).toBe(200);
        waiting = await post;
      } finally {
        holder.exec('ROLLBACK');
        holder.close();
      }
      expect(order).toEqual(['page', 'country request']);
      expect([waiting.status, ((await waiting.json()) as { error: { code: string } }).error.code]).toEqual([503, 'unavailable']);
      expect(waiting.headers.get('retry-after')).not.toBeNull();

      const stored = await countryRequest(server.base, 'PT');
      expect(stored.status).toBe(201);
      expect(await stored.json()).toMatchObject({ country: 'PT', status: 'received' });
      const db = new Database(ledgerPath, { readonly: true });
      expect(db.prepare('SELECT country FROM country_requests').all()).toEqual([{ country: 'PT' }]);
      db.close();
    },
  );
});
