/**
 * fast-check arbitraries of engine queries drawn near the data (bbox edges on building points,
 * filter bounds on values the data holds), and the comparisons of engine answers with the
 * reference's, with a readable explanation when they differ.
 */
import fc from 'fast-check';
import {
  ADDRESS_CORROBORATION,
  CATEGORY,
  FLOOD_ZONE,
  PANELS_STATUS,
  ROOF_SHAPE,
  SEISMIC_RISK_CLASS,
  SOLAR_PRESENCE,
} from '../../src/snapshot/schema.ts';
import type { BuildingsQuery, PointQuery } from '../../src/query/types.ts';
import type { Engine, EngineView } from './engine.ts';
import {
  REF_CAP,
  distanceToFootprint,
  inBBox,
  passesFilters,
  refQueryBuildings,
  refQueryPoint,
  refShownBusinesses,
  sortKey,
  type RefBuilding,
  type RefBuildingsQuery,
  type RefBuildingsResult,
  type RefPointQuery,
  type RefSnapshot,
} from './reference.ts';

export const DEFAULT_SEED = 20_261_121;

/** FC_SEED from the environment, else the constant default; `offset` separates the properties of one file. */
export function seedFor(offset: number): number {
  const env = process.env.FC_SEED;
  const base = env !== undefined && env !== '' ? Number(env) : DEFAULT_SEED;
  if (!Number.isInteger(base)) throw new Error(`FC_SEED must be an integer, got "${env}".`);
  return (base + offset) | 0;
}

/**
 * Lets the worker's event loop run (vitest talks to its workers by messages; a suite that
 * computes for a minute without a break can time that channel out on a loaded machine).
 */
