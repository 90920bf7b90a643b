/**
 * The warm-up before listening (src/http/warm-up.ts): a real server on a synthetic country runs
 * its made-up requests through the real handlers, every one of them valid, and leaves no trace a
 * caller or the ledger could see: no charge, no opening, no request counted, empty caches.
 */
import { Writable } from 'node:stream';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseBuildingsQuery, parsePointQuery, parseRegisteredBusinessesQuery, parseUnitsQuery } from '../src/api/index.ts';
import { Catalog } from '../src/catalog/catalog.ts';
import { loadConfig } from '../src/config.ts';
import { startServer } from '../src/http/server.ts';
import { warmUp, type WarmUpRoute } from '../src/http/warm-up.ts';
import { Ledger } from '../src/ledger/index.ts';
import { queryBuildings } from '../src/query/buildings.ts';
import { MAX_BBOX_SIDE_DEG } from '../src/query/types.ts';
import { removeDir, syntheticSnapshots, workspaceWithKey } from './http-helpers.ts';

let dir: string;
let catalog: Catalog;

beforeAll(async () => {
  dir = await syntheticSnapshots(3000, 11, 'XW');
  catalog = Catalog.open(join(dir, 'snapshots'), { log: () => {} });
});

afterAll(() => {
  if (dir) removeDir(dir);
});

type Made = { route: WarmUpRoute; rawQuery: string; pathParameter: string; encoding: string };

function madeUp(requests: number): Made[] {
  const made: Made[] = [];
  warmUp(catalog.view(), requests, (route, rawQuery, pathParameter, encoding) => {
    made.push({ route, rawQuery, pathParameter, encoding });
  });
  return made;
}

describe('warm-up requests', () => {
  it('are valid requests of every warmed route, in both encodings, over the country', () => {
    const made = madeUp(400);
    expect(made).toHaveLength(400);
    const routes = new Set(made.map((m) => m.route));
    expect([...routes].sort()).toEqual([
      '/buildings',
      '/buildings/at',
      '/buildings/{building_id}/registered-businesses',
      '/buildings/{building_id}/units',
    ]);
    expect(new Set(made.map((m) => m.encoding))).toEqual(new Set(['json', 'msgpack']));
    const s = catalog.view().snapshots[0];
    const ids = new Set<string>();
    let matched = 0;
    for (const m of made) {
      // The parsers the handlers use accept each one (they throw an ApiError otherwise).
      if (m.route === '/buildings') {
        const q = parseBuildingsQuery(m.rawQuery);
        expect(q.bbox.maxLon - q.bbox.minLon).toBeLessThanOrEqual(MAX_BBOX_SIDE_DEG);
        matched += queryBuildings(catalog.view(), q).total;
      } else if (m.route === '/buildings/at') parsePointQuery(m.rawQuery);
      else if (m.route === '/buildings/{building_id}/units') ids.add(parseUnitsQuery(m.pathParameter, m.rawQuery).buildingId);
      else ids.add(parseRegisteredBusinessesQuery(m.pathParameter, m.rawQuery).buildingId);
    }
    // Centred on buildings: the bboxes find some; the ids are the snapshot's own.
    expect(matched).toBeGreaterThan(0);
    for (const id of ids) expect(s.findRow(id)).toBeGreaterThanOrEqual(0);
    // Every bbox size meets every sort and both encodings (a region answered in JSON, say), and
    // every route is written in both encodings.
    const combos = new Set<string>();
    for (const m of made) {
      if (m.route !== '/buildings') {
        combos.add(`${m.route} ${m.encoding}`);
        continue;
      }
      const q = parseBuildingsQuery(m.rawQuery);
      const side = Math.round((q.bbox.maxLat - q.bbox.minLat) * 1000) / 1000;
      combos.add(`${side} ${q.sort}`).add(`${side} ${m.encoding}`);
    }
    const sides = [0.002, 0.015, 0.15, 1];
    for (const side of sides) {
      for (const key of [...['volume', 'area', 'height', 'registered_business_employees'], 'json', 'msgpack'])
        expect(combos).toContain(`${side} ${key}`);
    }
    for (const route of routes) if (route !== '/buildings') for (const e of ['json', 'msgpack']) expect(combos).toContain(`${route} ${e}`);
    // The same requests every time (a start is reproducible).
    expect(madeUp(400)).toEqual(made);
  });

  it('makes none over no building or when set to 0, and counts a failing request and goes on', () => {
    expect(
      warmUp({ snapshots: [] }, 500, () => {
        throw new Error('not called');
      }),
    ).toMatchObject({ requests: 0, failed: 0 });
    expect(madeUp(0)).toEqual([]);
    let calls = 0;
    const report = warmUp(catalog.view(), 30, (route) => {
      calls++;
      if (route === '/buildings/at') throw new Error('refused');
    });
    expect(calls).toBe(30);
    expect(report.requests).toBe(30);
    expect(report.failed).toBe(9); // turns 0, 1 and 2 of every 10
    expect(report.firstError).toMatch(/^\/buildings\/at\?lon=.*: refused$/);
  });
});

describe('a server that warms up', () => {
  it('logs the warm-up, then serves from empty caches with nothing charged, opened or counted', async () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(JSON.parse(String(chunk)));
        done();
      },
    });
    const config = {
      ...loadConfig({ EDIFICE_WARMUP_REQUESTS: '250' }),
      port: 0,
      snapshotsDir: join(dir, 'snapshots'),
      ledgerPath: join(dir, 'warm.db'),
    };
    const ledger = Ledger.open(config.ledgerPath);
    const server = await startServer({ config, catalog, ledger, log: pino({ level: 'info' }, sink) });
    try {
      const warmed = lines.find((l) => l.msg === 'warmed up before listening');
      expect(warmed).toMatchObject({ level: 30, requests: 250, failed: 0 });
      expect(Number.isFinite(warmed!.ms)).toBe(true); // the log says how long the start was held
      expect(lines.some((l) => l.msg === 'request')).toBe(false);

      const metrics = await server.metrics.registry.metrics();
      expect(metrics).not.toMatch(/^edifice_http_requests_total\{/m);
      expect(metrics).toMatch(/^edifice_fragment_cache_bytes 0$/m);
      expect(metrics).toMatch(/^edifice_ranking_cache_bytes 0$/m);
      expect(metrics).not.toMatch(/^edifice_fragment_cache_lookups_total\{result="(hit|miss)"\} [1-9]/m);
      expect(metrics).not.toMatch(/^edifice_ranking_cache_pages_total\{result="(hit|miss)"\} [1-9]/m);
      const db = new Database(config.ledgerPath, { readonly: true });
      try {
        for (const table of ['charges', 'charge_entries', 'openings']) {
          expect((db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n).toBe(0);
        }
      } finally {
        db.close();
      }

      // The first caller's page is charged in full: the warm-up opened nothing for anyone.
      const { key } = workspaceWithKey(ledger, 1_000);
      const res = await fetch(`http://127.0.0.1:${server.port}/v1/buildings?bbox=9.4,47.0,9.7,47.3&limit=20`, {
        headers: { Authorization: `Bearer ${key}` },
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('X-Credits-Charged')).toBe('20');
      const after = await server.metrics.registry.metrics();
      expect(after).toMatch(/^edifice_fragment_cache_lookups_total\{result="miss"\} 20$/m);
    } finally {
      server.close();
      ledger.close();
    }
  });
});
