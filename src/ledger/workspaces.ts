/**
 * Workspaces, their members (who joined, who left) and their plan.
 * A member who leaves keeps their row with `left_at`; their keys stop working (keys.ts).
 */
import type { Clock } from './clock.ts';
import type { Db } from './db.ts';
import { LedgerError } from './errors.ts';
import { newId } from './base62.ts';

/** Monthly credit allowance of each plan. A workspace without a plan has none. */
export const PLANS = { free: 0, starter: 1_000, pro: 20_000 } as const;
export type PlanName = keyof typeof PLANS;

export function isPlanName(name: string): name is PlanName {
  return Object.hasOwn(PLANS, name);
}

export function planAllowance(plan: string | null): number {
  return plan !== null && isPlanName(plan) ? PLANS[plan] : 0;
}

export interface Workspace {
  id: string;
  name: string;
  plan: PlanName | null;
  createdAt: number;
  suspendedAt: number | null;
  suspendedReason: string | null;
}

export interface Member {
  id: string;
  workspaceId: string;
  email: string;
  joinedAt: number;
  leftAt: number | null;
}

interface WorkspaceRow {
  id: string;
  name: string;
  plan: string | null;
  created_at: number;
  suspended_at: number | null;
  suspended_reason: string | null;
}
interface MemberRow {
  id: string;
  workspace_id: string;
  email: string;
  joined_at: number;
  left_at: number | null;
}

const toWorkspace = (r: WorkspaceRow): Workspace => ({
  id: r.id,
  name: r.name,
  plan: r.plan !== null && isPlanName(r.plan) ? r.plan : null,
  createdAt: r.created_at,
  suspendedAt: r.suspended_at,
  suspendedReason: r.suspended_reason,
});
const toMember = (r: MemberRow): Member => ({
  id: r.id,
  workspaceId: r.workspace_id,
  email: r.email,
  joinedAt: r.joined_at,
  leftAt: r.left_at,
});

export function normaliseEmail(email: string): string {
  if (typeof email !== 'string') throw new TypeError(`Expected an email address, got ${typeof email}.`);
  const e = email.trim().toLowerCase();
  if (e.length > 254 || !/^[^\s@]+@[^\s@]+$/.test(e)) throw new RangeError(`Expected an email address, got "${email}".`);
  return e;
}

export function checkName(name: string): string {
  if (typeof name !== 'string') throw new TypeError(`Expected a workspace name, got ${typeof name}.`);
  const n = name.trim();
  if (n.length < 1 || n.length > 200) throw new RangeError(`A workspace name has 1 to 200 characters, got ${n.length}.`);
  return n;
}

export function checkPlan(plan: string | null): PlanName | null {
  if (plan === null) return null;
  if (typeof plan !== 'string' || !isPlanName(plan)) {
    throw new RangeError(`Unknown plan "${String(plan)}"; expected one of ${Object.keys(PLANS).join(', ')} (or none).`);
  }
  return plan;
}

export class Workspaces {
  private readonly insertWorkspace;
  private readonly insertMember;
  private readonly selectWorkspace;
  private readonly selectWorkspaces;
  private readonly selectMemberById;
  private readonly selectCurrentMemberByEmail;
  private readonly selectMembers;
  private readonly updateLeft;
  private readonly updatePlan;
  private readonly updateSuspended;

