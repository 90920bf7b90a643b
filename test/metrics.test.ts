/**
 * /metrics is served on the operator port (EDIFICE_METRICS_PORT, loopback) and not on the API
 * port, with prom-client's process and runtime metrics of every thread, labelled by thread.
 */
import { freePort } from './services/ports.ts';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { getFresh, killServerProcesses, removeDir, startServerProcess, syntheticSnapshots } from './http-helpers.ts';

const dirs: string[] = [];
afterAll(() => {
  killServerProcesses();
  for (const d of dirs) removeDir(d);
});

/** Series of `name` by their thread label. */
function threads(text: string, name: string): string[] {
  return [...text.matchAll(new RegExp(`^${name}\\{[^}]*thread="([^"]+)"[^}]*\\} `, 'gm'))].map((m) => m[1]).sort();
}

describe('metrics on the operator port', () => {
  it('defaults to 127.0.0.1:9464; 0 is off', () => {
    expect(loadConfig({})).toMatchObject({ metricsHost: '127.0.0.1', metricsPort: 9464 });
    expect(loadConfig({ EDIFICE_METRICS_PORT: '0' }).metricsPort).toBe(0);
    expect(() => loadConfig({ EDIFICE_METRICS_PORT: '99999' })).toThrow(/EDIFICE_METRICS_PORT must be an integer from 0 to 65535/);
  });

  for (const workers of ['2', '0']) {
    it(
      `serves every thread's process and runtime metrics there, and 404 on the API port (EDIFICE_WORKERS=${workers})`,
      { timeout: 120_000 },
      async () => {
        const dir = await syntheticSnapshots(1000);
        dirs.push(dir);
        const metricsPort = await freePort();
        const server = await startServerProcess(
          {
            EDIFICE_SNAPSHOTS: join(dir, 'snapshots'),
            EDIFICE_LEDGER: join(dir, 'ledger.db'),
            EDIFICE_WORKERS: workers,
            EDIFICE_METRICS_PORT: String(metricsPort),
          },
          [],
        );
        const api = new URL(server.base).origin;
        expect((await getFresh(api, '/v1/openapi.json')).status).toBe(200);
        const onApi = await getFresh(api, '/metrics');
        expect(onApi.status).toBe(404);
        expect(onApi.body.error.code).toBe('not_found');

        const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
        const expected = workers === '0' ? ['main'] : ['http-', 'http-', 'ledger', 'main'];
        const shape = (labels: string[]) => labels.map((t) => t.replace(/^http-\d+$/, 'http-'));
        for (const name of ['process_resident_memory_bytes', 'nodejs_eventloop_lag_p99_seconds', 'nodejs_heap_size_used_bytes']) {
          expect(shape(threads(text, name)), name).toEqual(expected);
        }
        // Two distinct workers.
        expect(new Set(threads(text, 'nodejs_eventloop_lag_p99_seconds').filter((t) => t.startsWith('http-'))).size).toBe(
          workers === '0' ? 0 : 2,
        );
        // GC is counted where one ran since the thread's metrics began (loading the snapshot, serving).
        expect(threads(text, 'nodejs_gc_duration_seconds_count').length).toBeGreaterThan(0);
        // The API's own metrics, summed over the serving threads.
        expect(text).toMatch(/^edifice_http_requests_total\{route="\/openapi.json",status="200"\} 1$/m);
        expect(text).toMatch(/^edifice_snapshot_buildings\{country="XA",date="[-0-9]+"\} 1000$/m);
        server.child.kill('SIGTERM');
      },
    );
  }
});
