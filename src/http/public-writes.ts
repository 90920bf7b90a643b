/**
 * The writes of the open operations (public-requests.ts): country and removal requests, report
 * orders and their payment. On a worker thread they go to the ledger thread, the one writer
 * (worker.ts, ledger-thread.ts), so that the worker goes on serving while a write waits for the
 * file's write lock (held by a commit, or by another process for up to the busy timeout: a
 * worker that wrote itself stopped answering everyone for as long). Otherwise the Ledger of
 * the thread runs them.
 */
import type { Ledger, LedgerEngine } from '../ledger/index.ts';
import { ABANDONED } from './page-charges.ts';

/** The writes, by the name of their Ledger method. */
export const PUBLIC_WRITES = ['addCountryRequest', 'addRemovalRequest', 'createReportOrder', 'markReportPaid'] as const;
export type PublicWrite = (typeof PUBLIC_WRITES)[number];

/**
 * Runs one of the writes with the Ledger method's arguments; resolves with its result. A write
 * whose request is `abandoned()` (its connection closed) before it is sent rejects with ABANDONED
 * and writes nothing.
 */
export type WritePublic = <K extends PublicWrite>(
  abandoned: () => boolean,
  op: K,
  ...args: Parameters<Ledger[K]>
) => Promise<ReturnType<Ledger[K]>>;

/** WritePublic on this thread's Ledger, at once (the answer goes out before another request is read). */
export function writeHere(ledger: Ledger): WritePublic {
  return (_abandoned, op, ...args) =>
    new Promise((resolve) => resolve((ledger[op] as (...a: typeof args) => ReturnType<Ledger[typeof op]>)(...args)));
}

/** WritePublic on a ledger that answers later (PostgreSQL): a request abandoned before it is sent writes nothing. */
export function writeOn(ledger: LedgerEngine): WritePublic {
  return (abandoned, op, ...args) => {
    if (abandoned()) return Promise.reject(ABANDONED);
    const run = ledger[op] as unknown as (...a: typeof args) => Promise<never>;
    return run.apply(ledger, args);
  };
}
