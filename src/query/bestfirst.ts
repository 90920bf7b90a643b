/**
 * GET /buildings over the row tree's node summaries instead of every candidate row: an
 * early-exit count, then a best-first search for the top k (branch-and-bound ranked search,
 * Tao et al., Information Systems 2007). Same answer as the plain scan, always.
 *
 * 1. Count. A depth-first walk in row order skips nodes outside the bbox or proven to hold
 *    no match; a node wholly inside that is proven to hold only matches adds its row count
 *    without visiting its rows (and waits in the queue below for the ranking), and so does a
 *    node of RUN_LEVEL or above whose only undecided filter is a list, with the count of its
 *    rows whose code passes (proofs.ts countOf); other nodes of RUN_LEVEL, less the leaves the
 *    proofs rule out (addLeaves), or whole nodes above them where those proofs have been
 *    deciding nothing (worthBlocks), are merged into runs and scanned (rows counted and offered to
 *    the heap, or while they are few next to the bbox's candidates, held aside and, if the
 *    count caps, read again by the ranking: DEFER_SHARE). The walk stops as soon as more than
 *    MAX_WINDOW matches are counted: past that, total and total_is_capped are settled. What it
 *    has not reached goes to the queue. A filtered walk headed for few matches over nodes the
 *    summaries decide nothing of scans the rest of its bbox plainly instead (plain-rest.ts).
 * 2. Rank. Nodes wait in a max-queue keyed by the greatest sort key their rows can hold. The
 *    search pops the best; an upper node pushes its children, a node of RUN_LEVEL has its
 *    leaves offered (only rows whose key can still enter the heap go through the filters). It
 *    stops when the heap holds k = offset + limit rows and the best waiting node bounds below
 *    the k-th key: a node whose bound equals that key is still expanded, since one of its rows
 *    can win on building_id; while the heap is not full nothing is pruned, so rows of unknown
 *    key are reached whenever fewer than k known keys match (and once only such nodes are
 *    left, each is scanned whole: bounds can no longer tell them apart). A count that capped
 *    while its matches were common ranks off the top of the key's whole order instead, where
 *    the key has one (key-order.ts).
 *
 * `walkBuildings` is step 1 alone, carried to the end in row order (the planner's choice for
 * deep pages, choose.ts).
 *
 * All snapshots of the view share the heap, the count and the queue, which the search state
 * (search-state.ts) holds with every buffer the walk and the ranking use.
 */
import type { Snapshot } from '../catalog/snapshot.ts';
import { FANOUT, LEAF_ROWS, type NodeStep, type NodeVisitor } from '../catalog/rowtree.ts';
import { candidateRows } from './estimate.ts';
import { boundAt, type NodeBound, type SearchPlan } from './plan.ts';
import { ALL, NONE, SOME, countOf, emptyAmong, verdictOf, type NodeProof } from './proofs.ts';
import { BLOCK_ROWS, RUN_ROWS, SAMPLE_STRIDE } from './run.ts';
import { scanRows } from './scan.ts';
import { rankFromOrder } from './key-order.ts';
import { PLAIN_LEVEL, mayGoPlain, plainRestPays, scanRest } from './plain-rest.ts';
import type { BlockSample, SearchState } from './search-state.ts';
import { MAX_WINDOW, type BBox } from './types.ts';

/**
 * Nodes wholly inside the bbox at this level and below (512 rows) are scanned as one run, not
 * expanded: a key test over a few hundred rows costs less than queueing, popping and proving
 * their leaves one by one. A node the bbox cuts is expanded down to its leaves, whose boxes
 * leave out the rows outside.
 */
const RUN_LEVEL = 1;