  constructor(
    db: Db,
    private readonly now: Clock,
  ) {
    this.insertWorkspace = db.prepare('INSERT INTO workspaces (id, name, plan, created_at) VALUES (?, ?, ?, ?)');
    this.insertMember = db.prepare('INSERT INTO members (id, workspace_id, email, joined_at) VALUES (?, ?, ?, ?)');
    this.selectWorkspace = db.prepare<[string], WorkspaceRow>('SELECT * FROM workspaces WHERE id = ?');
    this.selectWorkspaces = db.prepare<[], WorkspaceRow>('SELECT * FROM workspaces ORDER BY created_at, id');
    this.selectMemberById = db.prepare<[string, string], MemberRow>('SELECT * FROM members WHERE workspace_id = ? AND id = ?');
    this.selectCurrentMemberByEmail = db.prepare<[string, string], MemberRow>(
      'SELECT * FROM members WHERE workspace_id = ? AND email = ? AND left_at IS NULL',
    );
    this.selectMembers = db.prepare<[string], MemberRow>('SELECT * FROM members WHERE workspace_id = ? ORDER BY joined_at, id');
    this.updateLeft = db.prepare('UPDATE members SET left_at = ? WHERE id = ? AND left_at IS NULL');
    this.updatePlan = db.prepare('UPDATE workspaces SET plan = ? WHERE id = ?');
    this.updateSuspended = db.prepare('UPDATE workspaces SET suspended_at = ?, suspended_reason = ? WHERE id = ?');
  }

  /** Inserts the workspace and its first member. The caller runs this inside a transaction. */
  create(name: string, plan: string | null, createdBy: string): { workspaceId: string; memberId: string; createdAt: number } {
    const n = checkName(name);
    const p = checkPlan(plan);
    const email = normaliseEmail(createdBy);
    const workspaceId = newId('ws');
    const memberId = newId('mem');
    const createdAt = this.now();
    this.insertWorkspace.run(workspaceId, n, p, createdAt);
    this.insertMember.run(memberId, workspaceId, email, createdAt);
    return { workspaceId, memberId, createdAt };
  }

  /** The workspace, or a LedgerError `not_found`. */
  get(workspaceId: string): Workspace {
    const row = this.selectWorkspace.get(workspaceId);
    if (!row) throw new LedgerError('not_found', `No workspace ${workspaceId}.`);
    return toWorkspace(row);
  }

  list(): Workspace[] {
    return this.selectWorkspaces.all().map(toWorkspace);
  }

  members(workspaceId: string): Member[] {
    this.get(workspaceId);
    return this.selectMembers.all(workspaceId).map(toMember);
  }

  /** A member by id (current or former), or a current member by email. */
  member(workspaceId: string, idOrEmail: string): Member {
    const row = idOrEmail.startsWith('mem_')
      ? this.selectMemberById.get(workspaceId, idOrEmail)
      : this.selectCurrentMemberByEmail.get(workspaceId, normaliseEmail(idOrEmail));
    if (!row) throw new LedgerError('not_found', `No member ${idOrEmail} in workspace ${workspaceId}.`);
    return toMember(row);
  }

  addMember(workspaceId: string, email: string): Member {
    this.get(workspaceId);
    const e = normaliseEmail(email);
    if (this.selectCurrentMemberByEmail.get(workspaceId, e)) {
      throw new LedgerError('conflict', `${e} is already a member of workspace ${workspaceId}.`);
    }
    const id = newId('mem');
    this.insertMember.run(id, workspaceId, e, this.now());
    return toMember(this.selectMemberById.get(workspaceId, id)!);
  }

  /** Marks the member as left; every key they created stops working. */
  removeMember(workspaceId: string, idOrEmail: string): Member {
    const m = this.member(workspaceId, idOrEmail);
    if (m.leftAt !== null) throw new LedgerError('conflict', `Member ${m.id} already left workspace ${workspaceId}.`);
    this.updateLeft.run(this.now(), m.id);
    return toMember(this.selectMemberById.get(workspaceId, m.id)!);
  }

  setPlan(workspaceId: string, plan: string | null): void {
    const p = checkPlan(plan);
    this.get(workspaceId);
    this.updatePlan.run(p, workspaceId);
  }

  suspend(workspaceId: string, reason: string | null): void {
    const w = this.get(workspaceId);
    this.updateSuspended.run(w.suspendedAt ?? this.now(), reason, workspaceId);
  }

  unsuspend(workspaceId: string): void {
    this.get(workspaceId);
    this.updateSuspended.run(null, null, workspaceId);
  }
}
