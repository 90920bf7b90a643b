/**
 * The ledger's SQLite file: opening, pragmas and versioned migrations.
 *
 * - WAL, so readers never wait for the writer and several connections (worker threads,
 *   the admin CLI) can share the file.
 * - `synchronous = FULL` on the connection that writes money: better-sqlite3 builds SQLite
 *   with WAL at NORMAL, which can lose a committed charge on power loss.
 * - `busy_timeout`: a connection that finds the write lock taken waits for it instead of
 *   failing at once; every write transaction starts with BEGIN IMMEDIATE, so two connections
 *   never both read a balance and then both debit it.
 * - foreign keys on.
 *
 * Migrations are numbered by `PRAGMA user_version`; each runs in its own BEGIN IMMEDIATE
 * transaction that re-reads the version first, so two processes opening a fresh file at the
 * same time apply each step once.
 */
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { makeFolder } from '../folders.ts';

export type Db = Database.Database;

export interface OpenDbOptions {
  /** How long a statement waits for a lock held by another connection. */
  busyTimeoutMs: number;
  /** FULL for the connection that records charges and grants; NORMAL only for counters. */
  synchronous: 'FULL' | 'NORMAL';
}

export function isMemoryPath(path: string): boolean {
  return path === ':memory:' || path === '';
}