/**
 * Leaves of blocks wholly inside the bbox, asked of the proofs until the count passes
 * MAX_WINDOW. A block the proofs cannot rule out may still hold leaves they can: a filter that
 * keeps a few percent of rows (solar_presence=detected, a currency) leaves most leaves of 64
 * rows without a match but almost no block of 512. Such leaves are skipped and the block's
 * other leaves gathered into one run (run.ts, scan.ts scanSpans). Asking costs each proof one
 * pass over the block's 8 leaves' summaries, and each gap a shorter run: with the compiled
 * kernels, about what scanning a third of the block's rows costs. So after the first
 * LEAF_TRIAL leaves, only while at least 1 / LEAF_SHARE of those asked were ruled out, else
 * every LEAF_STRIDE-th block. Past MAX_WINDOW
 * matches the leaves hold matches (few are ruled out) and a row costs one key comparison. A
 * count closed below the cap is another matter: the nodes the search left (counted from a
 * list's rows per code) are then read in row order, and their leaves still asked: few matches
 * among many ruled-out leaves is where asking pays most.
 */
const LEAF_TRIAL = 64;
const LEAF_SHARE = 2;
const LEAF_STRIDE = 16;

function worthLeaves(st: SearchState): boolean {
  if (st.matched > MAX_WINDOW) return false;
  return st.leavesAsked < LEAF_TRIAL || st.leavesOut * LEAF_SHARE >= st.leavesAsked || ++st.leafPassed % LEAF_STRIDE === 0;
}

// A block's leaves are ruled out in one 32-bit mask.
if (FANOUT ** RUN_LEVEL > 32) throw new Error('addLeaves: a block of RUN_LEVEL holds more than 32 leaves');

/**
 * Nodes one level above a block, wholly inside the bbox and undecided, are expanded to their
 * blocks while the blocks' proofs pay: after the first BLOCK_TRIAL blocks, only while at least
 * 1 / BLOCK_SHARE of those asked were decided (no match, all match, counted) or had leaves
 * ruled out, else every BLOCK_STRIDE-th such node. Otherwise the node's rows go to the run
 * whole: where no proof decides anything (a filter on a column whose blocks all span its
 * range), asking each block and leaf costs more than the rows they would have spared.
 */
const BLOCK_TRIAL = 16;
const BLOCK_SHARE = 8;
const BLOCK_STRIDE = 8;

function worthBlocks(st: SearchState): boolean {
  return st.blocksAsked < BLOCK_TRIAL || st.blocksDecided * BLOCK_SHARE >= st.blocksAsked || ++st.blockPassed % BLOCK_STRIDE === 0;
}

/** Adds the rows [lo, hi) of a block wholly inside the bbox to the run, less its leaves the proofs rule out; true if any were. */
function addLeaves(st: SearchState, proofs: readonly NodeProof[], lo: number, hi: number): boolean {
  // Leaves are the tree's first nodes: a leaf's node index is its own.
  const count = Math.ceil((hi - lo) / LEAF_ROWS);
  const out = emptyAmong(proofs, lo / LEAF_ROWS, count);
  st.leavesAsked += count;
  if (out === 0) {
    st.run.add(lo, hi, false, true);
    return false;
  }
  for (let j = 0; j < count; j++) {
    if ((out & (1 << j)) !== 0) {
      st.leavesOut++;
      continue;
    }
    const a = lo + j * LEAF_ROWS;
    st.run.add(a, Math.min(hi, a + LEAF_ROWS), false, true);
  }
  return true;
}

/** A sampled walk (guess.ts) reads the block that holds row lo. */
function blockRead(sample: BlockSample, lo: number): boolean {
  if (sample === 'every') return true;
  return (Math.floor(lo / BLOCK_ROWS) % SAMPLE_STRIDE === 0) === (sample === 'sampled');
}

/**
 * The count walk of a search scans nodes only to count their matches; the ranking wants just
 * the few of their rows whose keys reach the k-th. While the rows it has scanned are a small
 * share of the bbox's candidates (1 / DEFER_SHARE), the walk defers them: the search state
 * holds their matches unranked (`holding`), and the nodes are listed. Once the count is past
 * MAX_WINDOW the held rows are dropped and the nodes queued for the ranking like those the walk
 * never reached; it reads again only the few bounded above the k-th key. Offering the walk's
 * rows in its order would rebuild the heap again and again and fetch each row's key and rank
 * cold. Past that share, or when the walk ends before the count caps, the held rows are offered
 * (each found once, in the order found) and the walk goes on offering: the ranking would
 * otherwise read most of the deferred nodes again.
 */
