/**
 * GET /buildings/export against a real server: the stream holds exactly the buildings, in the
 * order, that paging through GET /buildings gives; independent readers (DuckDB for CSV, GDAL
 * for GeoJSON text sequences) read what it writes; it is charged all or nothing before the first
 * byte, refused under max_credits, counted as one request, and paid for when the client leaves
 * mid-stream (a retry then costs nothing).
 */
import { execFileSync } from 'node:child_process';
import { request } from 'node:http';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DuckDBInstance } from '@duckdb/node-api';
import { removeDir, startTestServer, syntheticSnapshots, workspaceWithKey, type TestServer } from './http-helpers.ts';

let t: TestServer;
const out = mkdtempSync(join(tmpdir(), 'edifice-export-'));
beforeAll(async () => {
  t = await startTestServer(await syntheticSnapshots(6000, 21));
});
afterAll(() => {
  t?.close();
  removeDir(t.dir);
  removeDir(out);
});

const QUERY = 'bbox=9.4,47.0,9.7,47.3&sort=height&min_floors=2';

async function get(path: string, key: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${t.base}${path}`, { headers: { Authorization: `Bearer ${key}`, ...headers } });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** Every building id of the query, page by page through GET /buildings (100 a page). */
async function pagedIds(key: string, query: string): Promise<string[]> {
  const ids: string[] = [];
  for (let offset = 0; ; offset += 100) {
    const r = await get(`/buildings?${query}&limit=100&offset=${offset}`, key);
    expect(r.status).toBe(200);
    const page = JSON.parse(r.text);
    ids.push(...page.data.map((b: { building_id: string }) => b.building_id));
    if (page.links.next === null) return ids;
  }
}

describe('GET /buildings/export', () => {
  it('streams NDJSON: the paged ranking in one answer, charged once, free the second time', async () => {
    const k = workspaceWithKey(t.ledger, 10_000);
    const before = t.ledger.balance(k.workspaceId);
    const r = await get(`/buildings/export?${QUERY}`, k.key);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/x-ndjson');
    const lines = r.text.split('\n');
    expect(lines.pop()).toBe(''); // each record ends with LF
    const buildings = lines.map((l) => JSON.parse(l));
    expect(buildings.length).toBeGreaterThan(200);
    expect(Number(r.headers.get('x-credits-charged'))).toBe(buildings.length);
    expect(before - t.ledger.balance(k.workspaceId)).toBe(buildings.length);
    // One request against the per-key limit, whatever it holds.
    expect(r.headers.get('ratelimit-remaining')).toBe('59');

    // The same buildings in the same order as paging through GET /buildings (now free: opened).
    expect(await pagedIds(k.key, QUERY)).toEqual(buildings.map((b) => b.building_id));
    const again = await get(`/buildings/export?${QUERY}`, k.key);
    expect([again.status, again.headers.get('x-credits-charged'), again.text]).toEqual([200, '0', r.text]);

    // limit= takes the head of the ranking; fields= shrinks each record.
    const head = await get(`/buildings/export?${QUERY}&limit=7&fields=height,address`, k.key);
    const shrunk = head.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(shrunk.map((b) => b.building_id)).toEqual(buildings.slice(0, 7).map((b) => b.building_id));
    expect(shrunk.map((b) => Object.keys(b))).toEqual(Array(7).fill(['building_id', 'address', 'height']));
  });

  it('writes CSV that DuckDB reads: the same rows and areas as the NDJSON', async () => {
    const k = workspaceWithKey(t.ledger, 10_000);
    const nd = (await get(`/buildings/export?${QUERY}&f=ndjson`, k.key)).text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const csv = await get(`/buildings/export?${QUERY}`, k.key, { Accept: 'text/csv' });
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8; header=present');
    const file = join(out, 'export.csv');
    writeFileSync(file, csv.text);
    const duck = await (await DuckDBInstance.create(':memory:')).connect();
    const rows = (
      await duck.runAndReadAll(
        `select building_id, footprint_area_m2, address, height from read_csv('${file}', header = true, all_varchar = true)`,
      )
    ).getRowsJson() as string[][];
    expect(rows.map((r) => r[0])).toEqual(nd.map((b) => b.building_id));
    expect(rows.map((r) => Number(r[1]))).toEqual(nd.map((b) => b.footprint_area_m2));
    expect(rows.map((r) => r[2])).toEqual(nd.map((b) => b.address)); // commas and quotes survive
    expect(rows.map((r) => (r[3] === null ? null : JSON.parse(r[3])))).toEqual(nd.map((b) => b.height)); // nested as JSON text
  });

  it('writes GeoJSON text sequences that GDAL reads, with footprints', async () => {
    const k = workspaceWithKey(t.ledger, 10_000);
    const seq = await get(`/buildings/export?${QUERY}&f=geojsonseq&geometry=footprint&limit=50`, k.key);
    expect(seq.status).toBe(200);
    expect(seq.headers.get('content-type')).toBe('application/geo+json-seq');
    const records = seq.text.split('\x1e').slice(1);
    expect(records.length).toBe(50);
    const file = join(out, 'export.geojsons');
    writeFileSync(file, seq.text);
    const info = execFileSync('ogrinfo', ['-ro', '-al', '-so', file], { encoding: 'utf8' });
    expect(info).toMatch(/Feature Count: 50\b/);
    expect(info).toMatch(/Geometry: Multi Polygon/);
    expect(JSON.parse(records[0]).properties.building_id).toBe(JSON.parse(records[0]).id);
  });

  it('charges all or nothing before the first byte: 402 over max_credits or the balance, nothing charged', async () => {
    const k = workspaceWithKey(t.ledger, 100); // 105 with the welcome grant
    const before = t.ledger.balance(k.workspaceId);
    const capped = await get(`/buildings/export?${QUERY}&limit=50&max_credits=49`, k.key);
    expect(capped.status).toBe(402);
    expect(JSON.parse(capped.text)).toEqual({
      error: {
        code: 'insufficient_credits',
        message: expect.stringMatching(/50 buildings .* more than max_credits \(49\)/),
        parameter: '',
      },
    });
    const broke = await get(`/buildings/export?${QUERY}`, k.key);
    expect(broke.status).toBe(402);
    expect(JSON.parse(broke.text).error.code).toBe('insufficient_credits');
    expect(t.ledger.balance(k.workspaceId)).toBe(before);
    const fits = await get(`/buildings/export?${QUERY}&limit=50&max_credits=50`, k.key);
    expect([fits.status, fits.headers.get('x-credits-charged')]).toEqual([200, '50']);
    expect(t.ledger.balance(k.workspaceId)).toBe(before - 50);
    // Refusals of the parameters are the spec's 400.
    const bad = await get('/buildings/export?bbox=9.4,47.0,9.7,47.3&f=json', k.key);
    expect([bad.status, JSON.parse(bad.text).error.parameter]).toEqual([400, 'f']);
  });

  it('a client that leaves mid-stream has paid for the whole export; asking again costs nothing', async () => {
    const k = workspaceWithKey(t.ledger, 10_000);
    const before = t.ledger.balance(k.workspaceId);
    const whole = 'bbox=9.4,47.0,9.7,47.3&sort=volume';
    const first = await new Promise<{ charged: number; received: number }>((resolve, reject) => {
      const req = request(`${t.base}/buildings/export?${whole}`, { headers: { Authorization: `Bearer ${k.key}` } }, (res) => {
        res.once('data', (chunk: Buffer) => {
          req.destroy();
          resolve({ charged: Number(res.headers['x-credits-charged']), received: chunk.length });
        });
      });
      req.on('error', (err) => {
        if (!req.destroyed) reject(err);
      });
      req.end();
    });
    const again = await get(`/buildings/export?${whole}`, k.key);
    const count = again.text.trim().split('\n').length;
    expect(count).toBe(6000); // the whole country (at most 10,000)
    expect(first.received).toBeLessThan(again.text.length);
    expect(first.charged).toBe(count);
    expect(before - t.ledger.balance(k.workspaceId)).toBe(count);
    expect(again.headers.get('x-credits-charged')).toBe('0');
  });
});