export function breathe(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * fc.assert of `body` over `arb` with an explicit seed, repeated in the error so that a failure
 * can be replayed; yields to the event loop every few runs.
 */
export async function assertProperty<T>(arb: fc.Arbitrary<T>, body: (value: T) => void, seed: number, numRuns: number): Promise<void> {
  let runs = 0;
  const property = fc.asyncProperty(arb, async (value) => {
    if (++runs % 20 === 0) await breathe();
    body(value);
  });
  try {
    await fc.assert(property, { seed, numRuns, path: process.env.FC_PATH || undefined, endOnFailure: process.env.FC_SHRINK !== '1' });
  } catch (err) {
    const e = err as Error;
    e.message = `[replay with FC_SEED=${process.env.FC_SEED ?? DEFAULT_SEED} (property seed ${seed}); set FC_SHRINK=1 to shrink]\n${e.message}`;
    throw e;
  }
}

// ---------------------------------------------------------------------------------------------
// What the data holds
// ---------------------------------------------------------------------------------------------

export interface Pool {
  points: [number, number][];
  /** Bounds of every representative point. */
  lon0: number;
  lon1: number;
  lat0: number;
  lat1: number;
  values: Record<string, number[]>;
  buildingTypes: string[];
  businessNames: string[];
  currencies: string[];
  years: number[];
  buildingIds: string[];
}

function distinct(values: Iterable<number | null>, max = 40): number[] {
  const set = [...new Set([...values].filter((v): v is number => v !== null))].sort((a, b) => a - b);
  if (set.length <= max) return set.length > 0 ? set : [0];
  const out: number[] = [];
  for (let i = 0; i < max; i++) out.push(set[Math.floor((i * (set.length - 1)) / (max - 1))]);
  return [...new Set(out)];
}

export function poolOf(snapshots: readonly RefSnapshot[]): Pool {
  const all = snapshots.flatMap((s) => s.buildings);
  const col = (f: (b: RefBuilding) => number | null) => distinct(all.map(f));
  const many = (f: (b: RefBuilding) => (number | null)[]) => distinct(all.flatMap(f));
  const kwSums = all.map((b) => {
    const stated = b.solar_installations.filter((s) => s.power_kw !== null);
    return stated.length === 0 ? null : stated.reduce((a, s) => a + s.power_kw!, 0);
  });
  return {
    points: all.map((b) => [b.longitude, b.latitude]),
    lon0: Math.min(...all.map((b) => b.longitude)),
    lon1: Math.max(...all.map((b) => b.longitude)),
    lat0: Math.min(...all.map((b) => b.latitude)),
    lat1: Math.max(...all.map((b) => b.latitude)),
    values: {
      floors: col((b) => b.floors),
      dwellings: col((b) => b.dwellings),
      entrances: distinct(all.map((b) => b.entrances.length)),
      area: col((b) => b.footprint_area_m2),
      height: col((b) => b.height_m),
      volume: col((b) => b.volume_m3),
      kw: distinct(kwSums),
      panels: col((b) => b.solar_panel_count),
      capacity: col((b) => b.solar_capacity_kwp),
      yearly: col((b) => b.solar_yearly_energy_kwh),
      co2: col((b) => b.solar_co2_savings_kg_per_year),
      turnover: many((b) => b.businesses.map((x) => x.turnover)),
      employees: many((b) => b.businesses.flatMap((x) => [x.employees_min, x.employees_max])),
      frost: col((b) => b.recent_frost_days),
      minDaily: col((b) => b.recent_minimum_daily_temperature_c),
      hot: col((b) => b.recent_hot_days),
      maxOneDay: col((b) => b.recent_max_one_day_precipitation_mm),
    },
    buildingTypes: [...new Set(all.map((b) => b.building_type))].sort(),
    businessNames: [...new Set(all.flatMap((b) => b.businesses.map((x) => x.name)))].sort(),
    currencies: [
      ...new Set(all.flatMap((b) => b.businesses.map((x) => x.turnover_currency)).filter((c): c is string => c !== null)),
    ].sort(),
    years: distinct(all.flatMap((b) => b.businesses.map((x) => x.turnover_financial_year))),
    buildingIds: all.map((b) => b.building_id),
  };
}

// ---------------------------------------------------------------------------------------------
// Arbitraries
// ---------------------------------------------------------------------------------------------

const clampTo = (min: number, max: number, integer: boolean) => (v: number) => {
  const c = Math.min(max, Math.max(min, v));
  return integer ? Math.round(c) : c;
};

/** A bound near the data: a value it holds, nudged a little, or an extreme of the allowed range. */
function near(values: readonly number[], opts: { min: number; max: number; integer: boolean }): fc.Arbitrary<number> {
  const fix = clampTo(opts.min, opts.max, opts.integer);
  const data = fc.constantFrom(...values);
  const nudges = opts.integer ? [-1, 1] : [-1e-9, 1e-9, -0.5, 0.5, -1, 1];
  return fc.oneof(
    { weight: 6, arbitrary: data.map(fix) },
    { weight: 3, arbitrary: fc.tuple(data, fc.constantFrom(...nudges)).map(([v, d]) => fix(v + d)) },
    { weight: 1, arbitrary: fc.constantFrom(opts.min, opts.max).map(fix) },
    {
      weight: 1,
      arbitrary: (opts.integer
        ? fc.integer({ min: opts.min, max: Math.min(opts.max, 100_000) })
        : fc.double({ min: opts.min, max: Math.min(opts.max, 1e6), noNaN: true })
      ).map(fix),
    },
  );
}

function someOf<T>(values: readonly T[], maxLength = 3): fc.Arbitrary<T[]> {
  return fc.uniqueArray(fc.constantFrom(...values), { minLength: 1, maxLength });
}

type Filters = Partial<RefBuildingsQuery>;

/** Every filter, each as an arbitrary of the query fields it sets. */
export function filterArbitraries(pool: Pool): Record<string, fc.Arbitrary<Filters>> {
  const v = pool.values;
  const int = (min: number, max: number) => ({ min, max, integer: true });
  const num = (min: number, max: number) => ({ min, max, integer: false });
  const currencies = [...pool.currencies, 'USD'];
  const years = [...pool.years, 1990, 2100];
  const nameText = fc
    .oneof(
      {
        weight: 5,
        arbitrary: fc
          .tuple(fc.constantFrom(...pool.businessNames), fc.nat(), fc.nat(), fc.constantFrom('same', 'lower', 'upper', 'mixed'))
          .map(([name, a, b, casing]) => {
            const start = a % Math.max(1, name.length - 1);
            const end = Math.min(name.length, start + 2 + (b % 10));
            let s = name.slice(start, end);
            if (s.length < 2) s = name.slice(0, 2);
            if (casing === 'lower') s = s.toLowerCase();
            if (casing === 'upper') s = s.toUpperCase();
            if (casing === 'mixed') s = [...s].map((ch, i) => (i % 2 ? ch.toUpperCase() : ch.toLowerCase())).join('');
            return s;
          }),
      },
      { weight: 1, arbitrary: fc.constantFrom('zz', 'xq', 'GmbH', 'srl', 'ß', '& ', 'straße', 'STRASSE', 'i̇stanbul', 'ΤΑΒΈΡΝΑ') },
    )
    .filter((s) => s.length >= 2 && s.length <= 120);
  return {
    category: someOf(CATEGORY).map((x) => ({ category: [...x] })),
    buildingType: someOf([...pool.buildingTypes, 'no_such_type']).map((x) => ({ buildingType: x })),
    categoryOrType: fc.tuple(someOf(CATEGORY), someOf(pool.buildingTypes)).map(([c, t]) => ({ category: [...c], buildingType: t })),
    roofShape: someOf(ROOF_SHAPE, 4).map((x) => ({ roofShape: [...x] })),
    minFloors: near(v.floors, int(0, 500)).map((x) => ({ minFloors: x })),
    maxFloors: near(v.floors, int(0, 500)).map((x) => ({ maxFloors: x })),
    minDwellings: near(v.dwellings, int(0, 1_000_000)).map((x) => ({ minDwellings: x })),
    maxDwellings: near(v.dwellings, int(0, 1_000_000)).map((x) => ({ maxDwellings: x })),
    minEntrances: near(v.entrances, int(1, 1_000_000)).map((x) => ({ minEntrances: x })),
    maxEntrances: near(v.entrances, int(1, 1_000_000)).map((x) => ({ maxEntrances: x })),
    addressCorroboration: someOf(ADDRESS_CORROBORATION, 2).map((x) => ({ addressCorroboration: [...x] })),
    minAreaM2: near(v.area, num(0, 1e9)).map((x) => ({ minAreaM2: x })),
    maxAreaM2: near(v.area, num(0, 1e9)).map((x) => ({ maxAreaM2: x })),
    minHeightM: near(v.height, num(0, 1000)).map((x) => ({ minHeightM: x })),
    maxHeightM: near(v.height, num(0, 1000)).map((x) => ({ maxHeightM: x })),
    minVolumeM3: near(v.volume, num(0, 1e9)).map((x) => ({ minVolumeM3: x })),
    maxVolumeM3: near(v.volume, num(0, 1e9)).map((x) => ({ maxVolumeM3: x })),
    measuredHeightOnly: fc.constant({ measuredHeightOnly: true }),
    solarPresence: someOf(SOLAR_PRESENCE).map((x) => ({ solarPresence: [...x] })),
    excludeSolarPresence: someOf(SOLAR_PRESENCE).map((x) => ({ excludeSolarPresence: [...x] })),
    existingSolarPanels: someOf(PANELS_STATUS, 2).map((x) => ({ existingSolarPanels: [...x] })),
    registeredSolar: fc.boolean().map((x) => ({ registeredSolar: x })),
    registeredSolarStorage: fc.boolean().map((x) => ({ registeredSolarStorage: x })),
    minRegisteredSolarKw: near(v.kw, num(1e-6, 1e9)).map((x) => ({ minRegisteredSolarKw: x })),
    hasSolarPotential: fc.constant({ hasSolarPotential: true }),
    minPanelCount: near(v.panels, int(0, 1_000_000)).map((x) => ({ minPanelCount: x })),
    maxPanelCount: near(v.panels, int(0, 1_000_000)).map((x) => ({ maxPanelCount: x })),
    minCapacityKwp: near(v.capacity, num(0, 1e9)).map((x) => ({ minCapacityKwp: x })),
    maxCapacityKwp: near(v.capacity, num(0, 1e9)).map((x) => ({ maxCapacityKwp: x })),
    minYearlyEnergyKwh: near(v.yearly, num(0, 1e9)).map((x) => ({ minYearlyEnergyKwh: x })),
    maxYearlyEnergyKwh: near(v.yearly, num(0, 1e9)).map((x) => ({ maxYearlyEnergyKwh: x })),
    minCo2SavingsKgPerYear: near(v.co2, num(0, 1e9)).map((x) => ({ minCo2SavingsKgPerYear: x })),
    maxCo2SavingsKgPerYear: near(v.co2, num(0, 1e9)).map((x) => ({ maxCo2SavingsKgPerYear: x })),
    has3dModel: fc.constant({ has3dModel: true }),
    hasRegisteredBusiness: fc.constant({ hasRegisteredBusiness: true }),
    registeredBusinessName: nameText.map((x) => ({ registeredBusinessName: x })),
    minRegisteredBusinessTurnover: fc
      .tuple(near(v.turnover, int(0, 1e12)), fc.constantFrom(...currencies), fc.option(fc.constantFrom(...years), { freq: 3 }))
      .map(([x, c, y]) => ({
        minRegisteredBusinessTurnover: x,
        registeredBusinessTurnoverCurrency: c,
        ...(y === null ? {} : { registeredBusinessFinancialYear: y }),
      })),
    maxRegisteredBusinessTurnover: fc
      .tuple(near(v.turnover, int(0, 1e12)), fc.constantFrom(...currencies), fc.option(fc.constantFrom(...years), { freq: 3 }))
      .map(([x, c, y]) => ({
        maxRegisteredBusinessTurnover: x,
        registeredBusinessTurnoverCurrency: c,
        ...(y === null ? {} : { registeredBusinessFinancialYear: y }),
      })),
    registeredBusinessTurnoverCurrency: fc.constantFrom(...currencies).map((x) => ({ registeredBusinessTurnoverCurrency: x })),
    registeredBusinessFinancialYear: fc.constantFrom(...years).map((x) => ({ registeredBusinessFinancialYear: x })),
    minRegisteredBusinessEmployees: near(v.employees, int(0, 1_000_000)).map((x) => ({ minRegisteredBusinessEmployees: x })),
    maxRegisteredBusinessEmployees: near(v.employees, int(0, 1_000_000)).map((x) => ({ maxRegisteredBusinessEmployees: x })),
    hasAnnualHeatingEstimate: fc.constant({ hasAnnualHeatingEstimate: true }),
    hasThermalAssessment: fc.constant({ hasThermalAssessment: true }),
    hasPeakHeatLoad: fc.constant({ hasPeakHeatLoad: true }),
    hasRecentClimateTrend: fc.constant({ hasRecentClimateTrend: true }),
    hasRecentTemperatureExtremes: fc.constant({ hasRecentTemperatureExtremes: true }),
    hasRecentPrecipitation: fc.constant({ hasRecentPrecipitation: true }),
    minRecentFrostDays: near(v.frost, num(0, 366)).map((x) => ({ minRecentFrostDays: x })),
    maxRecentMinimumDailyTemperatureC: near(v.minDaily, num(-100, 100)).map((x) => ({ maxRecentMinimumDailyTemperatureC: x })),
    minRecentHotDays: near(v.hot, num(0, 366)).map((x) => ({ minRecentHotDays: x })),
    minRecentMaxOneDayPrecipitationMm: near(v.maxOneDay, num(0, 5000)).map((x) => ({ minRecentMaxOneDayPrecipitationMm: x })),
    floodZone: someOf(FLOOD_ZONE, 4).map((x) => ({ floodZone: [...x] })),
    seismicRiskClass: someOf(SEISMIC_RISK_CLASS, 4).map((x) => ({ seismicRiskClass: [...x] })),
  };
}

type BBox = RefBuildingsQuery['bbox'];

/** max such that max - min <= side exactly in floating point (min + 3 can overshoot by an ulp). */
function upTo(min: number, max: number, side = 3): number {
  let m = Math.min(max, min + side);
  while (m - min > side) m -= Math.max(Math.abs(m) * Number.EPSILON, Number.MIN_VALUE);
  return m;
}

/** The same bbox with each side cut to at most 3 degrees. */
export function capSides(b: BBox): BBox {
  return { minLon: b.minLon, minLat: b.minLat, maxLon: upTo(b.minLon, b.maxLon), maxLat: upTo(b.minLat, b.maxLat) };
}

function boxAround(lon: number, lat: number, w: number, h: number, fx: number, fy: number): BBox {
  const minLon = lon - w * fx;
  const minLat = lat - h * fy;
  return capSides({ minLon, minLat, maxLon: minLon + w, maxLat: minLat + h });
}

/** A bbox from a street to 3 degrees, on the data, across its edges, or off it. */
export function bboxArbitrary(pool: Pool): fc.Arbitrary<BBox> {
  const point = fc.nat({ max: pool.points.length - 1 }).map((i) => pool.points[i]);
  const frac = fc.double({ min: 0, max: 1, noNaN: true });
  const sized = (min: number, max: number) =>
    fc
      .tuple(point, fc.double({ min, max, noNaN: true }), fc.double({ min: 0.3, max: 1, noNaN: true }), frac, frac)
      .map(([[lon, lat], w, aspect, fx, fy]) => boxAround(lon, lat, w, Math.min(3, w * aspect), fx, fy));
  const onPoints = fc.tuple(point, point).map(([[ax, ay], [bx, by]]) => {
    const minLon = Math.min(ax, bx);
    const minLat = Math.min(ay, by);
    return capSides({ minLon, minLat, maxLon: Math.max(ax, bx), maxLat: Math.max(ay, by) });
  });
  const degenerate = point.map(([lon, lat]) => ({ minLon: lon, minLat: lat, maxLon: lon, maxLat: lat }));
  const full = fc.tuple(frac, frac, fc.constantFrom(3, 2.5, 2)).map(([fx, fy, side]) => {
    const minLon = pool.lon0 + fx * Math.max(0, pool.lon1 - pool.lon0 - side);
    const minLat = pool.lat0 + fy * Math.max(0, pool.lat1 - pool.lat0 - side);
    return capSides({ minLon, minLat, maxLon: minLon + side, maxLat: minLat + side });
  });
  const outside = fc
    .tuple(
      fc.double({ min: -170, max: -100, noNaN: true }),
      fc.double({ min: -60, max: 60, noNaN: true }),
      fc.double({ min: 0.001, max: 3, noNaN: true }),
    )
    .map(([lon, lat, w]) => capSides({ minLon: lon, minLat: lat, maxLon: lon + w, maxLat: lat + w }));
  return fc.oneof(
    { weight: 5, arbitrary: sized(0.0002, 0.005) },
    { weight: 5, arbitrary: sized(0.005, 0.3) },
    { weight: 3, arbitrary: sized(0.3, 3) },
    { weight: 3, arbitrary: onPoints },
    { weight: 1, arbitrary: degenerate },
    { weight: 2, arbitrary: full },
    { weight: 1, arbitrary: outside },
  );
}

/** limit 1..100 and offset with offset + limit <= 10,000, offsets biased toward small and toward the end. */
export const pageArbitrary: fc.Arbitrary<{ limit: number; offset: number }> = fc
  .tuple(
    fc.oneof(fc.integer({ min: 1, max: 10 }), fc.integer({ min: 1, max: 100 }), fc.constant(100), fc.constant(1)),
    fc.oneof(
      { weight: 6, arbitrary: fc.constant(0) },
      { weight: 4, arbitrary: fc.integer({ min: 0, max: 30 }) },
      { weight: 3, arbitrary: fc.integer({ min: 0, max: 1000 }) },
      { weight: 1, arbitrary: fc.integer({ min: 0, max: REF_CAP }) },
      { weight: 2, arbitrary: fc.integer({ min: 9_900, max: REF_CAP }) },
    ),
  )
  .map(([limit, offset]) => ({ limit, offset: Math.min(offset, REF_CAP - limit) }));

/** Removes the combinations the spec refuses (rules 5, 6, 7) so that every query is valid. */
export function makeValid(q: RefBuildingsQuery, currencies: readonly string[]): RefBuildingsQuery {
  const out: RefBuildingsQuery = { ...q };
  if (out.solarPresence && out.excludeSolarPresence) {
    const kept = out.solarPresence;
    out.excludeSolarPresence = out.excludeSolarPresence.filter((x) => !kept.includes(x));
    if (out.excludeSolarPresence.length === 0) delete out.excludeSolarPresence;
  }
  if (out.registeredSolar === false && (out.registeredSolarStorage !== undefined || out.minRegisteredSolarKw !== undefined))
    delete out.registeredSolar;
  const needsCurrency =
    out.sort === 'registered_business_turnover' ||
    out.minRegisteredBusinessTurnover !== undefined ||
    out.maxRegisteredBusinessTurnover !== undefined;
  if (needsCurrency && out.registeredBusinessTurnoverCurrency === undefined) out.registeredBusinessTurnoverCurrency = currencies[0];
  return out;
}

export function buildingsQueryArbitrary(
  pool: Pool,
  sorts: readonly RefBuildingsQuery['sort'][],
  maxFilters = 6,
): fc.Arbitrary<RefBuildingsQuery> {
  const filters = filterArbitraries(pool);
  const names = Object.keys(filters);
  const chosen = fc
    .uniqueArray(fc.constantFrom(...names), { minLength: 0, maxLength: maxFilters })
    .chain((picked) => fc.tuple(...picked.map((n) => filters[n])).map((parts) => Object.assign({}, ...parts) as Filters));
  return fc
    .tuple(bboxArbitrary(pool), fc.constantFrom(...sorts), pageArbitrary, chosen, fc.constantFrom(...pool.currencies, 'USD'))
    .map(([bbox, sort, page, f, currency]) => makeValid({ ...f, bbox, sort, ...page }, [f.registeredBusinessTurnoverCurrency ?? currency]));
}

// ---------------------------------------------------------------------------------------------
// Comparison
// ---------------------------------------------------------------------------------------------

function fmt(x: unknown): string {
  return JSON.stringify(x);
}

/** Why the reference puts a building where it does: in the bbox, passing filters, its key, its rank. */
function describeBuilding(snapshots: readonly RefSnapshot[], id: string, q: RefBuildingsQuery, ranked: string[]): string {
  const b = snapshots.flatMap((s) => s.buildings).find((x) => x.building_id === id);
  if (!b) return `${id}: not in any snapshot`;
  const rank = ranked.indexOf(id);
  return `${id} [${b.country}] inBBox=${inBBox(b, q.bbox)} passes=${passesFilters(b, q)} key=${sortKey(b, q)} referenceRank=${rank}`;
}

/**
 * The engine's paths for GET /buildings: its planner's choice, and each path forced (the plain
 * scan, the walk over node summaries, best-first). Every differential check holds all of them
 * against the one reference answer.
 */
export const BUILDINGS_PATHS = ['auto', 'scan', 'walk', 'best-first'] as const;

/** Runs one GET /buildings query on the reference and on every path of the engine; throws an explanation when one differs. */
export function checkBuildings(engine: Engine, view: EngineView, snapshots: readonly RefSnapshot[], q: RefBuildingsQuery): void {
  checkBuildingsPage(engine, view, snapshots, q, refQueryBuildings(snapshots, q));
}

/** The reference's page of q, cut from its whole order (`refQueryBuildings` with offset 0 and no limit). */
export function pageOf(all: RefBuildingsResult, q: RefBuildingsQuery): RefBuildingsResult {
  const end = q.offset + q.limit;
  return {
    ...all,
    buildings: all.buildings.slice(q.offset, end),
    ids: all.ids.slice(q.offset, end),
    keys: all.keys.slice(q.offset, end),
  };
}

/** checkBuildings with the reference's answer `want` already computed (e.g. by pageOf). */
export function checkBuildingsPage(
  engine: Engine,
  view: EngineView,
  snapshots: readonly RefSnapshot[],
  q: RefBuildingsQuery,
  want: RefBuildingsResult,
): void {
  for (const path of BUILDINGS_PATHS) checkPath(engine, view, snapshots, q, want, path);
  checkShown(engine, view, q, want);
}

/**
 * The page's Buildings show of their businesses what the reference says (count, largest size,
 * largest turnover in the request's currency), and under a business sort the value each ranks
 * by: a page reads in the order of what it shows.
 */
function checkShown(engine: Engine, view: EngineView, q: RefBuildingsQuery, want: RefBuildingsResult): void {
  const currency = q.registeredBusinessTurnoverCurrency;
  const got = engine.queryBuildings(view, q as unknown as BuildingsQuery);
  got.rows.forEach((r, i) => {
    const shown = engine.shownBusinesses(r, currency);
    const expected = refShownBusinesses(want.buildings[i], currency);
    if (JSON.stringify(shown) !== JSON.stringify(expected)) {
      throw new Error(
        `GET /buildings shows other business figures for ${want.ids[i]} (${fmt(q)}):\n  engine:    ${JSON.stringify(shown)}\n  reference: ${JSON.stringify(expected)}`,
      );
    }
    const ranked =
      q.sort === 'registered_business_turnover'
        ? (shown.turnover?.amount ?? null)
        : q.sort === 'registered_business_employees'
          ? (shown.employees?.min ?? null)
          : want.keys[i];
    if (ranked !== want.keys[i]) {
      throw new Error(`GET /buildings ranks ${want.ids[i]} by ${want.keys[i]} but shows ${ranked} (${fmt(q)})`);
    }
  });
}

function checkPath(
  engine: Engine,
  view: EngineView,
  snapshots: readonly RefSnapshot[],
  q: RefBuildingsQuery,
  want: RefBuildingsResult,
  path: (typeof BUILDINGS_PATHS)[number],
): void {
  const got = engine.queryBuildings(view, q as unknown as BuildingsQuery, { path });
  const ids = got.rows.map((r) => r.snapshot.buildingId(r.row));
  const sameIds = ids.length === want.ids.length && ids.every((id, i) => id === want.ids[i]);
  if (sameIds && got.total === want.total && got.totalIsCapped === want.totalIsCapped) return;
  const lines = [`GET /buildings differs (engine path ${path}) for ${fmt(q)}`];
  lines.push(
    `  total: engine ${got.total} capped=${got.totalIsCapped}; reference ${want.total} capped=${want.totalIsCapped} (uncapped matches ${want.matches})`,
  );
  lines.push(`  page size: engine ${ids.length}, reference ${want.ids.length}`);
  if (!sameIds) {
    const full = refQueryBuildings(snapshots, { ...q, offset: 0, limit: Number.MAX_SAFE_INTEGER }).ids;
    const at = ids.findIndex((id, i) => id !== want.ids[i]);
    const i = at === -1 ? Math.min(ids.length, want.ids.length) : at;
    lines.push(`  first difference at page position ${i} (offset ${q.offset + i}):`);
    if (i < ids.length) lines.push(`    engine:    ${describeBuilding(snapshots, ids[i], q, full)}`);
    if (i < want.ids.length) lines.push(`    reference: ${describeBuilding(snapshots, want.ids[i], q, full)}`);
    const extra = ids.filter((id) => !want.ids.includes(id));
    const missing = want.ids.filter((id) => !ids.includes(id));
    lines.push(`  engine-only ids: ${extra.length}, reference-only ids: ${missing.length}`);
    for (const id of extra.slice(0, 3)) lines.push(`    engine-only:    ${describeBuilding(snapshots, id, q, full)}`);
    for (const id of missing.slice(0, 3)) lines.push(`    reference-only: ${describeBuilding(snapshots, id, q, full)}`);
  }
  throw new Error(lines.join('\n'));
}

export const DISTANCE_TOLERANCE_M = 1e-6;

/**
 * Runs one point query on both sides. Ids must come in the reference's order and distances
 * agree within 1e-6 m. The only leeway is for floating-point near-ties: buildings whose
 * distances differ by less than the tolerance (at equal-looking ranks, or at the radius).
 */
export function checkPoint(engine: Engine, view: EngineView, snapshots: readonly RefSnapshot[], q: RefPointQuery): void {
  const want = refQueryPoint(snapshots, q);
  const got = engine.queryPoint(view, q as PointQuery);
  const rows = got.rows.map((r) => ({ id: r.snapshot.buildingId(r.row), distanceM: r.distanceM }));
  const same =
    rows.length === want.rows.length &&
    rows.every((r, i) => r.id === want.rows[i].id && Math.abs(r.distanceM - want.rows[i].distanceM) <= DISTANCE_TOLERANCE_M);
  if (same) return;

  const byId = new Map(snapshots.flatMap((s) => s.buildings).map((b) => [b.building_id, b]));
  const refDistance = (id: string) => {
    const b = byId.get(id);
    return b === undefined ? NaN : distanceToFootprint(b.footprint, q.lon, q.lat);
  };
  // Near-tie leeway: the engine's list, measured by the reference, must be in order within the
  // tolerance, each distance must agree, nothing beyond the radius, and anything left out must
  // not be clearly nearer than the last one returned.
  const problems: string[] = [];
  if (rows.length > q.limit) problems.push(`returns ${rows.length} rows, limit ${q.limit}`);
  const seen = new Set<string>();
  rows.forEach((r, i) => {
    const d = refDistance(r.id);
    if (seen.has(r.id)) problems.push(`row ${i}: ${r.id} returned twice`);
    seen.add(r.id);
    if (!(Math.abs(d - r.distanceM) <= DISTANCE_TOLERANCE_M))
      problems.push(`row ${i}: ${r.id} engine distance ${r.distanceM}, reference ${d}`);
    if (!(d <= q.radiusM + DISTANCE_TOLERANCE_M)) problems.push(`row ${i}: ${r.id} at ${d} m is beyond radius ${q.radiusM}`);
    if (i > 0) {
      const prev = refDistance(rows[i - 1].id);
      if (d < prev - DISTANCE_TOLERANCE_M) problems.push(`row ${i}: ${r.id} at ${d} m after ${rows[i - 1].id} at ${prev} m`);
      else if (r.distanceM === rows[i - 1].distanceM && r.id < rows[i - 1].id)
        problems.push(`row ${i}: tie at ${r.distanceM} m not ordered by building_id`);
    }
  });
  const last = rows.length > 0 ? refDistance(rows[rows.length - 1].id) : -Infinity;
  for (const w of want.all) {
    if (seen.has(w.id)) continue;
    const full = rows.length >= q.limit;
    if (!full && w.distanceM <= q.radiusM - DISTANCE_TOLERANCE_M) problems.push(`left out ${w.id} at ${w.distanceM} m (page not full)`);
    if (full && w.distanceM < last - DISTANCE_TOLERANCE_M)
      problems.push(`left out ${w.id} at ${w.distanceM} m, nearer than the last returned (${last} m)`);
    if (full && w.distanceM === last && rows.length > 0 && w.id < rows[rows.length - 1].id)
      problems.push(`left out ${w.id} at ${w.distanceM} m, tied with the last returned and a smaller id`);
  }
  if (problems.length === 0) return; // a floating-point near-tie, within the tolerance
  const lines = [`GET /buildings/at differs for ${fmt(q)}`, ...problems.slice(0, 12).map((p) => `  ${p}`)];
  lines.push(`  engine:    ${fmt(rows.slice(0, 8))}`);
  lines.push(`  reference: ${fmt(want.rows.slice(0, 8).map((r) => ({ id: r.id, distanceM: r.distanceM })))}`);
  throw new Error(lines.join('\n'));
}