export const DEFER_SHARE = 8;
/** Below this many rows scanned, the share is not asked (the bbox's candidates are not counted). */
export const DEFER_MIN_ROWS = 16_384;

/**
 * What became of a search's deferral (searchBuildings returns it, for tests); the answer is the
 * same either way. 'deferred': the count capped while holding, the walk's nodes were queued for
 * the ranking and their held rows dropped; 'stopped': the rows scanned passed their share of
 * the candidates, the held rows were offered and the walk went on offering; 'held-to-end': the
 * walk ended below the cap while holding, every match was held, then offered.
 */
export type DeferralOutcome = 'deferred' | 'stopped' | 'held-to-end';

/** Lists node i of `level` in snapshot si, whose rows the count walk holds, for the ranking; stops holding past the share. */
function defer(st: SearchState, si: number, level: number, i: number, rows: number): void {
  if (3 * st.deferredCount + 3 > st.deferredNodes.length) {
    const bigger = new Int32Array(2 * st.deferredNodes.length);
    bigger.set(st.deferredNodes);
    st.deferredNodes = bigger;
  }
  const nodes = st.deferredNodes;
  nodes[3 * st.deferredCount] = si;
  nodes[3 * st.deferredCount + 1] = level;
  nodes[3 * st.deferredCount + 2] = i;
  st.deferredCount++;
  st.deferredRows += rows;
  if (st.deferredRows < DEFER_MIN_ROWS) return;
  if (st.candidates < 0) st.candidates = candidateRows(st, st.snapshots, st.bbox!);
  if (st.deferredRows * DEFER_SHARE > st.candidates) stopHolding(st, true);
}

/** Ends holding; the held rows are then offered to the plans' keys (`offer`) or dropped. */
function stopHolding(st: SearchState, offer: boolean): void {
  st.holding = false;
  if (offer) st.held.release(st.heap, st.snapshots, st.plans);
  else st.held.clear();
}

/**
 * Counts and ranks the matches of `plans` (one per snapshot, null: nothing can match there)
 * into st's heap, which st.start has prepared: the count walk, then the best-first ranking.
 * Every plan needs a bound.
 */
export function searchBuildings(
  st: SearchState,
  snapshots: readonly Snapshot[],
  plans: readonly (SearchPlan | null)[],
  bbox: BBox,
): DeferralOutcome {
  st.queue.clear();
  st.coveredRows = 0;
  st.startTrials();
  st.snapshots = snapshots;
  st.plans = plans;
  st.bbox = bbox;
  st.holding = true;
  st.deferredCount = st.deferredRows = 0;
  st.candidates = -1;
  for (let si = 0; si < snapshots.length; si++) {
    const plan = plans[si];
    if (plan === null || snapshots[si].rows === 0) continue;
    const tree = snapshots[si].tree;
    const top = tree.levelStart.length - 1;
    if (st.matched <= MAX_WINDOW) walk(st, snapshots[si], si, plan, bbox, true);
    else st.queue.push(boundAt(plan.bound!, tree.levelStart[top]), si, top, 0);
  }
  const deferred = st.holding && st.matched > MAX_WINDOW;
  const outcome: DeferralOutcome = deferred ? 'deferred' : st.holding ? 'held-to-end' : 'stopped';
  if (st.holding) stopHolding(st, !deferred);
  st.snapshots = st.plans = [];
  st.bbox = null;
  st.closeCount();
  if (deferred && rankFromOrder(st, snapshots, plans, bbox)) {
    st.queue.clear();
    st.finish = 'key order';
    return outcome;
  }
  if (deferred) {
    const nodes = st.deferredNodes;
    for (let j = 0; j < st.deferredCount; j++) {
      const si = nodes[3 * j];
      const level = nodes[3 * j + 1];
      const i = nodes[3 * j + 2];
      st.queue.push(boundAt(plans[si]!.bound!, snapshots[si].tree.levelStart[level] + i), si, level, i);
    }
  }
  // Deferred, the heap holds nothing yet for boundsWillNotPrune to judge by; the walk read few rows.
  st.finish = !deferred && boundsWillNotPrune(st, snapshots, plans, bbox) ? 'row order' : 'best-first';
  if (st.finish === 'row order') finishInRowOrder(st, snapshots, plans, bbox);
  else rank(st, snapshots, plans, bbox);
  return outcome;
}

