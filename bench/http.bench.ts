/**
 * `npm run bench:http`: Edifice over HTTP under the load-test harness's mix, against the ceiling
 * of its stack and a plain baseline, in one run on this machine.
 *
 * 1. The country: a seeded synthetic one (default 1,000,000 buildings), generated once into
 *    `.cache/bench/` and reused (`bench/dataset.ts`), or `--snapshots DIR --bbox W,S,E,N`.
 * 2. Servers, each in its own child process, one at a time:
 *    - edifice-all: `node <npm start's flags> bin/start.mjs` (npm start) with EDIFICE_WORKERS=<cores>
 *                   (all workers);
 *    - edifice-1:   the same with EDIFICE_WORKERS=1;
 *    - node:http:   `bench/http/node-server.ts`, the same validators and engine, objects through
 *                   JSON.stringify, no key, ledger, cache or log (the baseline);
 *    - uws-hello:   `bench/http/hello-server.ts`, uWebSockets.js answering a fixed small JSON (the ceiling).
 *    - uws-replay:  `bench/http/replay-server.ts`, uWebSockets.js answering each request with the next
 *                   of --replay-answers answers edifice-all gave to the mix (recorded one at a time
 *                   after its runs, `bench/http/record.ts`): the ceiling for Edifice's bytes, with
 *                   no work behind them.
 *    Each Edifice run gets a fresh ledger with --keys workspaces (one key each, 100,000,000
 *    credits) and raised limits (EDIFICE_KEY_PER_MINUTE, EDIFICE_DAILY_QUOTA), in the
 *    run's temporary folder or under --ledger-dir (e.g. /dev/shm, to see what the ledger's fsyncs
 *    cost); it logs one line per request at --log-level (default info, as in production).
 * 3. Discovery runs once, against edifice-all; every server then gets the same seeded mix of
 *    URLs (walks follow links.next where a server gives one).
 * 4. Per server: a warm-up run (not recorded), then as fast as possible over --connections for
 *    --duration seconds: its peak. Then edifice-all at a fixed rate of 80% of its peak for
 *    --duration seconds: p99 there, latency counted from each request's scheduled time, split
 *    by the answers' X-Credits-Charged into free answers and charged pages; from the server's
 *    /metrics, how long the pages sent to the ledger waited for their charge; and, from a child
 *    process syncing 4 KiB blocks in the ledgers' folder meanwhile (`http/fsync-probe.ts`), what
 *    the disk itself takes to make a write durable: the floor of a charged page's latency.
 *    uws-replay runs at that same fixed rate after its peak: the tail of answers with no work
 *    behind them, which this machine and load generator alone give at that rate.
 * 5. --profile: edifice-all once more under `node --cpu-prof`, loaded as fast as possible for
 *    --profile-duration seconds; the top 20 self-time functions of the loaded period.
 * Progress goes to stderr; the report to stdout, whose last line is
 * `summary: rps=<n> ratio_node_http=<x> ratio_replay=<y> free_p99_ms_at_80pct=<a> charged_p99_ms_at_80pct=<b> fsync_p99_ms=<c>`.
 *
 * On a 2-core machine the load generator (this process) takes CPU from the server: the table
 * gives both processes' CPU, in cores, beside each figure.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Ledger } from '../src/ledger/index.ts';
import { DEFAULT_BOUNDS } from '../src/synth/bounds.ts';
import { parseBBox, discover, type Discovery } from '../tools/load/discover.ts';
import { DEFAULT_WEIGHTS, formatWeights, parseWeights } from '../tools/load/mix.ts';
import { LIMITS } from '../tools/load/options.ts';
import type { LoadReport } from '../tools/load/report.ts';
import { runLoad, type LoadOptions } from '../tools/load/run.ts';
import { parseTarget } from '../tools/load/target.ts';
import { ensureSynthetic } from './dataset.ts';
import { formatProfile } from './http/profile.ts';
import { recordMix } from './http/record.ts';
import { ROOT, ensurePrepared, startChild, type Child } from './http/servers.ts';

const GOAL = { ratioNodeHttp: 3, ratioReplay: 0.4, freeP99At80Ms: 10, chargedOverFsyncMs: 5 };
/** Syncs a second of the fsync probe beside the 80% run: 2,000 samples in 20 s, its p99 the 20th slowest. */
const FSYNC_PROBE_RATE = 100;

