import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { ROOT, TSX_LOADER, removeDir, syntheticSnapshots } from './http-helpers.ts';

describe('config: request limits', () => {
  it('defaults to the limits of spec section 8', () => {
    const c = loadConfig({});
    expect(c.perKeyPerMinute).toBe(60);
    expect(c.dailyQuota).toBe(5_000);
  });

  it('reads raised limits for load tests, and refuses a bad value by its name', () => {
    const c = loadConfig({ EDIFICE_KEY_PER_MINUTE: '1000000', EDIFICE_DAILY_QUOTA: '50000000' });
    expect(c.perKeyPerMinute).toBe(1_000_000);
    expect(c.dailyQuota).toBe(50_000_000);
    expect(() => loadConfig({ EDIFICE_KEY_PER_MINUTE: '0' })).toThrow(/EDIFICE_KEY_PER_MINUTE/);
    expect(() => loadConfig({ EDIFICE_DAILY_QUOTA: 'lots' })).toThrow(/EDIFICE_DAILY_QUOTA/);
  });
});

describe('config: the rest of the environment', () => {
  it('has defaults that make npm start work on a fresh clone', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      host: '127.0.0.1',
      port: 8080,
      basePath: '/v1',
      snapshotsDir: './snapshots',
      ledgerPath: './data/ledger.db',
      baseUrl: null,
      trustedProxies: 0,
      publicMaxAgeS: 300,
      reportPriceMinor: 0,
      reportCurrency: 'EUR',
      paymentProvider: 'builtin',
      paymentWebhookSecret: null,
      removalsPollMs: 1_000,
      demoBuildings: 20_000,
    });
    expect(c.workers).toBeGreaterThanOrEqual(1);
    expect(c.fragmentCacheMb).toBe(256);
    expect(c.rankingCacheMb).toBe(32);
    expect(c.warmUpRequests).toBe(150);
    expect(c.ledgerPriority).toBe(10);
  });

  it('reads prices to the cent, worker counts, proxies and the payment provider', () => {
    expect(loadConfig({ EDIFICE_REPORT_PRICE: '9.9' }).reportPriceMinor).toBe(990);
    expect(loadConfig({ EDIFICE_REPORT_PRICE: '12.05' }).reportPriceMinor).toBe(1205);
    expect(loadConfig({ EDIFICE_REPORT_PRICE: '7' }).reportPriceMinor).toBe(700);
    expect(loadConfig({ EDIFICE_WORKERS: '0' }).workers).toBe(0);
    expect(loadConfig({ EDIFICE_FRAGMENT_CACHE_MB: '1' }).fragmentCacheMb).toBe(1);
    expect(loadConfig({ EDIFICE_FRAGMENT_CACHE_MB: '4096' }).fragmentCacheMb).toBe(4096);
    expect(loadConfig({ EDIFICE_RANKING_CACHE_MB: '0' }).rankingCacheMb).toBe(0);
    expect([loadConfig({}).sharedOpeningsMb, loadConfig({ EDIFICE_SHARED_OPENINGS_MB: '1' }).sharedOpeningsMb]).toEqual([72, 1]);
    expect(loadConfig({ EDIFICE_WARMUP_REQUESTS: '0' }).warmUpRequests).toBe(0);
    expect(loadConfig({ EDIFICE_WARMUP_REQUESTS: '100000' }).warmUpRequests).toBe(100_000);
    expect([
      loadConfig({ EDIFICE_LEDGER_PRIORITY: '0' }).ledgerPriority,
      loadConfig({ EDIFICE_LEDGER_PRIORITY: '39' }).ledgerPriority,
    ]).toEqual([0, 39]);
    expect(loadConfig({ EDIFICE_TRUSTED_PROXIES: '2' }).trustedProxies).toBe(2);
    expect(loadConfig({ EDIFICE_BASE_URL: 'https://api.example.com/v1/' }).baseUrl).toBe('https://api.example.com/v1');
    const webhook = loadConfig({ EDIFICE_PAYMENT_PROVIDER: 'webhook', EDIFICE_PAYMENT_WEBHOOK_SECRET: 's'.repeat(16) });
    expect([webhook.paymentProvider, webhook.paymentWebhookSecret]).toEqual(['webhook', 's'.repeat(16)]);
  });

  it('shares limits in Redis only beside a PostgreSQL ledger, and reads the replicas of the fleet', () => {
    const pg = 'postgres://edifice@127.0.0.1:5432/edifice';
    expect([loadConfig({}).redisUrl, loadConfig({}).replicas]).toEqual([null, 1]);
    const fleet = loadConfig({ EDIFICE_LEDGER: pg, EDIFICE_REDIS: 'redis://127.0.0.1:6379/0', EDIFICE_REPLICAS: '3' });
    expect([fleet.ledgerPath, fleet.redisUrl, fleet.replicas]).toEqual([pg, 'redis://127.0.0.1:6379/0', 3]);
    expect(() => loadConfig({ EDIFICE_REDIS: 'redis://127.0.0.1:6379' })).toThrow(
      /EDIFICE_REDIS needs EDIFICE_LEDGER to be a postgres:\/\/ URL/,
    );
    expect(() => loadConfig({ EDIFICE_LEDGER: pg, EDIFICE_REDIS: 'http://127.0.0.1:6379' })).toThrow(
      /EDIFICE_REDIS must be a redis:\/\/ URL/,
    );
    expect(() => loadConfig({ EDIFICE_REPLICAS: '0' })).toThrow(/EDIFICE_REPLICAS must be an integer from 1 to 64/);
  });

  it('building reports are off until a price is set, or free only when asked for', () => {
    expect(loadConfig({}).reports).toBe('off');
    expect(loadConfig({ EDIFICE_REPORT_PRICE: '0' }).reports).toBe('off');
    expect(loadConfig({ EDIFICE_REPORTS_FREE: '0' }).reports).toBe('off');
    expect(loadConfig({ EDIFICE_REPORT_PRICE: '9.90' }).reports).toBe('sold');
    expect(loadConfig({ EDIFICE_REPORTS_FREE: '1' })).toMatchObject({ reports: 'free', reportPriceMinor: 0 });
    expect(() => loadConfig({ EDIFICE_REPORTS_FREE: 'yes' })).toThrow(/EDIFICE_REPORTS_FREE must be 0 or 1/);
    expect(() => loadConfig({ EDIFICE_REPORTS_FREE: '1', EDIFICE_REPORT_PRICE: '9.90' })).toThrow(
      /EDIFICE_REPORTS_FREE=1 .*EDIFICE_REPORT_PRICE/,
    );
  });

  it("refuses a bad value by the variable's name", () => {
    const bad: [Record<string, string>, RegExp][] = [
      [{ EDIFICE_PORT: '70000' }, /EDIFICE_PORT/],
      [{ EDIFICE_BASE_PATH: 'v1/' }, /EDIFICE_BASE_PATH/],
      [{ EDIFICE_REPORT_PRICE: '9.999' }, /EDIFICE_REPORT_PRICE/],
      [{ EDIFICE_REPORT_PRICE: '-1' }, /EDIFICE_REPORT_PRICE/],
      [{ EDIFICE_REPORT_CURRENCY: 'eur' }, /EDIFICE_REPORT_CURRENCY/],
      [{ EDIFICE_PAYMENT_PROVIDER: 'stripe' }, /EDIFICE_PAYMENT_PROVIDER/],
      [{ EDIFICE_PAYMENT_PROVIDER: 'webhook' }, /EDIFICE_PAYMENT_WEBHOOK_SECRET/],
      [{ EDIFICE_PAYMENT_WEBHOOK_SECRET: 'short' }, /EDIFICE_PAYMENT_WEBHOOK_SECRET/],
      [{ EDIFICE_WORKERS: '-1' }, /EDIFICE_WORKERS/],
      [{ EDIFICE_FRAGMENT_CACHE_MB: '0' }, /EDIFICE_FRAGMENT_CACHE_MB/],
      [{ EDIFICE_FRAGMENT_CACHE_MB: '1.5' }, /EDIFICE_FRAGMENT_CACHE_MB/],
      [{ EDIFICE_FRAGMENT_CACHE_MB: '4097' }, /EDIFICE_FRAGMENT_CACHE_MB/],
      [{ EDIFICE_WARMUP_REQUESTS: '-1' }, /EDIFICE_WARMUP_REQUESTS/],
      [{ EDIFICE_WARMUP_REQUESTS: '100001' }, /EDIFICE_WARMUP_REQUESTS/],
      [{ EDIFICE_WARMUP_REQUESTS: 'some' }, /EDIFICE_WARMUP_REQUESTS/],
      [{ EDIFICE_RANKING_CACHE_MB: '-1' }, /EDIFICE_RANKING_CACHE_MB/],
      [{ EDIFICE_SHARED_OPENINGS_MB: '0' }, /EDIFICE_SHARED_OPENINGS_MB must be an integer from 1 to 65536/],
      [{ EDIFICE_SHARED_OPENINGS_MB: '1.5' }, /EDIFICE_SHARED_OPENINGS_MB/],
      [{ EDIFICE_RANKING_CACHE_MB: 'lots' }, /EDIFICE_RANKING_CACHE_MB/],
      [{ EDIFICE_TRUSTED_PROXIES: 'all' }, /EDIFICE_TRUSTED_PROXIES/],
      [{ EDIFICE_LEDGER_PRIORITY: '-1' }, /EDIFICE_LEDGER_PRIORITY must be an integer from 0 to 39/],
      [{ EDIFICE_LEDGER_PRIORITY: '40' }, /EDIFICE_LEDGER_PRIORITY/],
      [{ EDIFICE_LEDGER_PRIORITY: 'high' }, /EDIFICE_LEDGER_PRIORITY/],
      [{ EDIFICE_REMOVALS_POLL_MS: '1' }, /EDIFICE_REMOVALS_POLL_MS/],
      [{ EDIFICE_LOG_LEVEL: 'loud' }, /EDIFICE_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent/],
      [{ EDIFICE_KERNELS: 'native' }, /EDIFICE_KERNELS must be compiled or js, got "native"/],
      [{ EDIFICE_DEMO: 'yes' }, /EDIFICE_DEMO must be 0, 1 or auto/],
      [{ EDIFICE_BASE_URL: 'api.example.com/v1' }, /EDIFICE_BASE_URL must be an http:\/\/ or https:\/\/ address/],
      [{ EDIFICE_SNAPSHOTS: '/nonexistent/edifice-snapshots' }, /EDIFICE_SNAPSHOTS must name an existing folder .* does not exist/],
    ];
    for (const [env, message] of bad) expect(() => loadConfig(env), JSON.stringify(env)).toThrow(message);
  });
});

