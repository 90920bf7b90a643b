/**
 * The engine under test, behind the exact API the differential suites hold it to:
 * `Catalog.open(dir).view()`, `queryBuildings`, `queryPoint`, `listUnits`, `listBusinesses`,
 * `snapshot.buildingId(row)`.
 *
 * With EDIFICE_DIFF_ENGINE=reference the suites run the reference against itself instead,
 * which checks the harness (and its run time) without the engine.
 */
import { writeBuildingJson } from '../../src/api/building.ts';
import { ByteWriter } from '../../src/api/byte-writer.ts';
import { Catalog, type CatalogView, type LogEntry, type Snapshot } from '../../src/catalog/catalog.ts';
import { queryBuildings } from '../../src/query/buildings.ts';
import { queryPoint } from '../../src/query/point.ts';
import { listBusinesses, listUnits } from '../../src/query/children.ts';
import { QueryError, type BuildingsQuery, type PointQuery } from '../../src/query/types.ts';
import {
  decodeSnapshotDir,
  refListBusinesses,
  refListUnits,
  refQueryBuildings,
  refQueryPoint,
  refShownBusinesses,
  type RefBuilding,
  type RefBuildingsQuery,
  type RefPointQuery,
  type RefShownBusinesses,
  type RefSnapshot,
} from './reference.ts';

export type EngineView = CatalogView;

export interface Engine {
  /** Opens a catalog over dir; also returns what the catalog logged (refused files...). */
  openCatalog(dir: string): { view(): EngineView; log: LogEntry[] };
  queryBuildings: typeof queryBuildings;
  queryPoint: typeof queryPoint;
  listUnits: typeof listUnits;
  listBusinesses: typeof listBusinesses;
  /** What the Building JSON of a returned row shows of its businesses, under the request's turnover currency. */
  shownBusinesses(ref: { snapshot: unknown; row: unknown }, currency: string | undefined): RefShownBusinesses;
}

const json = new ByteWriter(4096);

const realEngine: Engine = {
  openCatalog(dir) {
    const log: LogEntry[] = [];
    const catalog = Catalog.open(dir, { log: (entry) => log.push(entry) });
    return { view: () => catalog.view(), log };
  },
  queryBuildings,
  queryPoint,
  listUnits,
  listBusinesses,
  shownBusinesses(ref, currency) {
    json.reset();
    writeBuildingJson(json, ref.snapshot as Snapshot, ref.row as number, {
      country: 'XX',
      appUrl: 'https://app.test',
      turnoverCurrency: currency,
    });
    const out = JSON.parse(json.take().toString()) as Record<string, unknown>;
    return {
      count: out.registered_business_count as number,
      employees: out.registered_business_employees as RefShownBusinesses['employees'],
      turnover: out.registered_business_turnover as RefShownBusinesses['turnover'],
    };
  },
};

export function loadEngine(): Engine {
  return process.env.EDIFICE_DIFF_ENGINE === 'reference' ? referenceEngine() : realEngine;
}

/** The reference dressed as the engine (harness self-check only). */
function referenceEngine(): Engine {
  const snapshot = { buildingId: (row: { building_id: string }) => row.building_id };
  const views = new WeakMap<object, RefSnapshot[]>();
  const data = (view: EngineView) => views.get(view)!;
  const engine = {
    openCatalog: (dir: string) => {
      const view = { snapshots: [snapshot] };
      views.set(view, decodeSnapshotDir(dir));
      return { view: () => view, log: [] };
    },
    queryBuildings: (view: EngineView, query: BuildingsQuery) => {
      const q = query as unknown as RefBuildingsQuery;
      if (q.bbox.maxLon - q.bbox.minLon > 3 || q.bbox.maxLat - q.bbox.minLat > 3) throw new QueryError('bbox', 'bbox side over 3 degrees');
      if (q.offset + q.limit > 10_000) throw new QueryError('offset', 'offset + limit over 10,000');
      const r = refQueryBuildings(data(view), q);
      return { rows: r.buildings.map((row) => ({ snapshot, row })), total: r.total, totalIsCapped: r.totalIsCapped };
    },
    queryPoint: (view: EngineView, q: PointQuery) => ({
      rows: refQueryPoint(data(view), q as RefPointQuery).rows.map((r) => ({ snapshot, row: r.building, distanceM: r.distanceM })),
    }),
    listUnits: (view: EngineView, id: string, limit: number, offset: number) => refListUnits(data(view), id, limit, offset),
    listBusinesses: (view: EngineView, id: string, limit: number, offset: number) => refListBusinesses(data(view), id, limit, offset),
    shownBusinesses: (ref: { row: unknown }, currency: string | undefined) => refShownBusinesses(ref.row as RefBuilding, currency),
  };
  return engine as unknown as Engine;
}
