/**
 * npm run bench:export — GET /buildings/export on the bench's synthetic country (1,000,000
 * buildings by default): buildings and bytes a second of each format, charged (first export of a
 * workspace) and free (the same export again), against the baseline of the same 10,000
 * buildings fetched as 100 pages of GET /buildings, and the server's resident memory while it
 * streams. The server runs in a child process with one worker, on loopback.
 *
 *   npm run bench:export -- [--buildings 1000000] [--runs 5] [--cache .cache/bench]
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Ledger } from '../src/ledger/index.ts';
import { ensureSynthetic } from './dataset.ts';
import { ensurePrepared, startChild } from './http/servers.ts';

const { values: args } = parseArgs({
  options: {
    buildings: { type: 'string', default: '1000000' },
    runs: { type: 'string', default: '5' },
    cache: { type: 'string', default: '.cache/bench' },
  },
});
const buildings = Number(args.buildings);
const runs = Number(args.runs);
const log = (msg: string) => process.stderr.write(`${msg}\n`);

const snapshots = await ensureSynthetic(resolve(args.cache!), 1, buildings, log);
await ensurePrepared(snapshots);
const work = mkdtempSync(join(tmpdir(), 'edifice-bench-export-'));
const ledgerPath = join(work, 'ledger.db');
const ledger = Ledger.open(ledgerPath);
/** A new workspace for each charged run, so every first export pays for all its buildings. */
const keys: string[] = [];
for (let i = 0; i < runs * 4 + 1; i++) {
  const email = `bench-${i}@example.com`;
  const { workspaceId } = ledger.createWorkspace(`export ${i}`, { createdBy: email });
  ledger.grantCredits(workspaceId, 1_000_000, { kind: 'bought' });
  keys.push(ledger.createKey(workspaceId, email).key);
}
ledger.close();

const server = await startChild(
  'edifice',
  ['--single-threaded-gc', 'bin/start.mjs'],
  {
    EDIFICE_HOST: '127.0.0.1',
    EDIFICE_PORT: '0',
    EDIFICE_METRICS_PORT: '0',
    EDIFICE_SNAPSHOTS: snapshots,
    EDIFICE_LEDGER: ledgerPath,
    EDIFICE_WORKERS: '1',
    EDIFICE_DEMO: '0',
    EDIFICE_LOG_LEVEL: 'warn',
    EDIFICE_KEY_PER_MINUTE: '1000000000',
    EDIFICE_DAILY_QUOTA: '1000000000',
  },
  join(work, 'server.log'),
  /listening on [^\s]+:(\d+)/,
);
const base = `http://127.0.0.1:${server.port}/v1`;
const rssMb = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${server.pid}/status`, 'utf8'))![1]) / 1024;

// A 1° box in the middle of the country's default bounds (20..26°E, 44..48°N): ~40,000 buildings, ranked to the first 10,000.
const QUERY = 'bbox=22.5,45.5,23.5,46.5&sort=volume';

async function timed(url: string, key: string): Promise<{ ms: number; bytes: number; charged: number; peakRss: number }> {
  const t0 = performance.now();
  let peakRss = rssMb();
  const res = await fetch(url, { headers: { Authorization: `Bearer ${key}` } });
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${await res.text()}`);
  let bytes = 0;
  const reader = res.body!.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.length;
    peakRss = Math.max(peakRss, rssMb());
  }
  return { ms: performance.now() - t0, bytes, charged: Number(res.headers.get('x-credits-charged')), peakRss };
}

async function paged(key: string): Promise<{ ms: number; bytes: number; count: number }> {
  const t0 = performance.now();
  let bytes = 0;
  let count = 0;
  for (let offset = 0; offset < 10_000; offset += 100) {
    const res = await fetch(`${base}/buildings?${QUERY}&limit=100&offset=${offset}`, { headers: { Authorization: `Bearer ${key}` } });
    const text = await res.text();
    bytes += Buffer.byteLength(text);
    const page = JSON.parse(text) as { data: unknown[] };
    count += page.data.length;
    if (page.data.length < 100) break;
  }
  return { ms: performance.now() - t0, bytes, count };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const idleRss = rssMb();
const rows: string[] = [];
let k = 0;
let exported: number;
const pagedRuns = [];
for (let r = 0; r < runs; r++) pagedRuns.push(await paged(keys[k++]));
const pagedMs = median(pagedRuns.map((p) => p.ms));
const pagedCount = pagedRuns[0].count;
rows.push(
  `| 100 pages of GET /buildings (baseline) | charged | ${pagedCount.toLocaleString('en')} | ${(median(pagedRuns.map((p) => p.bytes)) / 1e6).toFixed(1)} | ${pagedMs.toFixed(0)} | ${Math.round(pagedCount / (pagedMs / 1000)).toLocaleString('en')} | ${(median(pagedRuns.map((p) => p.bytes)) / 1e6 / (pagedMs / 1000)).toFixed(1)} | 1.00 | – |`,
);
let ndjsonRatio = 0;
let peakOverIdle = 0;
for (const format of ['ndjson', 'csv', 'geojsonseq'] as const) {
  const url = `${base}/buildings/export?${QUERY}&f=${format}${format === 'geojsonseq' ? '&geometry=footprint' : ''}`;
  for (const kind of ['charged', 'free'] as const) {
    const results = [];
    for (let r = 0; r < runs; r++) {
      const key = kind === 'charged' ? keys[k++] : keys[0];
      results.push(await timed(url, key));
    }
    const ms = median(results.map((x) => x.ms));
    const bytes = median(results.map((x) => x.bytes));
    const peak = Math.max(...results.map((x) => x.peakRss));
    peakOverIdle = Math.max(peakOverIdle, peak - idleRss);
    exported = pagedCount;
    const ratio = pagedMs / ms;
    if (format === 'ndjson' && kind === 'charged') ndjsonRatio = ratio;
    rows.push(
      `| export f=${format} | ${kind} | ${exported.toLocaleString('en')} | ${(bytes / 1e6).toFixed(1)} | ${ms.toFixed(0)} | ${Math.round(exported / (ms / 1000)).toLocaleString('en')} | ${(bytes / 1e6 / (ms / 1000)).toFixed(1)} | ${ratio.toFixed(2)} | ${(peak - idleRss).toFixed(0)} |`,
    );
  }
}
await server.stop();
rmSync(work, { recursive: true, force: true });

console.log(
  `bench:export on ${buildings.toLocaleString('en')} synthetic buildings, ${QUERY}, median of ${runs} runs, one worker, loopback`,
);
console.log('');
console.log('| request | credits | buildings | MB | ms | buildings/s | MB/s | speed vs paging | server RSS over idle, MB |');
console.log('|---|---|---:|---:|---:|---:|---:|---:|---:|');
for (const row of rows) console.log(row);
console.log('');
console.log(
  `summary: buildings=${buildings} ndjson_vs_paging=${ndjsonRatio.toFixed(2)} peak_rss_over_idle_mb=${peakOverIdle.toFixed(0)} idle_rss_mb=${idleRss.toFixed(0)}`,
);
