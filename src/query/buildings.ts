/**
 * GET /buildings (spec 4.1): the buildings whose representative point lies in the bbox and that
 * pass every filter, ranked by the sort key (descending, unknown last, ties by building_id),
 * one page of it, and the number of matches up to 10,000.
 *
 * The query is validated, compiled once per snapshot whose extent meets the bbox (plan.ts); the
 * planner (choose.ts) picks one executor: the plain scan (scan.ts), the walk over node
 * summaries (bestfirst.ts walkBuildings, from a floor: floor.ts, guess.ts) or the count and
 * best-first search (bestfirst.ts searchBuildings); the page is cut from the search state's
 * heap. All countries share one heap and one count, so their rows merge by the same order; so
 * do the two parts of a bbox across the antimeridian (minLon above maxLon, OGC API Features).
 */
import type { CatalogView } from '../catalog/catalog.ts';
import type { Snapshot } from '../catalog/snapshot.ts';
import { partsOf } from '../geo/bbox.ts';
import { searchBuildings, walkBuildings } from './bestfirst.ts';
import { choosePath, hasBounds, type Path } from './choose.ts';
import { FLOOR_MIN_K, provenFloor } from './floor.ts';
import { walkGuessing, worthGuessing } from './guess.ts';
import { compile, type SearchPlan } from './plan.ts';
import { scanSnapshot } from './scan.ts';
import { SearchState } from './search-state.ts';
import { MAX_WINDOW, QueryError, SORT_KEYS, type BBox, type BuildingsQuery, withEveryField } from './types.ts';

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

export interface BuildingsOptions {
  /**
   * 'auto' (default): the planner chooses (choose.ts). Any other value forces that path, for
   * benchmarks and tests (every path gives the same answer); 'best-first' needs a bound of the
   * sort key and falls back to 'walk' where there is none.
   */
  path?: 'auto' | Path;
  /** The search state to run in (search-state.ts): a serving thread passes its one; by default a new one. */
  state?: SearchState;
}

const PATHS = ['auto', 'scan', 'walk', 'best-first'];

/**
 * Refuses what the engine will not scan (spec 4.1 rules 3, 5), before any scan. A bbox of any size
 * is scanned: rule 2's 3 degrees are GET /buildings' (api/validate.ts), not OGC API items'.
 */
export function checkBuildingsQuery(q: BuildingsQuery): void {
  const { minLon, minLat, maxLon, maxLat } = q.bbox ?? ({} as BBox);
  if (![minLon, minLat, maxLon, maxLat].every((v) => typeof v === 'number' && Number.isFinite(v))) {
    throw new QueryError('bbox', 'bbox must be four finite numbers minLon,minLat,maxLon,maxLat.');
  }
  if (minLon < -180 || maxLon > 180 || minLat < -90 || maxLat > 90 || minLat > maxLat) {
    throw new QueryError('bbox', 'bbox must hold longitudes from -180 to 180 and latitudes from -90 to 90, minLat at most maxLat.');
  }
  if (!Number.isInteger(q.limit) || q.limit < 0) throw new QueryError('limit', `limit must be a non-negative integer, got ${q.limit}.`);
  if (!Number.isInteger(q.offset) || q.offset < 0)
    throw new QueryError('offset', `offset must be a non-negative integer, got ${q.offset}.`);
  if (q.offset + q.limit > MAX_WINDOW) {
    throw new QueryError('offset', `offset + limit must be at most ${MAX_WINDOW}, got ${q.offset} + ${q.limit}.`);
  }
  if (!SORT_KEYS.includes(q.sort)) throw new QueryError('sort', `sort must be one of ${SORT_KEYS.join(', ')}, got ${String(q.sort)}.`);
  const needsCurrency =
    q.sort === 'registered_business_turnover' ||
    q.minRegisteredBusinessTurnover !== undefined ||
    q.maxRegisteredBusinessTurnover !== undefined;
  if (needsCurrency && q.registeredBusinessTurnoverCurrency === undefined) {
    throw new QueryError(
      'registered_business_turnover_currency',
      'registered_business_turnover_currency is required with sort=registered_business_turnover and the turnover filters.',
    );
  }
}

function meets(a: BBox, b: BBox): boolean {
  return a.minLon <= b.maxLon && a.maxLon >= b.minLon && a.minLat <= b.maxLat && a.maxLat >= b.minLat;
}

/** One ranked page of the buildings in q.bbox that pass q's filters, over every snapshot of the view. */
export function queryBuildings(view: CatalogView, query: BuildingsQuery, options: BuildingsOptions = {}): BuildingsResult {
  // Validate.
  const q = withEveryField(query);
  const forced = options.path ?? 'auto';
  if (!PATHS.includes(forced)) throw new TypeError(`options.path must be one of ${PATHS.join(', ')}, got ${String(forced)}.`);
  checkBuildingsQuery(q);
  // Plan: one per snapshot whose extent meets the bbox (null: nothing can match there).
  const parts = partsOf(q.bbox);
  const snapshots = view.snapshots.filter((s) => s.extent !== null && parts.some((b) => meets(s.extent!, b)));
  const plans: (SearchPlan | null)[] = snapshots.map((s) => compile(s, q));
  const st = options.state ?? new SearchState();
  const k = q.offset + q.limit;
  st.start(
    k,
    snapshots.map((s) => s.ids),
  );
  // Choose a path, and run its one executor. A bbox across the antimeridian is scanned part by
  // part into the one heap and count: such boxes lie where few buildings are (the Pacific, Chukotka).
  let path: Path = parts.length > 1 ? 'scan' : forced === 'auto' ? choosePath(st, snapshots, plans, q) : forced;
  if (path === 'best-first' && !hasBounds(plans)) path = 'walk';
  if (path === 'best-first') searchBuildings(st, snapshots, plans, q.bbox);
  else if (path === 'walk') walkDeep(st, snapshots, plans, q);
  else
    for (const b of parts)
      for (let si = 0; si < snapshots.length; si++) if (plans[si] !== null) scanSnapshot(st, snapshots[si], si, plans[si]!, b);
  // Page.
  const rows = st.heap.page(q.offset).map(({ snap, row }) => ({ snapshot: snapshots[snap], row }));
  return { rows, total: Math.min(st.matched, MAX_WINDOW), totalIsCapped: st.matched > MAX_WINDOW };
}

/**
 * The walk for q's page [offset, k), from a floor under the k-th key where one can be found:
 * proven from leaf maxima (floor.ts) or guessed from a sample (guess.ts). A floor needs k leaves
 * proven full inside the bbox, which only deep pages over large areas find; for a short page the
 * search for them costs a street query a tenth of its time.
 */
function walkDeep(st: SearchState, snapshots: readonly Snapshot[], plans: readonly (SearchPlan | null)[], q: BuildingsQuery): void {
  const { bbox, offset } = q;
  const k = offset + q.limit;
  const floor = k > FLOOR_MIN_K ? provenFloor(st, snapshots, plans, bbox, k) : -Infinity;
  if (worthGuessing(st, snapshots, bbox, k)) walkGuessing(st, snapshots, plans, bbox, k, offset, floor);
  else {
    st.heap.raiseFloor(floor);
    walkBuildings(st, snapshots, plans, bbox);
  }
}
