/**
 * `npm run fleet` refuses what a fleet cannot run on, before it starts anything: a ledger file
 * (SQLite cannot be shared by replicas), no Redis, a bad replica count. Exit status 2 with the
 * variable named, as the server's own refusals.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../src/config.ts';
import { loadFleetConfig } from '../src/fleet/config.ts';
import { ROOT, TSX_LOADER } from './http-helpers.ts';

const PG = 'postgres://edifice@127.0.0.1:5/edifice';
const REDIS = 'redis://127.0.0.1:6';

describe('the fleet configuration', () => {
  it('takes a postgres:// ledger and a redis:// Redis; 3 replicas with one thread each by default', () => {
    const fc = loadFleetConfig({ EDIFICE_LEDGER: PG, EDIFICE_REDIS: REDIS, EDIFICE_PORT: '9000' });
    expect([fc.replicas, fc.workersPerReplica, fc.ledgerUrl, fc.redisUrl, fc.server.port]).toEqual([3, 0, PG, REDIS, 9000]);
    expect(loadFleetConfig({ EDIFICE_LEDGER: PG, EDIFICE_REDIS: REDIS, EDIFICE_REPLICAS: '5', EDIFICE_WORKERS: '2' })).toMatchObject({
      replicas: 5,
      workersPerReplica: 2,
    });
  });

  it('refuses a ledger file, no ledger, no Redis and a bad replica count, each by name', () => {
    const refusal = (env: NodeJS.ProcessEnv) => {
      try {
        loadFleetConfig(env);
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        return (err as Error).message;
      }
      throw new Error('accepted');
    };
    expect(refusal({ EDIFICE_LEDGER: './data/ledger.db', EDIFICE_REDIS: REDIS })).toMatch(
      /EDIFICE_LEDGER must be a postgres:\/\/ URL for a fleet, got the file path "\.\/data\/ledger\.db": a SQLite file cannot be shared/,
    );
    expect(refusal({ EDIFICE_REDIS: REDIS })).toMatch(/EDIFICE_LEDGER must be a postgres:\/\/ URL/);
    expect(refusal({ EDIFICE_LEDGER: 'mysql://db/x', EDIFICE_REDIS: REDIS })).toMatch(/EDIFICE_LEDGER: .*mysql:\/\//);
    expect(refusal({ EDIFICE_LEDGER: PG })).toMatch(/EDIFICE_REDIS must be a redis:\/\/ URL/);
    for (const n of ['0', '65', '2.5', 'three'])
      expect(refusal({ EDIFICE_LEDGER: PG, EDIFICE_REDIS: REDIS, EDIFICE_REPLICAS: n })).toMatch(
        /EDIFICE_REPLICAS must be an integer from 1 to 64/,
      );
  });

  it('npm run fleet on a ledger file exits 2 with the reason on one line, having started nothing', () => {
    const run = spawnSync(process.execPath, ['--import', TSX_LOADER, join(ROOT, 'tools/fleet.ts')], {
      env: { ...process.env, EDIFICE_LEDGER: 'data/ledger.db', EDIFICE_REDIS: REDIS, EDIFICE_PORT: '1' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^edifice fleet: EDIFICE_LEDGER must be a postgres:\/\/ URL/)]);
  });
});
