/**
 * One contract for the two ledgers: the SQLite file of one server (Ledger, synchronous, the
 * default) and PostgreSQL shared by the replicas of a fleet (PgLedger). `EDIFICE_LEDGER` (or the
 * admin CLI's `--ledger`) names either: a file path, or a `postgres://` URL.
 *
 * The contract is asynchronous, as PostgreSQL is; the SQLite Ledger answers at once. Its
 * behaviour is one: the same tests run against both (test/ledger-engines.test.ts).
 */
import type { Clock } from './clock.ts';
import type { ChargeOutcome, ChargePage, ChargeResult, Grant } from './credits.ts';
import type { AuthResult, KeyInfo } from './keys.ts';
import { Ledger, type WorkspaceSummary } from './ledger.ts';
import { PgLedger } from './pg-ledger.ts';
import type { Member, Workspace } from './workspaces.ts';
import type { CountryDemand, CountryRequest } from './country-requests.ts';
import type { ApprovedRemovals, NewRemovalRequest, RemovalRequest, RemovalStatus } from './removals.ts';
import type { NewReportOrder, ReportOrder } from './reports.ts';
import type { UsageDay } from './usage.ts';

export interface LedgerEngine {
  readonly kind: 'sqlite' | 'postgres';
  authenticate(rawKey: string | undefined): Promise<AuthResult>;
  balance(workspaceId: string): Promise<number>;
  charge(workspaceId: string, keyId: string | null, buildingIds: readonly string[], route: string): Promise<ChargeResult>;
  /** Each page all or nothing. */
  chargePages(pages: readonly ChargePage[]): Promise<ChargeOutcome[]>;
  ping(): Promise<void>;
  createWorkspace(name: string, options: { plan?: string | null; createdBy: string }): Promise<{ workspaceId: string; memberId: string }>;
  workspace(workspaceId: string): Promise<WorkspaceSummary>;
  listWorkspaces(): Promise<Workspace[]>;
  addMember(workspaceId: string, email: string): Promise<Member>;
  removeMember(workspaceId: string, member: string): Promise<Member>;
  createKey(
    workspaceId: string,
    member: string,
    options?: { expiresAt?: number | null; name?: string | null },
  ): Promise<{ key: string; keyId: string; prefix: string }>;
  listKeys(workspaceId: string): Promise<KeyInfo[]>;
  revokeKey(keyId: string): Promise<KeyInfo>;
  grantCredits(
    workspaceId: string,
    amount: number,
    options: { kind: 'bought' | 'manual'; expiresAt?: number | null; note?: string | null },
  ): Promise<Grant>;
  setPlan(workspaceId: string, plan: string | null): Promise<void>;
  suspendWorkspace(workspaceId: string, reason?: string | null): Promise<void>;
  unsuspendWorkspace(workspaceId: string): Promise<void>;
  /** Requests and credits per UTC day (at most 366 days; default the last 30). */
  usage(workspaceId: string, fromDay?: string, toDay?: string): Promise<UsageDay[]>;
  addCountryRequest(request: { country: string; email: string | null; comment: string | null; client: string }): Promise<CountryRequest>;
  countryRequests(limit?: number): Promise<CountryRequest[]>;
  countryDemand(): Promise<CountryDemand[]>;
  addRemovalRequest(request: NewRemovalRequest): Promise<RemovalRequest>;
  removalRequests(status?: RemovalStatus): Promise<RemovalRequest[]>;
  decideRemoval(id: string, decision: 'approved' | 'rejected', note?: string | null): Promise<RemovalRequest>;
  approvedRemovals(): Promise<ApprovedRemovals>;
  approvedRemovalCount(): Promise<number>;
  createReportOrder(order: NewReportOrder): Promise<{ order: ReportOrder; token: string }>;
  readReport(orderId: string, token: string): Promise<{ order: ReportOrder; report: string | null } | null>;
  markReportPaid(orderId: string, providerReference: string | null): Promise<{ order: ReportOrder; changed: boolean }>;
  reportOrder(orderId: string): Promise<ReportOrder | null>;
  reportOrders(limit?: number): Promise<ReportOrder[]>;
  /** Every breach of the invariants; empty when sound. */
  audit(): Promise<string[]>;
  close(): Promise<void>;
}

export type LedgerLocation = { kind: 'sqlite'; path: string } | { kind: 'postgres'; url: string };

/** What `EDIFICE_LEDGER` or `--ledger` names: a `postgres://` (or `postgresql://`) URL, else a file path. */
export function ledgerLocation(value: string): LedgerLocation {
  if (/^postgres(ql)?:\/\//i.test(value)) {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw new RangeError(
        `The ledger URL "${value.replace(/:[^:@/]*@/, ':…@')}" is not a valid URL (postgres://user:password@host:port/database).`,
      );
    }
    if (url.hostname === '') throw new RangeError('The ledger URL names no host (postgres://user:password@host:port/database).');
    return { kind: 'postgres', url: value };
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) {
    throw new RangeError(`The ledger is a file path or a postgres:// URL, got a ${value.split(':')[0]}:// URL.`);
  }
  return { kind: 'sqlite', path: value };
}

