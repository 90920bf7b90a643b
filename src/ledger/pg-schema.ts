/**
 * The ledger's PostgreSQL schema and its versioned migrations: the same history as the SQLite
 * file (db.ts), numbered steps applied in order, each once. The version is the highest row of
 * `schema_migrations`; each step runs in its own transaction holding an advisory lock, so
 * replicas that start together against a fresh database apply each step once.
 *
 * Differences from the SQLite file, for many writers at once:
 * - `openings` holds one row per (workspace, building): the latest charged opening. A charge
 *   claims its buildings with `INSERT … ON CONFLICT DO UPDATE … WHERE` the opening has expired,
 *   so two replicas charging the same building at the same moment serialise on that row and only
 *   one of them charges it. `charged_buildings` keeps every charged opening, for the audit.
 * - A page's charge draws on its workspace's grants under row locks (`SELECT … FOR UPDATE`);
 *   `remaining >= 0` is a constraint besides.
 */
import type pg from 'pg';

export const PG_MIGRATIONS: readonly string[] = [
  /* 1: workspaces, members, keys, credits, openings */ `
  CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
  );

  CREATE TABLE workspaces (
    id               TEXT PRIMARY KEY,
    name             TEXT NOT NULL,
    plan             TEXT,
    created_at       BIGINT NOT NULL,           -- ms since epoch, as every *_at column
    suspended_at     BIGINT,
    suspended_reason TEXT
  );

  CREATE TABLE members (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id),
    email        TEXT NOT NULL,
    joined_at    BIGINT NOT NULL,
    left_at      BIGINT,
    CHECK (left_at IS NULL OR left_at >= joined_at)
  );
  CREATE UNIQUE INDEX members_current ON members(workspace_id, email) WHERE left_at IS NULL;

  CREATE TABLE api_keys (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces(id),
    member_id     TEXT NOT NULL REFERENCES members(id),
    name          TEXT,
    secret_sha256 BYTEA NOT NULL CHECK (length(secret_sha256) = 32),
    created_at    BIGINT NOT NULL,
    expires_at    BIGINT,
    revoked_at    BIGINT
  );
  CREATE INDEX api_keys_workspace ON api_keys(workspace_id);

  CREATE TABLE grants (
    id           BIGSERIAL PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id),
    kind         TEXT NOT NULL CHECK (kind IN ('welcome', 'plan', 'bought', 'manual')),
    amount       BIGINT NOT NULL CHECK (amount > 0),
    remaining    BIGINT NOT NULL CHECK (remaining >= 0 AND remaining <= amount),
    granted_at   BIGINT NOT NULL,
    expires_at   BIGINT CHECK (expires_at IS NULL OR expires_at > granted_at),
    period       TEXT,
    plan         TEXT,
    note         TEXT,
    CHECK ((kind = 'plan') = (period IS NOT NULL))
  );
  CREATE UNIQUE INDEX grants_welcome_once ON grants(workspace_id) WHERE kind = 'welcome';
  CREATE UNIQUE INDEX grants_plan_once_a_month ON grants(workspace_id, period) WHERE kind = 'plan';
  CREATE INDEX grants_spend_order ON grants(workspace_id, expires_at);

  CREATE TABLE charges (
    id           BIGSERIAL PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id),
    key_id       TEXT REFERENCES api_keys(id),
    route        TEXT NOT NULL,
    at           BIGINT NOT NULL,
    day          TEXT NOT NULL,
    buildings    INTEGER NOT NULL CHECK (buildings >= credits),
    credits      INTEGER NOT NULL CHECK (credits > 0)
  );
  CREATE INDEX charges_workspace_day ON charges(workspace_id, day);

  CREATE TABLE charge_entries (
    charge_id BIGINT NOT NULL REFERENCES charges(id),
    grant_id  BIGINT NOT NULL REFERENCES grants(id),
    credits   BIGINT NOT NULL CHECK (credits > 0),
    PRIMARY KEY (charge_id, grant_id)
  );
  CREATE INDEX charge_entries_grant ON charge_entries(grant_id);

  -- The latest charged opening of each building a workspace opened: the row two replicas meet on.
  -- The charge is inserted after its openings claim their rows, in the same transaction.
  CREATE TABLE openings (
    workspace_id TEXT NOT NULL REFERENCES workspaces(id),
    building_id  TEXT NOT NULL,
    opened_at    BIGINT NOT NULL,
    charge_id    BIGINT NOT NULL REFERENCES charges(id) DEFERRABLE INITIALLY DEFERRED,
    PRIMARY KEY (workspace_id, building_id)
  );

  -- Every charged opening, kept.
  CREATE TABLE charged_buildings (
    charge_id   BIGINT NOT NULL REFERENCES charges(id),
    building_id TEXT NOT NULL,
    PRIMARY KEY (charge_id, building_id)
  );

  CREATE TABLE daily_requests (
    workspace_id TEXT NOT NULL REFERENCES workspaces(id),
    day          TEXT NOT NULL,
    requests     BIGINT NOT NULL CHECK (requests >= 0),
    PRIMARY KEY (workspace_id, day)
  );
  `,
  /* 2: requests from the public: countries asked for, business removals, building report orders */ `
  CREATE TABLE country_requests (
    id         BIGSERIAL PRIMARY KEY,
    country    TEXT NOT NULL CHECK (length(country) = 2),
    email      TEXT,
    comment    TEXT,
    client     TEXT NOT NULL,
    created_at BIGINT NOT NULL
  );
  CREATE INDEX country_requests_country ON country_requests(country);

  CREATE TABLE removal_requests (
    id                  TEXT PRIMARY KEY,
    seq                 BIGSERIAL,                -- arrival order, as SQLite's rowid
    business_id         TEXT,
    registration_number TEXT,
    building_id         TEXT NOT NULL,
    country             TEXT NOT NULL,
    business_name       TEXT NOT NULL,
    reason              TEXT NOT NULL,
    contact             TEXT NOT NULL,
    client              TEXT NOT NULL,
    status              TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'rejected')),
    created_at          BIGINT NOT NULL,
    decided_at          BIGINT,
    decision_note       TEXT,
    CHECK (business_id IS NOT NULL OR registration_number IS NOT NULL),
    CHECK ((status = 'pending') = (decided_at IS NULL))
  );
  CREATE INDEX removal_requests_status ON removal_requests(status, created_at);

  CREATE TABLE report_orders (
    id                 TEXT PRIMARY KEY,
    seq                BIGSERIAL,
    building_id        TEXT NOT NULL,
    country            TEXT NOT NULL,
    snapshot_date      TEXT NOT NULL,
    email              TEXT NOT NULL,
    token_sha256       BYTEA NOT NULL CHECK (length(token_sha256) = 32),
    status             TEXT NOT NULL CHECK (status IN ('pending', 'paid')),
    price_minor        BIGINT NOT NULL CHECK (price_minor >= 0),
    price_currency     TEXT NOT NULL CHECK (length(price_currency) = 3),
    provider           TEXT NOT NULL,
    provider_reference TEXT,
    report             TEXT NOT NULL,
    client             TEXT NOT NULL,
    created_at         BIGINT NOT NULL,
    paid_at            BIGINT,
    CHECK ((status = 'paid') = (paid_at IS NOT NULL))
  );
  CREATE INDEX report_orders_created ON report_orders(created_at);
  `,
];

export const PG_SCHEMA_VERSION = PG_MIGRATIONS.length;

/** Any key of pg_advisory_xact_lock that no other part of the program uses. */
const MIGRATION_LOCK = 0x45646966; // "Edif"

/** Brings the database to PG_SCHEMA_VERSION; refuses one newer than this program. */
export async function migratePg(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)');
    for (let step = 0; step < PG_MIGRATIONS.length; step++) {
      await client.query('BEGIN');
      try {
        await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
        const { rows } = await client.query<{ v: number }>('SELECT coalesce(max(version), 0)::int AS v FROM schema_migrations');
        if (rows[0].v > PG_SCHEMA_VERSION) {
          throw new Error(`Ledger schema version ${rows[0].v} is newer than this program's (${PG_SCHEMA_VERSION}); upgrade the program.`);
        }
        if (rows[0].v === step) {
          await client.query(PG_MIGRATIONS[step]);
          await client.query('INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)', [step + 1, Date.now()]);
        }
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      }
    }
  } finally {
    client.release();
  }
}
