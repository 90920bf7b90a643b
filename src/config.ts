/**
 * Configuration from the environment, with defaults that make `npm start` work on a fresh clone.
 * A bad value is refused at start with the variable's name, never guessed at.
 */
export interface Config {
  host: string;
  port: number;
  /** Path prefix of every API route; the spec's base address ends in it. */
  basePath: string;
  snapshotsDir: string;
  ledgerPath: string;
  /** Public base address ending in the base path; null: http://<host>:<port><basePath> as listened. */
  baseUrl: string | null;
  appUrl: string;
  countriesUrl: string;
  /** Buildings of the synthetic demo country generated when no snapshot exists. */
  demoBuildings: number;
  /**
   * Requests a minute per API key and per workspace per UTC day. The spec's 60 and 5,000 are the
   * defaults; raise them only for load tests (tools/loadtest.ts) on a private server.
   */
  perKeyPerMinute: number;
  dailyQuota: number;
}

function int(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new RangeError(`${name} must be an integer from ${min} to ${max}, got "${raw}".`);
  return n;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = int(env, 'EDIFICE_PORT', 8080, 0, 65535);
  const basePath = env.EDIFICE_BASE_PATH ?? '/v1';
  if (!/^(\/[A-Za-z0-9._~-]+)*$/.test(basePath)) throw new RangeError(`EDIFICE_BASE_PATH must look like /v1 (no trailing slash), got "${basePath}".`);
  return {
    host: env.EDIFICE_HOST || '127.0.0.1',
    port,
    basePath,
    snapshotsDir: env.EDIFICE_SNAPSHOTS || './snapshots',
    ledgerPath: env.EDIFICE_LEDGER || './data/ledger.db',
    baseUrl: env.EDIFICE_BASE_URL ? env.EDIFICE_BASE_URL.replace(/\/$/, '') : null,
    appUrl: env.EDIFICE_APP_URL || 'https://app.edifice.example',
    countriesUrl: env.EDIFICE_COUNTRIES_URL || 'https://edifice.example/countries',
    demoBuildings: int(env, 'EDIFICE_DEMO_BUILDINGS', 20_000, 1_000, 10_000_000),
    perKeyPerMinute: int(env, 'EDIFICE_KEY_PER_MINUTE', 60, 1, 1_000_000_000),
    dailyQuota: int(env, 'EDIFICE_DAILY_QUOTA', 5_000, 1, 1_000_000_000),
  };
}
