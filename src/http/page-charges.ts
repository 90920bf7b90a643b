/**
 * How a serving thread has its pages charged: pages that cost credits and arrive in the same turn
 * of the event loop are sent together at its end (group commit: one transaction, one fsync), on
 * this thread's ledger or to the thread that charges. Transport concerns stay here, not in the
 * ledger: a page whose request was abandoned by the end of its turn is not sent at all.
 *
 * Sent at the end of the turn, never at once: uWebSockets.js closes a connection when a request
 * arrives behind one not yet answered (no pipelining behind an answer that waits), and it does so
 * while reading them, in the same turn; a page sent at once would be paid for and never received.
 */
import { asUnavailable, type ChargeOutcome, type ChargePage, type ChargeResult } from '../ledger/index.ts';

/** What `chargeSoon` tells a page that was not charged because its request was abandoned first. */
export const ABANDONED = new Error('The request was abandoned before its page was charged; nothing was charged.');

/** What the charges need of a ledger (the SQLite Ledger). */
export interface PageLedger {
  /** The answer to a page that costs nothing, known without a transaction; null when it must be charged. */
  free(workspaceId: string, buildingIds: readonly string[], route: string): ChargeResult | null;
  chargePages(pages: readonly ChargePage[]): ChargeOutcome[];
}

export interface PageChargesOptions {
  /**
   * Where the pages that cost credits go instead of this thread's ledger: the ledger thread, or
   * PostgreSQL (fleet-ledger.ts), which may refuse some pages of a batch (an Error in their place).
   */
  remote?: (pages: ChargePage[]) => Promise<(ChargeOutcome | Error)[]>;
  /** With `remote`: false while the thread that charges cannot be reached (restarting). */
  remoteReady?: () => boolean;
}

export class PageCharges {
  private batch: { page: ChargePage; done: (result: ChargeResult | Error) => void; abandoned?: () => boolean }[] = [];

  constructor(
    private readonly ledger: PageLedger,
    private readonly options: PageChargesOptions = {},
  ) {}

  /** Whether the pages can be charged now (for /readyz). */
  ready(): boolean {
    return this.options.remoteReady?.() ?? true;
  }

  /**
   * Charges like Ledger.charge, grouped with the other pages of this turn; `done` is called once
   * committed (or with the error that rolled it back, or ABANDONED). A page that costs nothing is
   * answered before this returns. Returns whether `done` was already called.
   */
  chargeSoon(
    workspaceId: string,
    keyId: string | null,
    buildingIds: readonly string[],
    route: string,
    done: (result: ChargeResult | Error) => void,
    abandoned?: () => boolean,
    maxCredits?: number,
  ): boolean {
    const free = this.ledger.free(workspaceId, buildingIds, route);
    if (free) {
      done(free);
      return true;
    }
    const page: ChargePage =
      maxCredits === undefined ? { workspaceId, keyId, buildingIds, route } : { workspaceId, keyId, buildingIds, route, maxCredits };
    this.batch.push({ page, done, abandoned });
    if (this.batch.length === 1) setImmediate(this.commit);
    return false;
  }

  private readonly commit = (): void => {
    let batch = this.batch;
    this.batch = [];
    if (batch.some((b) => b.abandoned?.())) {
      for (const b of batch) if (b.abandoned?.()) b.done(ABANDONED);
      batch = batch.filter((b) => !b.abandoned?.());
      if (batch.length === 0) return;
    }
    const pages = batch.map((b) => b.page);
    const fail = (err: unknown): void => {
      const e = asUnavailable(err) ?? (err instanceof Error ? err : new Error(String(err)));
      for (const b of batch) b.done(e);
    };
    const remote = this.options.remote;
    if (remote) {
      remote(pages).then((outcomes) => {
        for (let i = 0; i < batch.length; i++) {
          const o = outcomes[i];
          batch[i].done(o instanceof Error ? (asUnavailable(o) ?? o) : o.result);
        }
      }, fail);
      return;
    }
    let outcomes: ChargeOutcome[];
    try {
      outcomes = this.ledger.chargePages(pages);
    } catch (err) {
      return fail(err);
    }
    for (let i = 0; i < batch.length; i++) batch[i].done(outcomes[i].result);
  };
}