const { values: args } = parseArgs({
  options: {
    buildings: { type: 'string', default: '1000000' },
    seed: { type: 'string', default: '1' },
    'mix-seed': { type: 'string', default: '1' },
    mix: { type: 'string', default: formatWeights(DEFAULT_WEIGHTS) },
    duration: { type: 'string', default: '20' },
    warmup: { type: 'string', default: '5' },
    connections: { type: 'string', default: '32' },
    keys: { type: 'string', default: '8' },
    workers: { type: 'string', default: String(cpus().length) },
    'log-level': { type: 'string', default: 'info' },
    cache: { type: 'string', default: '.cache/bench' },
    'ledger-dir': { type: 'string' },
    snapshots: { type: 'string' },
    bbox: { type: 'string' },
    profile: { type: 'boolean', default: false },
    'profile-duration': { type: 'string', default: '10' },
    'replay-answers': { type: 'string', default: '4000' },
  },
  strict: true,
});

function positive(name: string, v: string, integer: boolean, max = Infinity): number {
  const n = Number(v.replace(/_/g, ''));
  if (!(n > 0) || n > max || (integer && !Number.isInteger(n)))
    throw new RangeError(`--${name} must be a positive ${integer ? 'integer' : 'number'} up to ${max}, got "${v}".`);
  return n;
}
const buildings = positive('buildings', args.buildings!, true);
const seed = positive('seed', args.seed!, true);
const mixSeed = positive('mix-seed', args['mix-seed']!, true);
const durationS = positive('duration', args.duration!, false, LIMITS.durationS);
const warmupS = positive('warmup', args.warmup!, false, LIMITS.durationS);
const connections = positive('connections', args.connections!, true, LIMITS.connections);
const keyCount = positive('keys', args.keys!, true, 1000);
const workers = positive('workers', args.workers!, true, 256);
const profileS = positive('profile-duration', args['profile-duration']!, false, LIMITS.durationS);
const replayAnswers = positive('replay-answers', args['replay-answers']!, true, 100_000);
const weights = parseWeights(args.mix!);
if (!['fatal', 'error', 'warn', 'info', 'debug'].includes(args['log-level']!))
  throw new RangeError(`--log-level must be one of fatal, error, warn, info, debug, got "${args['log-level']}".`);
if (args.snapshots && !args.bbox) throw new RangeError('--snapshots needs --bbox W,S,E,N (the area the snapshots cover).');

