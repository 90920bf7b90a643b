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
 *    proofs rule out (addLeaves), are merged into runs and scanned (rows counted and offered to
 *    the heap, or while they are few next to the bbox's candidates, held aside and, if the
 *    count caps, read again by the ranking: DEFER_SHARE). The walk stops as soon as more than
 *    MAX_WINDOW matches are counted: past that, total and total_is_capped are settled. What it
 *    has not reached goes to the queue.
 * 2. Rank. Nodes wait in a max-queue keyed by the greatest sort key their rows can hold. The
 *    search pops the best; an upper node pushes its children, a node of RUN_LEVEL has its
 *    leaves offered (only rows whose key can still enter the heap go through the filters). It
 *    stops when the heap holds k = offset + limit rows and the best waiting node bounds below
 *    the k-th key: a node whose bound equals that key is still expanded, since one of its rows
 *    can win on building_id; while the heap is not full nothing is pruned, so rows of unknown
 *    key are reached whenever fewer than k known keys match (and once only such nodes are
 *    left, each is scanned whole: bounds can no longer tell them apart).
 *
 * `walkBuildings` is step 1 alone, carried to the end in row order (the planner's choice for
 * deep pages, choose.ts).
 *
 * All snapshots of the view share the heap, the count and the queue.
 */
import type { Snapshot } from '../catalog/snapshot.ts';
import { FANOUT, LEAF_ROWS } from '../catalog/rowtree.ts';
import { candidateRows } from './estimate.ts';
import { boundAt, type Plan } from './plan.ts';
import { ALL, NONE, SOME, countOf, emptyAmong, verdictOf, type NodeProof } from './proofs.ts';
import { HeldMatches } from './held.ts';
import type { KeySource } from './keys.ts';
import { CHUNK, closeCount, countProven, heap, matches, scanRows, scanSpans } from './scan.ts';
import { MAX_WINDOW, type BBox } from './types.ts';

/** A binary max-heap of tree nodes (snapshot, level, index in level) by bound, on typed arrays that grow. */
class NodeQueue {
  private bound = new Float64Array(1024);
  private snap = new Uint16Array(1024);
  private level = new Uint8Array(1024);
  private index = new Uint32Array(1024);
  size = 0;
  /** The node `pop` took. */
  topBound = 0;
  topSnap = 0;
  topLevel = 0;
  topIndex = 0;

  clear(): void {
    this.size = 0;
  }

  snapAt(j: number): number {
    return this.snap[j];
  }

  levelAt(j: number): number {
    return this.level[j];
  }

  indexAt(j: number): number {
    return this.index[j];
  }

  /** The greatest bound waiting (-Infinity when none). */
  peek(): number {
    return this.size > 0 ? this.bound[0] : -Infinity;
  }

  push(b: number, s: number, level: number, index: number): void {
    if (this.size === this.bound.length) this.grow();
    const bound = this.bound;
    let i = this.size++;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (bound[p] >= b) break;
      this.move(p, i);
      i = p;
    }
    this.put(i, b, s, level, index);
  }

  /** Removes the node of greatest bound into top*. */
  pop(): void {
    const bound = this.bound;
    this.topBound = bound[0];
    this.topSnap = this.snap[0];
    this.topLevel = this.level[0];
    this.topIndex = this.index[0];
    const last = --this.size;
    if (last === 0) return;
    const b = bound[last];
    let i = 0;
    for (;;) {
      let c = 2 * i + 1;
      if (c >= last) break;
      if (c + 1 < last && bound[c + 1] > bound[c]) c++;
      if (bound[c] <= b) break;
      this.move(c, i);
      i = c;
    }
    this.put(i, b, this.snap[last], this.level[last], this.index[last]);
  }

  private put(i: number, b: number, s: number, level: number, index: number): void {
    this.bound[i] = b;
    this.snap[i] = s;
    this.level[i] = level;
    this.index[i] = index;
  }

  private move(from: number, to: number): void {
    this.bound[to] = this.bound[from];
    this.snap[to] = this.snap[from];
    this.level[to] = this.level[from];
    this.index[to] = this.index[from];
  }

  private grow(): void {
    const n = this.bound.length * 2;
    const bound = new Float64Array(n);
    const snap = new Uint16Array(n);
    const level = new Uint8Array(n);
    const index = new Uint32Array(n);
    bound.set(this.bound);
    snap.set(this.snap);
    level.set(this.level);
    index.set(this.index);
    this.bound = bound;
    this.snap = snap;
    this.level = level;
    this.index = index;
  }
}

