/**
 * The README's openapi-fetch setting, held against the real client and a real server: its
 * default sends an array parameter once per value (bbox four times: a 400), the setting sends one
 * comma list.
 */
import createClient from 'openapi-fetch';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { removeDir, startTestServer, syntheticSnapshots, workspaceWithKey, type TestServer } from './http-helpers.ts';

let dir: string;
let t: TestServer;
let key: string;
let bbox: number[];

beforeAll(async () => {
  dir = await syntheticSnapshots(1000);
  t = await startTestServer(dir, { perKeyPerMinute: 1_000_000, dailyQuota: 1_000_000 });
  key = workspaceWithKey(t.ledger, 1_000_000).key;
  const e = t.catalog.view().snapshots[0].extent!;
  bbox = [e.minLon, e.minLat, e.minLon + 0.1, e.minLat + 0.1];
});

afterAll(() => {
  t?.close();
  if (dir) removeDir(dir);
});

it('bbox and list filters as one comma list with querySerializer { array: { style: form, explode: false } }', async () => {
  const headers = { Authorization: `Bearer ${key}` };
  const query = { bbox, category: ['residential_house', 'apartment_block'], limit: 5 };
  // The paths are typed by openapi-typescript in a client; here the document is read at run time.
  const plain = createClient<any>({ baseUrl: t.base, headers });
  const refused = await plain.GET('/buildings', { params: { query } });
  expect(refused.response.status).toBe(400);
  expect(refused.error.error.parameter).toBe('bbox');

  const api = createClient<any>({ baseUrl: t.base, headers, querySerializer: { array: { style: 'form', explode: false } } });
  const ok = await api.GET('/buildings', { params: { query } });
  expect(ok.response.status).toBe(200);
  expect(ok.data.data.length).toBeGreaterThan(0);
  for (const b of ok.data.data) expect(['residential_house', 'apartment_block']).toContain(b.category);
});