/**
 * True when best-first would read much of what is left anyway, one block at a time: when at
 * least 2 / BLOCKS_ABOVE_PARTS of the blocks left (nodes of RUN_LEVEL, the unit the ranking
 * reads) are bounded at or above the heap's threshold. Judged after the count walk, which has
 * read at least 10,001 matches. Row order then reads them all for less: best-first pays a block
 * several times what row order does (the queue, each leaf's bound and proofs, where row order
 * tests keys against the threshold and skips leaves by their maxima).
 *
 * However many matches the blocks above the threshold promise, it is the blocks that count: the
 * threshold rises as they are read, but a node's bound over rows the filters leave out (the
 * tallest buildings under a volume cap) stays above it, and best-first then reads them all.
 */
function boundsWillNotPrune(st: SearchState, snapshots: readonly Snapshot[], plans: readonly (SearchPlan | null)[], bbox: BBox): boolean {
  if (st.queue.size === 0 || st.coveredRows === 0) return false;
  return mostBlocksAbove(st, snapshots, plans, bbox, st.heap.threshold());
}

/** boundsWillNotPrune's share: 2 of this many blocks left bounded at or above the threshold. */
const BLOCKS_ABOVE_PARTS = 5;

/**
 * Counts the blocks (nodes of RUN_LEVEL, the unit best-first reads) of queued nodes that meet
 * the bbox, and those bounded at or above thr by a known key, going down only into nodes the
 * bbox cuts or bounded at or above thr: true when at least 2 / BLOCKS_ABOVE_PARTS are.
 */
function mostBlocksAbove(
  st: SearchState,
  snapshots: readonly Snapshot[],
  plans: readonly (SearchPlan | null)[],
  bbox: BBox,
  thr: number,
): boolean {
  const { queue, stack } = st;
  const count = (st.blockCount ??= new BlockCount());
  count.start(thr);
  for (let j = 0; j < queue.size; j++) {
    const s = snapshots[queue.snapAt(j)];
    count.s = s;
    count.bound = plans[queue.snapAt(j)]!.bound!;
    stack[0] = queue.levelAt(j);
    stack[1] = queue.indexAt(j);
    s.tree.walk(bbox, count, stack, 2);
  }
  return BLOCKS_ABOVE_PARTS * count.from >= 2 * count.left;
}

/** mostBlocksAbove's visitor, over the nodes below one queued node at a time (s, bound); one per search state. */
export class BlockCount implements NodeVisitor {
  s!: Snapshot;
  bound!: NodeBound;
  /** Blocks that meet the bbox, and those bounded at or above thr. */
  left = 0;
  from = 0;
  private thr = 0;

  /** Starts a count of the blocks bounded at or above thr. */
  start(thr: number): void {
    this.thr = thr;
    this.left = this.from = 0;
  }

  visit(level: number, i: number, node: number, inside: boolean): NodeStep {
    const { thr, s } = this;
    const nb = boundAt(this.bound, node);
    // A node of unknown keys only: the ranking scans such nodes whole, after every other.
    const below = nb < thr || nb === -Infinity;
    if (level <= RUN_LEVEL) {
      this.left++;
      if (!below) this.from++;
      return 'over';
    }
    if (below && inside) {
      const span = s.tree.levelSpan[level];
      this.left += Math.ceil((Math.min(s.rows, (i + 1) * span) - i * span) / s.tree.levelSpan[RUN_LEVEL]);
      return 'over';
    }
    return 'down';
  }
}