const started = performance.now();
const loadAtStart = loadavg();
const log = (msg: string): void => {
  process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(1).padStart(6)}s] ${msg}\n`);
};
const out: string[] = [];
const print = (line = ''): void => {
  out.push(line);
};

// 1. Data, and a folder for this run's ledgers, logs and profiles.
const snapshots = args.snapshots ? resolve(args.snapshots) : await ensureSynthetic(args.cache!, seed, buildings, log);
await ensurePrepared(snapshots);
const bbox = parseBBox(args.bbox ?? DEFAULT_BOUNDS.join(','));
const work = mkdtempSync(join(tmpdir(), 'edifice-bench-http-'));
log(`bench: ledgers, server logs and profiles in ${work}`);

const ledgerDir = args['ledger-dir'] ? mkdtempSync(join(resolve(args['ledger-dir']), 'edifice-bench-ledgers-')) : work;

/** A fresh ledger: `keyCount` workspaces with one key and plenty of credits each. */
function freshLedger(name: string): { path: string; keys: string[] } {
  const path = join(ledgerDir, `${name}.db`);
  const ledger = Ledger.open(path);
  const keys: string[] = [];
  for (let i = 0; i < keyCount; i++) {
    const email = `bench-${i}@example.com`;
    const { workspaceId } = ledger.createWorkspace(`bench ${i}`, { createdBy: email });
    ledger.grantCredits(workspaceId, 100_000_000, { kind: 'bought', note: 'bench:http' });
    keys.push(ledger.createKey(workspaceId, email).key);
  }
  ledger.close();
  return { path, keys };
}

interface Server {
  child: Child;
  keys: string[];
  /** The operator port, where /metrics is served (Edifice only). */
  metricsPort?: number;
}

/** A port free now on 127.0.0.1, for the server's operator port. */
function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const probe = createServer();
    probe.once('error', fail);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => done(port));
    });
  });
}

/**
 * Node's flags in `npm start` (package.json; each one word, `--name` or `--name=value`), so that
 * Edifice runs here as it does in production.
 */
const START_WORDS = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start.split(
  /\s+/,
);
const START_FLAGS: string[] = START_WORDS.filter((word) => word.startsWith('--'));
/** What npm start runs: bin/start.mjs. */
const START_ENTRY = START_WORDS[START_WORDS.length - 1];

async function startEdifice(name: string, workerCount: number, nodeFlags: string[] = []): Promise<Server> {
  const ledger = freshLedger(name);
  const metricsPort = await freePort();
  log(`${name}: starting (EDIFICE_WORKERS=${workerCount}; node ${[...START_FLAGS, ...nodeFlags].join(' ')}; loads the snapshot first)`);
  const child = await startChild(
    name,
    [...START_FLAGS, ...nodeFlags, START_ENTRY],
    {
      EDIFICE_HOST: '127.0.0.1',
      EDIFICE_PORT: '0',
      EDIFICE_METRICS_PORT: String(metricsPort),
      EDIFICE_SNAPSHOTS: snapshots,
      EDIFICE_LEDGER: ledger.path,
      EDIFICE_WORKERS: String(workerCount),
      EDIFICE_BASE_URL: '',
      EDIFICE_LOG_LEVEL: args['log-level'],
      EDIFICE_KEY_PER_MINUTE: '1000000000',
      EDIFICE_DAILY_QUOTA: '1000000000',
      // The mix's public pages come from many addresses (--client-addresses), as behind a proxy.
      EDIFICE_TRUSTED_PROXIES: '1',
    },
    join(work, `${name}.log`),
    /listening on \S+:(\d+)/,
  );
  return { child, keys: ledger.keys, metricsPort };
}

async function startPlain(name: string, script: string, extra: string[] = []): Promise<Server> {
  log(`${name}: starting`);
  const child = await startChild(name, ['--import', 'tsx', script, ...extra], {}, join(work, `${name}.log`), /listening (\d+)/);
  // They check no key; the mix sends them one anyway, so every server reads the same requests.
  return { child, keys: ['edf_bench_no_key_checked'] };
}

let discovery: Discovery | null = null;

function loadOptions(s: Server, over: Partial<LoadOptions>): LoadOptions {
  return {
    target: parseTarget(`http://127.0.0.1:${s.child.port}/v1`, false),
    keys: s.keys,
    mode: 'max',
    rate: null,
    connections,
    durationS,
    requests: LIMITS.requests,
    weights,
    seed: mixSeed,
    threads: 1,
    timeoutMs: 10_000,
    bbox,
    discovery: discovery ?? undefined,
    clientAddresses: 4096,
    ...over,
  };
}

interface Measured {
  name: string;
  report: LoadReport;
  serverCores: number;
  load1: number;
  /** Edifice: lookups of the encoded-building store over the run (/metrics). */
  lookups?: { hits: number; misses: number };
}

/** One recorded run; the server's CPU over it from /proc. */
async function measure(name: string, s: Server, over: Partial<LoadOptions>): Promise<Measured> {
  const load1 = loadavg()[0];
  const cpu0 = s.child.cpuSeconds();
  const report = await runLoad(loadOptions(s, over));
  const serverCores = (s.child.cpuSeconds() - cpu0) / report.duration_s;
  const bad = report.completed - report.ok;
  log(
    `${name}: ${report.rps.toFixed(0)} requests/s, p50 ${report.latency_ms.p50} ms, p99 ${report.latency_ms.p99} ms, ` +
      `${bad} non-2xx; server ${serverCores.toFixed(2)} cores, client ${report.client_cpu_cores.toFixed(2)} cores; load average ${load1.toFixed(1)}`,
  );
  return { name, report, serverCores, load1 };
}

async function peak(name: string, s: Server): Promise<Measured> {
  log(`${name}: warm-up ${warmupS} s`);
  await runLoad(loadOptions(s, { durationS: warmupS }));
  log(`${name}: as fast as possible for ${durationS} s over ${connections} connections`);
  if (s.metricsPort === undefined) return measure(name, s, {});
  const before = await buildingLookups(s);
  const m = await measure(name, s, {});
  const after = await buildingLookups(s);
  return { ...m, lookups: { hits: after.hits - before.hits, misses: after.misses - before.misses } };
}

