/**
 * `npm start`: the server. On a fresh clone (no snapshot in the default ./snapshots) it is the
 * demo (demo.ts): it generates a small synthetic country, makes a demo workspace (100,000 bought
 * credits) and key, and prints the key with a ready-to-paste curl line; a second start reuses
 * both. Serving real snapshots it keeps no demo key and prints no secret. It serves with
 * EDIFICE_WORKERS threads (default: one per core).
 */
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import pino, { type Logger } from 'pino';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { Catalog } from './catalog/catalog.ts';
import { COLD_THREAD_ENTRY, type ColdThreadCode } from './catalog/cold-blob.ts';
import { codeBundles } from './code-bundles.mjs';
import { Ledger, PgLedger, type DemoKey, RedisLimits, ledgerLocation, type LedgerLocation } from './ledger/index.ts';
import { FleetLedger, localFleetLimits, redisFleetLimits } from './http/fleet-ledger.ts';
import { followRemovals } from './http/follow-removals.ts';
import { startServer } from './http/server.ts';
import { spawnWorkers } from './http/worker-pool.ts';
import { dropEarlyThreads } from './http/early-threads.mjs';
import { assertPortFree } from './http/port.ts';
import { startMetricsServer, type MetricsServer } from './http/metrics-server.ts';
import { lockLedger } from './ledger/server-lock.ts';
import { demoBbox, demoFolderTaken, planDemo, writeDemoCountry } from './demo.ts';
import { nativeUnavailable } from './query/native-kernels.ts';
/** How long a stop (SIGTERM, SIGINT) lets the requests in flight finish before ending connections. */
const STOP_GRACE_MS = 5_000;

