/**
 * The configuration of `npm run fleet`: the server's own (config.ts) for what every replica shares,
 * and the fleet's: how many replicas, and the ledger and limits they share. A fleet refuses a
 * ledger file: SQLite's write lock lives in one process, so replicas cannot share it.
 */
import { ConfigError, loadConfig, type Config } from '../config.ts';
import { ledgerLocation } from '../ledger/engine.ts';

export interface FleetConfig {
  /** The server's configuration; its host and port are where HAProxy listens. */
  server: Config;
  replicas: number;
  /** EDIFICE_LEDGER: a postgres:// URL. */
  ledgerUrl: string;
  /** EDIFICE_REDIS: a redis:// URL. */
  redisUrl: string;
  /** Worker threads of each replica (EDIFICE_WORKERS; default 0: the replicas are the parallelism). */
  workersPerReplica: number;
}

export const MAX_REPLICAS = 64;

export function loadFleetConfig(env: NodeJS.ProcessEnv = process.env): FleetConfig {
  const raw = env.EDIFICE_REPLICAS ?? '';
  const replicas = raw === '' ? 3 : Number(raw);
  if (!Number.isInteger(replicas) || replicas < 1 || replicas > MAX_REPLICAS)
    throw new ConfigError(`EDIFICE_REPLICAS must be an integer from 1 to ${MAX_REPLICAS}, got "${raw}".`);
  const ledger = env.EDIFICE_LEDGER ?? '';
  if (ledger === '')
    throw new ConfigError(
      'EDIFICE_LEDGER must be a postgres:// URL for a fleet (postgres://user:password@host:port/database): replicas share one ledger.',
    );
  let kind: 'sqlite' | 'postgres';
  try {
    kind = ledgerLocation(ledger).kind;
  } catch (err) {
    throw new ConfigError(`EDIFICE_LEDGER: ${(err as Error).message}`);
  }
  if (kind === 'sqlite')
    throw new ConfigError(
      `EDIFICE_LEDGER must be a postgres:// URL for a fleet, got the file path "${ledger}": ` +
        'a SQLite file cannot be shared by replicas (its write lock lives in one process). npm start serves one process on a file.',
    );
  const redis = env.EDIFICE_REDIS ?? '';
  if (!/^rediss?:\/\/[^/\s]+/i.test(redis))
    throw new ConfigError(
      `EDIFICE_REDIS must be a redis:// URL for a fleet (redis://host:port), got "${redis}": ` +
        'without it each replica would count the limits alone, and a key would get its limit once per replica.',
    );
  const workersRaw = env.EDIFICE_WORKERS ?? '';
  const workersPerReplica = workersRaw === '' ? 0 : Number(workersRaw);
  // The server's own checks, with the replicas' worker default (loadConfig's is one per core).
  const server = loadConfig({ ...env, EDIFICE_WORKERS: String(workersPerReplica) });
  return { server, replicas, ledgerUrl: ledger, redisUrl: redis, workersPerReplica: server.workers };
}