/** Lookups of the encoded-building store, every thread's summed (`edifice_fragment_cache_lookups_total`). */
async function buildingLookups(s: Server): Promise<{ hits: number; misses: number }> {
  const text = await (await fetch(`http://127.0.0.1:${s.metricsPort}/metrics`)).text();
  const n = { hits: 0, misses: 0 };
  for (const m of text.matchAll(/^edifice_fragment_cache_lookups_total\{[^}]*result="(hit|miss)"[^}]*\} (\d+)$/gm))
    n[m[1] === 'hit' ? 'hits' : 'misses'] += Number(m[2]);
  return n;
}

/** The server's histogram of the waits for a page's charge (`edifice_charge_wait_seconds`): count at or under each bound, in seconds. */
async function chargeWaits(s: Server): Promise<Map<number, number>> {
  if (s.metricsPort === undefined) throw new Error('only Edifice serves /metrics');
  const text = await (await fetch(`http://127.0.0.1:${s.metricsPort}/metrics`)).text();
  const buckets = new Map<number, number>();
  for (const m of text.matchAll(/^edifice_charge_wait_seconds_bucket\{le="([^"]+)"\} (\d+)$/gm))
    buckets.set(m[1] === '+Inf' ? Infinity : Number(m[1]), Number(m[2]));
  return buckets;
}

/** What the pages sent to the ledger waited for their charge between two readings of the histogram. */
function describeWaits(before: Map<number, number>, after: Map<number, number>): string {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const count = (le: number) => (after.get(le) ?? 0) - (before.get(le) ?? 0);
  const total = count(Infinity);
  if (total === 0) return 'no page waited for its charge';
  const within = (q: number) => bounds.find((le) => count(le) >= q * total)!;
  const ms = (le: number) => (le === Infinity ? 'more' : `${le * 1000} ms`);
  const over25 = total - count(0.025);
  return (
    `${total.toLocaleString('en')} pages waited for their charge (the ledger's group commit and fsync, or its word that they are free): ` +
    `p50 within ${ms(within(0.5))}, p99 within ${ms(within(0.99))}; ${over25.toLocaleString('en')} (${((100 * over25) / total).toFixed(2)}%) over 25 ms`
  );
}

interface FsyncTimes {
  /** The probe's nice value (the ledger thread's, when permitted). */
  nice: number;
  count: number;
  p50: number;
  p99: number;
  max: number;
}

/**
 * `http/fsync-probe.ts` in a child process on `folder` (the ledgers' folder) at FSYNC_PROBE_RATE
 * syncs a second; `stop()` ends it and gives its write+fdatasync times in ms.
 */
async function startFsyncProbe(folder: string): Promise<{ stop(): Promise<FsyncTimes> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/http/fsync-probe.ts', folder, String(FSYNC_PROBE_RATE)], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let text = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (text += d));
  const exited = new Promise<void>((done) => child.on('exit', () => done()));
  while (!text.includes('ready\n')) {
    if (child.exitCode !== null) throw new Error('the fsync probe exited before it was ready');
    await new Promise((r) => setTimeout(r, 20));
  }
  return {
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
      return JSON.parse(text.slice(text.indexOf('ready\n') + 6).trim()) as FsyncTimes;
    },
  };
}

const results: Measured[] = [];
const recording = join(work, 'edifice-answers.v8');
let recorded: string;
let at80: Measured;
/** edifice-all's fixed rate (80% of its peak), which uws-replay is run at too. */
let rate80: number;
/** uws-replay at rate80: the tail of answers with no work behind them, from this machine and load generator alone. */
let replayAt80: Measured | undefined;
/**
 * uws-replay at 80% of its own peak: the tail goals' own terms applied to a server doing no work,
 * whose peak is the most this stack sends Edifice's bytes at. What it reads there, any server would.
 */
let replayAtOwn80: Measured | undefined;
let waitsAt80: string;
let fsyncAt80: FsyncTimes;

