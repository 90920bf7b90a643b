/**
 * The daily workspace quota: requests per workspace per UTC day (5,000 by default), counted in
 * the ledger so that it resets at 00:00 UTC, survives restarts and is shared by every process
 * and thread on the file. It counts every authenticated request that was not itself refused
 * with 429; a request refused by the quota is not counted.
 *
 * The counter may run on its own connection with `synchronous = NORMAL`: a crashed process loses
 * nothing, a power cut may lose the last increments (never a charge: those commit with FULL).
 */
import type { Db } from './db.ts';

export interface QuotaResult {
  ok: boolean;
  /** Requests counted today, this one included when ok. */
  used: number;
  limit: number;
}

export class DailyQuota {
  private readonly increment;
  private readonly select;
  private readonly selectRange;

  constructor(db: Db, readonly limit: number) {
    if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`The daily quota is a whole number of at least 1, got ${limit}.`);
    // One statement, so one atomic step: the row is created at 1, or raised by 1 while below the limit.
    this.increment = db.prepare<[{ workspaceId: string; day: string; limit: number }], { requests: number }>(`INSERT INTO daily_requests (workspace_id, day, requests)
      VALUES (@workspaceId, @day, 1) ON CONFLICT (workspace_id, day) DO UPDATE SET requests = requests + 1 WHERE requests < @limit
      RETURNING requests`);
    this.select = db.prepare<[string, string], { requests: number }>(
      'SELECT requests FROM daily_requests WHERE workspace_id = ? AND day = ?');
    this.selectRange = db.prepare<[string, string, string], { day: string; requests: number }>(
      'SELECT day, requests FROM daily_requests WHERE workspace_id = ? AND day >= ? AND day <= ? ORDER BY day');
  }

  /** Counts one request of `day` unless the workspace already used its quota that day. */
  take(workspaceId: string, day: string): QuotaResult {
    const row = this.increment.get({ workspaceId, day, limit: this.limit });
    if (row) return { ok: true, used: row.requests, limit: this.limit };
    return { ok: false, used: this.used(workspaceId, day), limit: this.limit };
  }

  used(workspaceId: string, day: string): number {
    return this.select.get(workspaceId, day)?.requests ?? 0;
  }

  usage(workspaceId: string, fromDay: string, toDay: string): { day: string; requests: number }[] {
    return this.selectRange.all(workspaceId, fromDay, toDay);
  }
}