const queue = new NodeQueue();
/**
 * Nodes wholly inside the bbox at this level and below (512 rows) are scanned as one run, not
 * expanded: a key test over a few hundred rows costs less than queueing, popping and proving
 * their leaves one by one. A node the bbox cuts is expanded down to its leaves, whose boxes
 * leave out the rows outside.
 */
const RUN_LEVEL = 1;
/** (level, index) pairs of the walk: at most FANOUT children per level of a tree of < 32 levels, above the nodes it starts from. */
let stack = new Int32Array(2 * 32 * FANOUT);
/**
 * Rows of the nodes the count walk has disposed of (scanned, proven full or empty, or counted from
 * a list's rows per code): what the estimate in `searchBuildings` scales from.
 */
let coveredRows = 0;

/**
 * Verdicts in a row that proved nothing (nor let a list count the node), and blocks and leaves (nodes of RUN_LEVEL and below)
 * passed over since. Where the filters' summaries decide no node (a list of most roof shapes,
 * bounds every node straddles), asking them of every block and leaf is time lost; after
 * UNDECIDED_RUN such verdicts in a row only every PROBE_STRIDE-th block or leaf is asked, until
 * one decides. Upper nodes are always asked. A node not asked is read as one that may hold
 * matches (its rows go through the filters): only time is at stake. The constants are tuned with
 * `npm run bench:query`'s paired runs (bench/README.md, bench:query).
 */
let undecided = 0;
let passed = 0;
const UNDECIDED_RUN = 256;
const PROBE_STRIDE = 8;

function worthProving(): boolean {
  return undecided < UNDECIDED_RUN || ++passed % PROBE_STRIDE === 0;
}

/**
 * Leaves of blocks wholly inside the bbox, asked of the proofs until the count passes
 * MAX_WINDOW. A block the proofs cannot rule out may still hold leaves they can: a filter that
 * keeps a few percent of rows (solar_presence=detected, a currency) leaves most leaves of 64
 * rows without a match but almost no block of 512. Such leaves are skipped and the block's
 * other leaves gathered into one run (Run, scan.ts scanSpans). Asking costs each proof one pass
 * over the block's 8 leaves' summaries, and each gap a shorter run, ~1/8 of the block's time
 * when nothing is ruled out: after the first LEAF_TRIAL leaves, only while at least 1 /
 * LEAF_SHARE of those asked were ruled out, else every LEAF_STRIDE-th block. Past MAX_WINDOW
 * matches the leaves hold matches (few are ruled out) and a row costs one key comparison. A
 * count closed below the cap is another matter: the nodes the search left (counted from a
 * list's rows per code) are then read in row order, and their leaves still asked: few matches
 * among many ruled-out leaves is where asking pays most. The constants are tuned with
 * `npm run bench:query`'s paired runs (bench/README.md, bench:query).
 */
let leavesAsked = 0;
let leavesOut = 0;
let leafPassed = 0;
const LEAF_TRIAL = 64;
const LEAF_SHARE = 4;
const LEAF_STRIDE = 16;

function worthLeaves(): boolean {
  if (matches() > MAX_WINDOW) return false;
  return leavesAsked < LEAF_TRIAL || leavesOut * LEAF_SHARE >= leavesAsked || ++leafPassed % LEAF_STRIDE === 0;
}

/** Leaves the last walk or search skipped inside blocks it read (for tests). */
export function leavesRuledOut(): number {
  return leavesOut;
}

// A block's leaves are ruled out in one 32-bit mask.
if (FANOUT ** RUN_LEVEL > 32) throw new Error('addLeaves: a block of RUN_LEVEL holds more than 32 leaves');