// 2-4. edifice-all first: discovery runs against it.
{
  const s = await startEdifice('edifice-all', workers);
  discovery = await discover(parseTarget(`http://127.0.0.1:${s.child.port}/v1`, false), s.keys, bbox);
  log(
    `discovery: ${discovery.requests} requests, ${discovery.buildings} buildings in ${discovery.cells} cells; public pages ${discovery.publicAvailable ? 'answer' : 'answer 404'}`,
  );
  results.push(await peak('edifice-all', s));
  rate80 = Math.max(1, Math.round(results[0].report.rps * 0.8));
  log(`edifice-all: fixed rate ${rate80}/s (80% of its peak) for ${durationS} s`);
  const waits0 = await chargeWaits(s);
  const probe = await startFsyncProbe(ledgerDir);
  at80 = await measure('edifice-all @80%', s, { mode: 'rate', rate: rate80, connections: 1024 });
  fsyncAt80 = await probe.stop();
  waitsAt80 = describeWaits(waits0, await chargeWaits(s));
  log(`edifice-all: recording its answers to ${replayAnswers} requests of the mix, one at a time, for uws-replay`);
  const r = await recordMix(
    parseTarget(`http://127.0.0.1:${s.child.port}/v1`, false),
    s.keys,
    discovery!,
    weights,
    mixSeed,
    replayAnswers,
    recording,
  );
  recorded = `${r.answers.toLocaleString('en')} answers, ${(r.bytes / r.answers / 1024).toFixed(1)} KiB of body each on average; statuses ${Object.entries(
    r.statuses,
  )
    .map(([k, n]) => `${k}: ${n}`)
    .join(', ')}`;
  log(`edifice-all: recorded ${recorded}`);
  await s.child.stop();
}
for (const [name, start] of [
  ['edifice-1', () => startEdifice('edifice-1', 1)],
  ['node:http', () => startPlain('node:http', 'bench/http/node-server.ts', [snapshots])],
  ['uws-hello', () => startPlain('uws-hello', 'bench/http/hello-server.ts')],
  ['uws-replay', () => startPlain('uws-replay', 'bench/http/replay-server.ts', [recording])],
] as const) {
  const s = await start();
  results.push(await peak(name, s));
  if (name === 'uws-replay') {
    log(`uws-replay: fixed rate ${rate80}/s (edifice-all's 80% run) for ${durationS} s`);
    replayAt80 = await measure(`uws-replay @${rate80}/s`, s, { mode: 'rate', rate: rate80, connections: 1024 });
    const own80 = Math.max(1, Math.round(results[results.length - 1].report.rps * 0.8));
    log(`uws-replay: fixed rate ${own80}/s (80% of its own peak) for ${durationS} s`);
    replayAtOwn80 = await measure(`uws-replay @80% (${own80}/s)`, s, { mode: 'rate', rate: own80, connections: 1024 });
  }
  await s.child.stop();
}

// 5. Profile.
let profile = '';
if (args.profile) {
  const dir = join(work, 'profile');
  mkdirSync(dir, { recursive: true });
  const s = await startEdifice('edifice-profile', workers, ['--cpu-prof', '--cpu-prof-dir', dir]);
  log(`edifice-profile: warm-up ${warmupS} s, then ${profileS} s as fast as possible under --cpu-prof`);
  await runLoad(loadOptions(s, { durationS: warmupS }));
  const from = process.hrtime.bigint();
  const p = await measure('edifice-profile', s, { durationS: profileS });
  const to = process.hrtime.bigint();
  await s.child.stop();
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => join(dir, f));
  profile = [
    `profile: edifice-all (EDIFICE_WORKERS=${workers}) under the mix, as fast as possible for ${profileS} s ` +
      `(${p.report.rps.toFixed(0)} requests/s under the profiler); ${files.join(', ')}`,
    formatProfile(files, ROOT, 20, { fromUs: Number(from / 1000n), toUs: Number(to / 1000n) }),
  ].join('\n');
}

