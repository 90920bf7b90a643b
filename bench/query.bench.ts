/**
 * `npm run bench:query`: Edifice (its planner, and its plain scan forced) against a brute-force
 * scan and DuckDB on one seeded synthetic country (default 5,000,000 buildings).
 *
 * 1. The country is generated once into `.cache/bench/` (child process) and reused.
 * 2. Edifice loads it first, alone in the process: load time, and resident memory per building
 *    (RSS after load minus RSS before, after full collections; arrayBuffers beside it).
 * 3. The bench decodes its own copy of the columns from the file (scan baseline, mix, DuckDB
 *    loader) and loads DuckDB.
 * 4. A fixed seeded mix of GET /buildings and GET /buildings/at queries runs on every engine:
 *    one warm-up pass whose answers are compared across engines (ids in order, total, capped),
 *    then --reps rounds of timed passes, each round one pass per engine over the same seeded
 *    order of queries (engines take turns, so a change of load on a shared machine falls on
 *    all of them; adjacent engines swap places every other round; each pass starts after full
 *    collections, so none pays for another's garbage). Edifice's planner and its forced scan,
 *    whose ratio per class is the point of the comparison, are timed side by side instead,
 *    query by query (each of the two first on every query in half the rounds), over
 *    --pair-reps rounds: their ratio at a class's p99 rests on its few slowest samples, and in
 *    separate passes a pass-long burst of load on this shared machine falls on one of them
 *    only. Why 120 rounds: bench/README.md, bench:query.
 * 5. A table of p50/p99 per class and for the whole mix, ratios to Edifice; the planner and its
 *    forced scan again over one figure per query (what a query costs, without the bursts of
 *    load a class's p99 over samples can rest on), and their ratios with a 95% interval from a
 *    bootstrap over the rounds (noise.ts: how far a ratio moves between the rounds of one run;
 *    between runs it moves further); the mismatches, and last the summary line.
 *
 * Progress goes to stderr; the report to stdout, whose last line is
 * `summary: p50_ratio_duckdb=<x> p99_ratio_duckdb=<y> bytes_per_building=<n> load_s=<s>
 * heavy_p99_ratio_scan=<x> slowest_class_ratio=<y>` (the last two: edifice-scan's time over
 * edifice's, at p99 on heavy-3x3, and the least of p50 and p99 over the GET /buildings classes).
 *
 * Options: --buildings N (5000000) --seed S (1, the country) --mix-seed S (7) --scale F (1,
 * multiplies each class's query count) --reps R (3) --pair-reps R (120: rounds of the
 * planner against its forced scan, side by side; even, so each goes first equally often)
 * --engines edifice,edifice-scan,scan,duckdb --cache DIR (.cache/bench) --snapshots DIR (use
 * these snapshots instead of a synthetic country; exactly one country) --scan-both (the planner's
 * engine forced to the scan too: an A/A run, whose ratios show how far from 1 two runs of the
 * same code read here).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Prng } from '../src/synth/prng.ts';
import { decodeColumns } from './columns.ts';
import { compareAll } from './compare.ts';
import { ensureSynthetic, snapshotFiles } from './dataset.ts';
import type { Answer, Engine, MixQuery } from './engine.ts';
import { hasGc, memory, percentile, runPairPass, runPass, settle, shuffled, sink, type Memory } from './measure.ts';
import { CLASSES, makeMix } from './mix.ts';
import { formatTable, p99Ratios, slowest, slowestP99, summarise, type ClassTimes } from './report.ts';
import { ScanEngine } from './scan.ts';
import { ratioIntervals } from './noise.ts';

const GOAL = { p50Ratio: 20, p99Ratio: 3, bytesPerBuilding: 400, heavyRatioScan: 5, classP99Ms: 1, postgisP99Ratio: 100 };
const ENGINES = ['edifice', 'edifice-scan', 'scan', 'duckdb', 'postgis'];

const { values: args } = parseArgs({
  options: {
    buildings: { type: 'string', default: '5000000' },
    seed: { type: 'string', default: '1' },
    'mix-seed': { type: 'string', default: '7' },
    scale: { type: 'string', default: '1' },
    reps: { type: 'string', default: '3' },
    'pair-reps': { type: 'string', default: '120' },
    engines: { type: 'string', default: ENGINES.join(',') },
    cache: { type: 'string', default: '.cache/bench' },
    snapshots: { type: 'string' },
    'scan-both': { type: 'boolean', default: false },
    'postgis-shared-buffers': { type: 'string', default: '2GB' },
  },
  strict: true,
});

function positive(name: string, v: string, integer: boolean): number {
  const n = Number(v.replace(/_/g, ''));
  if (!(n > 0) || (integer && !Number.isInteger(n)))
    throw new RangeError(`--${name} must be a positive ${integer ? 'integer' : 'number'}, got "${v}".`);
  return n;
}
const buildings = positive('buildings', args.buildings!, true);
const seed = positive('seed', args.seed!, true);
const mixSeed = positive('mix-seed', args['mix-seed']!, true);
const scale = positive('scale', args.scale!, false);
const reps = positive('reps', args.reps!, true);
const pairReps = positive('pair-reps', args['pair-reps']!, true);
const engineNames = args
  .engines!.split(',')
  .map((s) => s.trim())
  .filter(Boolean);
for (const e of engineNames)
  if (!ENGINES.includes(e)) throw new RangeError(`--engines: unknown engine "${e}", expected some of ${ENGINES.join(', ')}.`);

const started = performance.now();
const loadAtStart = loadavg();
const log = (msg: string): void => {
  process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(1).padStart(6)}s] ${msg}\n`);
};
const mb = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
const out: string[] = [];
const print = (line = ''): void => {
  out.push(line);
};

// 1. Data.
const dir = args.snapshots ? resolve(args.snapshots) : await ensureSynthetic(args.cache!, seed, buildings, log);
const files = snapshotFiles(dir);
if (files.length !== 1) throw new Error(`bench: expected exactly one snapshot under ${dir}, found ${files.length}.`);
const file = files[0];

// 2. Edifice alone: load time and memory.
const engines: Engine[] = [];
let loadS = NaN;
let bytesPerBuilding = NaN;
let edificeRows = 0;
// The engine's modules load before the first measurement, so only the snapshot counts.
const edifice = engineNames.some((e) => e.startsWith('edifice')) ? await import('./edifice.ts') : null;
const before: Memory = await memory();
if (!hasGc) log('warning: no gc() available; memory figures include garbage');
if (edifice) {
  const { EdificeEngine, openCatalog } = edifice;
  log('edifice: loading');
  const t0 = performance.now();
  const { catalog, serving } = openCatalog(dir, log);
  loadS = (performance.now() - t0) / 1000;
  // Measured once the store holds its cold blob: until then it reads cold fields from the mapped file.
  await serving;
  const after = await memory();
  const report = catalog.report();
  edificeRows = report.reduce((s, r) => s + r.buildings, 0);
  if (edificeRows === 0) throw new Error('bench: Edifice loaded no building (see the catalog log above).');
  bytesPerBuilding = (after.rss - before.rss) / edificeRows;
  print(`edifice load: ${loadS.toFixed(2)} s for ${edificeRows.toLocaleString('en')} buildings`);
  for (const r of report)
    print(
      `  ${r.country} ${r.date}: ${r.buildings.toLocaleString('en')} buildings, bytesHeld ${mb(r.bytesHeld)} (${(r.bytesHeld / r.buildings).toFixed(0)} B/building), loadMs ${r.loadMs}`,
    );
  print(
    `edifice memory: RSS +${mb(after.rss - before.rss)} = ${bytesPerBuilding.toFixed(0)} B/building; ` +
      `arrayBuffers +${mb(after.arrayBuffers - before.arrayBuffers)} = ${((after.arrayBuffers - before.arrayBuffers) / edificeRows).toFixed(0)} B/building; ` +
      `heapUsed +${mb(after.heapUsed - before.heapUsed)}${hasGc ? '' : ' (no gc: includes garbage)'}`,
  );
  const view = catalog.view();
  const summaryBytes = view.snapshots.reduce((n, s) => n + s.memory().summaries, 0);
  print(`edifice node summaries: ${mb(summaryBytes)} = ${(summaryBytes / edificeRows).toFixed(2)} B/building (included above)`);
  // --scan-both: the "planner" engine forced to the scan as well, an A/A run of the paired figures.
  if (engineNames.includes('edifice')) engines.push(new EdificeEngine(view, 'edifice', args['scan-both'] ? { path: 'scan' } : {}));
  if (engineNames.includes('edifice-scan')) engines.push(new EdificeEngine(view, 'edifice-scan', { path: 'scan' }));
}

// 3. The bench's own columns, the mix, the baselines.
log('bench: decoding columns from the Arrow file');
let t0 = performance.now();
const columns = decodeColumns(file);
log(`bench: decoded ${columns.n.toLocaleString('en')} rows in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
if (edificeRows && edificeRows !== columns.n) throw new Error(`bench: Edifice holds ${edificeRows} rows, the file ${columns.n}.`);
const mix = makeMix(columns, mixSeed, scale);
const queries: readonly MixQuery[] = mix.queries;
log(`bench: mix of ${queries.length} queries (seed ${mixSeed}), turnover currency ${mix.currency ?? 'none'}`);
if (engineNames.includes('scan')) engines.push(new ScanEngine(columns));
if (engineNames.includes('duckdb')) {
  const { DuckDbEngine } = await import('./duckdb.ts');
  const m0 = await memory();
  log('duckdb: loading');
  const { engine, load } = await DuckDbEngine.load(columns, log);
  const m1 = await memory();
  print(
    `duckdb load: ${load.seconds.toFixed(1)} s (${columns.n.toLocaleString('en')} buildings, ${load.businesses.toLocaleString('en')} businesses, ` +
      `${load.edges.toLocaleString('en')} footprint edges); RSS +${mb(m1.rss - m0.rss)}`,
  );
  engines.push(engine);
}
let postgisPss: () => number = () => NaN;
// The cluster's memory, sampled after its load and each of its passes (between timed spans).
let postgisPeak = NaN;
if (engineNames.includes('postgis')) {
  const { PostgisEngine, clusterPss, fingerprintOf, loadPostgis, startCluster } = await import('./postgis.ts');
  // The cluster's folder sits beside the country in the cache, so the load is reused like it.
  const folder = join(resolve(args.cache!), `postgis-${basename(dir)}`);
  const cluster = await startCluster(folder, args['postgis-shared-buffers']!, log);
  process.once('exit', () => cluster.stop());
  process.once('SIGINT', () => process.exit(130));
  postgisPss = () => clusterPss(cluster.pid);
  const load = await loadPostgis(cluster.url, columns, fingerprintOf(file, columns.n), log);
  print(
    `postgis load: ${load.reused ? `reused from ${folder}` : `${load.seconds.toFixed(1)} s into ${folder}`} ` +
      `(${columns.n.toLocaleString('en')} buildings, ${load.businesses.toLocaleString('en')} businesses); tables and indexes ${mb(load.bytes)}; ` +
      `cluster PSS ${mb(postgisPss())}, shared_buffers ${args['postgis-shared-buffers']}`,
  );
  postgisPeak = postgisPss();
  engines.push(await PostgisEngine.connect(cluster.url, () => cluster.stop()));
}
if (engines.length === 0) throw new Error('bench: no engine to run.');
const names = engines.map((e) => e.name);

/** [a, b, c, d, e] -> [b, a, d, c, e]. */
function swapPairs<T>(list: readonly T[]): T[] {
  const out = list.slice();
  for (let i = 0; i + 1 < out.length; i += 2) [out[i], out[i + 1]] = [out[i + 1], out[i]];
  return out;
}

