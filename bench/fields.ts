/**
 * What `fields=` saves on a page of 100 buildings: bytes of the body, and the time from request
 * to parsed document on loopback (server and client together), against the same page whole.
 * Seeded synthetic country, a server in this process, buildings opened once before timing (every
 * timed page is free, so the ledger's commit is not in it), warm-up, then the two forms in turn.
 *
 *   npx tsx bench/fields.ts [--buildings 20000] [--pages 300] [--fields height,volume_m3,category]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { Catalog } from '../src/catalog/catalog.ts';
import { loadConfig } from '../src/config.ts';
import { startServer } from '../src/http/server.ts';
import { Ledger } from '../src/ledger/index.ts';
import { writeSyntheticCountry } from '../src/synth/generate.ts';

const { values } = parseArgs({
  options: {
    buildings: { type: 'string', default: '20000' },
    pages: { type: 'string', default: '300' },
    fields: { type: 'string', default: 'height,volume_m3,category' },
  },
});
const pages = Number(values.pages);

const dir = mkdtempSync(join(tmpdir(), 'edifice-fields-'));
await writeSyntheticCountry({
  seed: 7,
  buildings: Number(values.buildings),
  country: 'XA',
  bounds: [9.4, 47.0, 9.7, 47.3],
  outDir: join(dir, 'snapshots'),
});
const config = {
  ...loadConfig({}),
  port: 0,
  snapshotsDir: join(dir, 'snapshots'),
  ledgerPath: join(dir, 'ledger.db'),
  perKeyPerMinute: 1_000_000,
  dailyQuota: 1_000_000,
};
const catalog = Catalog.open(config.snapshotsDir);
// Timed as it serves for good: with its cold blob, not reading cold fields from the Arrow file.
await catalog.whenEncoded();
const ledger = Ledger.open(config.ledgerPath, { perKeyPerMinute: 1_000_000, dailyQuota: 1_000_000 });
const server = await startServer({ config, catalog, ledger, log: pino({ level: 'silent' }) });
const { workspaceId } = ledger.createWorkspace('bench', { createdBy: 'bench@example.com' });
ledger.grantCredits(workspaceId, 10_000_000, { kind: 'bought' });
const { key } = ledger.createKey(workspaceId, 'bench@example.com');
const base = `http://127.0.0.1:${server.port}/v1`;

// Twenty boxes around buildings taken at a stride: pages of 100 from different places.
const s = catalog.view().snapshots[0];
const boxes: string[] = [];
for (let i = 0; i < 20; i++) {
  const row = Math.floor(((i + 0.5) * s.rows) / 20);
  boxes.push([s.lon[row] - 0.02, s.lat[row] - 0.02, s.lon[row] + 0.02, s.lat[row] + 0.02].map((v) => v.toFixed(4)).join(','));
}

async function page(url: string): Promise<{ bytes: number; ms: number; count: number }> {
  const t0 = performance.now();
  const res = await fetch(url, { headers: { Authorization: `Bearer ${key}` } });
  const text = await res.text();
  const doc = JSON.parse(text) as { data: unknown[] };
  const ms = performance.now() - t0;
  if (res.status !== 200) throw new Error(`${res.status} ${text}`);
  return { bytes: Buffer.byteLength(text), ms, count: doc.data.length };
}

const urlOf = (i: number, slim: boolean) =>
  `${base}/buildings?bbox=${boxes[i % boxes.length]}&limit=100${slim ? `&fields=${values.fields}` : ''}`;
for (let i = 0; i < boxes.length; i++) await page(urlOf(i, false)); // opens them: later pages are free
for (let i = 0; i < 100; i++) await page(urlOf(i, i % 2 === 1)); // warm-up

const whole: number[] = [];
const slim: number[] = [];
let wholeBytes = 0;
let slimBytes = 0;
let items = 0;
const until = performance.now() + 120_000;
for (let i = 0; i < pages && performance.now() < until; i++) {
  const a = await page(urlOf(i, false));
  const b = await page(urlOf(i, true));
  if (a.count !== b.count) throw new Error('the two pages differ in length');
  whole.push(a.ms);
  slim.push(b.ms);
  wholeBytes += a.bytes;
  slimBytes += b.bytes;
  items += a.count;
}
server.close();
ledger.close();
rmSync(dir, { recursive: true, force: true });

const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[xs.length >> 1];
const mean = (xs: number[]) => xs.reduce((x, y) => x + y, 0) / xs.length;
const n = whole.length;
console.log(`${n} pairs of pages, ${(items / n).toFixed(1)} buildings a page, fields=${values.fields}`);
console.log(
  `bytes a page:      whole ${Math.round(wholeBytes / n)}, fields ${Math.round(slimBytes / n)} (${(100 * (1 - slimBytes / wholeBytes)).toFixed(1)}% less)`,
);
console.log(`ms a page, median: whole ${median(whole).toFixed(3)}, fields ${median(slim).toFixed(3)}`);
console.log(`ms a page, mean:   whole ${mean(whole).toFixed(3)}, fields ${mean(slim).toFixed(3)}`);