// 6. Report.
const byName = new Map(results.map((r) => [r.name, r]));
const rps = (n: string) => byName.get(n)?.report.rps ?? NaN;
const ratioNode = rps('edifice-all') / rps('node:http');
const ratioReplay = rps('edifice-all') / rps('uws-replay');
const replayOfHello = (100 * rps('uws-replay')) / rps('uws-hello');
const freeP99 = at80!.report.by_charge.free.p99;
const chargedP99 = at80!.report.by_charge.charged.p99;
const fsyncP99 = fsyncAt80!.p99;
const fmt = (v: number, d: number) => (Number.isFinite(v) ? v.toFixed(d) : 'nan');
const cols = [
  'server',
  'requests/s',
  'p50 ms',
  'p99 ms',
  'vs node:http',
  'vs uws-hello',
  'vs uws-replay',
  'non-2xx',
  'server CPU',
  'client CPU',
  'load avg',
];
const rows = [...results, at80!, ...[replayAt80, replayAtOwn80].filter((m) => m !== undefined)].map((m) => [
  m.name,
  fmt(m.report.rps, 0),
  fmt(m.report.latency_ms.p50, 2),
  fmt(m.report.latency_ms.p99, 2),
  `${fmt(m.report.rps / rps('node:http'), 2)}x`,
  `${fmt((100 * m.report.rps) / rps('uws-hello'), 1)}%`,
  `${fmt((100 * m.report.rps) / rps('uws-replay'), 1)}%`,
  String(m.report.completed - m.report.ok),
  fmt(m.serverCores, 2),
  fmt(m.report.client_cpu_cores, 2),
  fmt(m.load1, 1),
]);
const width = cols.map((c, k) => Math.max(c.length, ...rows.map((r) => r[k].length)));
const line = (cells: string[]) => `| ${cells.map((c, k) => (k === 0 ? c.padEnd(width[k]) : c.padStart(width[k]))).join(' | ')} |`;

print(
  `machine: ${cpus()[0]?.model ?? 'unknown cpu'}, ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB; Node ${process.version}; ` +
    `load average at start ${loadAtStart.map((v) => v.toFixed(1)).join(' ')}, at end ${loadavg()
      .map((v) => v.toFixed(1))
      .join(' ')}`,
);
print(
  `data: ${snapshots} (${args.snapshots ? 'given' : `${buildings.toLocaleString('en')} synthetic buildings, seed ${seed}`}); ` +
    `mix ${formatWeights(results[0].report.mix)} (seed ${mixSeed}); ${durationS} s per run after a ${warmupS} s warm-up; ` +
    `peaks over ${connections} connections; Edifice with ${keyCount} keys, log level ${args['log-level']}, ledgers in ${ledgerDir}`,
);
print(
  `edifice-all runs EDIFICE_WORKERS=${workers}, edifice-1 EDIFICE_WORKERS=1; a server without multi-worker serving ignores the variable, and then both are the same single-threaded server.`,
);
print(
  `Edifice runs with npm start's Node flags (${START_FLAGS.length ? START_FLAGS.join(' ') : 'none'}); node:http and uws-hello with Node's defaults.`,
);
print(
  'server CPU and client CPU: cores busy during the run (server: every thread of its process; client: this process, the load generator).',
);
print();
print(line(cols));
print(`|${width.map((w, k) => (k === 0 ? `:${'-'.repeat(w + 1)}` : `${'-'.repeat(w + 1)}:`)).join('|')}|`);
for (const r of rows) print(line(r));
print();
print(
  `uws-replay answered with edifice-all's recorded answers (${recorded!}): the most any server could do on this stack and machine ` +
    `while sending Edifice's bytes for the mix, with no work behind them. It reached ${fmt(replayOfHello, 1)}% of uws-hello; ` +
    `edifice-all reached ${fmt((100 * rps('edifice-all')) / rps('uws-replay'), 1)}% of it.`,
);
print();
for (const m of results.filter((r) => r.lookups)) {
  const { hits, misses } = m.lookups!;
  const answered = m.report.completed;
  print(
    `${m.name} at its peak, the encoded-building store: ${fmt(misses / answered, 2)} buildings encoded a request, ` +
      `${fmt((hits + misses) / answered, 1)} looked up (${fmt((100 * hits) / (hits + misses), 1)}% found)`,
  );
}
print('edifice-all per request kind at its peak:');
for (const [k, s] of Object.entries(results[0].report.kinds))
  print(`  ${k.padEnd(8)} ${String(s.count).padStart(8)} requests, p50 ${s.p50_ms} ms, p99 ${s.p99_ms} ms`);
