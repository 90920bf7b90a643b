/**
 * `npm run bench:fleet`: Edifice as a fleet against one process, on this machine, in one run.
 *
 * 1. A throwaway PostgreSQL (commits wait for their fsync, as in production) and Redis
 *    (test/services), and the seeded synthetic country of bench:http (default 1,000,000
 *    buildings, `.cache/bench/`).
 * 2. Three servers at once, each one thread (EDIFICE_WORKERS=0), limits raised out of the way:
 *    sqlite (one process, its SQLite ledger: the baseline), pg (one replica on PostgreSQL and
 *    Redis) and fleet (`tools/fleet.ts`: --replicas replicas behind HAProxy). After a warm-up,
 *    --rounds rounds of the load-test mix (tools/load) as fast as possible over --connections
 *    for --duration seconds, the servers taking turns within each round: requests/s and p99,
 *    median and range, and the ratio to sqlite.
 * 3. What a request costs on the pg replica, kind by kind (the mix's kinds one at a time): its
 *    CPU (from /proc), Redis commands and PostgreSQL commits per request; memory per building
 *    (the store's bytes from the load log, and the replica's resident memory).
 * 4. The PostgreSQL charge transaction alone (PgLedger.chargePages, pages of 25 new buildings,
 *    --commit-concurrency at once for --commit-seconds): commits/s and p99.
 * 5. Exactness on a fleet at the real limits (a 20,000-building country, 60 requests a minute a
 *    key): 12 concurrent pages of 5 with 25 credits (charges_exact: the 200s' X-Credits-Charged
 *    add up to what the ledger took, the rest 402); 100 quick requests of one key (limits_exact:
 *    exactly 60 pass); then --kill-requests pages of new buildings over 16 connections with a
 *    replica killed (SIGKILL) a third of the way: lost_charges counts credits clients were told
 *    of that the ledger lacks; the surplus (charged, never received) is printed beside it.
 * Progress goes to stderr; the report to stdout, whose last line is
 * `summary: rps_sqlite=<n> rps_pg=<n> rps_fleet=<n> pg_commit_p99_ms=<x> charges_exact=<0|1> limits_exact=<0|1> lost_charges=<n>`.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import pg from 'pg';
import { Ledger, PgLedger } from '../src/ledger/index.ts';
import { DEFAULT_BOUNDS } from '../src/synth/bounds.ts';
import { writeSyntheticCountry } from '../src/synth/generate.ts';
import { freePort } from '../test/services/ports.ts';
import { startPostgres } from '../test/services/postgres.ts';
import { startRedis } from '../test/services/redis.ts';
import { discover, parseBBox } from '../tools/load/discover.ts';
import { DEFAULT_WEIGHTS, formatWeights, KINDS, parseWeights, type Weights } from '../tools/load/mix.ts';
import type { LoadReport } from '../tools/load/report.ts';
import { runLoad } from '../tools/load/run.ts';
import { parseTarget } from '../tools/load/target.ts';
import { ensureSynthetic } from './dataset.ts';
import { ROOT, startChild, type Child } from './http/servers.ts';

const { values: args } = parseArgs({
  options: {
    buildings: { type: 'string', default: '1000000' },
    seed: { type: 'string', default: '1' },
    'mix-seed': { type: 'string', default: '1' },
    mix: { type: 'string', default: formatWeights(DEFAULT_WEIGHTS) },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '32' },
    keys: { type: 'string', default: '8' },
    replicas: { type: 'string', default: '3' },
    'kind-seconds': { type: 'string', default: '4' },
    'commit-seconds': { type: 'string', default: '10' },
    'commit-concurrency': { type: 'string', default: '10' },
    'kill-requests': { type: 'string', default: '1500' },
    cache: { type: 'string', default: '.cache/bench' },
  },
  strict: true,
});

function positive(name: string, max: number): number {
  const v = String(args[name as keyof typeof args]);
  const n = Number(v.replace(/_/g, ''));
  if (!Number.isInteger(n) || n < 1 || n > max) throw new RangeError(`--${name} must be an integer from 1 to ${max}, got "${v}".`);
  return n;
}
const buildings = positive('buildings', 100_000_000);
const seed = positive('seed', 2 ** 31 - 1);
const mixSeed = positive('mix-seed', 2 ** 31 - 1);
const durationS = positive('duration', 3600);
const warmupS = positive('warmup', 3600);
const rounds = positive('rounds', 20);
const connections = positive('connections', 10_000);
const keyCount = positive('keys', 1000);
const replicas = positive('replicas', 16);
const kindSeconds = positive('kind-seconds', 600);
const commitSeconds = positive('commit-seconds', 600);
const commitConcurrency = positive('commit-concurrency', 200);
const killRequests = positive('kill-requests', 100_000);
const weights = parseWeights(args.mix!);

const started = performance.now();
const loadAtStart = loadavg();
const log = (msg: string): void => {
  process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(1).padStart(6)}s] ${msg}\n`);
};
const out: string[] = [];
const print = (line = ''): void => {
  out.push(line);
};
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const int = (v: number): string => Math.round(v).toLocaleString('en');
const ms = (v: number): string => v.toFixed(2);

// 1. Data and services.
const snapshots = await ensureSynthetic(args.cache!, seed, buildings, log);
const bbox = parseBBox(DEFAULT_BOUNDS.join(','));
const work = mkdtempSync(join(tmpdir(), 'edifice-bench-fleet-'));
log(`bench: ledgers and logs in ${work}`);
const [pgServer, redisServer] = await Promise.all([startPostgres({ durable: true }), startRedis()]);
const ledger = await PgLedger.open(pgServer.url);
const redisClient = new Redis(redisServer.url);
const pgClient = new pg.Client({ connectionString: pgServer.url });
await pgClient.connect();

const children: Child[] = [];
async function cleanUp(): Promise<void> {
  await Promise.all(children.map((c) => c.stop().catch(() => {})));
  await ledger.close();
  redisClient.disconnect();
  await pgClient.end();
  pgServer.destroy();
  await redisServer.destroy();
  rmSync(work, { recursive: true, force: true });
}

/** Keys of `n` workspaces on PostgreSQL, `credits` each. */
async function pgKeys(n: number, credits: number, label: string): Promise<{ workspaceId: string; keys: string[] }[]> {
  const made = [];
  for (let i = 0; i < n; i++) {
    const email = `${label}-${i}@example.com`;
    const { workspaceId } = await ledger.createWorkspace(`${label} ${i}`, { createdBy: email });
    await ledger.grantCredits(workspaceId, credits, { kind: 'bought', note: 'bench:fleet' });
    made.push({ workspaceId, keys: [(await ledger.createKey(workspaceId, email)).key] });
  }
  return made;
}

