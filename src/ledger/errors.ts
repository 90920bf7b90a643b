/**
 * Errors of the ledger. Caller mistakes are TypeError/RangeError; a missing or conflicting
 * record is a LedgerError with a stable `code`; a ledger that cannot be used right now (locked
 * past the busy timeout, disk full or failing, file unreadable, connection closed) is a
 * LedgerUnavailableError, which the HTTP layer answers with 503 `unavailable` and Retry-After.
 */
export type LedgerErrorCode = 'not_found' | 'conflict' | 'invalid_state';

export class LedgerError extends Error {
  constructor(
    readonly code: LedgerErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'LedgerError';
  }
}

export class LedgerUnavailableError extends Error {
  readonly status = 503;
  readonly code = 'unavailable';
  constructor(
    message: string,
    readonly retryAfterS = 1,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'LedgerUnavailableError';
  }
}

// SQLite result codes (primary, so extended codes such as SQLITE_IOERR_FSYNC match too) that
// mean "the ledger cannot serve now", as opposed to a bug such as a constraint violation.
const UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|IOERR|FULL|CANTOPEN|READONLY|PROTOCOL|NOTADB|CORRUPT|NOMEM|NOLFS|AUTH)(_|$)/;

/** The LedgerUnavailableError that `err` amounts to, or null when it is something else. */
export function asUnavailable(err: unknown): LedgerUnavailableError | null {
  if (err instanceof LedgerUnavailableError) return err;
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && UNAVAILABLE.test(code)) {
    return new LedgerUnavailableError(`Ledger unavailable (${code}).`, 1, { cause: err });
  }
  // better-sqlite3 throws a TypeError once the connection is closed (e.g. during shutdown).
  if (err instanceof TypeError && /database connection is not open/.test(err.message)) {
    return new LedgerUnavailableError('Ledger closed.', 1, { cause: err });
  }
  return null;
}

export function isLedgerUnavailable(err: unknown): err is LedgerUnavailableError {
  return err instanceof LedgerUnavailableError;
}
