import type { MessagePort, Worker } from 'node:worker_threads';

/** A thread started before the main thread's code loaded, and the port its data goes to (early-threads.mjs). */
export interface EarlyThread {
  thread: Worker;
  port: MessagePort;
}
export type EarlyKind = 'ledger' | 'worker';

export function startEarlyThreads(code: { worker: URL; ledger: URL }, env?: NodeJS.ProcessEnv): void;
/** An early thread of that kind, each once; undefined when none is left. */
export function takeEarlyThread(kind: EarlyKind): EarlyThread | undefined;
export function dropEarlyThreads(): void;