/** Levels a node's place in row order leaves room for (first row * LEVELS + level). */
const LEVELS = 64;

/**
 * Scans every queued node in row order, as the walk would have (the order cannot change the
 * answer). The queue holds its nodes in heap order: sorted by their first row (nodes of a
 * snapshot never overlap), they reach the run in ascending order, which gathers them into long
 * spans, and the leaves' proofs are asked as the walk asks them.
 */
function finishInRowOrder(st: SearchState, snapshots: readonly Snapshot[], plans: readonly (SearchPlan | null)[], bbox: BBox): void {
  const queue = st.queue;
  for (let si = 0; si < snapshots.length; si++) {
    const span = snapshots[si].tree.levelSpan;
    const order = st.nodeOrderFor(queue.size);
    let n = 0;
    for (let j = 0; j < queue.size; j++) {
      if (queue.snapAt(j) === si) order[n++] = queue.indexAt(j) * span[queue.levelAt(j)] * LEVELS + queue.levelAt(j);
    }
    if (n === 0) continue;
    order.subarray(0, n).sort();
    // The walk pops the stack's top first: the first node in row order goes on last.
    let sp = 0;
    for (let j = n - 1; j >= 0; j--) {
      const level = order[j] % LEVELS;
      const stack = st.stackFor(sp, 32 * FANOUT + 1);
      stack[sp++] = level;
      stack[sp++] = (order[j] - level) / LEVELS / span[level];
    }
    descend(st, snapshots[si], si, plans[si]!, bbox, false, sp);
  }
  queue.clear();
}

/**
 * The walk alone, in row order to the end, with nothing queued: nodes proven empty are skipped,
 * every other row is scanned (proven matches without their filters). What the plain scan does,
 * less what the proofs rule out; no bound is needed. `sample` limits it to the blocks of a
 * sample, or to the others (guess.ts).
 */
export function walkBuildings(
  st: SearchState,
  snapshots: readonly Snapshot[],
  plans: readonly (SearchPlan | null)[],
  bbox: BBox,
  sample: BlockSample = 'every',
): void {
  st.sample = sample;
  if (sample !== 'others') st.startTrials();
  if (sample === 'every') st.coveredRows = 0;
  try {
    for (let si = 0; si < snapshots.length; si++) {
      const plan = plans[si];
      if (plan !== null && snapshots[si].rows > 0) walk(st, snapshots[si], si, plan, bbox, false);
    }
  } finally {
    st.sample = 'every';
  }
}

/**
 * The depth-first walk of one snapshot in row order. With `search`, it stops once the count
 * is settled and leaves nodes proven full or counted, and whatever it has not reached, to the queue;
 * without, it goes to the end and scans those nodes in place.
 */
function walk(st: SearchState, s: Snapshot, si: number, plan: SearchPlan, bbox: BBox, search: boolean): void {
  st.stack[0] = s.tree.levelStart.length - 1;
  st.stack[1] = 0;
  descend(st, s, si, plan, bbox, search, 2);
}

/** The walk from the sp / 2 (level, index) pairs on the state's stack. */
function descend(st: SearchState, s: Snapshot, si: number, plan: SearchPlan, bbox: BBox, search: boolean, sp: number): void {
  const { levelStart } = s.tree;
  const { heap, queue, run, stack } = st;
  run.start(s, si, plan, bbox, search ? RUN_ROWS : Infinity, true);
  const descent = (st.descent ??= new Descent(st));
  descent.start(s, si, plan, search, bbox);
  sp = s.tree.walk(bbox, descent, stack, sp);
  if (st.plain === 'judging') {
    // Stopped at a node of PLAIN_LEVEL to judge the rest (plain-rest.ts): the node goes back on top.
    st.plain = 'not';
    stack[sp++] = PLAIN_LEVEL;
    stack[sp++] = st.plainIndex;
    if (plainRestPays(st, s, plan, bbox, stack, sp)) {
      run.flush();
      // Rows scanned from here are not listed as deferred nodes: were the count to cap while
      // holding, the ranking would drop them with the held ones and never read them again.
      if (st.holding) stopHolding(st, true);
      scanRest(st, s, si, plan, bbox, stack, sp);
      st.plain = 'scanned';
      sp = 0;
    } else sp = s.tree.walk(bbox, descent, stack, sp);
  }
  run.flush();
  // The count is settled; what the walk did not reach is left to the ranking.
  const thr = heap.threshold();
  const bound = plan.bound!;
  while (sp > 0) {
    const i = stack[--sp];
    const level = stack[--sp];
    const b = boundAt(bound, levelStart[level] + i);
    if (b >= thr) queue.push(b, si, level, i);
  }
}