/** Adds the rows [lo, hi) of a block wholly inside the bbox to the run, less its leaves the proofs rule out. */
function addLeaves(proofs: readonly NodeProof[], lo: number, hi: number): void {
  // Leaves are the tree's first nodes: a leaf's node index is its own.
  const count = Math.ceil((hi - lo) / LEAF_ROWS);
  const out = emptyAmong(proofs, lo / LEAF_ROWS, count);
  leavesAsked += count;
  if (out === 0) {
    run.add(lo, hi, false, true);
    return;
  }
  for (let j = 0; j < count; j++) {
    if ((out & (1 << j)) !== 0) {
      leavesOut++;
      continue;
    }
    const a = lo + j * LEAF_ROWS;
    run.add(a, Math.min(hi, a + LEAF_ROWS), false, true);
  }
}

/** A walk limited to some blocks (guess.ts) reads the block starting at row lo. */
function blockRead(lo: number): boolean {
  if (blocks === EVERY_BLOCK) return true;
  return ((lo / BLOCK_ROWS) % SAMPLE_STRIDE === 0) === (blocks === SAMPLED_BLOCKS);
}

/** Which rows a walk reads, by blocks of BLOCK_ROWS in row order: all, every SAMPLE_STRIDE-th block (from row 0), or the others. */
export const EVERY_BLOCK = 0;
export const SAMPLED_BLOCKS = 1;
export const OTHER_BLOCKS = 2;
export const SAMPLE_STRIDE = 8;
const BLOCK_ROWS = LEAF_ROWS * FANOUT;
let blocks = EVERY_BLOCK;

/**
 * The count walk of a search scans nodes only to count their matches; the ranking wants just
 * the few of their rows whose keys reach the k-th. While the rows it has scanned are a small
 * share of the bbox's candidates (1 / DEFER_SHARE), the walk defers them: a HeldMatches stands
 * in for the plans' keys and keeps their matches unranked, and the nodes are listed here. Once
 * the count is past MAX_WINDOW the held rows are dropped and the nodes queued for the ranking
 * like those the walk never reached; it reads again only the few bounded above the k-th key.
 * Offering the walk's rows in its order would rebuild the heap again and again and fetch each
 * row's key and rank cold. Past that share, or when the walk ends before the count caps, the
 * held rows are offered (each found once, in the order found) and the walk goes on offering:
 * the ranking would otherwise read most of the deferred nodes again.
 */
export const DEFER_SHARE = 8;
/** Below this many rows scanned, the share is not asked (the bbox's candidates are not counted). */
export const DEFER_MIN_ROWS = 16_384;
/**
 * What became of a search's deferral (searchBuildings returns it, for tests). The count capped
 * while deferring: the walk's nodes were queued for the ranking, their held rows dropped.
 */
export const DEFERRED = 0;
/** The rows scanned passed their share of the candidates: the held rows were offered, and the walk went on offering. */
export const DEFERRAL_STOPPED = 1;
/** The walk ended below the cap while deferring: every match was held, then offered. */
export const HELD_TO_END = 2;
let deferring = false;
let deferredNodes = new Int32Array(3 * 1024);
let deferredCount = 0;
let deferredRows = 0;
/** The bbox's candidate rows (estimate.ts), counted once the share is first asked; -1 before. */
let candidates = -1;
const held = new HeldMatches();
/** The search under way (for stopDeferring and the share): its snapshots, plans and bbox. */
let searchSnapshots: readonly Snapshot[] = [];
let searchPlans: readonly (Plan | null)[] = [];
let searchBox: BBox | null = null;
/** The plans' own keys while `held` stands in for them (by snapshot). */
const ownKeys: (KeySource | null)[] = [];

/** Lists node i of `level` in snapshot si, whose rows the count walk scans, for the ranking; stops deferring past the share. */
function defer(si: number, level: number, i: number, rows: number): void {
  if (3 * deferredCount + 3 > deferredNodes.length) {
    const bigger = new Int32Array(2 * deferredNodes.length);
    bigger.set(deferredNodes);
    deferredNodes = bigger;
  }
  deferredNodes[3 * deferredCount] = si;
  deferredNodes[3 * deferredCount + 1] = level;
  deferredNodes[3 * deferredCount + 2] = i;
  deferredCount++;
  deferredRows += rows;
  if (deferredRows < DEFER_MIN_ROWS) return;
  if (candidates < 0) candidates = candidateRows(searchSnapshots, searchBox!);
  if (deferredRows * DEFER_SHARE > candidates) stopDeferring(true);
}