function sqliteKeys(path: string, n: number): string[] {
  const l = Ledger.open(path);
  const keys: string[] = [];
  for (let i = 0; i < n; i++) {
    const email = `bench-${i}@example.com`;
    const { workspaceId } = l.createWorkspace(`bench ${i}`, { createdBy: email });
    l.grantCredits(workspaceId, 100_000_000, { kind: 'bought', note: 'bench:fleet' });
    keys.push(l.createKey(workspaceId, email).key);
  }
  l.close();
  return keys;
}

const SERVER = ['--single-threaded-gc', join(ROOT, 'bin/start.mjs')];
const FLEET = ['--import', join(ROOT, 'node_modules/tsx/dist/loader.mjs'), join(ROOT, 'tools/fleet.ts')];
const LISTENING = /listening on [^\s]+:(\d+)/;
const FLEET_LISTENING = /behind HAProxy on [^\s]+:(\d+)/;
const common = (snapshotsDir: string): NodeJS.ProcessEnv => ({
  EDIFICE_SNAPSHOTS: snapshotsDir,
  EDIFICE_DEMO: '0',
  EDIFICE_WORKERS: '0',
  EDIFICE_METRICS_PORT: '0',
  EDIFICE_LOG_LEVEL: 'info',
});
const raised = { EDIFICE_KEY_PER_MINUTE: '1000000000', EDIFICE_DAILY_QUOTA: '1000000000' };

