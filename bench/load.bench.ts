/**
 * `npm run bench:load`: how soon a server serves a large country after it starts, from the Arrow
 * file and from the prepared file, what the store holds per building, and a hot swap under the
 * load-test mix.
 *
 * 1. The country: the bench's cached synthetic one (default 5,000,000 buildings, `bench/dataset.ts`),
 *    served from a folder of this bench (`.cache/load/`) that links to its Arrow file, so the
 *    prepared files are written there and never into the shared cache.
 * 2. Starts from the Arrow file: `--arrow-runs` times, `node <npm start's flags> bin/start.mjs` (npm start)
 *    as a first start (no prepared file; it writes one in the background once it serves); the time
 *    from spawning the process to the first 200 of GET /v1/public/countries, and the store's own
 *    load time and phases from its `snapshot_loaded` line; then when every worker listens (the server
 *    answers from the first that does). The page cache is warm: the file is read once before.
 * 3. `--runs` starts from the prepared file the last one wrote, timed the same way.
 * 4. Memory: the store's resident bytes per building, read from the prepared file in this process
 *    (RSS after minus before, after full collections, as bench:query measures it), its `bytesHeld`
 *    per building, and the server's resident memory once serving.
 * 5. Hot swap: a server started from the prepared file serves the mix at a fixed `--rate` for
 *    `--duration` seconds (steady p99 and resident memory); then a newer snapshot of the same
 *    buildings (a copy of the file with the next date and its checksum; its prepared file that of
 *    the same store, bound to it) is put beside it and SIGHUP sent one second into another run of the same mix:
 *    its p99, its failed requests and the peak resident memory (sampled every 50 ms) against the
 *    steady ones. Then a corrupt newer snapshot (one flipped byte) under the mix again: it must be
 *    refused, the newer one still served, no request failed.
 *
 * Medians of the runs with their range. The machine is shared: every figure is measured in the
 * same run as its baseline, and the report states the load average. Progress goes to stderr; the
 * report to stdout, whose last line is
 * `summary: load_s_arrow=<x> load_s_prepared=<y> bytes_per_building=<n> swap_failed=<n> swap_p99_ratio=<x> swap_rss_ratio=<x>`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { crc32 } from 'node:zlib';
import {
  closeSync,
  copyFileSync,
  existsSync,
  fstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  readdirSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeSync,
} from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { tableFromIPC } from 'apache-arrow';
import { Ledger } from '../src/ledger/index.ts';
import { metadataText, snapshotChecksum } from '../src/snapshot/checksum.ts';
import { readPrepared } from '../src/catalog/prepared.ts';
import { readSnapshotMetadata } from '../src/snapshot/reader.ts';
import { columnsOf } from '../src/snapshot/schema.ts';
import { DEFAULT_BOUNDS } from '../src/synth/bounds.ts';
import { discover, type Discovery } from '../tools/load/discover.ts';
import { DEFAULT_WEIGHTS } from '../tools/load/mix.ts';
import type { LoadReport } from '../tools/load/report.ts';
import { runLoad, type LoadOptions } from '../tools/load/run.ts';
import { parseTarget } from '../tools/load/target.ts';
import { ensureSynthetic } from './dataset.ts';
import { memory } from './measure.ts';
import { ROOT } from './http/servers.ts';

const { values: args } = parseArgs({
  options: {
    buildings: { type: 'string', default: '5000000' },
    seed: { type: 'string', default: '1' },
    runs: { type: 'string', default: '3' },
    'arrow-runs': { type: 'string', default: '3' },
    rate: { type: 'string', default: '100' },
    duration: { type: 'string', default: '20' },
    workers: { type: 'string', default: String(cpus().length) },
    cache: { type: 'string', default: '.cache/bench' },
    work: { type: 'string', default: '.cache/load' },
  },
  strict: true,
});

const int = (name: string, v: string): number => {
  const n = Number(v);
  if (!(Number.isInteger(n) && n > 0)) throw new RangeError(`--${name} must be a positive integer, got "${v}".`);
  return n;
};
const buildings = int('buildings', args.buildings!);
const runs = int('runs', args.runs!);
const arrowRuns = int('arrow-runs', args['arrow-runs']!);
const rate = int('rate', args.rate!);
const durationS = int('duration', args.duration!);
const workers = int('workers', args.workers!);

const started = performance.now();
const log = (msg: string): void => {
  process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(1).padStart(6)}s] ${msg}\n`);
};
const out: string[] = [];
const print = (line = ''): void => {
  out.push(line);
};
const loads: number[] = [];
const noteLoad = (): void => {
  loads.push(loadavg()[0]);
};

// 1. The country, and this bench's folders.
const seed = int('seed', args.seed!);
// Another process may be generating it: wait rather than start over (ensureSynthetic clears a partial one).
const partial = resolve(args.cache!, `synth-seed${seed}-${buildings}.partial`);
for (let waited = 0; existsSync(partial) && !existsSync(partial.replace(/\.partial$/, '')) && waited < 1800; waited += 10) {
  if (waited % 60 === 0) log(`dataset: ${partial} is being generated; waiting`);
  await new Promise((r) => setTimeout(r, 10_000));
}
const source = await ensureSynthetic(args.cache!, seed, buildings, log);
const country = 'XA';
const arrowName = readdirSync(join(source, country)).find((f) => f.endsWith('.arrow'))!;
const date = arrowName.replace(/\.arrow$/, '');
const next = (d: string, days: number): string => new Date(Date.parse(`${d}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
const newerDate = next(date, 1);
const corruptDate = next(date, 2);
const work = resolve(args.work!);
const served = join(work, 'served');
const staging = join(work, 'staging');
mkdirSync(join(served, country), { recursive: true });
mkdirSync(join(staging, country), { recursive: true });
const servedArrow = join(served, country, `${date}.arrow`);
if (!existsSync(servedArrow)) symlinkSync(join(source, country, arrowName), servedArrow);
const clearServed = (): void => {
  for (const d of [newerDate, corruptDate]) {
    for (const ext of ['arrow', 'edifice']) {
      const at = join(served, country, `${d}.${ext}`);
      if (existsSync(at)) renameSync(at, join(staging, country, `${d}.${ext}`));
    }
  }
};
clearServed();
rmSync(join(staging, country, `${corruptDate}.arrow`), { force: true });

/** Reads a file once, so the timed starts find it in the page cache. */
function warmPageCache(path: string): void {
  const fd = openSync(path, 'r');
  const buf = Buffer.alloc(1 << 24);
  for (let at = 0; readSync(fd, buf, 0, buf.length, at) > 0; at += buf.length);
  closeSync(fd);
}