function startDeferring(): void {
  deferring = true;
  deferredCount = deferredRows = 0;
  candidates = -1;
  ownKeys.length = searchPlans.length;
  for (let si = 0; si < searchPlans.length; si++) {
    const plan = searchPlans[si];
    ownKeys[si] = plan === null ? null : plan.key;
    if (plan !== null) plan.key = held;
  }
}

/** Gives the plans their keys back; the held rows are then offered (`offer`) or dropped. */
function stopDeferring(offer: boolean): void {
  deferring = false;
  for (let si = 0; si < searchPlans.length; si++) {
    const plan = searchPlans[si];
    if (plan !== null) plan.key = ownKeys[si]!;
  }
  if (offer) held.release(heap, searchSnapshots, ownKeys);
  else held.clear();
}

/** Spans a gathered run holds at most. */
const MAX_SPANS = 128;
/** Rows a run of the search's count walk grows to at most; below RATE_FROM_ROWS rows read, CHUNK. */
const MAX_RUN_ROWS = 32 * CHUNK;
const RATE_FROM_ROWS = 8 * CHUNK;
/** Rows the search's runs have passed to the scan (Run.flush). */
let readRows = 0;

/**
 * Half the rows the count is expected to need before it caps, at the rate of matches per row
 * read so far (matches proven without reading their rows raise the rate: runs only shorter).
 */
function rowsBeforeCap(): number {
  if (readRows < RATE_FROM_ROWS) return CHUNK;
  const m = matches();
  const rows = ((MAX_WINDOW + 1 - m) * readRows) / (2 * Math.max(1, m));
  return rows < CHUNK ? CHUNK : rows > MAX_RUN_ROWS ? MAX_RUN_ROWS : rows;
}

/**
 * Rows waiting to be scanned: adjacent ranges of one kind merge, so kernels run over long runs.
 * In the walk, ranges wholly inside the bbox that need their filters also gather across gaps
 * (nodes or leaves the proofs ruled out) into one run of several spans, scanned a chunk at a
 * time (scan.ts scanSpans).
 */
class Run {
  private s!: Snapshot;
  private si = 0;
  private plan!: Plan;
  private bbox!: BBox;
  private readonly spans = new Uint32Array(2 * MAX_SPANS);
  private count = 0;
  private rows = 0;
  private partial = false;
  private filtered = false;
  private limit = CHUNK;
  private gaps = false;
  private toCap = false;

  /**
   * Runs grow to `limit` rows (and MAX_SPANS spans): unbounded in the walk. In the search's
   * count walk (`toCap`), short while the count may soon cap: rows of a run past the count are
   * held and dropped, their nodes read again by the ranking (or once the walk has stopped
   * deferring, read in row order, not best-first). After each run the limit is half the rows
   * the count is expected to need before it caps (rowsBeforeCap, at least CHUNK): a count-bound
   * query, a few thousand matches among 700,000 candidates, reads in runs of MAX_RUN_ROWS as
   * the walk does, rather than calling its steps hundreds of times more in runs of CHUNK; an
   * unbounded run reads far past the cap on heavy boxes. With `gaps`, filtered ranges inside
   * the bbox gather across gaps, in ascending row order only (scanSpans).
   */
  start(s: Snapshot, si: number, plan: Plan, bbox: BBox, limit = CHUNK, gaps = false, toCap = false): void {
    this.s = s;
    this.si = si;
    this.plan = plan;
    this.bbox = bbox;
    this.limit = limit;
    this.gaps = gaps;
    this.toCap = toCap;
    this.count = this.rows = 0;
  }

  /** Adds rows [lo, hi); true when the run before them was scanned (so the heap may have changed). */
  add(lo: number, hi: number, partial: boolean, filtered: boolean): boolean {
    const count = this.count;
    if (count > 0 && partial === this.partial && filtered === this.filtered && this.rows < this.limit) {
      const end = 2 * count - 1;
      if (lo === this.spans[end]) {
        this.spans[end] = hi;
        this.rows += hi - lo;
        return false;
      }
      if (this.gaps && !partial && filtered && count < MAX_SPANS && lo > this.spans[end]) {
        this.spans[2 * count] = lo;
        this.spans[2 * count + 1] = hi;
        this.count++;
        this.rows += hi - lo;
        return false;
      }
    }
    const scanned = this.flush();
    this.spans[0] = lo;
    this.spans[1] = hi;
    this.count = 1;
    this.rows = hi - lo;
    this.partial = partial;
    this.filtered = filtered;
    return scanned;
  }

