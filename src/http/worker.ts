/**
 * A worker thread of the server (started by worker-pool.ts through thread-boot.mjs): the whole
 * HTTP app on the shared port (SO_REUSEPORT, on the port the pool holds), a replica of the main thread's catalog over the same
 * shared memory, its own connection to the ledger file, and the limiter tables every thread shares.
 */
import { parentPort, threadId, type MessagePort } from 'node:worker_threads';
import pino from 'pino';
import { CatalogReplica, type PublishedView } from '../catalog/replica.ts';
import { ViewAssembly, type ViewSlice } from '../catalog/view-slices.ts';
import type { Config } from '../config.ts';
import { Ledger, LedgerError, LedgerUnavailableError, type ChargeOutcome, type ChargePage } from '../ledger/index.ts';
import { ABANDONED, PageCharges } from './page-charges.ts';
import type { ChargeReply, ChargeRequest, WriteRequest } from './ledger-thread.ts';
import type { WritePublic } from './public-writes.ts';
import type { AddressLimiterTables } from './address-limits.ts';
import type { FragmentCacheMemory } from './fragment-cache.ts';
import { startServer } from './server.ts';
import { threadData } from './thread-data.ts';

export interface WorkerData {
  entry: string;
  config: Config;
  /** Null for a worker started while the catalog loads: its first view comes as a message. */
  published: PublishedView | null;
  keyLimiterTable: SharedArrayBuffer;
  writeLock: SharedArrayBuffer;
  quotaTable: SharedArrayBuffer;
  openingsTable: SharedArrayBuffer;
  /** To the ledger thread, which commits charges. */
  ledgerPort: MessagePort;
  limiterTables: AddressLimiterTables;
  /** The store of encoded buildings every worker shares, and the region this one writes (null: one worker alone). */
  sharedBuildings: { memory: FragmentCacheMemory; region: number } | null;
  logLevel: string;
}

/** Messages between the main thread and a worker. */
export type ToWorker =
  | { type: 'view'; published: PublishedView }
  /** A part of the next view (catalog/view-slices.ts); it and the view are answered with 'taken'. */
  | { type: 'view-slice'; slice: ViewSlice }
  /** Asks for this thread's metrics (the pool sums every thread's). */
  | { type: 'metrics'; id: number }
  | { type: 'ledger-port'; port: MessagePort }
  /** Stop accepting (`now` false), then, at the end of the grace, end the connections still open (`now` true). */
  | { type: 'close'; now: boolean };

export type FromWorker =
  | { type: 'listening'; port: number; implementation: string }
  | { type: 'taken' }
  | { type: 'metrics'; id: number; json: unknown }
  | { type: 'failed'; message: string };

const data = await threadData<WorkerData>();
const port = parentPort!;
const send = (m: FromWorker): void => port.postMessage(m);
// A request's line goes out with others, in writes of 4 KiB or every 250 ms: written one at a
// time, each line costs a write handed to libuv's thread pool.
const logDestination = pino.destination({ dest: 1, minLength: 4096, sync: false });
setInterval(() => logDestination.flush(), 250).unref();
process.on('exit', () => {
  try {
    logDestination.flushSync();
  } catch {
    // The destination closed or never opened: nothing can be written there any more.
  }
});
const log = pino({ level: data.logLevel }, logDestination).child({ worker: threadId });

const replica = new CatalogReplica();
/** The slices of the view to come. */
const assembly = new ViewAssembly();
const takeSlice = (slice: ViewSlice): void => {
  assembly.add(slice);
  send({ type: 'taken' });
};

// Charges and the open operations' writes go to the ledger thread; each waits for its answer there.
let ledgerPort: MessagePort;
let asks = 0;
/**
 * Once stopping, the port to the ledger thread keeps the thread alive only while an answer is
 * awaited there: the connection that waits for it is paused (not read), which does not, and a
 * thread that ends with a uWS socket still open aborts the process (libuv's loop close check).
 */