// 4. Warm-up (answers kept and compared), then rounds of timed passes, engines taking turns.
const answers = new Map<string, (Answer | Error)[]>();
const times = new Map<string, Float64Array[]>();
for (const engine of engines) {
  const got: (Answer | Error)[] = new Array(queries.length);
  log(`${engine.name}: warm-up pass (answers compared)`);
  t0 = performance.now();
  await runPass(
    engine,
    queries,
    queries.map((_, i) => i),
    (i, raw) => {
      got[i] = raw instanceof Error ? raw : engine.answer(raw);
    },
  );
  log(`${engine.name}: warm-up done in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  if (engine.name === 'postgis') postgisPeak = Math.max(postgisPeak, postgisPss());
  answers.set(engine.name, got);
  times.set(engine.name, []);
}
// The planner and its forced scan, when both run, are timed query by query side by side
// (runPairPass), over --pair-reps rounds; every other engine in passes of its own.
const planner = engines.find((e) => e.name === 'edifice');
const forced = engines.find((e) => e.name === 'edifice-scan');
const paired = planner && forced ? [planner, forced] : [];
const solo = engines.filter((e) => !paired.includes(e));
for (let r = 0; r < Math.max(reps, paired.length ? pairReps : 0); r++) {
  const rng = new Prng(mixSeed, 1000 + r);
  const order = shuffled(queries.length, () => rng.next());
  if (paired.length && r < pairReps) {
    await settle();
    t0 = performance.now();
    const [a, b] = await runPairPass(paired[0], paired[1], queries, order, r, (done) => {
      if (done % 200 === 0) log(`edifice + edifice-scan: round ${r + 1}/${pairReps} ${done}/${queries.length}`);
    });
    times.get(paired[0].name)!.push(a);
    times.get(paired[1].name)!.push(b);
    log(`edifice + edifice-scan: round ${r + 1}/${pairReps} done in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }
  if (r >= reps) continue;
  // Adjacent engines swap places every other round, so each as often runs right after the other as before it.
  for (const engine of r % 2 === 0 ? solo : swapPairs(solo)) {
    // Each pass starts on a collected heap: no engine pays for another's garbage.
    await settle();
    t0 = performance.now();
    times.get(engine.name)!.push(
      await runPass(engine, queries, order, undefined, (done) => {
        if (done % 200 === 0) log(`${engine.name}: pass ${r + 1}/${reps} ${done}/${queries.length}`);
      }),
    );
    log(`${engine.name}: pass ${r + 1}/${reps} done in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    if (engine.name === 'postgis') postgisPeak = Math.max(postgisPeak, postgisPss());
  }
}

// 5. Report.
const classTimes: ClassTimes[] = [];
const collect = (label: string, pick: (q: MixQuery) => boolean): void => {
  const idx = queries.map((q, i) => (pick(q) ? i : -1)).filter((i) => i >= 0);
  const perEngine = new Map<string, Float64Array>();
  for (const name of names) {
    const samples: number[] = [];
    for (const pass of times.get(name)!) for (const i of idx) if (!Number.isNaN(pass[i])) samples.push(pass[i]);
    perEngine.set(name, Float64Array.from(samples).sort());
  }
  classTimes.push({ cls: label, queries: idx.length, times: perEngine });
};
for (const spec of CLASSES) collect(spec.name, (q) => q.cls === spec.name);
collect('(business sorts)', (q) => q.kind === 'buildings' && q.q.sort.startsWith('registered_business'));
collect('whole mix', () => true);
const rows = summarise(classTimes);

// The planner and its forced scan again, one figure per query: the mean of the middle half of
// its rounds. A class's p99 over samples rests on its few slowest, which a burst of load on this
// shared machine can make where both sides run the same code; over per-query figures it moves
// with what queries cost. Not the median: half of a query's rounds ran it second, on warm
// caches (runPairPass), and the median of two such halves falls anywhere between them.
// Printed beside the figures of the goal, not instead of them.
function middleMean(t: number[]): number {
  const s = t.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
  const from = s.length >> 2;
  const to = s.length - from;
  let sum = 0;
  for (let k = from; k < to; k++) sum += s[k];
  return to > from ? sum / (to - from) : NaN;
}
/** The indexes of class `cls`'s queries in the mix. */
const queriesOf = (cls: string): number[] => queries.map((q, i) => (q.cls === cls ? i : -1)).filter((i) => i >= 0);
const queryRows = paired.length
  ? summarise(
      CLASSES.filter((c) => c.kind === 'buildings').map((spec) => {
        const idx = queriesOf(spec.name);
        const perEngine = new Map<string, Float64Array>();
        for (const engine of paired) {
          const passes = times.get(engine.name)!;
          perEngine.set(
            engine.name,
            Float64Array.from(idx.map((i) => middleMean(passes.map((p) => p[i]))).filter((v) => !Number.isNaN(v))).sort(),
          );
        }
        return { cls: spec.name, queries: idx.length, times: perEngine };
      }),
    )
  : [];

const { mismatches, pairs } = compareAll(queries, answers);
const refused = new Map<string, number>();
for (const [name, got] of answers) refused.set(name, got.filter((a) => a instanceof Error).length);

const whole = classTimes[classTimes.length - 1].times;
const p50 = (e: string) => (whole.has(e) ? percentile(whole.get(e)!, 50) : NaN);
const p99 = (e: string) => (whole.has(e) ? percentile(whole.get(e)!, 99) : NaN);
const p50Ratio = p50('duckdb') / p50('edifice');
const p99Ratio = p99('duckdb') / p99('edifice');
// The planner against the scan it replaces: heavy-3x3 at p99, and the worst class at either percentile.
const scanRatio = (r: (typeof rows)[number], p: 'p50' | 'p99') => (r[p].get('edifice-scan') ?? NaN) / (r[p].get('edifice') ?? NaN);
const heavy = rows.find((r) => r.cls === 'heavy-3x3');
const heavyP99RatioScan = heavy ? scanRatio(heavy, 'p99') : NaN;
// Over the classes of the mix, planner side: the slowest p99 (the business sorts, a cross-section
// of the others, included), and PostGIS's p99 over Edifice's (the seven classes, each once).
const mixRows = rows.filter((r) => CLASSES.some((c) => c.name === r.cls));
const slowestClassP99 = slowestP99(
  rows.filter((r) => r.cls !== 'whole mix'),
  'edifice',
);
const postgisRatio = p99Ratios(mixRows, 'postgis', 'edifice');
const buildingClasses = rows.filter((r) => CLASSES.some((c) => c.name === r.cls && c.kind === 'buildings'));
const slowestClassRatio = buildingClasses.length
  ? Math.min(...buildingClasses.flatMap((r) => [scanRatio(r, 'p50'), scanRatio(r, 'p99')]))
  : NaN;

print();
print(
  `machine: ${cpus()[0]?.model ?? 'unknown cpu'}, ${cpus().length} cores, ${mb(totalmem())}; Node ${process.version}; ` +
    `load average at start ${loadAtStart.map((v) => v.toFixed(1)).join(' ')}, at end ${loadavg()
      .map((v) => v.toFixed(1))
      .join(' ')}`,
);
print(
  `data: ${file} (${columns.n.toLocaleString('en')} buildings, seed ${seed}); mix seed ${mixSeed}, ${queries.length} queries, ` +
    `1 warm-up + ${reps} timed passes per engine${paired.length ? ` (edifice and edifice-scan: ${pairReps} rounds side by side)` : ''}; ` +
    'times in ms (every timed run is one sample)',
);
if (args['scan-both'])
  print(
    'A/A run (--scan-both): "edifice" runs the scan forced, as edifice-scan does; its ratios to edifice-scan are noise, and so are the goals below.',
  );
print();
print(formatTable(rows, names));
if (queryRows.length) {
  print();
  print(
    `edifice and edifice-scan, one figure per query (the mean of the middle half of its ${pairReps} rounds), then p50 and p99 over the queries of each class:`,
  );
  print();
  print(
    formatTable(
      queryRows,
      paired.map((e) => e.name),
    ),
  );
}
// The same ratios with how far they move between rounds of one run (noise.ts): a class is
// slower on the planner beyond that noise where the upper end of its interval is below 1. Not
// beyond the noise between runs, which is wider (an A/A run, --scan-both: bench/README.md,
// bench:query).
let slowerBeyondNoise = '';
let leastUpper = Infinity;
if (paired.length) {
  print();
  print(`edifice-scan over edifice with its 95% interval from a bootstrap over the ${pairReps} rounds (1,000 resamples of whole rounds):`);
  print();
  print('| class | p50 | p50 interval | p99 | p99 interval |');
  print('|:--|--:|:--|--:|:--|');
  for (const r of buildingClasses) {
    const [i50, i99] = ratioIntervals(times.get(paired[0].name)!, times.get(paired[1].name)!, queriesOf(r.cls), [50, 99]);
    const cell = (v: { lo: number; hi: number }) => `${v.lo.toFixed(2)}–${v.hi.toFixed(2)}`;
    print(`| ${r.cls} | ${scanRatio(r, 'p50').toFixed(2)}x | ${cell(i50)} | ${scanRatio(r, 'p99').toFixed(2)}x | ${cell(i99)} |`);
    for (const [p, v] of [
      ['p50', i50],
      ['p99', i99],
    ] as const) {
      if (v.hi < leastUpper) {
        leastUpper = v.hi;
        slowerBeyondNoise = `${r.cls} ${p}`;
      }
    }
  }
}
print();
print('slowest queries per engine (median of the timed passes):');
for (const name of names) {
  print(`  ${name}:`);
  for (const line of slowest(queries, times.get(name)!, answers.get(name)!, 5)) print(`    ${line}`);
}
print();
print(`answers compared on the warm-up pass (ids in order, total, total_is_capped):`);
for (const [pair, n] of pairs) print(`  ${pair}: ${n} mismatching of ${queries.length}`);
for (const [name, n] of refused) if (n > 0) print(`  ${name} refused ${n} queries`);
for (const m of mismatches.slice(0, 12)) {
  print(`  - #${m.index} ${m.cls} ${m.a} vs ${m.b}: ${m.what}`);
  print(`    query: ${JSON.stringify(queries[m.index].q)}`);
}
if (mismatches.length > 0) {
  const path = join(resolve(args.cache!), `mismatches-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  mkdirSync(resolve(args.cache!), { recursive: true });
  writeFileSync(
    path,
    JSON.stringify(
      mismatches.map((m) => ({ ...m, query: queries[m.index] })),
      null,
      1,
    ),
  );
  print(`  all ${mismatches.length} mismatches with their queries: ${path}`);
}
const verdict = (ok: boolean) => (ok ? 'met' : 'NOT met');
print();
print(
  `goal: whole-mix p50 >= ${GOAL.p50Ratio}x lower than DuckDB (${Number.isFinite(p50Ratio) ? p50Ratio.toFixed(1) : '-'}x: ${verdict(p50Ratio >= GOAL.p50Ratio)}), ` +
    `p99 >= ${GOAL.p99Ratio}x lower (${Number.isFinite(p99Ratio) ? p99Ratio.toFixed(1) : '-'}x: ${verdict(p99Ratio >= GOAL.p99Ratio)}), ` +
    `<= ${GOAL.bytesPerBuilding} B/building resident (${Number.isFinite(bytesPerBuilding) ? bytesPerBuilding.toFixed(0) : '-'}: ${verdict(bytesPerBuilding <= GOAL.bytesPerBuilding)})`,
);
if (Number.isFinite(heavyP99RatioScan)) {
  print(
    `goal: heavy-3x3 p99 >= ${GOAL.heavyRatioScan}x lower with the planner than with the scan forced (${heavyP99RatioScan.toFixed(2)}x: ` +
      `${verdict(heavyP99RatioScan >= GOAL.heavyRatioScan)}), no class slower (least ratio ${slowestClassRatio.toFixed(2)}: ${verdict(slowestClassRatio >= 1)})`,
  );
  if (Number.isFinite(leastUpper)) {
    print(
      `noise: the least upper end of the 95% intervals over rounds is ${leastUpper.toFixed(2)} (${slowerBeyondNoise}): ` +
        `${leastUpper >= 1 ? 'no class slower beyond the noise between rounds' : 'slower there beyond the noise between rounds'}; ` +
        'the noise between runs is wider (an A/A run, --scan-both, bench/README.md)',
    );
  }
}
if (!Number.isNaN(slowestClassP99.ms))
  print(
    `goal: every class's p99 <= ${GOAL.classP99Ms} ms with the planner (slowest ${slowestClassP99.ms.toFixed(3)} ms, ${slowestClassP99.cls}: ` +
      `${verdict(slowestClassP99.ms <= GOAL.classP99Ms)})`,
  );
if (!Number.isNaN(postgisRatio.geomean))
  print(
    `goal: p99 >= ${GOAL.postgisP99Ratio}x lower than PostGIS, the geometric mean over the ${mixRows.length} classes of their p99 ratios ` +
      `(${postgisRatio.geomean.toFixed(1)}x: ${verdict(postgisRatio.geomean >= GOAL.postgisP99Ratio)}; least ${postgisRatio.least.toFixed(1)}x, ${postgisRatio.leastCls})`,
  );
if (!Number.isNaN(postgisPeak))
  print(
    `postgis memory: cluster PSS at most ${mb(postgisPeak)} (sampled after its load and each pass; shared_buffers ${args['postgis-shared-buffers']})`,
  );

for (const e of engines) await e.close?.();
log(`done (sink ${sink})`);
const fmt = (v: number, digits: number) => (Number.isFinite(v) ? v.toFixed(digits) : 'nan');
print(
  `summary: p50_ratio_duckdb=${fmt(p50Ratio, 2)} p99_ratio_duckdb=${fmt(p99Ratio, 2)} bytes_per_building=${fmt(bytesPerBuilding, 0)} load_s=${fmt(loadS, 2)} ` +
    `heavy_p99_ratio_scan=${fmt(heavyP99RatioScan, 2)} slowest_class_ratio=${fmt(slowestClassRatio, 2)} ` +
    `slowest_class_p99_ms=${fmt(slowestClassP99.ms, 3)} p99_ratio_postgis=${fmt(postgisRatio.geomean, 2)}`,
);
process.stdout.write(`${out.join('\n')}\n`);
