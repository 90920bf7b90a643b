/**
 * One server per ledger file. Two servers on one ledger would each count the day's quota and
 * the per-key limits alone, so every limit would double. The server holds an exclusive SQLite
 * lock on a small file beside the ledger (`<ledger>.server-lock`) for as long as it runs: the
 * operating system releases it when the process ends, however it ends (a kill -9 leaves no stale
 * lock). The ledger itself is not locked: the admin CLI and the server's own threads open it as before.
 */
import { basename, dirname, join } from 'node:path';
import { realpathSync } from 'node:fs';
import Database from 'better-sqlite3';
import { makeFolder } from '../folders.ts';
import { isMemoryPath } from './db.ts';

export const SERVER_LOCK_SUFFIX = '.server-lock';

export class LedgerInUseError extends Error {
  override name = 'LedgerInUseError';
}

export interface ServerLock {
  readonly path: string;
  release(): void;
}

/** Takes the lock of the ledger at `ledgerPath`, or throws LedgerInUseError when another process holds it. */
export function lockLedger(ledgerPath: string): ServerLock {
  if (isMemoryPath(ledgerPath)) return { path: ledgerPath, release() {} };
  makeFolder(dirname(ledgerPath));
  // The folder's real path: the same ledger reached through a symbolic link has the same lock.
  const path = join(realpathSync(dirname(ledgerPath)), basename(ledgerPath) + SERVER_LOCK_SUFFIX);
  const db = new Database(path, { timeout: 0 });
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE');
  } catch (err) {
    db.close();
    if ((err as { code?: string }).code === 'SQLITE_BUSY') {
      throw new LedgerInUseError(
        `The ledger ${ledgerPath} is in use by another Edifice server (it holds ${path}): stop that one, or set EDIFICE_LEDGER.`,
      );
    }
    throw err;
  }
  return {
    path,
    release() {
      if (!db.open) return;
      db.exec('ROLLBACK');
      db.close();
    },
  };
}
