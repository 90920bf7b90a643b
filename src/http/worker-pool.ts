/**
 * Serving with several worker threads (one per core by default). The main thread owns the
 * catalog (loading, hot swap, removals) and the demo setup; each worker runs the whole HTTP app.
 *
 * - Started before the catalog: `spawnWorkers` starts the ledger thread and the workers (or takes
 *   those bin/start.mjs started earlier, early-threads.mjs), which load their code (bundles,
 *   code-bundles.mjs) while the main thread loads the snapshots; `serve` then gives them the view,
 *   on which each warms up and listens, and the pool serves from the first that listens
 *   (`allListening` once all do). Warmed up one after the other, the first would listen sooner,
 *   but the next one's warm-up would then stall the first's answers, hundreds of ms at p99 in the
 *   first second on two cores.
 * - One port: every worker listens on the same port with SO_REUSEPORT and the kernel spreads
 *   connections over them. The pool first takes the port exclusively, which fails when another
 *   server listens there, and holds it until its workers listen (port.ts); a configured port 0
 *   becomes the free port it took.
 * - One copy of the data: snapshots travel as transfers whose columns are SharedArrayBuffers
 *   (catalog/transfer.ts); each published view (a load, a swap, new removals) reaches every worker.
 * - With more than one worker, one store of encoded buildings (fragment-cache.ts): each worker
 *   writes its own region of it (EDIFICE_FRAGMENT_CACHE_MB, as a store of its own would be) and
 *   reads every region; a worker started instead of one that ended takes over its region.
 * - Exact limits: the per-key and per-address limiter tables and the daily quota's counters are
 *   SharedArrayBuffers used by all (the main thread's Ledger writes the counts to the file).
 * - Exact credits: workers read the ledger file themselves (keys, balances) and hand the pages
 *   that cost credits to one ledger thread (ledger-thread.ts), which commits those of every
 *   worker together (group commit) while the workers go on serving; a worker answers a page once
 *   its charge has committed. The ledger thread writes what it commits into a table of openings
 *   in shared memory (ledger/shared-openings.ts), from which every worker answers free pages.
 *   Writers queue on one shared lock (ledger/write-lock.ts) rather than in SQLite's sleeping
 *   busy handler.
 * - Metrics: metricsText() sums the registries of every thread (prom-client's aggregation), for
 *   the operator port (metrics-server.ts).
 */
import { fileURLToPath } from 'node:url';
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { Catalog, CatalogView } from '../catalog/catalog.ts';
import type { PublishedView } from '../catalog/replica.ts';
import { toTransfer } from '../catalog/transfer.ts';
import { sliceView } from '../catalog/view-slices.ts';
import type { Config } from '../config.ts';
import { BUSY_TIMEOUT_MS, type Ledger } from '../ledger/index.ts';
import { SharedOpenings } from '../ledger/shared-openings.ts';
import { addressLimiterTables, addressLimiters } from './address-limits.ts';
import { fragmentCacheMemory } from './fragment-cache.ts';
import { holdPort } from './port.ts';
import { codeBundles } from '../code-bundles.mjs';
import { takeEarlyThread, type EarlyKind } from './early-threads.mjs';
import { threadArgv } from '../thread-argv.mjs';
import { fallbackRefusal, uwsImplementation } from './uws.ts';
import type { LedgerThreadData, LedgerThreadMetrics, LedgerThreadReady, ToLedgerThread } from './ledger-thread.ts';
import type { Registry } from 'prom-client';
import { promClient, threadRegistry } from './metrics.ts';
import type { FromWorker, ToWorker, WorkerData } from './worker.ts';

const BOOT = new URL('./thread-boot.mjs', import.meta.url);
const ENTRY = new URL('./worker.ts', import.meta.url).href;
const LEDGER_ENTRY = new URL('./ledger-thread.ts', import.meta.url).href;

/** What a thread starts from: its bundle, or the TypeScript through tsx's loader (thread-boot.mjs, which imports `entry`). */
interface ThreadCode {
  worker: URL;
  ledger: URL;
  /**
   * Node's options for the threads: for a bundle, those of threadArgv (thread-argv.mjs); V8's
   * flags, such as --single-threaded-gc, are the process's whatever a thread is given.
   */
  execArgv?: string[];
}
/** Waits between attempts to start the ledger thread again after one failed: doubling from the first, at most the last. */
const RESTART_FIRST_MS = 250;
const RESTART_MAX_MS = 5_000;

