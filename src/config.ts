/**
 * Configuration from the environment, with defaults that make `npm start` work on a fresh clone.
 * A bad value is refused at start with the variable's name, never guessed at.
 */
import { statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';

export interface Config {
  host: string;
  port: number;
  /** The operator port of GET /metrics (metrics-server.ts), loopback by default; port 0: none. */
  metricsHost: string;
  metricsPort: number;
  /** Path prefix of every API route; the spec's base address ends in it. */
  basePath: string;
  snapshotsDir: string;
  /**
   * EDIFICE_PREPARED_CACHE: where a snapshot's prepared file goes when its folder is not writable
   * (default: `prepared` beside the ledger); off: no prepared file is read or written.
   */
  preparedCache: string | null;
  ledgerPath: string;
  /** Public base address ending in the base path; null: http://<host>:<port><basePath> as listened. */
  baseUrl: string | null;
  appUrl: string;
  /** The map page's basemap: a raster tile URL template ({z}/{x}/{y}) or a MapLibre style URL; empty: none. */
  mapBasemap: string;
  countriesUrl: string;
  /** pino's level of the log (EDIFICE_LOG_LEVEL). */
  logLevel: string;
  /** Whether EDIFICE_SNAPSHOTS was given (a demo is made only in the default folder, unless asked). */
  snapshotsDirSet: boolean;
  /** EDIFICE_DEMO: auto (the quick start's default folder, empty), on (asked for), off (never). See demo.ts. */
  demo: 'auto' | 'on' | 'off';
  /** Buildings of the synthetic demo country generated for a demo. */
  demoBuildings: number;
  /**
   * Reverse proxies in front of the server whose X-Forwarded-For is trusted: the client address
   * is the entry this many places from the right (0: the socket's peer, the header is ignored).
   */
  trustedProxies: number;
  /** max-age of the Cache-Control of /public answers, in seconds. */
  publicMaxAgeS: number;
  /**
   * Building reports: off (the default: orders are refused, for a report gives away what credits
   * sell), sold at reportPriceMinor, or free by the operator's explicit EDIFICE_REPORTS_FREE=1.
   */
  reports: 'off' | 'sold' | 'free';
  /** Price of a building report in minor units (cents) of reportCurrency. */
  reportPriceMinor: number;
  reportCurrency: string;
  /** builtin: orders are paid at checkout; webhook: pending until a signed webhook confirms payment. */
  paymentProvider: 'builtin' | 'webhook';
  /** Secret of the payment webhook's HMAC-SHA256 signature; null: the webhook refuses every call. */
  paymentWebhookSecret: string | null;
  /** How often the server looks for newly approved business removals, in ms. */
  removalsPollMs: number;
  /**
   * Requests a minute per API key and per workspace per UTC day. The spec's 60 and 5,000 are the
   * defaults; raise them only for load tests (tools/loadtest.ts) on a private server.
   */
  perKeyPerMinute: number;
  dailyQuota: number;
  /** Origins whose pages may call the authenticated API from a browser (CORS); what needs no key is open to any. */
  corsOrigins: readonly string[];
  /** HTTP worker threads sharing one port and one copy of the snapshots; 0 serves from the main thread. */
  workers: number;
  /**
   * The most encoded buildings each serving thread keeps (FragmentCache), in MiB. Each worker has
   * its own cache, so resident memory can grow by a little more than this per worker. At most
   * 4,096: the cache is one Buffer, and Node's largest is 4 GiB.
   */
  fragmentCacheMb: number;
  /** The most paging-walk rankings each serving thread keeps (RankingCache), in MiB; 0 keeps none. */
  rankingCacheMb: number;
  /**
   * The table of the latest openings the worker threads share (ledger/shared-openings.ts), in
   * MiB: the largest it can be within this (36 bytes a slot, 70% of them used at most).
   */
  sharedOpeningsMb: number;
  /**
   * Nice steps the ledger thread runs above the rest of the server (Linux; 0: none), so that a
   * commit every paid page waits for is not kept waiting for a core by the workers.
   */
  ledgerPriority: number;
  /** Made-up requests each serving thread runs through its handlers before listening (warm-up.ts); 0: none. */
  warmUpRequests: number;
  /** This replica's name in a fleet, sent on every response as X-Edifice-Replica; null: none. */
  replica: string | null;
  /** EDIFICE_REDIS: the limits and daily quota shared by a fleet's replicas (redis://…); null: in this process. */
  redisUrl: string | null;
  /** EDIFICE_REPLICAS: the replicas of the fleet; with Redis away each allows 1/replicas of every limit. */
  replicas: number;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function folderKind(path: string): 'folder' | 'missing' | 'other' {
  try {
    return statSync(path).isDirectory() ? 'folder' : 'other';
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'missing' : 'other';
  }
}

/** A setting the server cannot start with: its message names the variable and what it accepts, on one line. */
export class ConfigError extends RangeError {
  override name = 'ConfigError';
}

function int(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}".`);
  return n;
}

/** A decimal amount such as 9.90 in minor units (990). */
function price(env: NodeJS.ProcessEnv, name: string): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return 0;
  const m = /^(\d{1,9})(?:\.(\d{1,2}))?$/.exec(raw);
  if (!m) throw new ConfigError(`${name} must be an amount such as 9.90 (at most two decimals), got "${raw}".`);
  return Number(m[1]) * 100 + Number((m[2] ?? '').padEnd(2, '0'));
}