try {
  // 2. The three servers at once.
  const sqlitePath = join(work, 'sqlite.db');
  const servers: { name: string; child: Child; keys: string[]; url: string }[] = [];
  const start = async (name: string, argv: string[], env: NodeJS.ProcessEnv, listening: RegExp, keys: string[]) => {
    log(`start ${name}`);
    // Three replicas loading the country at once on a busy machine took over ten minutes.
    const child = await startChild(name, argv, env, join(work, `${name}.log`), listening, 1_800_000);
    children.push(child);
    servers.push({ name, child, keys, url: `http://127.0.0.1:${child.port}/v1` });
  };
  await start(
    'sqlite',
    SERVER,
    { ...common(snapshots), ...raised, EDIFICE_PORT: '0', EDIFICE_LEDGER: sqlitePath },
    LISTENING,
    sqliteKeys(sqlitePath, keyCount),
  );
  const pgWorkspaces = await pgKeys(keyCount, 100_000_000, 'pg');
  await start(
    'pg',
    SERVER,
    {
      ...common(snapshots),
      ...raised,
      EDIFICE_PORT: '0',
      EDIFICE_LEDGER: pgServer.url,
      EDIFICE_REDIS: redisServer.url,
      EDIFICE_REPLICA: 'r1',
    },
    LISTENING,
    pgWorkspaces.flatMap((w) => w.keys),
  );
  const fleetKeys = (await pgKeys(keyCount, 100_000_000, 'fleet')).flatMap((w) => w.keys);
  await start(
    'fleet',
    FLEET,
    {
      ...common(snapshots),
      ...raised,
      EDIFICE_PORT: String(await freePort()),
      EDIFICE_LEDGER: pgServer.url,
      EDIFICE_REDIS: redisServer.url,
      EDIFICE_REPLICAS: String(replicas),
    },
    FLEET_LISTENING,
    fleetKeys,
  );
  const discovery = await discover(parseTarget(servers[0].url, false), servers[0].keys, bbox);
  log(`discovery: ${discovery.buildings} buildings in ${discovery.cells} cells`);
  const load = (url: string, keys: string[], seconds: number, w: Weights = weights, conns = connections): Promise<LoadReport> =>
    runLoad({
      target: parseTarget(url, false),
      keys,
      mode: 'max',
      rate: null,
      connections: conns,
      durationS: seconds,
      requests: 10_000_000,
      weights: w,
      seed: mixSeed,
      threads: 1,
      timeoutMs: 10_000,
      bbox,
      discovery,
    });
  for (const s of servers) {
    log(`warm-up ${s.name} (${warmupS} s)`);
    await load(s.url, s.keys, warmupS);
  }
  const results = new Map<string, LoadReport[]>(servers.map((s) => [s.name, []]));
  for (let r = 1; r <= rounds; r++) {
    for (const s of servers) {
      const report = await load(s.url, s.keys, durationS);
      results.get(s.name)!.push(report);
      const failed = report.completed - report.ok;
      log(`round ${r} ${s.name}: ${int(report.rps)}/s, p99 ${ms(report.latency_ms.p99)} ms${failed ? `, ${failed} not 2xx` : ''}`);
    }
  }
  const rps = (name: string) => median(results.get(name)!.map((x) => x.rps));
  /** The answers that were not 2xx over the rounds, by "status code" (0: none came, with the client's reason). */
  const notOk = (rs: LoadReport[]): string => {
    const by: Record<string, number> = {};
    for (const x of rs) for (const [what, n] of Object.entries(x.errors)) by[what] = (by[what] ?? 0) + n;
    const total = Object.values(by).reduce((a, n) => a + n, 0);
    return total === 0
      ? '0'
      : `${total} (${Object.entries(by)
          .map(([what, n]) => `${what}: ${n}`)
          .join(', ')})`;
  };
  print(
    `# bench:fleet — ${buildings.toLocaleString('en')} buildings, ${cpus().length} cores (${cpus()[0].model}), ${(totalmem() / 2 ** 30).toFixed(0)} GiB, ${process.version}`,
  );
  print(
    `load average at start ${loadAtStart.map((v) => v.toFixed(2)).join(' ')}; mix ${formatWeights(weights)}; ${rounds} rounds of ${durationS} s over ${connections} connections, servers in turn`,
  );
  print();
  print('| server | requests/s, median [range] | vs sqlite | p99 ms, median [range] | not 2xx |');
  print('|:--|--:|--:|--:|--:|');
  for (const s of servers) {
    const rs = results.get(s.name)!;
    const label =
      s.name === 'fleet'
        ? `fleet (${replicas} replicas + HAProxy)`
        : s.name === 'pg'
          ? 'pg (1 replica, PostgreSQL + Redis)'
          : 'sqlite (1 process, baseline)';
    const p99 = rs.map((x) => x.latency_ms.p99);
    print(
      `| ${label} | ${int(rps(s.name))} [${int(Math.min(...rs.map((x) => x.rps)))}–${int(Math.max(...rs.map((x) => x.rps)))}] | ${(rps(s.name) / rps('sqlite')).toFixed(2)}x | ` +
        `${ms(median(p99))} [${ms(Math.min(...p99))}–${ms(Math.max(...p99))}] | ${notOk(rs)} |`,
    );
  }

  // 3. What a request costs on the pg replica, kind by kind; memory per building.
  const pgChild = servers[1].child;
  /** Transactions committed (reads outside a transaction count one each) and charges written, so far. */
  const commits = async (): Promise<[number, number]> => {
    await new Promise((r) => setTimeout(r, 1_200)); // PostgreSQL publishes its counters at most once a second
    const q = await pgClient.query<{ c: string; charges: string }>(
      "SELECT xact_commit::text AS c, (SELECT count(*) FROM charges)::text AS charges FROM pg_stat_database WHERE datname = 'postgres'",
    );
    return [Number(q.rows[0].c), Number(q.rows[0].charges)];
  };
  const redisCommands = async (): Promise<number> => Number(/total_commands_processed:(\d+)/.exec(await redisClient.info('stats'))![1]);
  print();
  print(
    '| kind (pg replica) | requests/s | CPU µs a request | Redis commands a request | PostgreSQL transactions a request | of which charges |',
  );
  print('|:--|--:|--:|--:|--:|--:|');
  for (const kind of KINDS) {
    if (weights[kind] === 0) continue;
    const only = Object.fromEntries(KINDS.map((k) => [k, k === kind ? 1 : 0])) as Weights;
    const [cpu0, redis0, commits0] = [pgChild.cpuSeconds(), await redisCommands(), await commits()];
    const report = await load(servers[1].url, servers[1].keys, kindSeconds, only, 16);
    const [cpu1, redis1, commits1] = [pgChild.cpuSeconds(), await redisCommands(), await commits()];
    const n = Math.max(1, report.completed);
    print(
      `| ${kind} | ${int(report.rps)} | ${int(((cpu1 - cpu0) * 1e6) / n)} | ${((redis1 - redis0) / n).toFixed(2)} | ` +
        `${((commits1[0] - commits0[0]) / n).toFixed(2)} | ${((commits1[1] - commits0[1]) / n).toFixed(3)} |`,
    );
  }
  const loaded = /"buildings":(\d+),"bytesHeld":(\d+)/.exec(readFileSync(join(work, 'sqlite.log'), 'utf8'));
  const rss = Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pgChild.pid}/status`, 'utf8'))![1]) * 1024;
  if (loaded) {
    print();
    print(
      `memory: the store holds ${(Number(loaded[2]) / Number(loaded[1])).toFixed(0)} B a building (${int(Number(loaded[2]) / 2 ** 20)} MiB for ${int(Number(loaded[1]))}); ` +
        `the pg replica's resident memory after the runs ${int(rss / 2 ** 20)} MiB (${(rss / Number(loaded[1])).toFixed(0)} B a building, caches and Node included)`,
    );
  }
  for (const s of servers) await s.child.stop();
  children.length = 0;

  // 4. The charge transaction alone.
  log(`PostgreSQL charges: ${commitConcurrency} at once for ${commitSeconds} s`);
  const [{ workspaceId: chargeWs }] = await pgKeys(1, 1_000_000_000, 'commits');
  const latencies: number[] = [];
  let serial = 0;
  const until = performance.now() + commitSeconds * 1000;
  await Promise.all(
    Array.from({ length: commitConcurrency }, async () => {
      while (performance.now() < until) {
        const ids = Array.from({ length: 25 }, () => `bench-${serial++}`);
        const t0 = performance.now();
        await ledger.chargePages([{ workspaceId: chargeWs, keyId: null, buildingIds: ids, route: '/v1/buildings' }]);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  const commitP99 = latencies[Math.floor(latencies.length * 0.99)];
  // The baseline: the SQLite ledger's charge, one at a time (its write lock), on the same disk.
  const sqliteLedger = Ledger.open(join(work, 'commits.db'));
  const { workspaceId: sqliteWs } = sqliteLedger.createWorkspace('commits', { createdBy: 'commits@example.com' });
  sqliteLedger.grantCredits(sqliteWs, 1_000_000_000, { kind: 'bought' });
  const sqliteLatencies: number[] = [];
  const sqliteUntil = performance.now() + commitSeconds * 1000;
  while (performance.now() < sqliteUntil) {
    const ids = Array.from({ length: 25 }, () => `bench-${serial++}`);
    const t0 = performance.now();
    sqliteLedger.chargePages([{ workspaceId: sqliteWs, keyId: null, buildingIds: ids, route: '/v1/buildings' }]);
    sqliteLatencies.push(performance.now() - t0);
  }
  sqliteLedger.close();
  sqliteLatencies.sort((a, b) => a - b);
  const pgRate = latencies.length / commitSeconds;
  const sqliteRate = sqliteLatencies.length / commitSeconds;
  print();
  print('| charge transaction (pages of 25 new buildings, fsync on) | commits/s | vs sqlite | p50 ms | p99 ms |');
  print('|:--|--:|--:|--:|--:|');
  print(
    `| SQLite ledger, one at a time (baseline) | ${int(sqliteRate)} | 1.00x | ${ms(sqliteLatencies[sqliteLatencies.length >> 1])} | ${ms(sqliteLatencies[Math.floor(sqliteLatencies.length * 0.99)])} |`,
  );
  print(
    `| PostgreSQL, ${commitConcurrency} at once, pool of 10 | ${int(pgRate)} | ${(pgRate / sqliteRate).toFixed(2)}x | ${ms(latencies[latencies.length >> 1])} | ${ms(commitP99)} |`,
  );

  // 5. Exactness on a fleet at the real limits.
  const small = join(work, 'small');
  await writeSyntheticCountry({ seed, buildings: 20_000, country: 'XA', bounds: [9.4, 47.0, 9.7, 47.3], outDir: small });
  const fleetPort = await freePort();
  log('start the fleet at the real limits (20,000 buildings)');
  const fleet = await startChild(
    'fleet-limits',
    FLEET,
    {
      ...common(small),
      EDIFICE_PORT: String(fleetPort),
      EDIFICE_LEDGER: pgServer.url,
      EDIFICE_REDIS: redisServer.url,
      EDIFICE_REPLICAS: String(replicas),
      EDIFICE_WARMUP_REQUESTS: '0',
    },
    join(work, 'fleet-limits.log'),
    FLEET_LISTENING,
  );
  children.push(fleet);
  const get = (path: string, key: string) =>
    new Promise<{ status: number; charged: number; body: string }>((resolve) => {
      const req = request(
        { host: '127.0.0.1', port: fleetPort, path, headers: { Authorization: `Bearer ${key}`, Connection: 'close' }, agent: false },
        (res) => {
          let body = '';
          res.setEncoding('utf8').on('data', (c: string) => (body += c));
          res.on('end', () => resolve({ status: res.statusCode!, charged: Number(res.headers['x-credits-charged'] ?? 0), body }));
        },
      );
      req.setTimeout(10_000, () => req.destroy());
      req.on('error', () => resolve({ status: 0, charged: 0, body: '' }));
      req.end();
    });
  const ALL = '/v1/buildings?bbox=9.4,47.0,9.7,47.3&sort=volume';
  const taken = async (workspaceId: string, granted: number) => granted + 5 - (await ledger.balance(workspaceId));

  const [few] = await pgKeys(1, 20, 'few');
  const pages = await Promise.all(Array.from({ length: 12 }, (_, i) => get(`${ALL}&limit=5&offset=${i * 5}`, few.keys[0])));
  const paid = pages.filter((p) => p.status === 200);
  const refused = pages.filter((p) => p.status === 402 && JSON.parse(p.body).error?.code === 'insufficient_credits');
  const fewTaken = await taken(few.workspaceId, 20);
  const chargesExact =
    paid.length + refused.length === 12 &&
    paid.reduce((a, p) => a + p.charged, 0) === fewTaken &&
    (await ledger.balance(few.workspaceId)) >= 0
      ? 1
      : 0;

  const [limited] = await pgKeys(1, 1000, 'limits');
  const quick = [];
  for (let wave = 0; wave < 10; wave++)
    quick.push(...(await Promise.all(Array.from({ length: 10 }, () => get(`${ALL}&limit=1`, limited.keys[0])))));
  const passed = quick.filter((q) => q.status === 200).length;
  const limitsExact = passed === 60 && quick.filter((q) => q.status === 429).length === 40 ? 1 : 0;

  const killKeys = 50;
  const email = 'kill@example.com';
  const { workspaceId: killWs } = await ledger.createWorkspace('kill', { createdBy: email });
  await ledger.grantCredits(killWs, 1_000_000, { kind: 'bought' });
  const keys: string[] = [];
  for (let i = 0; i < killKeys; i++) keys.push((await ledger.createKey(killWs, email)).key);
  const victim = Number([...readFileSync(fleet.log, 'utf8').matchAll(/"replica":"r2","replicaPid":(\d+)/g)].pop()![1]);
  const answers: { status: number; charged: number }[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < killRequests) {
        const i = next++;
        if (i === Math.floor(killRequests / 3)) {
          log(`kill -9 replica r2 (pid ${victim}) after ${i} requests`);
          process.kill(victim, 'SIGKILL');
        }
        answers.push(await get(`${ALL}&limit=5&offset=${(i * 5) % 20_000}`, keys[i % killKeys]));
      }
    }),
  );
  const received = answers.reduce((a, x) => a + x.charged, 0);
  const killTaken = await taken(killWs, 1_000_000);
  const lostCharges = Math.max(0, received - killTaken);
  const statuses: Record<number, number> = {};
  for (const a of answers) statuses[a.status] = (statuses[a.status] ?? 0) + 1;
  const audit = await ledger.audit();
  print();
  print(`exactness on a fleet of ${replicas} at the real limits (20,000 buildings):`);
  print(
    `- 12 concurrent pages of 5 with 25 credits: ${paid.length} answered 200 (charged ${paid.reduce((a, p) => a + p.charged, 0)}), ${refused.length} 402 insufficient_credits; the ledger took ${fewTaken}`,
  );
  print(`- 100 quick requests of one key: ${passed} passed, ${quick.filter((q) => q.status === 429).length} 429`);
  print(
    `- ${killRequests} pages of new buildings over 16 connections, replica r2 killed after ${Math.floor(killRequests / 3)}: answers ${JSON.stringify(statuses)}; ` +
      `credits received ${received}, taken by the ledger ${killTaken} (surplus ${killTaken - received}, lost ${lostCharges}); audit ${audit.length === 0 ? 'clean' : audit.join('; ')}`,
  );
  print();
  print(
    `summary: rps_sqlite=${Math.round(rps('sqlite'))} rps_pg=${Math.round(rps('pg'))} rps_fleet=${Math.round(rps('fleet'))} ` +
      `pg_commit_p99_ms=${commitP99.toFixed(2)} charges_exact=${chargesExact} limits_exact=${limitsExact} lost_charges=${lostCharges}`,
  );
  process.stdout.write(`${out.join('\n')}\n`);
} finally {
  await cleanUp();
}
