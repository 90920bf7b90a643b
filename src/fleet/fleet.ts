/**
 * A fleet on one machine: N replicas of the server, each on a free loopback port with its name in
 * EDIFICE_REPLICA, sharing one PostgreSQL ledger and one Redis, behind HAProxy on the public port.
 *
 * The start, in order: the public port checked free; the demo country generated when the
 * snapshots folder asks for it (demo.ts's rules, once, before any replica); the ledger's schema
 * brought up to date and the demo key made, by this process alone; the replicas started and
 * each ready (/readyz); HAProxy last, so that the first client finds replicas to answer it.
 * After the start a replica that ends is started again; HAProxy routes around it meanwhile.
 */
import { resolve } from 'node:path';
import type { Logger } from 'pino';
import { Catalog } from '../catalog/catalog.ts';
import { demoBbox, planDemo, writeDemoCountry } from '../demo.ts';
import { assertPortFree } from '../http/port.ts';
import { PgLedger } from '../ledger/pg-ledger.ts';
import type { FleetConfig } from './config.ts';
import { ensureFleetDemo, type FleetDemo } from './demo.ts';
import { haproxyConfig } from './haproxy.ts';
import { runHaproxy, type ProxyProcess } from './proxy.ts';
import { Replica } from './replica.ts';
import { freeLoopbackPort } from './ports.ts';

/** How long a replica may take to load its snapshots and answer /readyz at the start. */
const READY_TIMEOUT_MS = 600_000;
/** A replica's grace to finish its requests in flight once asked to stop (the server's own is 5 s). */
const REPLICA_STOP_GRACE_MS = 10_000;

export interface FleetOptions {
  /** Where the demo key is kept (default ./data/fleet). */
  dataDir?: string;
  /** Milliseconds between HAProxy's health checks of a replica. Default 500. */
  checkEveryMs?: number;
  /** Where the replicas' JSON log lines go (default stdout). */
  out?: (line: string) => void;
}

export interface RunningFleet {
  host: string;
  port: number;
  replicas: readonly Replica[];
  /** The demo key and a bbox of the demo country, when this start is the demo. */
  demo: (FleetDemo & { bbox: string }) | null;
  proxyPid: number | undefined;
  /** Resolves if HAProxy ends without being asked (the fleet then cannot serve). */
  proxyEnded: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGHUP to every replica: each rescans the snapshots folder. */
  reload(): void;
  /** HAProxy stops listening, the replicas finish what is in flight and end. */
  stop(): Promise<void>;
}

export async function startFleet(fc: FleetConfig, log: Logger, options: FleetOptions = {}): Promise<RunningFleet> {
  const config = fc.server;
  await assertPortFree(config.host, config.port);
  const plan = planDemo(config);
  if (plan.generate) {
    log.info({ dir: config.snapshotsDir, buildings: config.demoBuildings }, 'no snapshot found: generating the synthetic demo country');
    const written = await writeDemoCountry(config);
    log.info({ path: written.path, rows: written.rows, bytes: written.bytes }, 'demo snapshot written');
  }
  // Migrations and the demo key by this process alone, before the replicas share the ledger.
  const ledger = await PgLedger.open(fc.ledgerUrl);
  let demo: RunningFleet['demo'] = null;
  try {
    if (plan.demo) {
      const made = await ensureFleetDemo(ledger, resolve(options.dataDir ?? 'data/fleet'));
      const catalog = Catalog.open(config.snapshotsDir);
      demo = { ...made, bbox: demoBbox(catalog) };
    }
  } finally {
    await ledger.close();
  }

  const out = options.out ?? ((line: string) => process.stdout.write(`${line}\n`));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    EDIFICE_LEDGER: fc.ledgerUrl,
    EDIFICE_REDIS: fc.redisUrl,
    EDIFICE_REPLICAS: String(fc.replicas),
    EDIFICE_SNAPSHOTS: resolve(config.snapshotsDir),
    // The fleet made the demo, if any: a replica never makes one.
    EDIFICE_DEMO: '0',
    EDIFICE_WORKERS: String(fc.workersPerReplica),
    // HAProxy's X-Forwarded-For names the client for the per-address limits.
    EDIFICE_TRUSTED_PROXIES: '1',
  };
  // Links in answers name the public address, not a replica's.
  if (!config.baseUrl)
    env.EDIFICE_BASE_URL = `http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${config.port}${config.basePath}`;
  const replicas: Replica[] = [];
  for (let i = 1; i <= fc.replicas; i++) {
    const port = await freeLoopbackPort();
    const metricsPort = config.metricsPort > 0 ? await freeLoopbackPort() : 0;
    replicas.push(new Replica({ name: `r${i}`, port, metricsPort, env }, log, out));
  }
  let proxy: ProxyProcess;
  const stopReplicas = () => Promise.all(replicas.map((r) => r.stop(REPLICA_STOP_GRACE_MS)));
  try {
    for (const r of replicas) r.start();
    await Promise.all(replicas.map((r) => r.ready(READY_TIMEOUT_MS)));
    for (const r of replicas) r.supervise();
    const proxyConfig = haproxyConfig({
      host: config.host,
      port: config.port,
      checkEveryMs: options.checkEveryMs,
      basePath: config.basePath,
      replicas: replicas.map((r) => ({ name: r.name, host: '127.0.0.1', port: r.spec.port })),
    });
    proxy = await runHaproxy(proxyConfig, config.host, config.port, log);
  } catch (err) {
    await stopReplicas();
    throw err;
  }
  const running = proxy;
  let stopping: Promise<void> | null = null;
  return {
    host: config.host,
    port: config.port,
    replicas,
    demo,
    proxyPid: running.pid,
    proxyEnded: running.ended.then((e) => (e.asked ? new Promise<never>(() => {}) : e)),
    reload: () => {
      for (const r of replicas) r.signal('SIGHUP');
    },
    stop: () => {
      stopping ??= Promise.all([running.stop(REPLICA_STOP_GRACE_MS), stopReplicas()]).then(() => {});
      return stopping;
    },
  };
}