export function openDatabase(path: string, options: OpenDbOptions): Db {
  if (!isMemoryPath(path)) makeFolder(dirname(path));
  const db = new Database(path, { timeout: options.busyTimeoutMs });
  try {
    db.pragma(`busy_timeout = ${Math.floor(options.busyTimeoutMs)}`);
    if (!isMemoryPath(path)) {
      const mode = db.pragma('journal_mode = WAL', { simple: true });
      if (mode !== 'wal') throw new Error(`Ledger ${path}: journal_mode is ${String(mode)}, expected wal.`);
    }
    // After journal_mode: SQLite applies its WAL default unless synchronous was set explicitly.
    db.pragma(`synchronous = ${options.synchronous}`);
    db.pragma('foreign_keys = ON');
    db.pragma('journal_size_limit = 67108864');
    migrate(db);
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}

/**
 * Schema steps, in order; step i brings the file to user_version i + 1. Never edit a step that
 * has shipped: add one.
 */
export const MIGRATIONS: readonly string[] = [
  /* 1: workspaces, members, keys, credits, quota */ `
  CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
  ) WITHOUT ROWID;

  CREATE TABLE workspaces (
    id               TEXT PRIMARY KEY,
    name             TEXT NOT NULL,
    plan             TEXT,                      -- NULL: no plan
    created_at       INTEGER NOT NULL,          -- ms since epoch, as every *_at column
    suspended_at     INTEGER,
    suspended_reason TEXT
  );

  -- One row per membership: a member who leaves keeps the row (left_at set); joining again makes
  -- a new row, so keys created before leaving stay dead.
  CREATE TABLE members (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id),
    email        TEXT NOT NULL,
    joined_at    INTEGER NOT NULL,
    left_at      INTEGER,
    CHECK (left_at IS NULL OR left_at >= joined_at)
  );
  CREATE UNIQUE INDEX members_current ON members(workspace_id, email) WHERE left_at IS NULL;

  CREATE TABLE api_keys (
    id            TEXT PRIMARY KEY,             -- the public key id inside the key
    workspace_id  TEXT NOT NULL REFERENCES workspaces(id),
    member_id     TEXT NOT NULL REFERENCES members(id),
    name          TEXT,
    secret_sha256 BLOB NOT NULL CHECK (length(secret_sha256) = 32),  -- SHA-256 of the whole key
    created_at    INTEGER NOT NULL,
    expires_at    INTEGER,
    revoked_at    INTEGER
  );
  CREATE INDEX api_keys_workspace ON api_keys(workspace_id);
  CREATE INDEX api_keys_member ON api_keys(member_id);

  -- Credits come in grants; remaining is what is left of amount. A grant is usable while
  -- expires_at is NULL or later than now.
  CREATE TABLE grants (
    id           INTEGER PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id),
    kind         TEXT NOT NULL CHECK (kind IN ('welcome', 'plan', 'bought', 'manual')),
    amount       INTEGER NOT NULL CHECK (amount > 0),
    remaining    INTEGER NOT NULL CHECK (remaining >= 0 AND remaining <= amount),
    granted_at   INTEGER NOT NULL,
    expires_at   INTEGER CHECK (expires_at IS NULL OR expires_at > granted_at),
    period       TEXT,                          -- plan grants: YYYY-MM
    plan         TEXT,                          -- plan grants: the plan in force
    note         TEXT,
    CHECK ((kind = 'plan') = (period IS NOT NULL))
  );
  CREATE UNIQUE INDEX grants_welcome_once ON grants(workspace_id) WHERE kind = 'welcome';
  CREATE UNIQUE INDEX grants_plan_once_a_month ON grants(workspace_id, period) WHERE kind = 'plan';
  CREATE INDEX grants_spend_order ON grants(workspace_id, expires_at);

  -- One row per request that cost credits (a request that cost nothing writes no row).
  CREATE TABLE charges (
    id           INTEGER PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id),
    key_id       TEXT REFERENCES api_keys(id),
    route        TEXT NOT NULL,
    at           INTEGER NOT NULL,
    day          TEXT NOT NULL,                 -- UTC day of at, for usage
    buildings    INTEGER NOT NULL CHECK (buildings >= credits),  -- distinct buildings returned
    credits      INTEGER NOT NULL CHECK (credits > 0)
  );
  CREATE INDEX charges_workspace_day ON charges(workspace_id, day);

  -- Which grants paid for a charge, and how much each.
  CREATE TABLE charge_entries (
    charge_id INTEGER NOT NULL REFERENCES charges(id),
    grant_id  INTEGER NOT NULL REFERENCES grants(id),
    credits   INTEGER NOT NULL CHECK (credits > 0),
    PRIMARY KEY (charge_id, grant_id)
  ) WITHOUT ROWID;
  CREATE INDEX charge_entries_grant ON charge_entries(grant_id);

  -- Charged openings only: a building returned free does not extend its 365 days.
  CREATE TABLE openings (
    workspace_id TEXT NOT NULL REFERENCES workspaces(id),
    building_id  TEXT NOT NULL,
    opened_at    INTEGER NOT NULL,
    charge_id    INTEGER NOT NULL REFERENCES charges(id),
    PRIMARY KEY (workspace_id, building_id, opened_at)
  ) WITHOUT ROWID;
  CREATE INDEX openings_charge ON openings(charge_id);

  -- Authenticated requests per workspace per UTC day (the 5,000-a-day quota and usage).
  CREATE TABLE daily_requests (
    workspace_id TEXT NOT NULL REFERENCES workspaces(id),
    day          TEXT NOT NULL,
    requests     INTEGER NOT NULL CHECK (requests >= 0),
    PRIMARY KEY (workspace_id, day)
  ) WITHOUT ROWID;
  `,
  /* 2: requests from the public: countries asked for, business removals, building report orders */ `
  CREATE TABLE country_requests (
    id         INTEGER PRIMARY KEY,
    country    TEXT NOT NULL CHECK (length(country) = 2),
    email      TEXT,
    comment    TEXT,
    client     TEXT NOT NULL,                   -- the visitor's address bucket, for abuse review
    created_at INTEGER NOT NULL
  );
  CREATE INDEX country_requests_country ON country_requests(country);

  -- A person asks for a registered business to be removed. Approved removals hide the business
  -- (by business_id, or by registration_number) on every response, in every snapshot.
  CREATE TABLE removal_requests (
    id                  TEXT PRIMARY KEY,
    business_id         TEXT,
    registration_number TEXT,
    building_id         TEXT NOT NULL,
    country             TEXT NOT NULL,
    business_name       TEXT NOT NULL,          -- as the snapshot named it when asked
    reason              TEXT NOT NULL,
    contact             TEXT NOT NULL,
    client              TEXT NOT NULL,
    status              TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'rejected')),
    created_at          INTEGER NOT NULL,
    decided_at          INTEGER,
    decision_note       TEXT,
    CHECK (business_id IS NOT NULL OR registration_number IS NOT NULL),
    CHECK ((status = 'pending') = (decided_at IS NULL))
  );
  CREATE INDEX removal_requests_status ON removal_requests(status, created_at);

  -- One building's report bought without an account. The report is frozen at checkout, so it
  -- reads the snapshot current at purchase; only the SHA-256 of the read token is kept.
  CREATE TABLE report_orders (
    id                 TEXT PRIMARY KEY,
    building_id        TEXT NOT NULL,
    country            TEXT NOT NULL,
    snapshot_date      TEXT NOT NULL,
    email              TEXT NOT NULL,
    token_sha256       BLOB NOT NULL CHECK (length(token_sha256) = 32),
    status             TEXT NOT NULL CHECK (status IN ('pending', 'paid')),
    price_minor        INTEGER NOT NULL CHECK (price_minor >= 0),   -- cents of price_currency
    price_currency     TEXT NOT NULL CHECK (length(price_currency) = 3),
    provider           TEXT NOT NULL,
    provider_reference TEXT,
    report             TEXT NOT NULL,
    client             TEXT NOT NULL,
    created_at         INTEGER NOT NULL,
    paid_at            INTEGER,
    CHECK ((status = 'paid') = (paid_at IS NOT NULL))
  );
  CREATE INDEX report_orders_created ON report_orders(created_at);
  `,
  /* 3: openings become a log in commit order, looked up in memory (opened-index.ts) */ `
  -- The primary key over (workspace, building) made each new opening write its own B-tree page
  -- (building ids are random UUIDs): ~30 µs of the single writer per building. Rows are now
  -- appended; the charging connection reads them into memory and follows the new ones by id.
  CREATE TABLE openings_log (
    id           INTEGER PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id),
    building_id  TEXT NOT NULL,
    opened_at    INTEGER NOT NULL,
    charge_id    INTEGER NOT NULL REFERENCES charges(id)
  );
  INSERT INTO openings_log (workspace_id, building_id, opened_at, charge_id)
    SELECT workspace_id, building_id, opened_at, charge_id FROM openings ORDER BY charge_id, building_id;
  DROP TABLE openings;
  ALTER TABLE openings_log RENAME TO openings;
  CREATE INDEX openings_charge ON openings(charge_id);
  `,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

function migrate(db: Db): void {
  const version = (): number => db.pragma('user_version', { simple: true }) as number;
  if (version() > SCHEMA_VERSION) {
    throw new Error(`Ledger schema version ${version()} is newer than this program's (${SCHEMA_VERSION}); upgrade the program.`);
  }
  if (version() === SCHEMA_VERSION) return;
  for (let step = 0; step < MIGRATIONS.length; step++) {
    db.transaction(() => {
      if (version() !== step) return; // another connection applied it meanwhile
      db.exec(MIGRATIONS[step]);
      db.pragma(`user_version = ${step + 1}`);
    }).immediate();
  }
}