/**
 * The walk's visitor: skips nodes proven empty, counts (searching) or reads whole (not) nodes
 * proven full, hands blocks and leaves to the run, and stops a search once the count is past
 * MAX_WINDOW. One per search state.
 */
export class Descent implements NodeVisitor {
  private s!: Snapshot;
  private si = 0;
  private plan!: SearchPlan;
  private search = false;
  private bbox!: BBox;

  constructor(private readonly st: SearchState) {}

  /** Starts a walk of snapshot s (index si) with its plan: a search's count walk (`search`), or to the end. */
  start(s: Snapshot, si: number, plan: SearchPlan, search: boolean, bbox: BBox): void {
    this.s = s;
    this.si = si;
    this.plan = plan;
    this.search = search;
    this.bbox = bbox;
  }

  visit(level: number, i: number, node: number, inside: boolean): NodeStep {
    const { st, plan, search } = this;
    const { proofs, complete, countable } = plan;
    if (level === PLAIN_LEVEL && mayGoPlain(st, this.s, plan, this.bbox)) {
      st.plain = 'judging';
      st.plainIndex = i;
      return 'stop';
    }
    const span = this.s.tree.levelSpan[level];
    const lo = i * span;
    // A sampled walk (guess.ts) passes over the blocks and leaves it does not read before asking their proofs.
    if (level <= RUN_LEVEL && !blockRead(st.sample, lo)) return 'over';
    const hi = Math.min(this.s.rows, lo + span);
    let verdict = SOME;
    let counted = -1;
    if (countable && search && inside && level >= RUN_LEVEL) {
      // A node wholly inside whose only undecided filter is a list: its matches are counted
      // from the rows per code, and it waits for the ranking like a node proven full. countOf
      // asks every proof as verdictOf does (0: none match), so it stands in for it here.
      counted = countOf(proofs, complete, node, hi - lo);
      if (counted === 0) verdict = NONE;
    } else verdict = verdictOf(proofs, complete, node);
    // A block wholly inside reached here was its parent's to expand (worthBlocks).
    const block = inside && level === RUN_LEVEL;
    if (block) st.blocksAsked++;
    if (level >= PLAIN_LEVEL && verdict !== SOME) st.upperDecided++;
    if (verdict === NONE) {
      if (block) st.blocksDecided++;
      st.coveredRows += span;
      return 'over';
    }
    if (inside && (verdict === ALL || counted >= 0)) {
      if (block) st.blocksDecided++;
      if (!search) st.run.add(lo, hi, false, false);
      else {
        st.coveredRows += hi - lo;
        st.matched += verdict === ALL ? hi - lo : counted;
        const nb = boundAt(plan.bound!, node);
        if (nb >= st.heap.threshold()) st.queue.push(nb, this.si, level, i);
      }
      return search && st.matched > MAX_WINDOW ? 'stop' : 'over';
    }
    // Leaves, blocks, and the nodes above blocks that are not worth expanding go to the run.
    const whole = inside && level === RUN_LEVEL + 1 && !worthBlocks(st);
    if (level === 0 || (inside && level <= RUN_LEVEL) || whole) {
      st.coveredRows += hi - lo;
      if (whole) st.nodesWhole++;
      if (block && verdict === SOME && proofs.length > 0 && worthLeaves(st)) {
        if (addLeaves(st, proofs, lo, hi)) st.blocksDecided++;
      } else st.run.add(lo, hi, !inside, verdict !== ALL);
      // The share counts the block's rows, ruled-out leaves included: counting only those read
      // would keep the walk deferring too long where most leaves are ruled out.
      if (search && st.holding) defer(st, this.si, level, i, hi - lo);
      return search && st.matched > MAX_WINDOW ? 'stop' : 'over';
    }
    return 'down';
  }
}