async function main(config: Config): Promise<void> {
  const log = pino({ level: config.logLevel });
  if (config.workers > 0 && !process.execArgv.includes('--single-threaded-gc')) {
    // A command-line flag only: V8 aborts when it is set at run time (v8.setFlagsFromString).
    log.warn(
      "Node runs without --single-threaded-gc, which npm start passes: with a worker per core, V8's garbage " +
        'collection helper threads compete with the workers for the cores and stretch the slowest responses (README, Operating)',
    );
  }

  // The stop is in place before anything starts, so a SIGTERM during the start (whose threads may
  // accept connections before the banner) does not end the process half done: it is kept and acted
  // on once the server is up (a second one ends the process at once, as during a stop).
  let serving: Serving | null = null;
  let demo: DemoKey | null = null;
  let metricsServer: MetricsServer | null = null;
  let ledger: Ledger | null = null;
  let fleet: FleetLedger | null = null;
  let redis: RedisLimits | null = null;
  let stopAsked = false;
  let stopping = false;
  const stop = async (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal, graceMs: STOP_GRACE_MS }, 'stopping: no new connections, finishing the requests in flight');
    await metricsServer?.close();
    await serving!.close();
    ledger?.close();
    await fleet?.close();
    await redis?.close();
    lock?.release();
    log.info({ signal }, 'stopped');
    process.exit(0);
  };
  let stopSignal: NodeJS.Signals = 'SIGTERM';
  const onSignal = (signal: NodeJS.Signals) => {
    stopSignal = signal;
    if (serving) void stop(signal);
    else if (!stopAsked) {
      stopAsked = true;
      log.info({ signal }, 'asked to stop while starting: stopping as soon as the server is up');
    }
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  // SIGHUP (rescan the snapshots) is in place from the start too, as its default action ends the
  // process: one that comes during the start rescans once the server is up.
  let catalogUp: Catalog | null = null;
  let rescanAsked = false;
  const rescan = () => {
    try {
      catalogUp!.rescan();
    } catch (err) {
      log.error({ err }, 'the rescan of the snapshots failed');
    }
    if (demo?.state === 'active' && ledger && demoFolderTaken(config)) {
      // As a start beside real snapshots would: the demo's key, printed and kept in a file, must not open them.
      const retired = ledger.retireDemo(dirname(config.ledgerPath));
      demo = { state: 'revoked', workspaceId: demo.workspaceId, keyId: demo.keyId };
      log.warn(
        { workspaceId: retired?.workspaceId, keyIds: retired?.keyIds ?? [] },
        "the demo workspace's keys are revoked: the snapshots folder now holds snapshots the demo did not generate",
      );
    }
  };
  process.on('SIGHUP', () => {
    if (catalogUp) rescan();
    else if (!rescanAsked) {
      rescanAsked = true;
      log.info({ signal: 'SIGHUP' }, 'asked to rescan the snapshots while starting: rescanning as soon as the server is up');
    }
  });
  let location: LedgerLocation;
  try {
    location = ledgerLocation(config.ledgerPath);
  } catch (err) {
    throw new ConfigError(`EDIFICE_LEDGER: ${(err as Error).message}`);
  }
  // Started by bin/start.mjs for a server with workers on SQLite: no other needs them.
  if (location.kind === 'postgres' || config.workers === 0) dropEarlyThreads();
  // One server per ledger file and per port (every limit would double): refused before any long work.
  // A PostgreSQL ledger is shared by the replicas of a fleet, whose limits are in Redis.
  const lock = location.kind === 'sqlite' ? lockLedger(location.path) : null;
  await assertPortFree(config.host, config.port);
  if (config.metricsPort > 0) await assertPortFree(config.metricsHost, config.metricsPort, 'EDIFICE_METRICS_PORT');
  const plan = planDemo(config);
  if (plan.generate) {
    log.info({ dir: config.snapshotsDir, buildings: config.demoBuildings }, 'no snapshot found: generating the synthetic demo country');
    const written = await writeDemoCountry(config);
    log.info({ path: written.path, rows: written.rows, bytes: written.bytes }, 'demo snapshot written');
  }
  // On SQLite, the ledger first and the threads (with workers) started: they load their modules
  // while this thread loads the snapshots.
  const onSqlite = location.kind === 'sqlite' ? await startOnSqlite(config, plan.demo, log) : null;
  // A snapshot built from its Arrow file has its cold blob encoded by a thread of its own (cold-blob.ts).
  const coldEntry = fileURLToPath(COLD_THREAD_ENTRY);
  const coldThread: ColdThreadCode = await codeBundles([coldEntry]).then(
    (bundles) => bundles.get(coldEntry)!,
    () => 'typescript',
  );
  const catalogStarted = performance.now();
  // Each event at its own level, as the logger's level field: a refused snapshot is a warning.
  const catalog = Catalog.open(config.snapshotsDir, {
    log: ({ level, ...fields }) => log[level](fields, fields.event),
    prepared: config.preparedCache === null ? undefined : { cacheDir: config.preparedCache },
    build: { coldThread },
  });
  const catalogMs = Math.round(performance.now() - catalogStarted);
  if (location.kind === 'postgres') {
    // A replica of a fleet: PostgreSQL and Redis, on the main thread (fleet-ledger.ts).
    if (config.workers > 0)
      log.info({ workers: config.workers }, 'a replica on PostgreSQL serves on its main thread: EDIFICE_WORKERS is not used');
    const { perKeyPerMinute, dailyQuota } = config;
    if (config.redisUrl !== null) {
      redis = await RedisLimits.connect(config.redisUrl, {
        replicas: config.replicas,
        onFallback: (err) =>
          err
            ? log.warn(
                { err: err.message, replicas: config.replicas },
                'Redis cannot be reached: each replica limits alone, at 1/replicas of every limit',
              )
            : log.info('Redis answers again: limits are shared by the fleet'),
      });
    } else if (config.replicas > 1) {
      log.warn(
        { replicas: config.replicas },
        'no EDIFICE_REDIS: each replica limits alone, so the fleet allows EDIFICE_REPLICAS times every limit',
      );
    }
    const limits = redis ? redisFleetLimits(redis, perKeyPerMinute, dailyQuota) : localFleetLimits(perKeyPerMinute, dailyQuota);
    fleet = new FleetLedger(await PgLedger.open(location.url), limits, { perKeyPerMinute, dailyQuota, log });
    const server = await startServer({ config: { ...config, workers: 0 }, catalog, fleet, log });
    serving = {
      port: server.port,
      implementation: server.implementation,
      metricsText: () => server.metrics.registry.metrics(),
      close: () => server.stop(STOP_GRACE_MS),
    };
  } else {
    ({ ledger, demo } = onSqlite!);
    serving = await onSqlite!.serve(catalog);
  }
  if (config.metricsPort > 0) metricsServer = await startMetricsServer(config.metricsHost, config.metricsPort, serving.metricsText, log);
  if (stopAsked) {
    await stop(stopSignal);
    return;
  }
  catalogUp = catalog;
  if (rescanAsked) rescan();
  const workers = fleet ? 0 : config.workers;
  const threads = workers === 0 ? 'the main thread' : `${workers} worker thread${workers === 1 ? '' : 's'}`;
  const metricsAt = metricsServer ? `http://${config.metricsHost}:${metricsServer.port}/metrics` : 'off';
  log.info(
    {
      uWebSockets: serving.implementation,
      // The scan's loops: the addon's compiled ones, or their JavaScript fallback (native-kernels.ts).
      kernels: nativeUnavailable === null ? 'compiled' : 'javascript',
      port: serving.port,
      metrics: metricsAt,
      workers,
      snapshots: catalog.report(),
      // Where the start went: the snapshots (each one's phases are in its snapshot_loaded line), then the threads and their warm-up.
      startup: {
        catalogMs,
        serveMs: Math.round(performance.now() - catalogStarted) - catalogMs,
        sinceProcessStartMs: Math.round(performance.now()),
      },
    },
    `listening (uWebSockets.js ${serving.implementation}, ${threads})`,
  );

  if (nativeUnavailable !== null && process.env.EDIFICE_KERNELS !== 'js')
    log.warn(
      { reason: nativeUnavailable },
      'the scan runs its JavaScript loops, 2-5x slower on large areas: rebuild the addon (npm install)',
    );
  if (config.reports === 'off')
    log.info('building reports are off: POST /reports answers 404 until EDIFICE_REPORT_PRICE is set (or EDIFICE_REPORTS_FREE=1)');
  if (config.reports === 'free') log.info('building reports are free (EDIFICE_REPORTS_FREE=1): anyone may order one without paying');

  const lines = [
    '',
    `Edifice is listening on ${config.host}:${serving.port} (uWebSockets.js ${serving.implementation}, ${threads}).`,
    `Metrics for operators: ${metricsAt}`,
  ];
  const keyFile = join(dirname(config.ledgerPath), 'demo-key.txt');
  if (demo?.state === 'active') {
    // The quick start's demo alone prints a key: it is in a file beside the ledger anyway.
    const url = `http://127.0.0.1:${serving.port}${config.basePath}/buildings?bbox=${demoBbox(catalog)}&limit=3`;
    lines.push(
      `Demo workspace ${demo.workspaceId}${demo.created ? ' created with 100,000 credits' : ''}; its key is kept in ${keyFile}.`,
      `Demo key: ${demo.key}`,
      'Try:',
      `  curl -s -H 'Authorization: Bearer ${demo.key}' '${url}'`,
    );
  } else if (demo?.state === 'revoked') {
    lines.push(
      `The demo key ${demo.keyId} of workspace ${demo.workspaceId} was revoked, and stays so. Make a key with the admin CLI: npm run admin -- --help`,
    );
  } else {
    lines.push('Keys: npm run admin -- --help');
  }
  process.stdout.write(`${lines.join('\n')}\n\n`);
}

