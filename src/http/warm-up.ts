/**
 * Warm-up before listening: a serving thread runs a few hundred requests of its own through the
 * handlers of GET /buildings, /buildings/at and a building's units and registered businesses
 * (parameters, query, page written in JSON and MessagePack) before it takes any traffic, so
 * that the first callers after a start do not wait for V8 to compile the hot paths.
 *
 * Why: a server restarted under load answers its first seconds many times slower than once
 * warm, while V8 compiles; this warm-up covers the query and encoding paths (not HTTP, log and
 * ledger paths, which stay cold until real traffic reaches them).
 *
 * The requests are made up from the snapshots themselves: each is centred on a building taken
 * at a stride through the rows, with bbox sizes, sorts, filters, pages and encodings taken in
 * turn as the load-test mix draws them. Nothing of it reaches a client, the ledger (no key, no
 * charge, no opening) or the log's request lines; the caches it fills are emptied or their
 * counts reset by the server afterwards.
 */
import type { Encoding } from '../api/index.ts';
import type { CatalogView } from '../catalog/catalog.ts';
import { CATEGORY, ROOF_SHAPE } from '../snapshot/schema.ts';

export type WarmUpRoute =
  '/buildings' | '/buildings/at' | '/buildings/{building_id}/units' | '/buildings/{building_id}/registered-businesses';

/** Runs one request through a handler and writes its body, as serving would; throws what the handler throws. */
export type Rehearse = (route: WarmUpRoute, rawQuery: string, pathParameter: string, encoding: Encoding) => void;

export interface WarmUpReport {
  requests: number;
  /** Requests a handler refused or failed (none on sound data: each is a valid request). */
  failed: number;
  ms: number;
  /** The first failure's message, for the log. */
  firstError?: string;
}

/**
 * Sides of GET /buildings bboxes in degrees, in turn: streets, neighbourhoods, cities, a region.
 * The n-th such request takes side n, sort n / 8, filter n / 32 and, for every fourth run of 64,
 * MessagePack (`pick`): each side meets every sort, filter and encoding. Turning them all at one
 * pace would pair the region with one filter and one encoding for good.
 */
const SIDES = [0.002, 0.002, 0.002, 0.015, 0.015, 0.15, 0.15, 1];
const SORTS = ['volume', 'area', 'height', 'registered_business_employees'];
/** Filters in turn (none half the time): a range, an enum list, a flag, two at once. */
const FILTERS = [
  '',
  'min_floors=2',
  '',
  `category=${CATEGORY[0]},${CATEGORY[2]}`,
  '',
  'has_solar_potential=true',
  '',
  `roof_shape=${ROOF_SHAPE[0]}&min_height_m=5`,
];

const ENCODINGS: readonly Encoding[] = ['json', 'json', 'json', 'msgpack'];

const round6 = (v: number) => Math.round(v * 1e6) / 1e6;
/** The entry of `list` for request i, moving on every `pace` requests. */
const pick = <T>(list: readonly T[], i: number, pace: number): T => list[Math.floor(i / pace) % list.length];
const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));

/**
 * Runs `requests` made-up requests through `rehearse` over the view's buildings (none when it
 * holds no building). Never throws: a request that fails is counted and the next one runs.
 */
export function warmUp(view: CatalogView, requests: number, rehearse: Rehearse): WarmUpReport {
  const started = performance.now();
  const snapshots = view.snapshots.filter((s) => s.rows > 0);
  const report: WarmUpReport = { requests: 0, failed: 0, ms: 0 };
  if (snapshots.length === 0 || requests <= 0) return report;
  // A stride through the rows: prime to any row count that matters, so the centres spread over the country.
  const stride = 7_919;
  let pages = 0;
  for (let i = 0; i < requests; i++) {
    const s = snapshots[i % snapshots.length];
    const row = (i * stride + 13) % s.rows;
    const lon = s.lon[row];
    const lat = s.lat[row];
    // The other routes: every fourth run of ten requests (each holds their turns) in MessagePack.
    let encoding: Encoding = pick(ENCODINGS, i, 10);
    let route: WarmUpRoute;
    let rawQuery = '';
    let pathParameter = '';
    const turn = i % 10;
    if (turn < 3) {
      route = '/buildings/at';
      rawQuery = `lon=${round6(lon)}&lat=${round6(lat)}&radius_m=${[10, 25, 60][turn]}`;
    } else if (turn === 9) {
      route = pick(['/buildings/{building_id}/units', '/buildings/{building_id}/registered-businesses'] as const, i, 40);
      pathParameter = s.buildingId(row);
    } else {
      route = '/buildings';
      const n = pages++;
      encoding = pick(ENCODINGS, n, 64);
      const half = pick(SIDES, n, 1) / 2;
      const bbox = [clamp(lon - half, -180, 180), clamp(lat - half, -90, 90), clamp(lon + half, -180, 180), clamp(lat + half, -90, 90)].map(
        round6,
      );
      const filter = pick(FILTERS, n, 32);
      rawQuery =
        `bbox=${bbox.join(',')}&sort=${pick(SORTS, n, 8)}&limit=${i % 3 === 0 ? 100 : 25}` +
        (i % 7 === 0 ? '&offset=100' : '') +
        (filter ? `&${filter}` : '');
    }
    report.requests++;
    try {
      rehearse(route, rawQuery, pathParameter, encoding);
    } catch (err) {
      report.failed++;
      report.firstError ??= `${route}?${rawQuery}${pathParameter}: ${(err as Error).message}`;
    }
  }
  report.ms = Math.round(performance.now() - started);
  return report;
}