/** Overwrites every occurrence of `from` by `to` (same length) in the file's last `tail` bytes: its footer, where the metadata is. */
function patchFooter(path: string, from: string, to: string, tail = 1 << 20): number {
  if (from.length !== to.length) throw new Error('patches keep the length');
  const fd = openSync(path, 'r+');
  try {
    const size = fstatSync(fd).size;
    const start = Math.max(0, size - tail);
    const buf = Buffer.alloc(size - start);
    readSync(fd, buf, 0, buf.length, start);
    let count = 0;
    for (let at = buf.indexOf(from, 0, 'latin1'); at >= 0; at = buf.indexOf(from, at + 1, 'latin1')) {
      buf.write(to, at, 'latin1');
      count++;
    }
    writeSync(fd, buf, 0, buf.length, start);
    return count;
  } finally {
    closeSync(fd);
  }
}

/** A whole file in one buffer (readFileSync stops at 2 GiB). */
function readWhole(path: string): Uint8Array {
  const fd = openSync(path, 'r');
  const bytes = new Uint8Array(fstatSync(fd).size);
  for (let at = 0; at < bytes.length;) at += readSync(fd, bytes, at, Math.min(1 << 28, bytes.length - at), at);
  closeSync(fd);
  return bytes;
}

/**
 * A newer snapshot of the same buildings: a copy whose metadata says the next date, with the
 * checksum that metadata gives (what a nightly build of an unchanged country would write).
 */
