/**
 * A walk that turns into the plain scan for the rest of its bbox (bestfirst.ts descend).
 *
 * The walks pay where the count stops early (past MAX_WINDOW matches the rest is ranked from
 * node bounds) or where the node summaries rule out or prove whole nodes. A filtered query with
 * few matches over nodes the summaries decide nothing of reads every row either way, and the
 * walk's node by node work (proofs, leaves, spans) then costs more than the scan's one pass
 * over long runs. Which kind a query is shows once the walk has read a part of the bbox: its
 * rate of matches so far, over the bbox's candidates, and whether any node of PLAIN_LEVEL was
 * decided so far or can be ahead. The rows read stay counted and ranked: the rest is scanned
 * into the same count and heap, so the answer is the same.
 */
import { FANOUT, type NodeStep, type NodeVisitor } from '../catalog/rowtree.ts';
import type { Snapshot } from '../catalog/snapshot.ts';
import { candidateRows } from './estimate.ts';
import { FLOOR_MIN_K } from './floor.ts';
import type { SearchPlan } from './plan.ts';
import { ALL, NONE, verdictOf } from './proofs.ts';
import { scanRows } from './scan.ts';
import type { SearchState } from './search-state.ts';
import type { BBox } from './types.ts';

/** Nodes of 4,096 rows: deciding one spares a walk more than the scan's pass over it costs. */
export const PLAIN_LEVEL = 2;
/** The walk judges after this many rows of the bbox... */
const PLAIN_MIN_ROWS = 32_768;
/** ...and goes plain where its rate of matches over the bbox's candidates projects fewer than this. */
const FEW_MATCHES = 49_152;

/**
 * Asked by the walk at each node of PLAIN_LEVEL it reaches: whether to stop and judge the rest
 * (plainRestPays). Only a full walk (no sample), of a filtered plan, while nothing of PLAIN_LEVEL
 * or above was decided.
 */
export function mayGoPlain(st: SearchState, s: Snapshot, plan: SearchPlan, bbox: BBox): boolean {
  if (st.plain !== 'may' || st.sample !== 'every' || plan.steps.length === 0 || st.upperDecided > 0) return false;
  // Past MAX_WINDOW the count is settled and no longer a rate; deep pages rank from floors.
  if (!st.countOpen() || st.heap.capacityOf() > FLOOR_MIN_K || st.coveredRows < PLAIN_MIN_ROWS) return false;
  if (st.plainCandidates < 0) st.plainCandidates = candidateRows(st, [s], bbox);
  return (st.matched / st.coveredRows) * st.plainCandidates < FEW_MATCHES;
}

/**
 * Whether no node of PLAIN_LEVEL ahead of the walk (below the sp / 2 (level, index) pairs on
 * `stack`) is ruled out or proven full by the summaries: then the rest goes plain. Walks a copy
 * of the stack in the search state's estimate stack, reading only the tree's boxes and summaries.
 */
export function plainRestPays(st: SearchState, s: Snapshot, plan: SearchPlan, bbox: BBox, stack: Int32Array, sp: number): boolean {
  // The walk needs room for FANOUT pairs a level above the copy.
  const need = sp + 2 * FANOUT * s.tree.levelStart.length;
  const probe = need <= st.estimateStack.length ? st.estimateStack : new Int32Array(need);
  probe.set(stack.subarray(0, sp));
  const ahead = (st.decidedAhead ??= new DecidedAhead());
  ahead.start(plan);
  s.tree.walk(bbox, ahead, probe, sp);
  return !ahead.decided;
}

/** plainRestPays' visitor: stops at the first node of PLAIN_LEVEL or above that the summaries decide. One per search state. */
export class DecidedAhead implements NodeVisitor {
  decided = false;
  private plan!: SearchPlan;

  start(plan: SearchPlan): void {
    this.plan = plan;
    this.decided = false;
  }

  visit(level: number, _i: number, node: number): NodeStep {
    if (level < PLAIN_LEVEL) return 'over';
    const v = verdictOf(this.plan.proofs, this.plan.complete, node);
    this.decided = v === NONE || v === ALL;
    if (this.decided) return 'stop';
    return level === PLAIN_LEVEL ? 'over' : 'down';
  }
}

/**
 * Scans the rest of the walk (below the sp / 2 pairs on `stack`) as the plain scan does: ranges
 * in row order, into the same count and heap.
 */
export function scanRest(st: SearchState, s: Snapshot, si: number, plan: SearchPlan, bbox: BBox, stack: Int32Array, sp: number): void {
  s.tree.rangesFrom(
    bbox,
    (lo, hi, partial) => {
      st.coveredRows += hi - lo;
      scanRows(st, s, si, plan, bbox, lo, hi, partial, true, plan.attained);
    },
    stack,
    sp,
  );
}