  flush(): boolean {
    const count = this.count;
    if (count === 0) return false;
    readRows += this.rows;
    this.count = this.rows = 0;
    if (count > 1 && blocks === EVERY_BLOCK && this.plan.steps.length > 0) {
      scanSpans(this.s, this.si, this.plan, this.bbox, this.spans, count);
    } else for (let j = 0; j < count; j++) this.scan(this.spans[2 * j], this.spans[2 * j + 1]);
    if (this.toCap) this.limit = rowsBeforeCap();
    return true;
  }

  private scan(lo: number, hi: number): void {
    if (blocks === EVERY_BLOCK) scanRows(this.s, this.si, this.plan, this.bbox, lo, hi, this.partial, this.filtered);
    else {
      // Each period of SAMPLE_STRIDE blocks starts with its sampled block.
      const period = SAMPLE_STRIDE * BLOCK_ROWS;
      for (let base = Math.floor(lo / period) * period; base < hi; base += period) {
        const a = Math.max(lo, blocks === SAMPLED_BLOCKS ? base : base + BLOCK_ROWS);
        const b = Math.min(hi, blocks === SAMPLED_BLOCKS ? base + BLOCK_ROWS : base + period);
        if (a < b) scanRows(this.s, this.si, this.plan, this.bbox, a, b, this.partial, this.filtered);
      }
    }
  }
}

const run = new Run();

/**
 * Counts and ranks the matches of `plans` (one per snapshot, null: nothing can match there)
 * into the heap of scan.ts, which startQuery has prepared: the count walk, then the best-first
 * ranking. Every plan needs a bound. Returns what became of the deferral (DEFERRED,
 * DEFERRAL_STOPPED or HELD_TO_END); the answer is the same either way.
 */
export function searchBuildings(snapshots: readonly Snapshot[], plans: readonly (Plan | null)[], bbox: BBox): number {
  queue.clear();
  coveredRows = 0;
  undecided = passed = readRows = 0;
  leavesAsked = leavesOut = leafPassed = 0;
  searchSnapshots = snapshots;
  searchPlans = plans;
  searchBox = bbox;
  startDeferring();
  for (let si = 0; si < snapshots.length; si++) {
    const plan = plans[si];
    if (plan === null || snapshots[si].rows === 0) continue;
    const tree = snapshots[si].tree;
    const top = tree.levelStart.length - 1;
    if (matches() <= MAX_WINDOW) walk(snapshots[si], si, plan, bbox, true);
    else queue.push(boundAt(plan.bound!, tree.levelStart[top]), si, top, 0);
  }
  const deferred = deferring && matches() > MAX_WINDOW;
  const outcome = deferred ? DEFERRED : deferring ? HELD_TO_END : DEFERRAL_STOPPED;
  if (deferring) stopDeferring(!deferred);
  if (deferred) {
    for (let j = 0; j < deferredCount; j++) {
      const si = deferredNodes[3 * j];
      const level = deferredNodes[3 * j + 1];
      const i = deferredNodes[3 * j + 2];
      queue.push(boundAt(plans[si]!.bound!, snapshots[si].tree.levelStart[level] + i), si, level, i);
    }
  }
  searchSnapshots = searchPlans = [];
  searchBox = null;
  ownKeys.length = 0;
  closeCount();
  // Deferred, the heap holds nothing yet for boundsWillNotPrune to judge by; the walk read few rows.
  if (!deferred && boundsWillNotPrune(snapshots, plans, bbox)) finishInRowOrder(snapshots, plans, bbox);
  else rank(snapshots, plans, bbox);
  return outcome;
}

