/**
 * Rankings kept for paging walks. Spec 4.1 pages by offset, so a script that ranks a region
 * page by page asks one query at offsets 0, 100, 200, …, and each page alone ranks
 * offset + limit buildings: a walk of P pages ranks about P²/2 pages' worth.
 *
 * A page past the first (offset > 0) keeps its ranking; the next page that reaches past it is
 * ranked twice as deep as it reaches, and the pages after it are slices, until the walk outruns
 * that ranking and the depth doubles again: a walk of P pages ranks about log2(P) + 1 times.
 * The order is total (sort key, unknown last, then building_id), so a deeper ranking begins with
 * every shallower one, and a slice is the page a query of its own would give. First pages do
 * not come here: most queries are one page, and they pay nothing for this.
 *
 * Keys hold the snapshots' serials (new for every load, swap or change of removals), so a ranking
 * never outlives the data it ranked; old ones age out of the bounded LRU.
 */
import { LRUCache } from 'lru-cache';
import type { CatalogView } from '../catalog/catalog.ts';
import { checkBuildingsQuery, queryBuildings, type BuildingsResult, type RowRef } from './buildings.ts';
import { MAX_WINDOW, type BuildingsQuery, withEveryField } from './types.ts';
import type { SearchState } from './search-state.ts';

interface Ranking {
  /** How deep it was ranked: every page ending at or before this is a slice. */
  depth: number;
  /** The first min(depth, matches) buildings: index into the view's snapshots, and row. */
  snapshots: Uint16Array;
  rows: Uint32Array;
  total: number;
  totalIsCapped: boolean;
}

/** Non-finite numbers apart from null in keys (JSON writes NaN and ±Infinity all as null). */
const exact = (_key: string, v: unknown): unknown => (typeof v === 'number' && !Number.isFinite(v) ? `#${v}` : v);

export class RankingCache {
  /** Null when no bytes are allowed: every page is ranked alone. */
  private readonly cache: LRUCache<string, Ranking> | null;
  private lastView: CatalogView | null = null;
  private lastViewKey = '';
  /** Pages past the first answered from a kept ranking, and those that ranked (for /metrics). */
  hits = 0;
  misses = 0;

  /** `maxBytes`: 0 keeps nothing; a 10,000-deep ranking takes ~60 KB. */
  constructor(maxBytes: number) {
    this.cache =
      maxBytes <= 0
        ? null
        : new LRUCache<string, Ranking>({
            maxSize: maxBytes,
            sizeCalculation: (r) => r.snapshots.byteLength + r.rows.byteLength + 200,
          });
  }

  /** What `queryBuildings(view, query)` answers, the same rows in the same order; `state` runs the searches. */
  query(view: CatalogView, query: BuildingsQuery, state: SearchState): BuildingsResult {
    if (query.offset === 0 || query.limit === 0 || this.cache === null) return queryBuildings(view, query, { state });
    const q = withEveryField(query);
    checkBuildingsQuery(q); // refused as a query of its own would be, before any ranking is reused
    const key = this.viewKey(view) + JSON.stringify({ ...q, offset: 0, limit: 0 }, exact);
    const end = q.offset + q.limit;
    const kept = this.cache.get(key);
    if (kept !== undefined && kept.depth >= end) {
      this.hits++;
      return page(view, kept, q.offset, end);
    }
    this.misses++;
    // A first miss ranks only what it needs (a lone deep page costs no more than without the cache); a walk
    // that outruns its ranking is ranked twice as deep as it has reached.
    const depth = kept === undefined ? end : Math.min(MAX_WINDOW, Math.max(2 * end, 2 * kept.depth));
    const ranked = queryBuildings(view, { ...q, offset: 0, limit: depth }, { state });
    const ranking = compact(view, ranked, depth);
    this.cache.set(key, ranking);
    return page(view, ranking, q.offset, end);
  }

  /** Forgets every ranking and the counts of hits and misses. */
  clear(): void {
    this.cache?.clear();
    this.hits = 0;
    this.misses = 0;
  }

  /** Bytes the kept rankings take, as the bound counts them. */
  get size(): number {
    return this.cache?.calculatedSize ?? 0;
  }

  private viewKey(view: CatalogView): string {
    if (view !== this.lastView) {
      this.lastView = view;
      this.lastViewKey = view.snapshots.map((s) => s.serial).join(',') + '|';
    }
    return this.lastViewKey;
  }
}

function compact(view: CatalogView, ranked: BuildingsResult, depth: number): Ranking {
  const n = ranked.rows.length;
  const snapshots = new Uint16Array(n);
  const rows = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    const r = ranked.rows[i];
    snapshots[i] = view.snapshots.indexOf(r.snapshot);
    rows[i] = r.row;
  }
  return { depth, snapshots, rows, total: ranked.total, totalIsCapped: ranked.totalIsCapped };
}

function page(view: CatalogView, r: Ranking, from: number, to: number): BuildingsResult {
  const end = Math.min(to, r.rows.length);
  const rows: RowRef[] = [];
  for (let i = from; i < end; i++) rows.push({ snapshot: view.snapshots[r.snapshots[i]], row: r.rows[i] });
  return { rows, total: r.total, totalIsCapped: r.totalIsCapped };
}