for (const m of [...results, at80!]) {
  const errs = Object.entries(m.report.errors);
  if (errs.length > 0) print(`  ${m.name} non-2xx: ${errs.map(([k, n]) => `${k}: ${n}`).join(', ')}`);
}
const lag = at80!.report.send_lag_ms;
if (lag)
  print(
    `edifice-all @80%: the client's send lag (part of its latency) p50 ${lag.p50} ms, p99 ${lag.p99} ms, max ${lag.max} ms; ` +
      `${at80!.report.queued} requests waited for a free connection`,
  );
print(`edifice-all @80%: ${waitsAt80!} (edifice_charge_wait_seconds)`);
const split = (b: LoadReport['by_charge']['free']) =>
  `${b.count.toLocaleString('en')} answers, p50 ${b.p50} ms, p99 ${b.p99} ms, max ${b.max} ms`;
print(
  `edifice-all @80%, 2xx by X-Credits-Charged: free ${split(at80!.report.by_charge.free)}; charged ${split(at80!.report.by_charge.charged)}`,
);
print(
  `edifice-all @80%: the ledger folder's own write+fdatasync of 4 KiB (${FSYNC_PROBE_RATE}/s from a child process at nice ${fsyncAt80!.nice}, ${fsyncAt80!.count.toLocaleString('en')} syncs): ` +
    `p50 ${fmt(fsyncAt80!.p50, 2)} ms, p99 ${fmt(fsyncP99, 2)} ms, max ${fmt(fsyncAt80!.max, 2)} ms`,
);
if (replayAt80) {
  const r = replayAt80.report;
  print(
    `uws-replay at the same ${rate80}/s: p50 ${r.latency_ms.p50} ms, p99 ${r.latency_ms.p99} ms, send lag p99 ${r.send_lag_ms?.p99 ?? 'nan'} ms ` +
      `(Edifice's recorded answers with no work behind them: the tail this machine and load generator give at that rate)`,
  );
}
if (replayAtOwn80) {
  const r = replayAtOwn80.report;
  print(
    `uws-replay at 80% of its own peak (${r.rps.toFixed(0)}/s): p50 ${r.latency_ms.p50} ms, p99 ${r.latency_ms.p99} ms, send lag p99 ${r.send_lag_ms?.p99 ?? 'nan'} ms ` +
      `(the tail goals' terms met by a server doing no work: a server as fast as the stack allows would read this)`,
  );
}
for (const w of new Set(results.flatMap((m) => m.report.warnings))) print(`warning: ${w}`);
if (profile) {
  print();
  print(profile);
}
const verdict = (ok: boolean) => (ok ? 'met' : 'NOT met');
print();
print(
  `goal: edifice-all >= ${GOAL.ratioNodeHttp}x node:http (${fmt(ratioNode, 2)}x: ${verdict(ratioNode >= GOAL.ratioNodeHttp)}), ` +
    `>= ${GOAL.ratioReplay * 100}% of uws-replay (${fmt(ratioReplay * 100, 1)}%: ${verdict(ratioReplay >= GOAL.ratioReplay)}); ` +
    `at 80% of its peak, free answers' p99 <= ${GOAL.freeP99At80Ms} ms (${fmt(freeP99, 2)} ms: ${verdict(freeP99 <= GOAL.freeP99At80Ms)}), ` +
    `charged pages' p99 <= the fsync p99 + ${GOAL.chargedOverFsyncMs} ms (${fmt(chargedP99, 2)} ms against ${fmt(fsyncP99, 2)} + ${GOAL.chargedOverFsyncMs}: ` +
    `${verdict(chargedP99 <= fsyncP99 + GOAL.chargedOverFsyncMs)})`,
);
print(
  `summary: rps=${fmt(rps('edifice-all'), 0)} ratio_node_http=${fmt(ratioNode, 2)} ratio_replay=${fmt(ratioReplay, 3)} ` +
    `free_p99_ms_at_80pct=${fmt(freeP99, 2)} charged_p99_ms_at_80pct=${fmt(chargedP99, 2)} fsync_p99_ms=${fmt(fsyncP99, 2)}`,
);
process.stdout.write(`${out.join('\n')}\n`);
if (!args.profile) rmSync(work, { recursive: true, force: true });
if (ledgerDir !== work) rmSync(ledgerDir, { recursive: true, force: true });
log('done');