/**
 * True when best-first would read most of what is left anyway, only one block at a time: when
 * the heap's threshold is not expected to rise much, and most blocks left (nodes of
 * RUN_LEVEL, the unit the ranking reads) are bounded at or above it. Judged after the count
 * walk, which has read at least 10,001 matches.
 *
 * The threshold rises once k matches above it are kept. The rows the walk kept above it,
 * scaled from the rows it covered to the rows left, are a first estimate; where that falls
 * short of 2k (a factor of 2 to spare), the blocks left are counted: each bounded above the
 * threshold holds a row above it, which matches at the rate the walk found. Where nearly every
 * block left is bounded above a threshold that will not rise, row order reads the same rows
 * without the queue's cost; where few are, best-first reads just those.
 */
function boundsWillNotPrune(snapshots: readonly Snapshot[], plans: readonly (Plan | null)[], bbox: BBox): boolean {
  if (queue.size === 0 || coveredRows === 0) return false;
  const thr = heap.threshold();
  // The rows left: the bbox's candidates (read off the tree's upper boxes) less those covered.
  // The spans of the queued nodes would count every row of an upper node the bbox only cuts.
  const left = Math.max(0, candidateRows(snapshots, bbox) - coveredRows);
  const above = heap.countAbove(thr);
  const wanted = 2 * heap.capacityOf();
  if (above + (above * left) / coveredRows >= wanted) return false;
  if (!countQueuedBlocks(snapshots, plans, bbox, thr, (wanted - above) / (matches() / coveredRows))) return false;
  return 2 * blocksFrom >= blocksLeft;
}

/** (level, index) pairs of `countQueuedBlocks`, from one queued node down. */
const blockStack = new Int32Array(2 * 32 * FANOUT);
/** What `countQueuedBlocks` found: blocks of queued nodes that meet the bbox, and those of them bounded at or above its `thr`. */
let blocksLeft = 0;
let blocksFrom = 0;

/**
 * Counts the blocks (nodes of RUN_LEVEL, the unit best-first reads) of queued nodes that meet
 * the bbox (into blocksLeft) and those bounded at or above thr by a known key (into
 * blocksFrom), going down only into nodes the bbox cuts or bounded at or above thr. Stops,
 * false, once `enough` blocks are bounded above thr.
 */
function countQueuedBlocks(
  snapshots: readonly Snapshot[],
  plans: readonly (Plan | null)[],
  bbox: BBox,
  thr: number,
  enough: number,
): boolean {
  const { minLon, minLat, maxLon, maxLat } = bbox;
  blocksLeft = blocksFrom = 0;
  let over = 0;
  for (let j = 0; j < queue.size; j++) {
    const s = snapshots[queue.snapAt(j)];
    const { boxes, levelStart, levelCount, levelSpan } = s.tree;
    const bound = plans[queue.snapAt(j)]!.bound!;
    let sp = 0;
    blockStack[sp++] = queue.levelAt(j);
    blockStack[sp++] = queue.indexAt(j);
    while (sp > 0) {
      const i = blockStack[--sp];
      const level = blockStack[--sp];
      const node = levelStart[level] + i;
      const b = 4 * node;
      const x0 = boxes[b],
        y0 = boxes[b + 1],
        x1 = boxes[b + 2],
        y1 = boxes[b + 3];
      if (x1 < minLon || x0 > maxLon || y1 < minLat || y0 > maxLat) continue;
      const nb = boundAt(bound, node);
      // A node of unknown keys only: the ranking scans such nodes whole, after every other.
      const below = nb < thr || nb === -Infinity;
      if (level <= RUN_LEVEL) {
        blocksLeft++;
        if (!below) blocksFrom++;
        if (nb > thr && ++over >= enough) return false;
        continue;
      }
      if (below && x0 >= minLon && x1 <= maxLon && y0 >= minLat && y1 <= maxLat) {
        blocksLeft += Math.ceil((Math.min(s.rows, (i + 1) * levelSpan[level]) - i * levelSpan[level]) / levelSpan[RUN_LEVEL]);
        continue;
      }
      for (let c = i * FANOUT, e = Math.min(levelCount[level - 1], c + FANOUT); c < e; c++) {
        blockStack[sp++] = level - 1;
        blockStack[sp++] = c;
      }
    }
  }
  return true;
}

