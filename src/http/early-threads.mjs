// The ledger thread and the workers, started by bin/start.mjs before the main thread loads its
// own code: they load their bundles on the other core meanwhile, rather than later beside the
// snapshot's checks. They wait for their data (worker-pool.ts) on a port of their own
// (thread-data.ts). Plain JavaScript, shared through globalThis: bin/start.mjs imports this file,
// the main thread's bundle holds its own copy.
import { availableParallelism } from 'node:os';
import process from 'node:process';
import { MessageChannel, Worker } from 'node:worker_threads';
import { threadArgv } from '../thread-argv.mjs';

const KEY = Symbol.for('edifice.earlyThreads');

/**
 * @typedef {{ thread: Worker; port: import('node:worker_threads').MessagePort }} EarlyThread
 * @typedef {'ledger' | 'worker'} EarlyKind
 * @typedef {Record<EarlyKind, EarlyThread[]>} EarlyThreads
 */

/**
 * Starts the threads a server on a SQLite ledger with workers will use (EDIFICE_WORKERS not 0,
 * EDIFICE_LEDGER no PostgreSQL URL); the main thread's configuration decides the rest, and stops
 * them should it not take them (`dropEarlyThreads`).
 * @param {{ worker: URL; ledger: URL }} code the threads' bundles
 */
export function startEarlyThreads(code, env = process.env) {
  const workers = env.EDIFICE_WORKERS === undefined || env.EDIFICE_WORKERS === '' ? availableParallelism() : Number(env.EDIFICE_WORKERS);
  // As config.ts allows: a value it refuses ends the process before the threads are wanted.
  if (!(Number.isInteger(workers) && workers >= 1 && workers <= 256) || /^postgres(ql)?:\/\//i.test(env.EDIFICE_LEDGER ?? '')) return;
  const execArgv = threadArgv();
  /** @type {(url: URL, name: string) => EarlyThread} */
  const start = (url, name) => {
    const { port1, port2 } = new MessageChannel();
    const thread = new Worker(url, { workerData: { early: port2 }, transferList: [port2], name, execArgv });
    // Until the pool takes it and listens itself: a thread that failed is then found ended and started anew.
    thread.on('error', () => undefined);
    return { thread, port: port1 };
  };
  /** @type {Record<symbol, EarlyThreads>} */ (globalThis)[KEY] = {
    ledger: [start(code.ledger, 'edifice-ledger')],
    worker: Array.from({ length: workers }, () => start(code.worker, 'edifice-http')),
  };
}

/**
 * An early thread of that kind, each once (undefined when none is left): the caller posts its
 * data on `port`. One that has ended is passed over.
 * @param {EarlyKind} kind
 * @returns {EarlyThread | undefined}
 */
export function takeEarlyThread(kind) {
  const threads = /** @type {Record<symbol, EarlyThreads | undefined>} */ (globalThis)[KEY];
  for (let early = threads?.[kind].shift(); early; early = threads?.[kind].shift()) {
    if (early.thread.threadId !== -1) return early;
    early.port.close();
  }
  return undefined;
}

/** Stops the early threads nobody took (a server that serves on its main thread, or on PostgreSQL). */
export function dropEarlyThreads() {
  for (const kind of /** @type {EarlyKind[]} */ (['ledger', 'worker'])) {
    for (let early = takeEarlyThread(kind); early; early = takeEarlyThread(kind)) {
      early.port.close();
      void early.thread.terminate();
    }
  }
}