export interface ThreadOptions {
  config: Config;
  /** The main thread's ledger: its per-key limiter table is the one every worker shares. */
  ledger: Ledger;
  log: Logger;
  workers: number;
}

export interface WorkerPoolOptions extends ThreadOptions {
  catalog: Catalog;
}

/** Threads started before the catalog is loaded: they load their modules while it loads. */
export interface StartingPool {
  /** Sends the catalog's view to the workers, which warm up on it and listen; settles once the first listens. */
  serve(catalog: Catalog): Promise<WorkerPool>;
}

export interface WorkerPool {
  port: number;
  implementation: string;
  workers: number;
  /** Settles once every worker of the start listens (or failed to start, which is logged); the pool serves from the first. */
  allListening(): Promise<void>;
  /** Workers listening now. */
  readonly listening: number;
  /** The Prometheus text of every thread's metrics, summed. */
  metricsText(): Promise<string>;
  /** Stops accepting, waits up to `graceMs` for open connections to finish, then ends the threads. */
  close(graceMs?: number): Promise<void>;
}

/** Whether `done` settles within `ms`. */
async function within(done: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(resolve, ms, false);
  });
  try {
    return await Promise.race([done.then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
}

export async function startWorkers(options: WorkerPoolOptions): Promise<WorkerPool> {
  return (await spawnWorkers(options)).serve(options.catalog);
}

/**
 * Takes the port and starts the ledger thread and the workers, which load their modules and then
 * wait for the catalog: a start loads the snapshots on this thread while they do.
 */
export async function spawnWorkers(options: ThreadOptions): Promise<StartingPool> {
  if (!Number.isInteger(options.workers) || options.workers < 1)
    throw new RangeError(`workers must be at least 1, got ${options.workers}.`);
  // The JS fallback cannot serve (uws.ts): said before anything binds the port with it.
  if (uwsImplementation !== 'native') throw new Error(fallbackRefusal());
  const held = await holdPort(options.config.host, options.config.port);
  let starting: StartingPool;
  try {
    const entries = [fileURLToPath(ENTRY), fileURLToPath(LEDGER_ENTRY)];
    const code = await codeBundles(entries).then(
      (bundles): ThreadCode => ({ worker: bundles.get(entries[0])!, ledger: bundles.get(entries[1])!, execArgv: threadArgv() }),
      (err: unknown): ThreadCode => {
        options.log.warn(
          { err: (err as Error).message },
          "the threads' code could not be bundled: they load the TypeScript, which starts them slower",
        );
        return { worker: BOOT, ledger: BOOT };
      },
    );
    starting = startHolding(options, held.port, code);
  } catch (err) {
    held.release();
    throw err;
  }
  return {
    serve: async (catalog) => {
      try {
        return await starting.serve(catalog);
      } finally {
        held.release();
      }
    },
  };
}

function startHolding(options: ThreadOptions, port: number, code: ThreadCode): StartingPool {
  const { ledger, log } = options;
  /** Known once the pool serves; a worker started before it waits for its first view. */
  let catalog: Catalog | null = null;
  const config = { ...options.config, port };
  const limiterTables = addressLimiterTables(addressLimiters());
  // One worker has no one to share with: it keeps a store of its own in plain memory, as a server without workers does.
  const buildings = options.workers > 1 ? fragmentCacheMemory(config.fragmentCacheMb * 2 ** 20, options.workers) : null;
  const openings = new SharedOpenings(SharedOpenings.slotsWithin(config.sharedOpeningsMb * 2 ** 20));
  log.info(
    { mib: Math.round(openings.buffer.byteLength / 2 ** 20), openings: openings.capacity },
    'a table of the latest openings shared by the workers',
  );
  /** Every worker thread started and not ended: those listening and those starting. */
  const live = new Set<Worker>();
  const listening = new Set<Worker>();
  let closing = false;
  let implementation = '';

  /** The view as posted to workers; transfers only of snapshots some worker may not have. */
  let known = new Set<number>();
  const published = (view: CatalogView, full: boolean): PublishedView => ({
    snapshots: view.snapshots.map((s) =>
      full || !known.has(s.serial) ? { serial: s.serial, transfer: toTransfer(s) } : { serial: s.serial },
    ),
    report: catalog!.report(),
    removals: catalog!.removals(),
  });
  const post = (w: Worker, m: ToWorker): void => w.postMessage(m);
  /**
   * Per worker, the messages of views still to post, in order, each once the worker has taken the
   * one before ('taken'): a view's slices go one at a time (view-slices.ts), so that it serves
   * between them. A worker's entry is gone once it has taken everything posted to it.
   */
  const outbox = new Map<Worker, ToWorker[]>();
  const drained = new Map<Worker, (() => void)[]>();
  const sendNext = (w: Worker): void => {
    const m = outbox.get(w)?.shift();
    if (m) return post(w, m);
    outbox.delete(w);
    for (const done of drained.get(w)?.splice(0) ?? []) done();
  };
  /** Settles once `w` has taken every view posted to it. */
  const drainedOf = (w: Worker): Promise<void> =>
    new Promise((done) => {
      if (!outbox.has(w)) return done();
      const waiting = drained.get(w);
      if (waiting) waiting.push(done);
      else drained.set(w, [done]);
    });
  const send = (w: Worker, messages: ToWorker[]): void => {
    const queue = outbox.get(w);
    if (queue) queue.push(...messages);
    else {
      outbox.set(w, [...messages]);
      sendNext(w);
    }
  };

  // Metrics: every thread answers with its registry (the workers', the ledger thread's, this
  // one's), and the sum is the text (prom-client's aggregation; the thread label keeps each
  // thread's process and runtime metrics apart). A worker still starting answers once it listens.
  // This thread's registry is made at the first poll, so that loading prom-client waits until then.
  let own: Registry | undefined;
  let polls = 0;
  const polling = new Map<number, { parts: unknown[]; waiting: Set<Worker>; done: (text: Promise<string>) => void }>();
  const settle = (id: number): void => {
    const poll = polling.get(id)!;
    if (poll.waiting.size > 0) return;
    polling.delete(id);
    const { AggregatorRegistry } = promClient();
    poll.done(AggregatorRegistry.aggregate(poll.parts as Parameters<typeof AggregatorRegistry.aggregate>[0]).metrics());
  };
  const metricsText = async (): Promise<string> => {
    own ??= threadRegistry('main');
    const mine = await own.getMetricsAsJSON();
    return new Promise<string>((done) => {
      const id = ++polls;
      const ledgerUp = ledgerThread !== undefined && ledgerThread.threadId !== -1;
      const waiting = new Set([...live, ...(ledgerUp ? [ledgerThread] : [])]);
      polling.set(id, { parts: [mine], waiting, done });
      for (const x of live) post(x, { type: 'metrics', id });
      if (ledgerUp) ledgerThread.postMessage({ type: 'metrics', id } satisfies ToLedgerThread);
      settle(id);
    });
  };
  const onMessage = (m: FromWorker | LedgerThreadMetrics, from: Worker): void => {
    if (m.type !== 'metrics') return;
    const poll = polling.get(m.id);
    if (poll?.waiting.delete(from)) {
      poll.parts.push(m.json);
      settle(m.id);
    }
  };
  /** A thread that ended will not answer the polls under way: they finish without it. */
  const forgetThread = (thread: Worker): void => {
    for (const [id, poll] of polling) if (poll.waiting.delete(thread)) settle(id);
  };

  /** The thread bin/start.mjs started early for this (early-threads.mjs), given its data; else a new one. */
  const thread = (kind: EarlyKind, url: URL, data: object, transferList: MessagePort[], name: string): Worker => {
    const early = url === BOOT ? undefined : takeEarlyThread(kind);
    if (!early) return new Worker(url, { workerData: data, transferList, name, execArgv: code.execArgv });
    early.port.postMessage(data, transferList);
    return early.thread;
  };

  // The ledger thread, restarted if it fails; every worker gets a port to it. The far end of a
  // port made while no ledger thread is ready (the first one starting, or one starting again)
  // waits here until one is.
  let ledgerThread: Worker;
  let ledgerServing = false;
  const waitingPorts: MessagePort[] = [];
  const giveLedger = (port: MessagePort): void => ledgerThread.postMessage({ type: 'port', port } satisfies ToLedgerThread, [port]);
  const ledgerPort = (): MessagePort => {
    const { port1, port2 } = new MessageChannel();
    if (ledgerServing) giveLedger(port1);
    else waitingPorts.push(port1);
    return port2;
  };
  const startLedgerThread = (): Promise<void> =>
    new Promise((resolve, reject) => {
      const data: LedgerThreadData = {
        entry: LEDGER_ENTRY,
        config,
        keyLimiterTable: ledger.keyLimiterTable,
        writeLock: ledger.writeLockBuffer,
        quotaTable: ledger.quotaTable,
        openingsTable: openings.buffer,
      };
      const t = thread('ledger', code.ledger, data, [], 'edifice-ledger');
      let started = false;
      t.on('message', (m: LedgerThreadReady | LedgerThreadMetrics) => {
        if ('type' in m) return onMessage(m, t);
        const ready = m;
        started = true;
        ledgerThread = t;
        ledgerServing = true;
        for (const port of waitingPorts.splice(0)) giveLedger(port);
        log.info(ready, 'ledger thread ready (the openings of the last 365 days read into memory, the latest shared with the workers)');
        if (!ready.priority.raised && config.ledgerPriority > 0) {
          log.warn(
            ready.priority,
            'the ledger thread runs at the priority of the workers: under load, paid pages wait longer for their charge',
          );
        }
        resolve();
      });
      t.on('error', (err) => {
        log.error({ err }, 'ledger thread failed');
        if (!started) reject(err);
      });
      t.on('exit', (code) => {
        if (!started) reject(new Error(`the ledger thread exited (code ${code}) before it was ready`));
        if (started) {
          forgetThread(t);
          ledgerServing = false;
        }
        if (closing || !started) return;
        log.error({ code }, 'ledger thread exited; starting another');
        restartLedgerThread(RESTART_FIRST_MS);
      });
    });
  /**
   * Until a ledger thread starts again, paid pages and writes are answered 503 and /readyz says
   * unavailable (the workers have no port to it), so it is tried again and again: what stopped it
   * (the file unreadable a while, the disk full) may pass.
   */
  let restartTimer: NodeJS.Timeout | undefined;
  const restartLedgerThread = (waitMs: number): void => {
    restartTimer = undefined;
    startLedgerThread().then(
      () => {
        // A stop that began meanwhile found the old thread ended and left this one to us.
        if (closing) return ledgerThread.postMessage({ type: 'close' } satisfies ToLedgerThread);
        for (const w of live) {
          const port = ledgerPort();
          w.postMessage({ type: 'ledger-port', port } satisfies ToWorker, [port]);
        }
      },
      (err: unknown) => {
        if (closing) return;
        log.error({ err, retryInMs: waitMs }, 'cannot restart the ledger thread; trying again');
        restartTimer = setTimeout(() => restartLedgerThread(Math.min(2 * waitMs, RESTART_MAX_MS)), waitMs);
      },
    );
  };
  const firstLedger = startLedgerThread();

  const spawn = (region: number): Promise<Worker> =>
    new Promise<Worker>((resolve, reject) => {
      const port = ledgerPort();
      const data: WorkerData = {
        entry: ENTRY,
        config,
        published: catalog && published(catalog.view(), true),
        keyLimiterTable: ledger.keyLimiterTable,
        writeLock: ledger.writeLockBuffer,
        quotaTable: ledger.quotaTable,
        openingsTable: openings.buffer,
        ledgerPort: port,
        limiterTables,
        sharedBuildings: buildings && { memory: buildings, region },
        logLevel: options.log.level,
      };
      const w = thread('worker', code.worker, data, [port], 'edifice-http');
      live.add(w);
      let started = false;
      w.on('message', (m: FromWorker) => {
        if (m.type === 'listening' && !started) {
          started = true;
          implementation = m.implementation;
          listening.add(w);
          resolve(w);
        } else if (m.type === 'failed') {
          reject(new Error(`a worker could not start: ${m.message}`));
        } else if (m.type === 'taken') {
          sendNext(w);
        } else {
          onMessage(m, w);
        }
      });
      w.on('error', (err) => {
        log.error({ err }, 'worker thread failed');
        if (!started) reject(err);
      });
      w.on('exit', (code) => {
        live.delete(w);
        listening.delete(w);
        if (outbox.has(w)) {
          outbox.set(w, []);
          sendNext(w);
        }
        if (!started) reject(new Error(`a worker thread exited (code ${code}) before it listened`));
        forgetThread(w);
        if (closing || !started) return;
        log.error({ code }, 'worker thread exited; starting another');
        spawn(region).catch((err: unknown) => log.error({ err }, 'cannot restart a worker thread'));
      });
    });

  // They load their code while the catalog loads, and warm up together once they have its view.
  const spawned = Array.from({ length: options.workers }, (_, region) => spawn(region));
  // The first to listen serves; should every one fail, the first failure says why.
  const first = Promise.any(spawned).catch((err: AggregateError) => Promise.reject(err.errors[0] as Error));
  const everyListening = Promise.allSettled(spawned).then((outcomes) => {
    for (const outcome of outcomes)
      if (outcome.status === 'rejected') log.error({ err: outcome.reason as Error }, 'a worker thread did not start');
  });
  // Both are awaited in serve(); a failure before it is not an unhandled rejection meanwhile.
  firstLedger.catch(() => undefined);
  first.catch(() => undefined);

  const serve = async (served: Catalog): Promise<WorkerPool> => {
    catalog = served;
    // Whole: they serve nothing yet. Through the outbox, as every later view.
    const whole: ToWorker = { type: 'view', published: published(served.view(), true) };
    for (const w of live) send(w, [whole]);
    known = new Set(served.view().snapshots.map((s) => s.serial));
    // From here every view reaches every worker, those still warming up included.
    served.onPublish((view) => {
      const { skeleton, slices } = sliceView(published(view, false));
      const messages: ToWorker[] = [
        ...slices.map((slice): ToWorker => ({ type: 'view-slice', slice })),
        { type: 'view', published: skeleton },
      ];
      for (const w of live) send(w, messages);
      known = new Set(view.snapshots.map((s) => s.serial));
    });
    await firstLedger;
    const serving = await first;
    // Views published while it started are taken too: serving means serving the latest.
    await drainedOf(serving);
    return pool;
  };

  const pool: WorkerPool = {
    port: config.port,
    get implementation() {
      return implementation;
    },
    workers: options.workers,
    allListening: () => everyListening,
    get listening() {
      return listening.size;
    },
    metricsText,
    async close(graceMs = 5_000) {
      closing = true;
      clearTimeout(restartTimer);
      // Threads are not terminated from outside while they may be inside SQLite: a statement that
      // then fails (a busy timeout) aborts the whole process, and a thread stopped holding the
      // write lock would leave it taken. Each is asked to stop and given the time its longest
      // statement can take (the busy timeout, after waiting for the write lock as long); only a
      // thread stuck beyond that is terminated.
      const stuckMs = 2 * BUSY_TIMEOUT_MS + 1_000;
      // Those still starting listen, then stop.
      const stopping = [...live];
      const exits = stopping.map((w) => new Promise<void>((resolve) => w.once('exit', () => resolve())));
      for (const w of stopping) post(w, { type: 'close', now: false });
      if (!(await within(Promise.all(exits), graceMs))) {
        for (const w of stopping) post(w, { type: 'close', now: true });
        if (!(await within(Promise.all(exits), stuckMs))) {
          log.error({ workers: stopping.length, ms: graceMs + stuckMs }, 'worker threads did not stop; terminating them');
          await Promise.all(stopping.map((w) => w.terminate()));
        }
      }
      // The workers are gone: nothing more to charge. (A thread id of -1: it has ended already.)
      if (ledgerThread.threadId === -1) return;
      const ledgerExit = new Promise<void>((resolve) => ledgerThread.once('exit', () => resolve()));
      ledgerThread.postMessage({ type: 'close' } satisfies ToLedgerThread);
      if (!(await within(ledgerExit, stuckMs))) {
        log.error({ ms: stuckMs }, 'the ledger thread did not stop; terminating it');
        await ledgerThread.terminate();
      }
    },
  };
  return { serve };
}