/** Scans every queued node in row order, as the walk would have (the order cannot change the answer). */
function finishInRowOrder(snapshots: readonly Snapshot[], plans: readonly (Plan | null)[], bbox: BBox): void {
  for (let si = 0; si < snapshots.length; si++) {
    let sp = 0;
    for (let j = 0; j < queue.size; j++) {
      if (queue.snapAt(j) !== si) continue;
      if (stack.length < sp + 2 * (32 * FANOUT + 1)) {
        const bigger = new Int32Array(2 * stack.length);
        bigger.set(stack);
        stack = bigger;
      }
      stack[sp++] = queue.levelAt(j);
      stack[sp++] = queue.indexAt(j);
    }
    if (sp > 0) descend(snapshots[si], si, plans[si]!, bbox, false, sp);
  }
  queue.clear();
}

/**
 * The walk alone, in row order to the end, with nothing queued: nodes proven empty are skipped,
 * every other row is scanned (proven matches without their filters). What the plain scan does,
 * less what the proofs rule out; no bound is needed. `which` limits it to the blocks of a
 * sample, or to the others (guess.ts).
 */
export function walkBuildings(snapshots: readonly Snapshot[], plans: readonly (Plan | null)[], bbox: BBox, which = EVERY_BLOCK): void {
  blocks = which;
  if (which !== OTHER_BLOCKS) undecided = passed = leavesAsked = leavesOut = leafPassed = 0;
  try {
    for (let si = 0; si < snapshots.length; si++) {
      const plan = plans[si];
      if (plan !== null && snapshots[si].rows > 0) walk(snapshots[si], si, plan, bbox, false);
    }
  } finally {
    blocks = EVERY_BLOCK;
  }
}

/**
 * The depth-first walk of one snapshot in row order. With `search`, it stops once the count
 * is settled and leaves nodes proven full or counted, and whatever it has not reached, to the queue;
 * without, it goes to the end and scans those nodes in place.
 */
function walk(s: Snapshot, si: number, plan: Plan, bbox: BBox, search: boolean): void {
  stack[0] = s.tree.levelStart.length - 1;
  stack[1] = 0;
  descend(s, si, plan, bbox, search, 2);
}

/** The walk from the sp / 2 (level, index) pairs on the stack. */
function descend(s: Snapshot, si: number, plan: Plan, bbox: BBox, search: boolean, sp: number): void {
  const { minLon, minLat, maxLon, maxLat } = bbox;
  const tree = s.tree;
  const { boxes, levelStart, levelCount, levelSpan } = tree;
  const { proofs, complete, countable, bound } = plan;
  const rows = s.rows;
  run.start(s, si, plan, bbox, search ? CHUNK : Infinity, true, search);
  while (sp > 0 && (!search || matches() <= MAX_WINDOW)) {
    const i = stack[--sp];
    const level = stack[--sp];
    const node = levelStart[level] + i;
    const b = 4 * node;
    const x0 = boxes[b],
      y0 = boxes[b + 1],
      x1 = boxes[b + 2],
      y1 = boxes[b + 3];
    if (x1 < minLon || x0 > maxLon || y1 < minLat || y0 > maxLat) continue;
    const inside = x0 >= minLon && x1 <= maxLon && y0 >= minLat && y1 <= maxLat;
    const lo = i * levelSpan[level];
    const hi = Math.min(rows, lo + levelSpan[level]);
    let verdict = SOME;
    let counted = -1;
    if (level > RUN_LEVEL || worthProving()) {
      if (countable && search && inside && level >= RUN_LEVEL) {
        // A node wholly inside whose only undecided filter is a list: its matches are counted
        // from the rows per code, and it waits for the ranking like a node proven full. countOf
        // asks every proof as verdictOf does (0: none match), so it stands in for it here.
        counted = countOf(proofs, complete, node, hi - lo);
        if (counted === 0) verdict = NONE;
      } else verdict = verdictOf(proofs, complete, node);
      undecided = verdict === SOME && counted < 0 ? undecided + 1 : 0;
    }
    if (verdict === NONE) {
      coveredRows += levelSpan[level];
      continue;
    }
    if (inside && (verdict === ALL || counted >= 0)) {
      if (!search) run.add(lo, hi, false, false);
      else {
        coveredRows += hi - lo;
        countProven(verdict === ALL ? hi - lo : counted);
        const nb = boundAt(bound!, node);
        if (nb >= heap.threshold()) queue.push(nb, si, level, i);
      }
      continue;
    }
    if (level === 0 || (inside && level <= RUN_LEVEL)) {
      coveredRows += hi - lo;
      if (inside && level > 0 && verdict === SOME && proofs.length > 0 && blockRead(lo) && worthLeaves()) addLeaves(proofs, lo, hi);
      else run.add(lo, hi, !inside, verdict !== ALL);
      // The share counts the block's rows, ruled-out leaves included: counting only those read
      // would keep the walk deferring too long where most leaves are ruled out.
      if (search && deferring) defer(si, level, i, hi - lo);
      continue;
    }
    const first = i * FANOUT;
    const last = Math.min(levelCount[level - 1], first + FANOUT) - 1;
    for (let c = last; c >= first; c--) {
      stack[sp++] = level - 1;
      stack[sp++] = c;
    }
  }
  run.flush();
  // The count is settled; what the walk did not reach is left to the ranking.
  const thr = heap.threshold();
  while (sp > 0) {
    const i = stack[--sp];
    const level = stack[--sp];
    const b = boundAt(bound!, levelStart[level] + i);
    if (b >= thr) queue.push(b, si, level, i);
  }
}

