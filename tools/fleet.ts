/**
 * `npm run fleet`: EDIFICE_REPLICAS replicas (default 3) of the server behind HAProxy on
 * EDIFICE_PORT, sharing the PostgreSQL ledger EDIFICE_LEDGER and the Redis EDIFICE_REDIS
 * (src/fleet/fleet.ts). This process is the fleet's: SIGHUP to it reaches every replica (a
 * rescan of the snapshots), SIGTERM or SIGINT stops HAProxy and the replicas, a second one ends
 * them at once. Exit status 2: a setting refused (ConfigError); 1: another failure.
 */
import pino from 'pino';
import { ConfigError } from '../src/config.ts';
import { loadFleetConfig, type FleetConfig } from '../src/fleet/config.ts';
import { startFleet, type RunningFleet } from '../src/fleet/fleet.ts';

const EXIT_CONFIG = 2;

/** A URL as it may be printed: its password hidden. */
const shown = (url: string): string => url.replace(/(\/\/[^:/@]*:)[^@/]*@/, '$1…@');

function banner(fc: FleetConfig, fleet: RunningFleet): string {
  const base = `http://127.0.0.1:${fleet.port}${fc.server.basePath}`;
  const lines = [
    '',
    `Edifice fleet: ${fleet.replicas.length} replica${fleet.replicas.length === 1 ? '' : 's'} behind HAProxy on ${fleet.host}:${fleet.port} ` +
      '(least connections, health checks on /readyz).',
    ...fleet.replicas.map(
      (r) =>
        `  ${r.name}: 127.0.0.1:${r.spec.port}, pid ${r.pid}` +
        (r.spec.metricsPort > 0 ? `, metrics http://127.0.0.1:${r.spec.metricsPort}/metrics` : ''),
    ),
    `Ledger ${shown(fc.ledgerUrl)}; limits in ${shown(fc.redisUrl)}.`,
  ];
  if (fleet.demo) {
    lines.push(
      `Demo workspace ${fleet.demo.workspaceId}${fleet.demo.created ? ' created with 100,000 credits' : ''}; its key is kept in ${fleet.demo.keyFile}.`,
      `Demo key: ${fleet.demo.key}`,
      'Try (X-Edifice-Replica names the replica that answered):',
      `  curl -si -H 'Authorization: Bearer ${fleet.demo.key}' '${base}/buildings?bbox=${fleet.demo.bbox}&limit=3'`,
    );
  } else {
    lines.push(`Keys: npm run admin -- --ledger '${shown(fc.ledgerUrl)}' --help`);
  }
  lines.push(
    `SIGHUP to pid ${process.pid} (kill -HUP ${process.pid}): every replica rescans the snapshots. Ctrl-C or SIGTERM: the fleet stops.`,
  );
  return `${lines.join('\n')}\n\n`;
}

async function main(): Promise<void> {
  const fc = loadFleetConfig();
  const log = pino({ level: fc.server.logLevel });
  let fleet: RunningFleet | null = null;
  let stopAsked: NodeJS.Signals | null = null;
  let reloadAsked = false;
  const stop = async (signal: NodeJS.Signals) => {
    log.info({ signal }, 'fleet stopping: HAProxy stops listening, the replicas finish what is in flight');
    await fleet!.stop();
    log.info({ signal }, 'fleet stopped');
    process.exit(0);
  };
  const onStop = (signal: NodeJS.Signals) => {
    if (stopAsked !== null) {
      log.warn({ signal }, 'asked again to stop: ending every process of the fleet now');
      for (const r of fleet?.replicas ?? []) r.signal('SIGKILL');
      if (fleet?.proxyPid !== undefined) {
        try {
          process.kill(fleet.proxyPid, 'SIGKILL');
        } catch {
          // HAProxy already gone
        }
      }
      process.exit(1);
    }
    stopAsked = signal;
    if (fleet) void stop(signal);
    else log.info({ signal }, 'asked to stop while starting: stopping as soon as the fleet is up');
  };
  process.on('SIGINT', onStop);
  process.on('SIGTERM', onStop);
  process.on('SIGHUP', () => {
    if (!fleet) {
      reloadAsked = true;
      return;
    }
    log.info(
      { signal: 'SIGHUP', replicas: fleet.replicas.map((r) => r.name) },
      'SIGHUP passed to every replica: they rescan the snapshots',
    );
    fleet.reload();
  });

  fleet = await startFleet(fc, log);
  if (stopAsked !== null) return stop(stopAsked);
  if (reloadAsked) fleet.reload();
  void fleet.proxyEnded.then(async (e) => {
    log.fatal({ code: e.code, signal: e.signal }, 'HAProxy ended without being asked: the fleet cannot serve, stopping it');
    await fleet!.stop();
    process.exit(1);
  });
  log.info(
    {
      port: fleet.port,
      haproxyPid: fleet.proxyPid,
      replicas: fleet.replicas.map((r) => ({ name: r.name, port: r.spec.port, replicaPid: r.pid })),
    },
    'fleet listening',
  );
  process.stdout.write(banner(fc, fleet));
}

main().catch((err: unknown) => {
  process.stderr.write(`edifice fleet: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(err instanceof ConfigError ? EXIT_CONFIG : 1);
});