/** EDIFICE_REDIS: a redis:// (or rediss://) URL, only beside a PostgreSQL ledger (a fleet's). */
function redisUrl(env: NodeJS.ProcessEnv): string | null {
  const url = env.EDIFICE_REDIS;
  if (url === undefined || url === '') return null;
  if (!/^rediss?:\/\/[^\s]+$/.test(url)) throw new ConfigError(`EDIFICE_REDIS must be a redis:// URL, got "${url}".`);
  if (!/^postgres(ql)?:\/\//i.test(ledgerPath(env)))
    throw new ConfigError('EDIFICE_REDIS needs EDIFICE_LEDGER to be a postgres:// URL: limits are shared by the replicas of a fleet.');
  return url;
}

/** The ledger file alone: the admin CLI reads nothing else, so a bad setting of the server does not stop it. */
/** EDIFICE_REPLICA: 1 to 64 letters, digits, '.', '_' or '-' (it goes in a header as it is). */
function replicaName(env: NodeJS.ProcessEnv): string | null {
  const name = env.EDIFICE_REPLICA;
  if (name === undefined || name === '') return null;
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(name))
    throw new RangeError(`EDIFICE_REPLICA must be 1 to 64 letters, digits, '.', '_' or '-', got "${name}".`);
  return name;
}