/** Starts the server in `cwd` with `env`; resolves with its exit code and what it wrote, stdout and stderr apart. */
function start(cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', TSX_LOADER, join(ROOT, 'src/main.ts')], {
    cwd,
    env: { ...process.env, EDIFICE_PORT: '0', EDIFICE_METRICS_PORT: '0', EDIFICE_WORKERS: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => {
    stdout += c.toString();
  });
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolve) =>
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}

describe('config: a start refused for its configuration', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) removeDir(d);
  });

  it(
    'prints one line naming the variable and what it accepts, no stack, and exits 2; a missing EDIFICE_SNAPSHOTS is not created',
    { timeout: 120_000 },
    async () => {
      const cwd = mkdtempSync(join(tmpdir(), 'edifice-config-'));
      dirs.push(cwd);
      const real = await syntheticSnapshots(1000);
      dirs.push(real);
      const cases: [NodeJS.ProcessEnv, RegExp][] = [
        [{ EDIFICE_PORT: '70000' }, /^edifice: EDIFICE_PORT must be an integer from 0 to 65535, got "70000"\.$/],
        [
          { EDIFICE_LOG_LEVEL: 'loud' },
          /^edifice: EDIFICE_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "loud"\.$/,
        ],
        [
          { EDIFICE_SNAPSHOTS: join(cwd, 'snapshotz') },
          /^edifice: EDIFICE_SNAPSHOTS must name an existing folder .*snapshotz", which does not exist/,
        ],
        [
          { EDIFICE_DEMO: '1', EDIFICE_SNAPSHOTS: join(real, 'snapshots') },
          /^edifice: EDIFICE_DEMO=1, but .* holds snapshots the server did not generate/,
        ],
      ];
      for (const [env, message] of cases) {
        const { code, stdout, stderr } = await start(cwd, env);
        expect({ code, lines: stderr.split('\n').filter(Boolean).length }, stderr).toEqual({ code: 2, lines: 1 });
        expect(stderr.trim()).toMatch(message);
        expect(stderr).not.toMatch(/\n\s+at /);
        expect(stdout).not.toMatch(/listening/);
      }
      // Neither the misspelt folder nor a synthetic country in it, nor the default folder.
      expect(existsSync(join(cwd, 'snapshotz'))).toBe(false);
      expect(existsSync(join(cwd, 'snapshots'))).toBe(false);
    },
  );
});
