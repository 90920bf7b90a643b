/**
 * The daily workspace quota: requests per workspace per UTC day (5,000 by default). It counts
 * every authenticated request that was not itself refused with 429; a request refused by the
 * quota is not counted. It resets at 00:00 UTC (a new day is a new count).
 *
 * The counts are kept in shared memory (shared-quota.ts), exact across the threads of the server,
 * and written to the `daily_requests` table in batches by `persist` (the Ledger that owns
 * persistence calls it every 250 ms and at close), so they survive restarts and the admin CLI's
 * usage reads them; a crash loses at most the last batch. When the table is full, a request is
 * counted in the file directly.
 */
import { parseUtcDay, utcDay, DAY_MS } from './clock.ts';
import type { Db } from './db.ts';
import type { SharedQuota } from './shared-quota.ts';
import type { WriteLock } from './write-lock.ts';

export interface QuotaResult {
  ok: boolean;
  /** Requests counted today, this one included when ok. */
  used: number;
  limit: number;
}

const dayNumber = (day: string): number => Math.floor(parseUtcDay(day) / DAY_MS);

export class DailyQuota {
  private readonly increment;
  private readonly select;
  private readonly selectRange;
  private readonly upsertMax;

  constructor(
    private readonly db: Db,
    readonly limit: number,
    private readonly shared: SharedQuota,
    private readonly lock: WriteLock,
  ) {
    if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`The daily quota is a whole number of at least 1, got ${limit}.`);
    // One statement, so one atomic step: the row is created at 1, or raised by 1 while below the limit.
    this.increment = db.prepare<
      [{ workspaceId: string; day: string; limit: number }],
      { requests: number }
    >(`INSERT INTO daily_requests (workspace_id, day, requests)
      VALUES (@workspaceId, @day, 1) ON CONFLICT (workspace_id, day) DO UPDATE SET requests = requests + 1 WHERE requests < @limit
      RETURNING requests`);
    this.select = db.prepare<[string, string], { requests: number }>(
      'SELECT requests FROM daily_requests WHERE workspace_id = ? AND day = ?',
    );
    this.selectRange = db.prepare<[string, string, string], { day: string; requests: number }>(
      'SELECT day, requests FROM daily_requests WHERE workspace_id = ? AND day >= ? AND day <= ? ORDER BY day',
    );
    this.upsertMax = db.prepare<[string, string, number]>(`INSERT INTO daily_requests (workspace_id, day, requests) VALUES (?, ?, ?)
      ON CONFLICT (workspace_id, day) DO UPDATE SET requests = max(requests, excluded.requests)`);
  }

  /** Counts one request of `day` unless the workspace already used its quota that day. */
  take(workspaceId: string, day: string): QuotaResult {
    const counted = this.shared.take(workspaceId, dayNumber(day), this.limit, () => this.inFile(workspaceId, day));
    if (counted) return { ...counted, limit: this.limit };
    const row = this.lock.run(() => this.increment.get({ workspaceId, day, limit: this.limit }));
    if (row) return { ok: true, used: row.requests, limit: this.limit };
    return { ok: false, used: this.inFile(workspaceId, day), limit: this.limit };
  }

  used(workspaceId: string, day: string): number {
    return this.shared.used(workspaceId, dayNumber(day), () => this.inFile(workspaceId, day));
  }

  /** Writes the counts the file does not have yet, in one transaction; returns how many. */
  persist(): number {
    const pending = this.shared.pending();
    if (pending.length === 0) return 0;
    this.lock.run(() =>
      this.db
        .transaction(() => {
          for (const c of pending) this.upsertMax.run(c.workspaceId, utcDay(c.day * DAY_MS), c.requests);
        })
        .immediate(),
    );
    this.shared.persisted(pending);
    return pending.length;
  }

  usage(workspaceId: string, fromDay: string, toDay: string): { day: string; requests: number }[] {
    return this.selectRange.all(workspaceId, fromDay, toDay);
  }

  get table(): SharedArrayBuffer {
    return this.shared.buffer;
  }

  private inFile(workspaceId: string, day: string): number {
    return this.select.get(workspaceId, day)?.requests ?? 0;
  }
}