export function ledgerPath(env: NodeJS.ProcessEnv = process.env): string {
  return env.EDIFICE_LEDGER || './data/ledger.db';
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = int(env, 'EDIFICE_PORT', 8080, 0, 65535);
  const basePath = env.EDIFICE_BASE_PATH ?? '/v1';
  if (!/^(\/[A-Za-z0-9._~-]+)*$/.test(basePath))
    throw new ConfigError(`EDIFICE_BASE_PATH must look like /v1 (no trailing slash), got "${basePath}".`);
  const currency = env.EDIFICE_REPORT_CURRENCY || 'EUR';
  if (!/^[A-Z]{3}$/.test(currency)) throw new ConfigError(`EDIFICE_REPORT_CURRENCY must be three capitals (ISO 4217), got "${currency}".`);
  const provider = env.EDIFICE_PAYMENT_PROVIDER || 'builtin';
  if (provider !== 'builtin' && provider !== 'webhook')
    throw new ConfigError(`EDIFICE_PAYMENT_PROVIDER must be builtin or webhook, got "${provider}".`);
  const secret = env.EDIFICE_PAYMENT_WEBHOOK_SECRET || null;
  if (secret !== null && secret.length < 16) throw new ConfigError('EDIFICE_PAYMENT_WEBHOOK_SECRET must have at least 16 characters.');
  if (provider === 'webhook' && secret === null)
    throw new ConfigError('EDIFICE_PAYMENT_PROVIDER=webhook needs EDIFICE_PAYMENT_WEBHOOK_SECRET.');
  // Read by src/query/native-kernels.ts and src/api/shared-copy.ts in every thread; checked here so that a typo stops the start.
  const kernels = env.EDIFICE_KERNELS || 'compiled';
  if (kernels !== 'compiled' && kernels !== 'js') throw new ConfigError(`EDIFICE_KERNELS must be compiled or js, got "${kernels}".`);
  const logLevel = env.EDIFICE_LOG_LEVEL || 'info';
  if (!LOG_LEVELS.includes(logLevel))
    throw new ConfigError(`EDIFICE_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}".`);
  const baseUrl = env.EDIFICE_BASE_URL ? env.EDIFICE_BASE_URL.replace(/\/$/, '') : null;
  if (baseUrl !== null && !/^https?:\/\/[^/?#\s]+(\/[^?#\s]*)?$/.test(baseUrl)) {
    throw new ConfigError(
      `EDIFICE_BASE_URL must be an http:// or https:// address without query, such as https://api.example.com/v1, got "${env.EDIFICE_BASE_URL}".`,
    );
  }
  const demo = ({ '': 'auto', auto: 'auto', '1': 'on', '0': 'off' } as const)[env.EDIFICE_DEMO ?? ''];
  if (demo === undefined) throw new ConfigError(`EDIFICE_DEMO must be 0, 1 or auto, got "${env.EDIFICE_DEMO}".`);
  const snapshotsDir = env.EDIFICE_SNAPSHOTS || './snapshots';
  // A typo must not serve made-up data: only the demo creates its folder (demo.ts).
  const demoMayCreate = demo === 'on' || (demo === 'auto' && !env.EDIFICE_SNAPSHOTS);
  const kind = folderKind(snapshotsDir);
  if (kind === 'other' || (kind === 'missing' && !demoMayCreate)) {
    throw new ConfigError(
      `EDIFICE_SNAPSHOTS must name an existing folder of snapshots (<CC>/<YYYY-MM-DD>.arrow), got "${snapshotsDir}", ` +
        `which ${kind === 'missing' ? 'does not exist' : 'is not a folder that can be read'}${kind === 'missing' ? ' (only the demo creates its folder: EDIFICE_DEMO=1)' : ''}.`,
    );
  }
  const reportPriceMinor = price(env, 'EDIFICE_REPORT_PRICE');
  const free = env.EDIFICE_REPORTS_FREE || '0';
  if (free !== '0' && free !== '1') throw new ConfigError(`EDIFICE_REPORTS_FREE must be 0 or 1, got "${free}".`);
  if (free === '1' && reportPriceMinor > 0)
    throw new ConfigError('EDIFICE_REPORTS_FREE=1 gives reports away: leave EDIFICE_REPORT_PRICE unset or 0 with it.');
  const basemap = env.EDIFICE_MAP_BASEMAP ?? '';
  if (basemap !== '' && !/^https?:\/\/\S+$/.test(basemap)) {
    throw new ConfigError(
      `EDIFICE_MAP_BASEMAP must be an http(s) URL (a tile template with {z}/{x}/{y}, or a MapLibre style), got "${basemap}".`,
    );
  }
  return {
    host: env.EDIFICE_HOST || '127.0.0.1',
    port,
    metricsHost: env.EDIFICE_METRICS_HOST || '127.0.0.1',
    metricsPort: int(env, 'EDIFICE_METRICS_PORT', 9464, 0, 65535),
    basePath,
    snapshotsDir,
    preparedCache: env.EDIFICE_PREPARED_CACHE === 'off' ? null : env.EDIFICE_PREPARED_CACHE || join(dirname(ledgerPath(env)), 'prepared'),
    logLevel,
    snapshotsDirSet: Boolean(env.EDIFICE_SNAPSHOTS),
    demo,
    ledgerPath: ledgerPath(env),
    baseUrl,
    appUrl: env.EDIFICE_APP_URL || 'https://app.edifice.example',
    mapBasemap: basemap,
    countriesUrl: env.EDIFICE_COUNTRIES_URL || 'https://edifice.example/countries',
    demoBuildings: int(env, 'EDIFICE_DEMO_BUILDINGS', 20_000, 1_000, 10_000_000),
    trustedProxies: int(env, 'EDIFICE_TRUSTED_PROXIES', 0, 0, 10),
    publicMaxAgeS: int(env, 'EDIFICE_PUBLIC_MAX_AGE', 300, 0, 86_400),
    reports: reportPriceMinor > 0 ? 'sold' : free === '1' ? 'free' : 'off',
    reportPriceMinor,
    reportCurrency: currency,
    paymentProvider: provider,
    paymentWebhookSecret: secret,
    removalsPollMs: int(env, 'EDIFICE_REMOVALS_POLL_MS', 1_000, 50, 60_000),
    perKeyPerMinute: int(env, 'EDIFICE_KEY_PER_MINUTE', 60, 1, 1_000_000_000),
    dailyQuota: int(env, 'EDIFICE_DAILY_QUOTA', 5_000, 1, 1_000_000_000),
    corsOrigins: corsOrigins(env.EDIFICE_CORS_ORIGINS),
    workers: int(env, 'EDIFICE_WORKERS', availableParallelism(), 0, 256),
    fragmentCacheMb: int(env, 'EDIFICE_FRAGMENT_CACHE_MB', 256, 1, 4_096),
    rankingCacheMb: int(env, 'EDIFICE_RANKING_CACHE_MB', 32, 0, 65_536),
    sharedOpeningsMb: int(env, 'EDIFICE_SHARED_OPENINGS_MB', 72, 1, 65_536),
    ledgerPriority: int(env, 'EDIFICE_LEDGER_PRIORITY', 10, 0, 39),
    warmUpRequests: int(env, 'EDIFICE_WARMUP_REQUESTS', 150, 0, 100_000),
    replica: replicaName(env),
    redisUrl: redisUrl(env),
    replicas: int(env, 'EDIFICE_REPLICAS', 1, 1, 64),
  };
}

/** EDIFICE_CORS_ORIGINS: a comma list of origins (scheme://host[:port]); empty: none. */
export function corsOrigins(value: string | undefined): string[] {
  if (value === undefined || value.trim() === '') return [];
  const out: string[] = [];
  for (const item of value.split(',')) {
    const origin = item.trim();
    if (!/^https?:\/\/[A-Za-z0-9.-]+(:[0-9]{1,5})?$/.test(origin) && !/^https?:\/\/\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?$/.test(origin)) {
      throw new RangeError(
        `EDIFICE_CORS_ORIGINS must be a comma list of origins such as https://app.example.com or http://localhost:3000 (scheme, host, optional port; no path), got "${origin}".`,
      );
    }
    out.push(origin.toLowerCase());
  }
  return out;
}