function makeNewer(): string {
  const path = join(staging, country, `${newerDate}.arrow`);
  if (existsSync(path)) {
    try {
      if (readSnapshotMetadata(path).snapshotDate === newerDate) return path;
    } catch {
      // remade below
    }
  }
  log(`newer snapshot: copying ${arrowName} as ${newerDate}`);
  const tmp = `${path}.tmp`;
  copyFileSync(join(source, country, arrowName), tmp);
  const old = readSnapshotMetadata(tmp);
  if (patchFooter(tmp, `"${date}"`, `"${newerDate}"`) + patchFooter(tmp, date, newerDate) === 0) throw new Error('no date in the footer');
  const table = tableFromIPC(readWhole(tmp));
  const meta = table.schema.metadata;
  const checksum = snapshotChecksum(
    columnsOf(Number(meta.get('edifice.schema_version'))).map((c) => c.name),
    table.batches.map((b) => b.data),
    metadataText(meta, table.schema.fields),
  );
  patchFooter(tmp, old.checksum, checksum);
  renameSync(tmp, path);
  return path;
}

/** A corrupt newer snapshot: the newer copy with the date after, and one flipped byte in its body. */
function makeCorrupt(newer: string): string {
  const path = join(staging, country, `${corruptDate}.arrow`);
  copyFileSync(newer, path);
  patchFooter(path, newerDate, corruptDate);
  const fd = openSync(path, 'r+');
  const size = fstatSync(fd).size;
  const byte = Buffer.alloc(1);
  readSync(fd, byte, 0, 1, Math.floor(size / 2));
  byte[0] ^= 0x40;
  writeSync(fd, byte, 0, 1, Math.floor(size / 2));
  closeSync(fd);
  return path;
}

// Node's flags of `npm start`, so that Edifice runs here as it does in production.
const START_WORDS = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start.split(
  /\s+/,
);
const START_FLAGS: string[] = START_WORDS.filter((word) => word.startsWith('--'));
/** What npm start runs: bin/start.mjs. */
const START_ENTRY = START_WORDS[START_WORDS.length - 1];

interface Server {
  child: ChildProcess;
  port: number;
  output: () => string;
  /** Milliseconds from spawn to the first 200. */
  firstOkMs: number;
  stop(): Promise<void>;
}

const ledgerPath = join(work, 'ledger.db');
function freshLedger(keys: number): string[] {
  for (const ext of ['', '-wal', '-shm']) rmSync(`${ledgerPath}${ext}`, { force: true });
  const ledger = Ledger.open(ledgerPath);
  const out: string[] = [];
  for (let i = 0; i < keys; i++) {
    const email = `bench-load-${i}@example.com`;
    const { workspaceId } = ledger.createWorkspace(`bench ${i}`, { createdBy: email });
    ledger.grantCredits(workspaceId, 100_000_000, { kind: 'bought', note: 'bench:load' });
    out.push(ledger.createKey(workspaceId, email).key);
  }
  ledger.close();
  return out;
}

