/**
 * A catalog served by a worker thread: it loads nothing itself, it mirrors the views the owning
 * Catalog publishes in the main thread. Each published view names its snapshots by serial; a
 * snapshot the replica has not seen comes with its transfer (transfer.ts) and is rebuilt over the
 * same shared memory, one it has seen is reused, one no longer named is let go. Replacing the view
 * is one assignment, so a query holds the view it captured, as with the Catalog.
 */
import type { CatalogSource, CatalogView, CountryReport } from './catalog.ts';
import type { RemovalSet } from './removals.ts';
import type { Snapshot } from './snapshot.ts';
import { fromTransfer, type SnapshotTransfer } from './transfer.ts';

/** One published view, as posted to the workers. */
export interface PublishedView {
  /** In the view's order; `transfer` is given when a receiver may not have the snapshot yet. */
  snapshots: { serial: number; transfer?: SnapshotTransfer }[];
  report: CountryReport[];
  removals: RemovalSet;
}

export class CatalogReplica implements CatalogSource {
  private current: CatalogView = Object.freeze({ snapshots: Object.freeze([]) });
  private reported: CountryReport[] = [];
  private removalSet: RemovalSet = { businessIds: new Set(), registrationNumbers: new Set() };
  private bySerial = new Map<number, Snapshot>();

  view(): CatalogView {
    return this.current;
  }

  report(): CountryReport[] {
    return this.reported;
  }

  removals(): RemovalSet {
    return this.removalSet;
  }

  /** Serves `published` from now on. Throws when a snapshot it has not seen comes without its transfer. */
  apply(published: PublishedView): void {
    const next = new Map<number, Snapshot>();
    const snapshots = published.snapshots.map(({ serial, transfer }) => {
      let s = this.bySerial.get(serial);
      if (!s) {
        if (!transfer) throw new Error(`snapshot ${serial} was published without its transfer`);
        s = fromTransfer(transfer);
      }
      next.set(serial, s);
      return s;
    });
    this.bySerial = next;
    this.reported = published.report;
    this.removalSet = published.removals;
    this.current = Object.freeze({ snapshots: Object.freeze(snapshots) });
  }
}
