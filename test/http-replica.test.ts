/**
 * A replica of a fleet names itself on every response (X-Edifice-Replica), whatever the route
 * and status, so that an operator behind the load balancer sees the spread; a server that is no
 * replica sends no such header.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { removeDir, startTestServer, syntheticSnapshots, workspaceWithKey, type TestServer } from './http-helpers.ts';

let dir: string;
let named: TestServer;
let plain: TestServer;

beforeAll(async () => {
  dir = await syntheticSnapshots(1000);
  named = await startTestServer(dir, {}, 'named.db', { EDIFICE_REPLICA: 'edifice-2' });
  plain = await startTestServer(dir, {}, 'plain.db');
}, 120_000);
afterAll(() => {
  named?.close();
  plain?.close();
  removeDir(dir);
});

describe('X-Edifice-Replica', () => {
  it('is on every answer of a named replica: paid pages, refusals, public pages, operators, unknown routes, HEAD', async () => {
    const { key } = workspaceWithKey(named.ledger, 100);
    const origin = new URL(named.url).origin;
    const answers = await Promise.all([
      fetch(`${named.base}/buildings?bbox=9.4,47.0,9.7,47.3&limit=2`, { headers: { Authorization: `Bearer ${key}` } }),
      fetch(`${named.base}/buildings?bbox=9.4,47.0,9.7,47.3&limit=2`),
      fetch(`${named.base}/buildings?bbox=nope`, { headers: { Authorization: `Bearer ${key}` } }),
      fetch(`${named.base}/public/countries`),
      fetch(`${origin}/readyz`),
      fetch(`${origin}/healthz`, { method: 'HEAD' }),
      fetch(`${origin}/no-such-thing`),
    ]);
    expect(answers.map((a) => a.status)).toEqual([200, 401, 400, 200, 200, 200, 404]);
    expect(answers.map((a) => a.headers.get('x-edifice-replica'))).toEqual(Array(7).fill('edifice-2'));
    const none = await fetch(`${new URL(plain.url).origin}/healthz`);
    expect([none.status, none.headers.get('x-edifice-replica')]).toEqual([200, null]);
  });

  it('EDIFICE_REPLICA takes a name fit for a header, else the start stops naming it', () => {
    expect(loadConfig({ EDIFICE_REPLICA: 'r-1.eu_west' }).replica).toBe('r-1.eu_west');
    expect(loadConfig({}).replica).toBeNull();
    expect(() => loadConfig({ EDIFICE_REPLICA: 'two words' })).toThrow(/EDIFICE_REPLICA must be 1 to 64 letters/);
    expect(() => loadConfig({ EDIFICE_REPLICA: 'x'.repeat(65) })).toThrow(/EDIFICE_REPLICA/);
  });
});
