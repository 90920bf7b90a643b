/**
 * GET /buildings (spec 4.1): the buildings whose representative point lies in the bbox and that
 * pass every filter, ranked by the sort key (descending, unknown last, ties by building_id),
 * one page of it, and the number of matches up to 10,000.
 *
 * Each snapshot whose extent meets the bbox is scanned: its row tree hands out runs of rows
 * wholly or partly inside the bbox; each run is cut into chunks of CHUNK rows that go through
 * the bbox test (partial runs only), the compiled filter steps, the sort-key gather and the
 * bounded heap. All countries share one heap, so their rows merge by the same order.
 */
import type { CatalogView } from '../catalog/catalog.ts';
import type { Snapshot } from '../catalog/snapshot.ts';
import { bboxRange, bboxRefine } from './kernels.ts';
import { compile, type Plan } from './plan.ts';
import { TopK } from './topk.ts';
import { MAX_BBOX_SIDE_DEG, MAX_WINDOW, QueryError, SORT_KEYS, type BBox, type BuildingsQuery } from './types.ts';

/** A building of a result: a row of one snapshot. */
export interface RowRef {
  snapshot: Snapshot;
  row: number;
}

export interface BuildingsResult {
  rows: RowRef[];
  /** Matches counted up to MAX_WINDOW. */
  total: number;
  /** More than MAX_WINDOW buildings match. */
  totalIsCapped: boolean;
}

const CHUNK = 2048;
const sel = new Uint32Array(CHUNK);
const heap = new TopK();

/** Refuses what the engine will not scan (spec 4.1 rules 2, 3, 5), before any scan. */
export function checkBuildingsQuery(q: BuildingsQuery): void {
  const { minLon, minLat, maxLon, maxLat } = q.bbox ?? ({} as BBox);
  if (![minLon, minLat, maxLon, maxLat].every((v) => typeof v === 'number' && Number.isFinite(v))) {
    throw new QueryError('bbox', 'bbox must be four finite numbers minLon,minLat,maxLon,maxLat.');
  }
  if (maxLon - minLon > MAX_BBOX_SIDE_DEG || maxLat - minLat > MAX_BBOX_SIDE_DEG) {
    throw new QueryError('bbox', `Each side of bbox spans at most ${MAX_BBOX_SIDE_DEG} degrees, got ${maxLon - minLon} x ${maxLat - minLat}.`);
  }
  if (!Number.isInteger(q.limit) || q.limit < 0) throw new QueryError('limit', `limit must be a non-negative integer, got ${q.limit}.`);
  if (!Number.isInteger(q.offset) || q.offset < 0) throw new QueryError('offset', `offset must be a non-negative integer, got ${q.offset}.`);
  if (q.offset + q.limit > MAX_WINDOW) {
    throw new QueryError('offset', `offset + limit must be at most ${MAX_WINDOW}, got ${q.offset} + ${q.limit}.`);
  }
  if (!SORT_KEYS.includes(q.sort)) throw new QueryError('sort', `sort must be one of ${SORT_KEYS.join(', ')}, got ${String(q.sort)}.`);
  const needsCurrency = q.sort === 'registered_business_turnover'
    || q.minRegisteredBusinessTurnover !== undefined || q.maxRegisteredBusinessTurnover !== undefined;
  if (needsCurrency && q.registeredBusinessTurnoverCurrency === undefined) {
    throw new QueryError('registered_business_turnover_currency',
      'registered_business_turnover_currency is required with sort=registered_business_turnover and the turnover filters.');
  }
}

function meets(a: BBox, b: BBox): boolean {
  return a.minLon <= b.maxLon && a.maxLon >= b.minLon && a.minLat <= b.maxLat && a.maxLat >= b.minLat;
}

/** Matches counted so far by the current query (all snapshots); counting stops past MAX_WINDOW. */
let matched = 0;

/**
 * Scans one snapshot into the heap. While fewer than MAX_WINDOW + 1 matches are counted, every
 * row goes through the bbox test and the filters and is counted. Past that the count is settled
 * (capped), so a chunk first keeps only the rows whose key can still enter the heap, and only
 * those are tested: most rows of a large area cost one key comparison.
 */
function scan(s: Snapshot, si: number, plan: Plan, bbox: BBox): void {
  const { steps, key } = plan;
  const { lon, lat, rank } = s;
  const stepCount = steps.length;
  s.tree.ranges(bbox, (lo, hi, partial) => {
    if (!partial && stepCount === 0) {
      // Wholly inside, no filter: every row matches; the key loop reads the rows directly.
      if (matched <= MAX_WINDOW) matched += hi - lo;
      key.offerRange(heap, si, rank, lo, hi);
      return;
    }
    for (let a = lo; a < hi; a += CHUNK) {
      const b = Math.min(hi, a + CHUNK);
      let n: number;
      let i = 0;
      const counting = matched <= MAX_WINDOW;
      if (!counting) {
        n = key.candidates(a, b, sel, heap.threshold(), rank, heap.rankBound(si));
        if (n > 0 && partial) n = bboxRefine(lon, lat, bbox, sel, n);
      } else if (partial) n = bboxRange(lon, lat, bbox, a, b, sel);
      else {
        n = steps[0].range(a, b, sel);
        i = 1;
      }
      for (; i < stepCount && n > 0; i++) n = steps[i].refine(sel, n);
      if (n === 0) continue;
      if (counting) matched += n;
      key.offer(heap, si, rank, sel, n);
    }
  });
}

/** One ranked page of the buildings in q.bbox that pass q's filters, over every snapshot of the view. */
export function queryBuildings(view: CatalogView, q: BuildingsQuery): BuildingsResult {
  checkBuildingsQuery(q);
  const snapshots = view.snapshots.filter((s) => s.extent !== null && meets(s.extent, q.bbox));
  heap.reset(q.offset + q.limit, snapshots.map((s) => s.ids));
  matched = 0;
  for (let si = 0; si < snapshots.length; si++) {
    const plan = compile(snapshots[si], q);
    if (plan) scan(snapshots[si], si, plan, q.bbox);
  }
  const rows = heap.page(q.offset).map(({ snap, row }) => ({ snapshot: snapshots[snap], row }));
  return { rows, total: Math.min(matched, MAX_WINDOW), totalIsCapped: matched > MAX_WINDOW };
}