/** Starts a server; resolves at its first 200 answer. */
async function startServer(name: string, env: NodeJS.ProcessEnv): Promise<Server> {
  let text = '';
  const t0 = performance.now();
  const child = spawn(process.execPath, [...START_FLAGS, START_ENTRY], {
    cwd: ROOT,
    env: {
      ...process.env,
      EDIFICE_HOST: '127.0.0.1',
      EDIFICE_PORT: '0',
      EDIFICE_METRICS_PORT: '0',
      EDIFICE_SNAPSHOTS: served,
      EDIFICE_LEDGER: ledgerPath,
      EDIFICE_WORKERS: String(workers),
      EDIFICE_BASE_URL: '',
      EDIFICE_LOG_LEVEL: 'warn',
      EDIFICE_KEY_PER_MINUTE: '1000000000',
      EDIFICE_DAILY_QUOTA: '1000000000',
      EDIFICE_TRUSTED_PROXIES: '1',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (c: Buffer) => (text += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (text += c.toString()));
  let exited = false;
  const exit = new Promise<void>((done) => child.once('exit', () => ((exited = true), done())));
  let port = 0;
  for (;;) {
    if (exited) throw new Error(`${name} exited before answering:\n${text.slice(-3000)}`);
    if (performance.now() - t0 > 900_000) throw new Error(`${name} did not answer within 900 s`);
    if (port === 0) {
      const m = /listening on \S+:(\d+)/.exec(text) ?? /"port":(\d+)/.exec(text);
      if (m) port = Number(m[1]);
    }
    if (port > 0) {
      try {
        const r = await fetch(`http://127.0.0.1:${port}/v1/public/countries`);
        await r.arrayBuffer();
        if (r.status === 200) break;
      } catch {
        // not yet
      }
    }
    await new Promise((r) => setTimeout(r, port > 0 ? 5 : 20));
  }
  const firstOkMs = performance.now() - t0;
  return {
    child,
    port,
    output: () => text,
    firstOkMs,
    stop: async () => {
      if (!exited) child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exit;
      clearTimeout(killer);
    },
  };
}

/** The server's log lines of an event (pino JSON). */
function events(s: Server, event: string): Record<string, unknown>[] {
  return s
    .output()
    .split('\n')
    .filter((l) => l.includes(`"event":"${event}"`))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

function rssBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'latin1'));
  return m ? Number(m[1]) * 1024 : NaN;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const fmtS = (ms: number): string => (ms / 1000).toFixed(2);
const range = (xs: number[]): string => `${fmtS(Math.min(...xs))}-${fmtS(Math.max(...xs))}`;

interface Start {
  firstOkMs: number;
  loadMs: number;
  phases: unknown;
  listeningMs: number;
  /** From the process's start to the catalog's: Node, modules, configuration, the ledger's lock. */
  beforeCatalogMs: number;
  /** From the catalog loaded to listening: the ledger, the first worker thread and its warm-up. */
  serveMs: number;
  /** From the process's start to every worker listening (the server answers from the first). */
  allListeningMs: number;
}

/** When the server's log said every worker listens, in ms from its process's start (NaN after 60 s without). */
async function everyWorkerListening(s: Server): Promise<number> {
  for (const until = performance.now() + 60_000; performance.now() < until; await new Promise((r) => setTimeout(r, 20))) {
    const line = s
      .output()
      .split('\n')
      .find((l) => l.includes('"msg":"every worker listening"'));
    if (line) return (JSON.parse(line) as { sinceProcessStartMs: number }).sinceProcessStartMs;
  }
  return NaN;
}

/** One timed start; the server is stopped unless `keep`. */
async function timedStart(name: string, env: NodeJS.ProcessEnv, keep = false): Promise<{ start: Start; server: Server }> {
  noteLoad();
  const server = await startServer(name, { EDIFICE_LOG_LEVEL: 'info', ...env });
  const loaded = events(server, 'snapshot_loaded')[0];
  const listening = server
    .output()
    .split('\n')
    .find((l) => l.includes('"startup"'));
  const startup = listening
    ? (JSON.parse(listening) as { startup: { sinceProcessStartMs: number; catalogMs: number; serveMs: number } }).startup
    : null;
  const every = await everyWorkerListening(server);
  const start = {
    firstOkMs: server.firstOkMs,
    loadMs: loaded.loadMs as number,
    phases: loaded.mapped === undefined ? loaded.phases : { mapped: loaded.mapped, ...(loaded.phases as object) },
    listeningMs: startup?.sinceProcessStartMs ?? NaN,
    beforeCatalogMs: startup ? startup.sinceProcessStartMs - startup.catalogMs - startup.serveMs : NaN,
    serveMs: startup?.serveMs ?? NaN,
    allListeningMs: every,
  };
  log(
    `${name}: first 200 after ${fmtS(start.firstOkMs)} s (store loaded from ${String(loaded.from)} in ${fmtS(start.loadMs)} s, ` +
      `phases ${JSON.stringify(start.phases)}; listening ${fmtS(start.listeningMs)} s after the process started, ` +
      `every worker ${fmtS(start.allListeningMs)} s)`,
  );
  if (!keep) await server.stop();
  return { start, server };
}

// 2. From the Arrow file, as a first start: it also writes the prepared file, in the background once it serves.
log(`bench: ${buildings.toLocaleString('en')} buildings, ${workers} workers, folders in ${work}`);
warmPageCache(servedArrow);
const keys = freshLedger(1);
const arrowStarts: Start[] = [];
const servedPrepared = join(served, country, `${date}.edifice`);
for (let i = 0; i < arrowRuns; i++) {
  rmSync(servedPrepared, { force: true });
  const { start, server } = await timedStart(`arrow ${i + 1}/${arrowRuns}`, { EDIFICE_PREPARED_CACHE: join(work, 'prepared-cache') }, true);
  arrowStarts.push(start);
  while (events(server, 'prepared_written').length === 0 && events(server, 'prepared_not_written').length < 2)
    await new Promise((r) => setTimeout(r, 200));
  log(`prepared file: ${JSON.stringify(events(server, 'prepared_written')[0] ?? events(server, 'prepared_not_written'))}`);
  await server.stop();
}

// 3. The newer snapshot of the swap, and its prepared file, made before the timed starts.
let residentPerBuilding: number;
const newer = makeNewer();
{
  // Its store is this one's (the same buildings): its prepared file is this one's, bound to it.
  const prepared = join(staging, country, `${newerDate}.edifice`);
  const meta = readSnapshotMetadata(newer);
  const old = readSnapshotMetadata(servedArrow);
  copyFileSync(servedPrepared, prepared);
  const fd = openSync(prepared, 'r+');
  const prefix = Buffer.alloc(24);
  readSync(fd, prefix, 0, 24, 0);
  const header = Buffer.alloc(prefix.readUInt32LE(12));
  readSync(fd, header, 0, header.length, 24);
  const text = header.toString('latin1').replaceAll(old.checksum, meta.checksum).replaceAll(`"${date}"`, `"${newerDate}"`);
  if (text.length !== header.length) throw new Error('rebinding changed the header length');
  const rebound = Buffer.from(text, 'latin1');
  writeSync(fd, rebound, 0, rebound.length, 24);
  prefix.writeUInt32LE(crc32(rebound), 16);
  writeSync(fd, prefix, 0, 24, 0);
  closeSync(fd);
  // Read here once, it also gives the store's resident memory per building, measured as bench:query does.
  const before = await memory();
  const { snapshot } = readPrepared(prepared, { checksum: meta.checksum, country, date: newerDate, rows: meta.rowCount }, newer);
  const after = await memory();
  residentPerBuilding = (after.rss - before.rss) / snapshot.rows;
  log(
    `newer snapshot: ${newer} and its prepared file; read here: RSS +${((after.rss - before.rss) / 2 ** 20).toFixed(0)} MiB for ${snapshot.rows} buildings`,
  );
}
const preparedStarts: Start[] = [];
let swapServer: Server | null = null;
let bytesPerBuilding = NaN;
let rssServing = NaN;
for (let i = 0; i < runs; i++) {
  const last = i === runs - 1;
  const { start, server } = await timedStart(`prepared ${i + 1}/${runs}`, {}, true);
  preparedStarts.push(start);
  const loaded = events(server, 'snapshot_loaded')[0];
  bytesPerBuilding = (loaded.bytesHeld as number) / (loaded.buildings as number);
  rssServing = rssBytes(server.child.pid!);
  if (last) swapServer = server;
  else await server.stop();
}

// 5. Hot swap under the mix.
log('swap: the server started from the prepared file serves the mix');
const s = swapServer!;
const target = parseTarget(`http://127.0.0.1:${s.port}/v1`, false);
const [w, so, e, n] = DEFAULT_BOUNDS;
const discovery: Discovery = await discover(target, keys, { minLon: w, minLat: so, maxLon: e, maxLat: n });
const options = (over: Partial<LoadOptions> = {}): LoadOptions => ({
  target,
  keys,
  mode: 'rate',
  rate,
  connections: 64,
  durationS,
  requests: 10_000_000,
  weights: DEFAULT_WEIGHTS,
  seed: 1,
  threads: 1,
  timeoutMs: 10_000,
  bbox: { minLon: w, minLat: so, maxLon: e, maxLat: n },
  discovery,
  clientAddresses: 4096,
  ...over,
});
await runLoad(options({ durationS: 5 }));
noteLoad();
const steady = await runLoad(options());
const rssSteady = rssBytes(s.child.pid!);
log(
  `steady: p99 ${steady.latency_ms.p99} ms, ${steady.completed - steady.ok} failed of ${steady.completed}; RSS ${(rssSteady / 2 ** 20).toFixed(0)} MiB`,
);

interface MixRun {
  /** The worst p99 of the runs (each `--duration` s): at least the p99 of them all. */
  p99: number;
  failed: number;
  completed: number;
  peakRss: number;
  seconds: number;
}

/**
 * Runs the mix with `act` one second in, and again (each run `--duration` s) until `done()`, at
 * most 10 minutes; samples resident memory every 50 ms.
 */
async function underMix(act: () => void, done: () => boolean): Promise<MixRun> {
  const run: MixRun = { p99: 0, failed: 0, completed: 0, peakRss: rssBytes(s.child.pid!), seconds: 0 };
  const sampler = setInterval(() => (run.peakRss = Math.max(run.peakRss, rssBytes(s.child.pid!))), 50);
  const timer = setTimeout(act, 1000);
  do {
    noteLoad();
    const report: LoadReport = await runLoad(options());
    run.p99 = Math.max(run.p99, report.latency_ms.p99);
    run.failed += report.completed - report.ok + report.not_sent;
    run.completed += report.completed;
    run.seconds += report.duration_s;
  } while (!done() && run.seconds < 600);
  clearTimeout(timer);
  clearInterval(sampler);
  return run;
}

renameSync(join(staging, country, `${newerDate}.edifice`), join(served, country, `${newerDate}.edifice`));
renameSync(newer, join(served, country, `${newerDate}.arrow`));
const swappedOf = () => events(s, 'snapshot_loaded').find((l) => l.date === newerDate);
const swap = await underMix(
  () => s.child.kill('SIGHUP'),
  () => swappedOf() !== undefined,
);
const swapped = swappedOf();
const swapFailed = swap.failed;
log(
  `swap: ${swapped ? `${newerDate} loaded from ${String(swapped.from)} in ${fmtS(swapped.loadMs as number)} s` : `${newerDate} NOT loaded within the run`}; ` +
    `p99 ${swap.p99} ms, ${swapFailed} failed of ${swap.completed}; peak RSS ${(swap.peakRss / 2 ** 20).toFixed(0)} MiB`,
);

const corrupt = makeCorrupt(join(served, country, `${newerDate}.arrow`));
renameSync(corrupt, join(served, country, `${corruptDate}.arrow`));
const refusalOf = () => events(s, 'snapshot_refused').find((l) => l.date === corruptDate);
const refusedRun = await underMix(
  () => s.child.kill('SIGHUP'),
  () => refusalOf() !== undefined,
);
const refusal = refusalOf();
// A server that died meanwhile (the kernel's OOM killer on a crowded machine) is reported, not thrown over.
const servingAfter = (await fetch(`http://127.0.0.1:${s.port}/v1/public/countries`)
  .then((r) => r.json())
  .catch((err: Error) => ({ data: [{ snapshotDate: `none: the server does not answer (${err.message})` }] }))) as {
  data: { snapshotDate: string }[];
};
const corruptFailed = refusedRun.failed;
log(
  `corrupt newer: ${refusal ? `refused (${String(refusal.reason).slice(0, 120)})` : 'NOT refused within the run'}; serving ${servingAfter.data[0].snapshotDate}; ` +
    `p99 ${refusedRun.p99} ms, ${corruptFailed} failed of ${refusedRun.completed}`,
);
await s.stop();
rmSync(join(served, country, `${corruptDate}.arrow`), { force: true });
clearServed();

// Report.
const arrowS = median(arrowStarts.map((x) => x.firstOkMs)) / 1000;
const preparedS = median(preparedStarts.map((x) => x.firstOkMs)) / 1000;
const p99Ratio = swap.p99 / steady.latency_ms.p99;
const rssRatio = swap.peakRss / rssSteady;
print(
  `bench:load, ${buildings.toLocaleString('en')} buildings (${country} ${date}), ${workers} workers, ${cpus().length} cores; load average ${loads.map((l) => l.toFixed(1)).join(' ')}`,
);
print(
  'page cache warm (the Arrow file read once before the starts); times from spawning the process to its first 200 (GET /v1/public/countries)',
);
print();
print(
  `| start | first 200, median s | range s | medians: before the catalog s | store load s | first thread + warm-up s | listening s | every worker listening s |`,
);
print(`|---|---|---|---|---|---|---|---|`);
for (const [name, starts] of [
  ['Arrow file', arrowStarts],
  ['prepared file', preparedStarts],
] as const)
  print(
    `| ${name} | ${fmtS(median(starts.map((x) => x.firstOkMs)))} | ${range(starts.map((x) => x.firstOkMs))} | ` +
      `${fmtS(median(starts.map((x) => x.beforeCatalogMs)))} | ${fmtS(median(starts.map((x) => x.loadMs)))} | ` +
      `${fmtS(median(starts.map((x) => x.serveMs)))} | ${fmtS(median(starts.map((x) => x.listeningMs)))} | ` +
      `${fmtS(median(starts.map((x) => x.allListeningMs)))} |`,
  );
print();
print(`phases, Arrow file: ${arrowStarts.map((x) => JSON.stringify(x.phases)).join(' ')}`);
print(`phases, prepared file: ${preparedStarts.map((x) => JSON.stringify(x.phases)).join(' ')}`);
print(
  `store: ${residentPerBuilding.toFixed(0)} B/building resident (RSS after reading the prepared file minus before, after full collections, ` +
    `as bench:query measures it), ${bytesPerBuilding.toFixed(0)} B/building held (bytesHeld); ` +
    `the server's RSS once serving from the prepared file ${(rssServing / 2 ** 20).toFixed(0)} MiB`,
);
print();
print(`| mix at ${rate}/s | seconds | p99 ms (worst of ${durationS}-s runs) | failed | completed | peak RSS MiB |`);
print(`|---|---|---|---|---|---|`);
const mib = (b: number): string => (b / 2 ** 20).toFixed(0);
print(
  `| steady | ${steady.duration_s.toFixed(0)} | ${steady.latency_ms.p99} | ${steady.completed - steady.ok + steady.not_sent} | ${steady.completed} | ${mib(rssSteady)} |`,
);
print(`| swap to ${newerDate} | ${swap.seconds.toFixed(0)} | ${swap.p99} | ${swapFailed} | ${swap.completed} | ${mib(swap.peakRss)} |`);
print(
  `| corrupt ${corruptDate} | ${refusedRun.seconds.toFixed(0)} | ${refusedRun.p99} | ${corruptFailed} | ${refusedRun.completed} | ${mib(refusedRun.peakRss)} |`,
);
print(
  `swap: ${swapped ? `loaded from ${String(swapped.from)} in ${fmtS(swapped.loadMs as number)} s` : 'not loaded'}; corrupt: ${refusal ? 'refused' : 'NOT refused'}, serving ${servingAfter.data[0].snapshotDate} after`,
);
print();
print(
  `summary: load_s_arrow=${arrowS.toFixed(2)} load_s_prepared=${preparedS.toFixed(2)} bytes_per_building=${residentPerBuilding.toFixed(0)} ` +
    `swap_failed=${swapFailed} swap_p99_ratio=${p99Ratio.toFixed(2)} swap_rss_ratio=${rssRatio.toFixed(2)}`,
);
process.stdout.write(`${out.join('\n')}\n`);
