/**
 * Everything a GET /buildings search keeps while it runs, in one object that the thread serving
 * queries owns and reuses (queries run to completion synchronously): the top k, the count, the
 * best-first queue, the walks' stacks and every scratch buffer. As flatbush keeps its queue on
 * the index, each query starts by clearing what the last one left (`start`); no module of the
 * engine holds a query's state.
 */
import { FANOUT } from '../catalog/rowtree.ts';
import type { Snapshot } from '../catalog/snapshot.ts';
import type { BlockCount, Descent } from './bestfirst.ts';
import type { LeafMaxima } from './floor.ts';
import type { DecidedAhead } from './plain-rest.ts';
import { HeldMatches } from './held.ts';
import { CHUNK } from './kernels.ts';
import { NodeQueue } from './node-queue.ts';
import type { SearchPlan } from './plan.ts';
import { Run } from './run.ts';
import { TopK } from './topk.ts';
import { MAX_WINDOW, type BBox } from './types.ts';

/** (level, index) pairs of a depth-first walk: at most FANOUT children per level of a tree of < 32 levels. */
const STACK_PAIRS = 32 * FANOUT;

/** Which blocks of a walk are read (guess.ts): all, every SAMPLE_STRIDE-th from row 0, or the others. */
export type BlockSample = 'every' | 'sampled' | 'others';

export class SearchState {
  /** The best k rows so far, every snapshot's. */
  readonly heap = new TopK();
  /** A chunk's selection vector, and the scratch of steps that append to one (kernels.ts). */
  readonly sel = new Uint32Array(CHUNK);
  readonly spare = new Uint32Array(CHUNK);
  /** Matches counted so far (every snapshot); counting stops past MAX_WINDOW. */
  matched = 0;
  /** False once the count is final by other means (a search that proved it): rows then only compete for the heap. */
  counting = true;
  /** While set, scanned matches go to `held` instead of the heap: the search's count walk defers ranking them (bestfirst.ts). */
  holding = false;
  readonly held = new HeldMatches();

  /** Nodes waiting for the best-first ranking. */
  readonly queue = new NodeQueue();
  /** The walks' (level, index) pairs; grows when the ranking hands many queued nodes back to the walk. */
  stack = new Int32Array(2 * STACK_PAIRS);
  /** The size estimate's own stack: it runs in the middle of a walk (estimate.ts). */
  readonly estimateStack = new Int32Array(2 * STACK_PAIRS);
  /** Rows waiting to be scanned as one run. */
  readonly run = new Run(this);
  /** Blocks the current walk reads. */
  sample: BlockSample = 'every';

  /** The search under way (bestfirst.ts), for what it decides in the middle of a walk. */
  snapshots: readonly Snapshot[] = [];
  plans: readonly (SearchPlan | null)[] = [];
  bbox: BBox | null = null;
  /** Rows of the nodes the count walk has disposed of (scanned, proven full or empty, or counted per code). */
  coveredRows = 0;
  /** Nodes whose rows the count walk holds ((snapshot, level, index) triples), and their rows. */
  deferredNodes = new Int32Array(3 * 1024);
  deferredCount = 0;
  deferredRows = 0;
  /** Queued nodes' places in row order (nodeOrderFor). */
  private nodeOrder = new Float64Array(1024);
  /** How the last search ranked what its count walk left (bestfirst.ts boundsWillNotPrune). */
  finish: 'best-first' | 'row order' | 'key order' = 'best-first';
  /** The bbox's candidate rows (estimate.ts), once asked; -1 before. */
  candidates = -1;
  /**
   * Whether the walk may still turn into the plain scan for the rest of its bbox (plain-rest.ts),
   * stopped to judge it, will not, or did; the nodes of PLAIN_LEVEL or above that it ruled out or
   * proved full; the snapshot's candidate rows it judged by, once asked.
   */
  plain: 'may' | 'judging' | 'not' | 'scanned' = 'may';
  upperDecided = 0;
  plainCandidates = -1;
  /** The index of the node of PLAIN_LEVEL the walk stopped at to judge (bestfirst.ts descend). */
  plainIndex = 0;
  /** Leaves asked of the proofs inside blocks wholly inside the bbox, those ruled out, and blocks passed over (worthLeaves). */
  leavesAsked = 0;
  leavesOut = 0;
  leafPassed = 0;
  /**
   * Blocks wholly inside asked of the proofs, those decided or with leaves ruled out, nodes above
   * them judged past the trial, and those read whole (bestfirst.ts worthBlocks).
   */
  blocksAsked = 0;
  blocksDecided = 0;
  blockPassed = 0;
  nodesWhole = 0;

  /** Leaves the last floor search (floor.ts) looked at, ruled out or proven, before it ended or gave up. */
  floorLeaves = 0;

  /**
   * The walks' visitors, each made at its first use and reused. A class whose every instance is
   * garbage at a full collection loses its V8 map, and the optimised code of the walks that
   * checked for it is thrown away: made per query, the first walks after each collection ran
   * unoptimised.
   */
  descent: Descent | null = null;
  blockCount: BlockCount | null = null;
  decidedAhead: DecidedAhead | null = null;
  leafMaxima: LeafMaxima | null = null;

  /** Leaf maxima a floor is chosen from (floor.ts), and the keys a guess is chosen from (guess.ts). */
  maxima = new Float64Array(4096);
  readonly keys = new Float64Array(2 * MAX_WINDOW);

  /** Starts a query: an empty heap keeping `capacity` rows, ids[s] the id words of snapshot s, no match counted. */
  start(capacity: number, ids: Uint32Array[]): void {
    this.heap.reset(capacity, ids);
    this.matched = 0;
    this.counting = true;
    this.holding = false;
    this.held.clear();
    this.queue.clear();
    this.sample = 'every';
  }

  /** Starts a walk's trials of the proofs below a node (bestfirst.ts worthLeaves, worthBlocks). */
  startTrials(): void {
    this.leavesAsked = this.leavesOut = this.leafPassed = 0;
    this.blocksAsked = this.blocksDecided = this.blockPassed = this.nodesWhole = 0;
    this.plain = 'may';
    this.upperDecided = 0;
    this.plainCandidates = -1;
  }

  /** Every row read is still tested and counted (the count is neither closed nor past MAX_WINDOW). */
  countOpen(): boolean {
    return this.counting && this.matched <= MAX_WINDOW;
  }

  /** Declares the count final: later passes offer rows to the heap without counting them. */
  closeCount(): void {
    this.counting = false;
  }

  /** Room for n queued nodes' places in row order (bestfirst.ts finishInRowOrder). */
  nodeOrderFor(n: number): Float64Array {
    if (this.nodeOrder.length < n) this.nodeOrder = new Float64Array(2 * n);
    return this.nodeOrder;
  }

  /** A stack with room for `pairs` more (level, index) pairs above sp. */
  stackFor(sp: number, pairs: number): Int32Array {
    if (this.stack.length < sp + 2 * pairs) {
      const bigger = new Int32Array(2 * (sp + 2 * pairs));
      bigger.set(this.stack.subarray(0, sp));
      this.stack = bigger;
    }
    return this.stack;
  }
}
