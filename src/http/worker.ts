/**
 * A worker thread of the server (started by worker-pool.ts through thread-boot.mjs): the whole
 * HTTP app on the shared port (SO_REUSEPORT), a replica of the main thread's catalog over the same
 * shared memory, its own connection to the ledger file, and the limiter tables every thread shares.
 */
import { parentPort, threadId, workerData } from 'node:worker_threads';
import pino from 'pino';
import { CatalogReplica, type PublishedView } from '../catalog/replica.ts';
import type { Config } from '../config.ts';
import { Ledger } from '../ledger/index.ts';
import type { AddressLimiterTables } from './address-limits.ts';
import { startServer } from './server.ts';

export interface WorkerData {
  entry: string;
  config: Config;
  published: PublishedView;
  keyLimiterTable: SharedArrayBuffer;
  writeLock: SharedArrayBuffer;
  quotaTable: SharedArrayBuffer;
  limiterTables: AddressLimiterTables;
  logLevel: string;
}

/** Messages between the main thread and a worker. */
export type ToWorker =
  | { type: 'view'; published: PublishedView }
  | { type: 'metrics'; id: number }
  | { type: 'metrics-text'; id: number; text: string }
  | { type: 'close' };

export type FromWorker =
  | { type: 'listening'; port: number; implementation: string }
  | { type: 'metrics?'; id: number }
  | { type: 'metrics'; id: number; json: unknown }
  | { type: 'failed'; message: string };

const data = workerData as WorkerData;
const port = parentPort!;
const send = (m: FromWorker): void => port.postMessage(m);
const log = pino({ level: data.logLevel }).child({ worker: threadId });

const replica = new CatalogReplica();
replica.apply(data.published);
const ledger = Ledger.open(data.config.ledgerPath, {
  perKeyPerMinute: data.config.perKeyPerMinute, dailyQuota: data.config.dailyQuota, keyLimiterTable: data.keyLimiterTable,
  writeLock: data.writeLock, quotaTable: data.quotaTable, persistQuota: false,
});
process.on('exit', () => ledger.close());

let asked = 0;
const waiting = new Map<number, (text: string) => void>();

try {
  const server = await startServer({
    config: data.config, catalog: replica, ledger, log, limiterTables: data.limiterTables,
    metricsText: () => new Promise((resolve) => {
      const id = ++asked;
      waiting.set(id, resolve);
      send({ type: 'metrics?', id });
    }),
  });
  port.on('message', (m: ToWorker) => {
    switch (m.type) {
      case 'view':
        replica.apply(m.published);
        break;
      case 'metrics':
        void server.metrics.registry.getMetricsAsJSON().then((json) => send({ type: 'metrics', id: m.id, json }));
        break;
      case 'metrics-text':
        waiting.get(m.id)?.(m.text);
        waiting.delete(m.id);
        break;
      case 'close':
        // Stop accepting; the thread ends once its open connections are gone.
        server.close();
        port.close();
        break;
    }
  });
  send({ type: 'listening', port: server.port, implementation: server.implementation });
} catch (err) {
  send({ type: 'failed', message: (err as Error).message });
  port.close();
}