interface Serving {
  port: number;
  implementation: string;
  metricsText(): Promise<string>;
  close(): Promise<void> | void;
}

/**
 * The server of one process on its SQLite ledger: on this thread, or on worker threads, which
 * start here and serve once `serve` gives them the catalog.
 */
async function startOnSqlite(
  config: Config,
  withDemo: boolean,
  log: Logger,
): Promise<{ ledger: Ledger; demo: DemoKey | null; serve(catalog: Catalog): Promise<Serving> }> {
  const ledger = Ledger.open(config.ledgerPath, { perKeyPerMinute: config.perKeyPerMinute, dailyQuota: config.dailyQuota });
  const demo = withDemo ? ledger.ensureDemo(dirname(config.ledgerPath)) : null;
  if (!withDemo) {
    const retired = ledger.retireDemo(dirname(config.ledgerPath));
    if (retired)
      log.warn(
        { workspaceId: retired.workspaceId, keyIds: retired.keyIds },
        "the demo workspace's keys are revoked: this server serves real snapshots",
      );
  }

  if (config.workers === 0) {
    // This thread charges: the openings read before the first page, not during it.
    log.info(ledger.loadOpenings(), 'the openings of the last 365 days read into memory');
    return {
      ledger,
      demo,
      serve: async (catalog) => {
        const server = await startServer({ config, catalog, ledger, log });
        // As the pool stops its workers (worker-pool.ts close): no new connection, Connection: close
        // on every later response, the grace for what is in flight, then the rest ended.
        return {
          port: server.port,
          implementation: server.implementation,
          metricsText: () => server.metrics.registry.metrics(),
          close: () => server.stop(STOP_GRACE_MS),
        };
      },
    };
  }
  const threads = await spawnWorkers({ config, ledger, log, workers: config.workers });
  return {
    ledger,
    demo,
    serve: async (catalog) => {
      // The main thread keeps the catalog and its removals; the workers serve.
      const stopFollowing = followRemovals(ledger, catalog, config.removalsPollMs, log);
      const pool = await threads.serve(catalog);
      // It serves from the first worker that listens; the others follow (worker-pool.ts).
      void pool
        .allListening()
        .then(() => log.info({ workers: pool.workers, sinceProcessStartMs: Math.round(performance.now()) }, 'every worker listening'));
      return {
        port: pool.port,
        implementation: pool.implementation,
        metricsText: () => pool.metricsText(),
        close: () => {
          stopFollowing();
          return pool.close(STOP_GRACE_MS);
        },
      };
    },
  };
}

/** Exit status of a start refused for its configuration (a bad variable); other failures exit 1. */
const EXIT_CONFIG = 2;

/** One line on stderr, no stack: the message names what to change. */
function refuse(err: unknown): never {
  process.stderr.write(`edifice: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(err instanceof ConfigError ? EXIT_CONFIG : 1);
}

let config: Config;
try {
  config = loadConfig();
} catch (err) {
  refuse(err);
}
main(config).catch(refuse);
