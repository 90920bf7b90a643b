/**
 * Requests to remove a registered business from what Edifice shows. A request names the
 * business (business_id and/or registration_number) and the building it was seen at; the admin
 * approves or rejects it once. An approved removal hides that business everywhere it appears,
 * in every snapshot, now and later (the catalog applies `approved()`); it is never undone here.
 */
import type { Clock } from './clock.ts';
import type { Db } from './db.ts';
import { LedgerError } from './errors.ts';
import { newId } from './base62.ts';

export const REMOVAL_STATUSES = ['pending', 'approved', 'rejected'] as const;
export type RemovalStatus = (typeof REMOVAL_STATUSES)[number];

export interface RemovalRequest {
  id: string;
  businessId: string | null;
  registrationNumber: string | null;
  buildingId: string;
  country: string;
  businessName: string;
  reason: string;
  contact: string;
  status: RemovalStatus;
  createdAt: number;
  decidedAt: number | null;
  decisionNote: string | null;
}

export type NewRemovalRequest = Pick<
  RemovalRequest,
  'businessId' | 'registrationNumber' | 'buildingId' | 'country' | 'businessName' | 'reason' | 'contact'
> & {
  /** The asker's address bucket, kept for abuse review. */
  client: string;
};

/** What approved removals hide: a business matching either set. */
export interface ApprovedRemovals {
  businessIds: ReadonlySet<string>;
  registrationNumbers: ReadonlySet<string>;
}

export interface RemovalRow {
  id: string;
  business_id: string | null;
  registration_number: string | null;
  building_id: string;
  country: string;
  business_name: string;
  reason: string;
  contact: string;
  status: RemovalStatus;
  created_at: number;
  decided_at: number | null;
  decision_note: string | null;
}

export const toRemoval = (r: RemovalRow): RemovalRequest => ({
  id: r.id,
  businessId: r.business_id,
  registrationNumber: r.registration_number,
  buildingId: r.building_id,
  country: r.country,
  businessName: r.business_name,
  reason: r.reason,
  contact: r.contact,
  status: r.status,
  createdAt: r.created_at,
  decidedAt: r.decided_at,
  decisionNote: r.decision_note,
});

/** The row of a new, pending request; RangeError when it names no business. */
export function newRemovalRow(request: NewRemovalRequest, now: number): RemovalRow & { client: string } {
  if (request.businessId === null && request.registrationNumber === null) {
    throw new RangeError('A removal request names the business by business_id or registration_number.');
  }
  return {
    id: newId('rm'),
    business_id: request.businessId,
    registration_number: request.registrationNumber,
    building_id: request.buildingId,
    country: request.country,
    business_name: request.businessName,
    reason: request.reason,
    contact: request.contact,
    client: request.client,
    status: 'pending',
    created_at: now,
    decided_at: null,
    decision_note: null,
  };
}

export function approvedOf(rows: readonly { business_id: string | null; registration_number: string | null }[]): ApprovedRemovals {
  const businessIds = new Set<string>();
  const registrationNumbers = new Set<string>();
  for (const r of rows) {
    if (r.business_id !== null) businessIds.add(r.business_id);
    if (r.registration_number !== null) registrationNumbers.add(r.registration_number);
  }
  return { businessIds, registrationNumbers };
}

export class Removals {
  private readonly insert;
  private readonly selectOne;
  private readonly selectByStatus;
  private readonly selectAll;
  private readonly decideStmt;
  private readonly selectApproved;
  private readonly countApproved;

  constructor(
    db: Db,
    private readonly now: Clock,
  ) {
    this.insert = db.prepare<[RemovalRow & { client: string }], RemovalRow>(`INSERT INTO removal_requests
      (id, business_id, registration_number, building_id, country, business_name, reason, contact, client, status, created_at)
      VALUES (@id, @business_id, @registration_number, @building_id, @country, @business_name, @reason, @contact, @client, 'pending', @created_at)
      RETURNING *`);
    this.selectOne = db.prepare<[string], RemovalRow>('SELECT * FROM removal_requests WHERE id = ?');
    this.selectByStatus = db.prepare<[string], RemovalRow>('SELECT * FROM removal_requests WHERE status = ? ORDER BY created_at, rowid');
    this.selectAll = db.prepare<[], RemovalRow>('SELECT * FROM removal_requests ORDER BY created_at, rowid');
    this.decideStmt = db.prepare<[string, number, string | null, string], RemovalRow>(
      "UPDATE removal_requests SET status = ?, decided_at = ?, decision_note = ? WHERE id = ? AND status = 'pending' RETURNING *",
    );
    this.selectApproved = db.prepare<[], { business_id: string | null; registration_number: string | null }>(
      "SELECT business_id, registration_number FROM removal_requests WHERE status = 'approved'",
    );
    this.countApproved = db.prepare<[], { n: number }>("SELECT count(*) AS n FROM removal_requests WHERE status = 'approved'");
  }

  add(request: NewRemovalRequest): RemovalRequest {
    return toRemoval(this.insert.get(newRemovalRow(request, this.now()))!);
  }

  get(id: string): RemovalRequest {
    const row = this.selectOne.get(id);
    if (!row) throw new LedgerError('not_found', `No removal request ${id}.`);
    return toRemoval(row);
  }

  list(status?: RemovalStatus): RemovalRequest[] {
    return (status === undefined ? this.selectAll.all() : this.selectByStatus.all(status)).map(toRemoval);
  }

  /** Approves or rejects a pending request; a decided one is refused with invalid_state. */
  decide(id: string, decision: 'approved' | 'rejected', note: string | null): RemovalRequest {
    const row = this.decideStmt.get(decision, this.now(), note, id);
    if (row) return toRemoval(row);
    const existing = this.get(id);
    throw new LedgerError('invalid_state', `Removal request ${id} was already ${existing.status}.`);
  }

  approved(): ApprovedRemovals {
    return approvedOf(this.selectApproved.all());
  }

  /** Approved removals so far: approvals are final, so a change of this count means a new one. */
  approvedCount(): number {
    return this.countApproved.get()!.n;
  }
}