let stopping = false;
const awaiting = new Map<number, { resolve: (o: never) => void; reject: (e: Error) => void }>();
/** False from the ledger thread's end until the pool sends the port of the one it starts instead. */
let ledgerPortOpen = true;
function failAwaiting(message: string): void {
  for (const a of awaiting.values()) a.reject(new LedgerUnavailableError(message));
  awaiting.clear();
}
function useLedgerPort(port: MessagePort): void {
  failAwaiting('The ledger thread restarted; retry.');
  ledgerPort = port;
  ledgerPortOpen = true;
  // The ledger thread ended (it failed; during a stop it is not restarted): what waits for it is
  // answered 503 now, not after a restart, and never left with its connection paused.
  port.on('close', () => {
    if (port !== ledgerPort) return;
    ledgerPortOpen = false;
    failAwaiting('The ledger thread stopped; retry shortly.');
  });
  port.on('message', (m: ChargeReply) => {
    const a = awaiting.get(m.id);
    if (!a) return;
    awaiting.delete(m.id);
    if (stopping && awaiting.size === 0) ledgerPort.unref();
    if (m.type === 'charged') a.resolve(m.outcomes as never);
    else if (m.type === 'written') a.resolve(m.result as never);
    else
      a.reject(m.unavailable ? new LedgerUnavailableError(m.message) : m.code ? new LedgerError(m.code, m.message) : new Error(m.message));
  });
}
useLedgerPort(data.ledgerPort);

function ask<T>(message: (id: number) => ChargeRequest | WriteRequest): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    if (!ledgerPortOpen) {
      reject(new LedgerUnavailableError('The ledger thread is starting again; retry shortly.'));
      return;
    }
    const id = ++asks;
    try {
      ledgerPort.postMessage(message(id));
    } catch (err) {
      reject(err); // not sent (a value that cannot be cloned): nothing to wait for
      return;
    }
    awaiting.set(id, { resolve: resolve as (o: never) => void, reject });
    // A keep-alive connection may still bring a request after the stop (ledgerPort unreferenced).
    if (stopping) ledgerPort.ref();
  });
}
// At the end of the turn, as a charged page: a request abandoned by then (uWS closed its
// connection on a request pipelined behind it) writes nothing, as nothing would answer it.
const writePublic: WritePublic = (abandoned, op, ...args) =>
  new Promise((resolve, reject) =>
    setImmediate(() => {
      if (abandoned()) reject(ABANDONED);
      else ask<never>((id) => ({ type: 'write', id, op, args })).then(resolve, reject);
    }),
  );

const ledger = Ledger.open(data.config.ledgerPath, {
  perKeyPerMinute: data.config.perKeyPerMinute,
  dailyQuota: data.config.dailyQuota,
  keyLimiterTable: data.keyLimiterTable,
  writeLock: data.writeLock,
  quotaTable: data.quotaTable,
  openingsTable: data.openingsTable,
  persistQuota: false,
});
const charges = new PageCharges(ledger, {
  remote: (pages: ChargePage[]) => ask<ChargeOutcome[]>((id) => ({ type: 'charge', id, pages })),
  remoteReady: () => ledgerPortOpen,
});
process.on('exit', () => ledger.close());

type Server = Awaited<ReturnType<typeof startServer>>;
let server: Server | null = null;
/** Asked before the server listens: answered once it does. */
const beforeListening: ToWorker[] = [];

function act(on: Server, m: ToWorker): void {
  switch (m.type) {
    case 'metrics':
      void on.metrics.registry.getMetricsAsJSON().then((json) => send({ type: 'metrics', id: m.id, json }));
      break;
    case 'close':
      // The thread ends once its connections are gone: each closes after its next response, and
      // those still open at the end of the grace are closed. It is never terminated from
      // outside while it may be inside SQLite: that aborts the whole process.
      if (m.now) {
        on.closeConnections();
      } else {
        on.close();
        port.unref();
        stopping = true;
        if (awaiting.size === 0) ledgerPort.unref();
      }
      break;
  }
}

// One listener from the start: a message that arrives in the same batch as the first view is
// never lost between two listeners.
let viewArrived = (): void => {};
const firstView = data.published ? null : new Promise<void>((resolve) => (viewArrived = resolve));
port.on('message', (m: ToWorker) => {
  switch (m.type) {
    case 'view-slice':
      takeSlice(m.slice);
      break;
    case 'view':
      replica.apply(assembly.join(m.published));
      send({ type: 'taken' });
      viewArrived();
      break;
    case 'ledger-port':
      useLedgerPort(m.port);
      break;
    case 'metrics':
    case 'close':
      if (server) act(server, m);
      else beforeListening.push(m);
      break;
  }
});

try {
  // A worker started while the catalog loads waits for its first view (worker-pool.ts).
  if (data.published) replica.apply(data.published);
  else await firstView;
  server = await startServer({
    config: data.config,
    catalog: replica,
    ledger,
    log,
    limiterTables: data.limiterTables,
    writePublic,
    charges,
    sharedBuildings: data.sharedBuildings ?? undefined,
    sharedPort: true,
    thread: `http-${threadId}`,
  });
  for (const m of beforeListening.splice(0)) act(server, m);
  send({ type: 'listening', port: server.port, implementation: server.implementation });
} catch (err) {
  send({ type: 'failed', message: (err as Error).message });
  port.close();
}
