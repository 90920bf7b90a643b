/**
 * The ledger thread of a server with worker threads (worker-pool.ts): the one place charges are
 * committed, and the open operations' writes (country and removal requests, report orders) done
 * (public-writes.ts). Workers send the pages that cost credits over a MessagePort each; the pages that
 * arrive in one turn of this thread's event loop, from every worker, are charged in one
 * transaction, one after the other, and one fsync makes them durable (group commit); each
 * worker hears its pages' outcomes and only then answers its clients. Workers never wait on the
 * database themselves: they go on serving while a commit runs here. What it commits goes into the
 * openings the workers share (ledger/shared-openings.ts), so that they answer the next pages of
 * those buildings themselves; a page they could not, whose buildings this thread knows to be
 * opened, is answered at once, without a commit.
 */
import { parentPort, type MessagePort } from 'node:worker_threads';
import type { Config } from '../config.ts';
import { Ledger, LedgerError, type ChargeOutcome, type ChargePage, type LedgerErrorCode } from '../ledger/index.ts';
import { PUBLIC_WRITES, type PublicWrite } from './public-writes.ts';
import { raiseThreadPriority, type ThreadPriority } from './thread-priority.ts';
import { threadRegistry } from './metrics.ts';
import { threadData } from './thread-data.ts';

export interface LedgerThreadData {
  entry: string;
  config: Config;
  keyLimiterTable: SharedArrayBuffer;
  writeLock: SharedArrayBuffer;
  quotaTable: SharedArrayBuffer;
  openingsTable: SharedArrayBuffer;
}

/** On a worker's port: pages to charge and their outcomes, or a write and its result; or why none came. */
export type ChargeRequest = { type: 'charge'; id: number; pages: ChargePage[] };
export type WriteRequest = { type: 'write'; id: number; op: PublicWrite; args: unknown[] };
export type ChargeReply =
  | { type: 'charged'; id: number; outcomes: ChargeOutcome[] }
  | { type: 'written'; id: number; result: unknown }
  /** `code`: a LedgerError's, which the worker gives back as one. */
  | { type: 'failed'; id: number; unavailable: boolean; message: string; code?: LedgerErrorCode };

/** From the ledger thread once it can charge: the openings it read, those it shared, how long that took, and its priority. */
export type LedgerThreadReady = ReturnType<Ledger['loadOpenings']> & { priority: ThreadPriority };

/** To the ledger thread from the pool: a new worker's port, a metrics poll, or the stop. */
export type ToLedgerThread = { type: 'port'; port: MessagePort } | { type: 'metrics'; id: number } | { type: 'close' };

/** This thread's metrics (process and runtime, labelled thread="ledger"), for the pool's sum. */
export type LedgerThreadMetrics = { type: 'metrics'; id: number; json: unknown };

const data = await threadData<LedgerThreadData>();
const priority = raiseThreadPriority(data.config.ledgerPriority);
const ledger = Ledger.open(data.config.ledgerPath, {
  perKeyPerMinute: data.config.perKeyPerMinute,
  dailyQuota: data.config.dailyQuota,
  keyLimiterTable: data.keyLimiterTable,
  writeLock: data.writeLock,
  quotaTable: data.quotaTable,
  openingsTable: data.openingsTable,
  persistQuota: false,
});
// Before 'ready', so that no worker's first page waits for them, nor goes to this thread for
// buildings opened before the server started.
const ready: LedgerThreadReady = { ...ledger.loadOpenings(), priority };

/** Requests waiting for the next commit, with the outcomes of their pages already known (null: to charge). */
let queue: { port: MessagePort; request: ChargeRequest; known: (ChargeOutcome | null)[] }[] = [];
const ports = new Set<MessagePort>();

function commit(): void {
  const batch = queue;
  queue = [];
  const pages = batch.flatMap((b) => b.request.pages.filter((_, i) => b.known[i] === null));
  let outcomes: ChargeOutcome[];
  try {
    outcomes = ledger.chargePages(pages);
  } catch (err) {
    for (const b of batch) b.port.postMessage(failed(b.request.id, err));
    return;
  }
  let at = 0;
  for (const b of batch) {
    b.port.postMessage({ type: 'charged', id: b.request.id, outcomes: b.known.map((o) => o ?? outcomes[at++]) } satisfies ChargeReply);
  }
}

/**
 * A page whose buildings this thread knows to be opened costs nothing and needs no commit: it is
 * answered at once rather than after the next transaction and its fsync (a worker sends one when
 * its shared table has forgotten those openings, or does not hold ids of their form).
 */
function knownFree(page: ChargePage): ChargeOutcome | null {
  try {
    return ledger.knownFree(page);
  } catch {
    return null; // the transaction says what is wrong with it
  }
}

const failed = (id: number, err: unknown): ChargeReply => {
  const e = err instanceof Error ? err : new Error(String(err));
  return {
    type: 'failed',
    id,
    unavailable: e.name === 'LedgerUnavailableError',
    message: e.message,
    code: e instanceof LedgerError ? e.code : undefined,
  };
};

/** A write of the open operations, at once: it is its own transaction. */
function write(port: MessagePort, request: WriteRequest): void {
  let reply: ChargeReply;
  try {
    if (!PUBLIC_WRITES.includes(request.op)) throw new Error(`Unknown write ${String(request.op)}.`);
    const run = ledger[request.op] as (...args: unknown[]) => unknown;
    reply = { type: 'written', id: request.id, result: run.apply(ledger, request.args) };
  } catch (err) {
    reply = failed(request.id, err);
  }
  port.postMessage(reply);
}

function listen(port: MessagePort): void {
  ports.add(port);
  port.on('message', (request: ChargeRequest | WriteRequest) => {
    if (request.type === 'write') return write(port, request);
    const known = request.pages.map(knownFree);
    if (known.every((o) => o !== null)) {
      port.postMessage({ type: 'charged', id: request.id, outcomes: known as ChargeOutcome[] } satisfies ChargeReply);
      return;
    }
    if (queue.length === 0) setImmediate(commit);
    queue.push({ port, request, known });
  });
  port.on('close', () => ports.delete(port));
}

const metrics = threadRegistry('ledger');
parentPort!.on('message', (m: ToLedgerThread) => {
  if (m.type === 'port') listen(m.port);
  else if (m.type === 'metrics') {
    void metrics
      .getMetricsAsJSON()
      .then((json) => parentPort!.postMessage({ type: 'metrics', id: m.id, json } satisfies LedgerThreadMetrics));
  } else {
    for (const p of ports) p.close();
    parentPort!.close();
  }
});
process.on('exit', () => ledger.close());
parentPort!.postMessage(ready);
