/**
 * Configuration from the environment, with defaults that make `npm start` work on a fresh clone.
 * A bad value is refused at start with the variable's name, never guessed at.
 */
export interface Config {
  port: number;
  snapshotsDir: string;
  ledgerPath: string;
  baseUrl: string;
  appUrl: string;
  countriesUrl: string;
  /** Buildings of the synthetic demo country generated when no snapshot exists. */
  demoBuildings: number;
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
  return {
    port,
    snapshotsDir: env.EDIFICE_SNAPSHOTS || './snapshots',
    ledgerPath: env.EDIFICE_LEDGER || './data/ledger.db',
    baseUrl: env.EDIFICE_BASE_URL || `http://127.0.0.1:${port}/v1`,
    appUrl: env.EDIFICE_APP_URL || 'https://app.edifice.example',
    countriesUrl: env.EDIFICE_COUNTRIES_URL || 'https://edifice.example/countries',
    demoBuildings: int(env, 'EDIFICE_DEMO_BUILDINGS', 20_000, 1_000, 10_000_000),
  };
}