/**
 * Offers the rows of a node at RUN_LEVEL or below, leaf by leaf: a leaf bounded below the
 * heap's threshold, outside the bbox or proven empty is dropped; a leaf bounded at least as
 * high as every node waiting is scanned now (adjacent ones as one run); any other waits in the
 * queue, where the heap may have risen past it by its turn. What the node's own box and
 * verdict settle (wholly inside, all matching) is not tested again per leaf.
 */
function rankLeaves(s: Snapshot, si: number, plan: Plan, bbox: BBox, level: number, i: number, inside: boolean, verdict: number): void {
  const { minLon, minLat, maxLon, maxLat } = bbox;
  const { boxes, levelCount, levelSpan } = s.tree;
  const bound = plan.bound!;
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
      const b = 4 * leaf;
      const x0 = boxes[b],
        y0 = boxes[b + 1],
        x1 = boxes[b + 2],
        y1 = boxes[b + 3];
      if (x1 < minLon || x0 > maxLon || y1 < minLat || y0 > maxLat) continue;
      partial = !(x0 >= minLon && x1 <= maxLon && y0 >= minLat && y1 <= maxLat);
    }
    const v = verdict === ALL ? ALL : verdictOf(plan.proofs, plan.complete, leaf);
    if (v === NONE) continue;
    const lo = leaf * LEAF_ROWS;
    if (run.add(lo, Math.min(s.rows, lo + LEAF_ROWS), partial, v !== ALL)) thr = heap.threshold();
  }
  run.flush();
}

function rank(snapshots: readonly Snapshot[], plans: readonly (Plan | null)[], bbox: BBox): void {
  const { minLon, minLat, maxLon, maxLat } = bbox;
  while (queue.size > 0) {
    queue.pop();
    const thr = heap.threshold();
    if (queue.topBound < thr) break;
    const si = queue.topSnap;
    const level = queue.topLevel;
    const i = queue.topIndex;
    const s = snapshots[si];
    const plan = plans[si]!;
    const { boxes, levelStart, levelCount, levelSpan } = s.tree;
    const node = levelStart[level] + i;
    const b = 4 * node;
    const x0 = boxes[b],
      y0 = boxes[b + 1],
      x1 = boxes[b + 2],
      y1 = boxes[b + 3];
    if (x1 < minLon || x0 > maxLon || y1 < minLat || y0 > maxLat) continue;
    const verdict = verdictOf(plan.proofs, plan.complete, node);
    if (verdict === NONE) continue;
    const inside = x0 >= minLon && x1 <= maxLon && y0 >= minLat && y1 <= maxLat;
    // A node of unknown keys only (so is every node left) gains nothing from expansion: its rows compete by building_id.
    if (inside && queue.topBound === -Infinity) {
      const lo = i * levelSpan[level];
      scanRows(s, si, plan, bbox, lo, Math.min(s.rows, lo + levelSpan[level]), false, verdict !== ALL);
      continue;
    }
    if (level <= RUN_LEVEL) {
      rankLeaves(s, si, plan, bbox, level, i, inside, verdict);
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
