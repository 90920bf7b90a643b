/**
 * Keeps a catalog's removals in step with the ledger: approvals are made elsewhere (the admin
 * CLI, another process), so the owner of the catalog looks for new ones every `everyMs` and
 * applies the whole approved set at once. Approvals are final, so a changed count means news.
 */
import type { Logger } from 'pino';
import type { Catalog } from '../catalog/catalog.ts';
import type { Ledger, LedgerEngine } from '../ledger/index.ts';

/** Applies what is approved now, then keeps following; returns the function that stops it. */
export function followRemovals(ledger: Ledger, catalog: Catalog, everyMs: number, log: Logger): () => void {
  let applied = -1;
  const poll = (): void => {
    try {
      const count = ledger.approvedRemovalCount();
      if (count !== applied) {
        catalog.setRemovals(ledger.approvedRemovals());
        applied = count;
      }
    } catch (err) {
      log.warn({ err }, 'cannot read approved removals; will retry');
    }
  };
  poll();
  const timer = setInterval(poll, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}

/** As followRemovals, on a ledger that answers later (PostgreSQL); one poll at a time. */
export function followRemovalsOf(ledger: LedgerEngine, catalog: Catalog, everyMs: number, log: Logger): () => void {
  let applied = -1;
  let polling = false;
  const poll = async (): Promise<void> => {
    if (polling) return;
    polling = true;
    try {
      const count = await ledger.approvedRemovalCount();
      if (count !== applied) {
        catalog.setRemovals(await ledger.approvedRemovals());
        applied = count;
      }
    } catch (err) {
      log.warn({ err }, 'cannot read approved removals; will retry');
    } finally {
      polling = false;
    }
  };
  void poll();
  const timer = setInterval(() => void poll(), everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
