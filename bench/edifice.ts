/**
 * Edifice as a bench engine: `queryBuildings` / `queryPoint` over a captured catalog view.
 * Only the engine call is timed; turning rows into id strings happens in `answer`.
 *
 * `edifice` runs the planner; `edifice-scan` is the same catalog with the plain scan forced
 * (`{ path: 'scan' }`), so one run compares the planner's choices with the scan they replace.
 */
import { Catalog, type CatalogView } from '../src/catalog/catalog.ts';
import { queryBuildings, type BuildingsOptions, type BuildingsResult } from '../src/query/buildings.ts';
import { PointSearch, queryPoint, type PointRow } from '../src/query/point.ts';
import { SearchState } from '../src/query/search-state.ts';
import type { Answer, Engine, MixQuery } from './engine.ts';

type Raw = BuildingsResult | { rows: PointRow[] };

export class EdificeEngine implements Engine<Raw> {
  readonly async = false;
  /** The engine's searches run one at a time in these, as a serving thread's do. */
  private readonly options: BuildingsOptions;
  private readonly pointSearch = new PointSearch();

  constructor(
    private readonly view: CatalogView,
    readonly name = 'edifice',
    options: BuildingsOptions = {},
  ) {
    this.options = { ...options, state: new SearchState() };
  }

  run(m: MixQuery): Raw {
    return m.kind === 'buildings' ? queryBuildings(this.view, m.q, this.options) : queryPoint(this.view, m.q, this.pointSearch);
  }

  answer(raw: Raw): Answer {
    const ids = raw.rows.map((r) => r.snapshot.buildingId(r.row));
    return 'total' in raw ? { ids, total: raw.total, capped: raw.totalIsCapped } : { ids };
  }
}

/**
 * Opens the catalog of `dir` (every country's newest snapshot); log lines go to `log`. `serving`
 * settles once each store built from its Arrow file holds its cold blob, as it serves from then on.
 */
export function openCatalog(dir: string, log: (msg: string) => void): { catalog: Catalog; serving: Promise<void> } {
  const catalog = Catalog.open(dir, { log: (entry) => log(`catalog: ${JSON.stringify(entry)}`) });
  return { catalog, serving: catalog.whenEncoded() };
}