/** Opens the ledger `location` names. */
export async function openLedgerEngine(location: string | LedgerLocation, options: { now?: Clock } = {}): Promise<LedgerEngine> {
  const where = typeof location === 'string' ? ledgerLocation(location) : location;
  if (where.kind === 'postgres') return PgLedger.open(where.url, { now: options.now });
  return new SqliteLedgerEngine(Ledger.open(where.path, { now: options.now }));
}

/** The SQLite Ledger behind the asynchronous contract. */
export class SqliteLedgerEngine implements LedgerEngine {
  readonly kind = 'sqlite' as const;
  constructor(readonly ledger: Ledger) {}
  async authenticate(rawKey: string | undefined) {
    return this.ledger.authenticate(rawKey);
  }
  async balance(workspaceId: string) {
    return this.ledger.balance(workspaceId);
  }
  async charge(workspaceId: string, keyId: string | null, buildingIds: readonly string[], route: string) {
    return this.ledger.charge(workspaceId, keyId, buildingIds, route);
  }
  async chargePages(pages: readonly ChargePage[]) {
    return this.ledger.chargePages(pages);
  }
  async ping() {
    this.ledger.ping();
  }
  async createWorkspace(name: string, options: { plan?: string | null; createdBy: string }) {
    return this.ledger.createWorkspace(name, options);
  }
  async workspace(workspaceId: string) {
    return this.ledger.workspace(workspaceId);
  }
  async listWorkspaces() {
    return this.ledger.listWorkspaces();
  }
  async addMember(workspaceId: string, email: string) {
    return this.ledger.addMember(workspaceId, email);
  }
  async removeMember(workspaceId: string, member: string) {
    return this.ledger.removeMember(workspaceId, member);
  }
  async createKey(workspaceId: string, member: string, options?: { expiresAt?: number | null; name?: string | null }) {
    return this.ledger.createKey(workspaceId, member, options);
  }
  async listKeys(workspaceId: string) {
    return this.ledger.listKeys(workspaceId);
  }
  async revokeKey(keyId: string) {
    return this.ledger.revokeKey(keyId);
  }
  async grantCredits(
    workspaceId: string,
    amount: number,
    options: { kind: 'bought' | 'manual'; expiresAt?: number | null; note?: string | null },
  ) {
    return this.ledger.grantCredits(workspaceId, amount, options);
  }
  async setPlan(workspaceId: string, plan: string | null) {
    this.ledger.setPlan(workspaceId, plan);
  }
  async suspendWorkspace(workspaceId: string, reason: string | null = null) {
    this.ledger.suspendWorkspace(workspaceId, reason);
  }
  async unsuspendWorkspace(workspaceId: string) {
    this.ledger.unsuspendWorkspace(workspaceId);
  }
  async usage(workspaceId: string, fromDay?: string, toDay?: string) {
    return this.ledger.usage(workspaceId, fromDay, toDay);
  }
  async addCountryRequest(request: { country: string; email: string | null; comment: string | null; client: string }) {
    return this.ledger.addCountryRequest(request);
  }
  async countryRequests(limit?: number) {
    return this.ledger.countryRequests(limit);
  }
  async countryDemand() {
    return this.ledger.countryDemand();
  }
  async addRemovalRequest(request: NewRemovalRequest) {
    return this.ledger.addRemovalRequest(request);
  }
  async removalRequests(status?: RemovalStatus) {
    return this.ledger.removalRequests(status);
  }
  async decideRemoval(id: string, decision: 'approved' | 'rejected', note: string | null = null) {
    return this.ledger.decideRemoval(id, decision, note);
  }
  async approvedRemovals() {
    return this.ledger.approvedRemovals();
  }
  async approvedRemovalCount() {
    return this.ledger.approvedRemovalCount();
  }
  async createReportOrder(order: NewReportOrder) {
    return this.ledger.createReportOrder(order);
  }
  async readReport(orderId: string, token: string) {
    return this.ledger.readReport(orderId, token);
  }
  async markReportPaid(orderId: string, providerReference: string | null) {
    return this.ledger.markReportPaid(orderId, providerReference);
  }
  async reportOrder(orderId: string) {
    return this.ledger.reportOrder(orderId);
  }
  async reportOrders(limit?: number) {
    return this.ledger.reportOrders(limit);
  }
  async audit() {
    return this.ledger.audit();
  }
  async close() {
    this.ledger.close();
  }
}