/**
 * Offers the rows of a node at RUN_LEVEL or below, leaf by leaf: a leaf bounded below the
 * heap's threshold, outside the bbox or proven empty is dropped; a leaf bounded at least as
 * high as every node waiting is scanned now (adjacent ones as one run); any other waits in the
 * queue, where the heap may have risen past it by its turn. What the node's own box and
 * verdict settle (wholly inside, all matching) is not tested again per leaf.
 */
function rankLeaves(
  st: SearchState,
  s: Snapshot,
  si: number,
  plan: SearchPlan,
  bbox: BBox,
  level: number,
  i: number,
  inside: boolean,
  verdict: number,
): void {
  const tree = s.tree;
  const { levelCount, levelSpan } = tree;
  const bound = plan.bound!;
  const { heap, queue, run } = st;
  const leaves = levelSpan[level] / LEAF_ROWS;
  const next = queue.peek();
  let thr = heap.threshold();
  run.start(s, si, plan, bbox);
  for (let leaf = i * leaves, end = Math.min(levelCount[0], leaf + leaves); leaf < end; leaf++) {
    // Leaves are the tree's first nodes: a leaf's node index is its own.
    const lb = boundAt(bound, leaf);
    if (lb < thr) continue;
    if (lb < next) {
      queue.push(lb, si, 0, leaf);
      continue;
    }
    let partial = false;
    if (!inside) {
      if (!tree.meets(leaf, bbox)) continue;
      partial = !tree.within(leaf, bbox);
    }
    const v = verdict === ALL ? ALL : verdictOf(plan.proofs, plan.complete, leaf);
    if (v === NONE) continue;
    const lo = leaf * LEAF_ROWS;
    if (run.add(lo, Math.min(s.rows, lo + LEAF_ROWS), partial, v !== ALL)) thr = heap.threshold();
  }
  run.flush();
}

function rank(st: SearchState, snapshots: readonly Snapshot[], plans: readonly (SearchPlan | null)[], bbox: BBox): void {
  const { heap, queue } = st;
  while (queue.size > 0) {
    queue.pop();
    const thr = heap.threshold();
    if (queue.topBound < thr) break;
    const si = queue.topSnap;
    const level = queue.topLevel;
    const i = queue.topIndex;
    const s = snapshots[si];
    const plan = plans[si]!;
    const tree = s.tree;
    const { levelStart, levelCount, levelSpan } = tree;
    const node = levelStart[level] + i;
    if (!tree.meets(node, bbox)) continue;
    const verdict = verdictOf(plan.proofs, plan.complete, node);
    if (verdict === NONE) continue;
    const inside = tree.within(node, bbox);
    // A node of unknown keys only (so is every node left) gains nothing from expansion: its rows compete by building_id.
    if (inside && queue.topBound === -Infinity) {
      const lo = i * levelSpan[level];
      scanRows(st, s, si, plan, bbox, lo, Math.min(s.rows, lo + levelSpan[level]), false, verdict !== ALL, plan.attained);
      continue;
    }
    if (level <= RUN_LEVEL) {
      rankLeaves(st, s, si, plan, bbox, level, i, inside, verdict);
      continue;
    }
    const bound = plan.bound!;
    const below = levelStart[level - 1];
    const first = i * FANOUT;
    const last = Math.min(levelCount[level - 1], first + FANOUT);
    for (let c = first; c < last; c++) {
      const cb = boundAt(bound, below + c);
      if (cb >= thr) queue.push(cb, si, level - 1, c);
    }
  }
}
