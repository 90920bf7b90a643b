/**
 * A brute-force reference of the query engine, for differential tests.
 *
 * It shares nothing with `src/catalog` or `src/query`: a snapshot file is read with the
 * snapshot reader and turned, column by column, into one plain object per building; queries
 * are then answered by loops that follow the decided rules word for word (spec 4.1-4.3,
 * DESIGN "Queries" and "Interpretations"). Readable over fast: every query looks at every
 * building.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Table, Vector } from 'apache-arrow';
import { readSnapshot } from '../../src/snapshot/reader.ts';
import { COLUMNS, type BuildingRecord, type ColumnSpec } from '../../src/snapshot/schema.ts';
import { azimuthalEquidistant } from './geodesic.ts';

// ---------------------------------------------------------------------------------------------
// Decoding
// ---------------------------------------------------------------------------------------------

/** One building as plain data: the writer's record, plus the country of its file. */
export interface RefBuilding extends BuildingRecord {
  footprint: number[][][];
  country: string;
}

export interface RefSnapshot {
  country: string;
  snapshotDate: string;
  /** In file order. */
  buildings: RefBuilding[];
}

const MS_PER_DAY = 86_400_000;

function dateString(value: number): string {
  // Date32 columns come out of apache-arrow as milliseconds since 1970-01-01.
  return new Date(Math.round(value / MS_PER_DAY) * MS_PER_DAY).toISOString().slice(0, 10);
}

/** A value of a column of the given kind as plain JS: null stays null. */
function plainValue(spec: ColumnSpec, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  switch (spec.kind) {
    case 'f64':
    case 'i32':
      return Number(value);
    case 'bool':
      return Boolean(value);
    case 'utf8':
    case 'dict':
    case 'enum':
      return String(value);
    case 'date':
      return dateString(Number(value));
    case 'list': {
      const items: Record<string, unknown>[] = [];
      const list = value as Vector;
      for (let i = 0; i < list.length; i++) {
        const struct = list.get(i) as { toJSON(): Record<string, unknown> };
        const raw = struct.toJSON();
        const item: Record<string, unknown> = {};
        for (const child of spec.children!) item[child.name] = plainValue(child, raw[child.name]);
        items.push(item);
      }
      return items;
    }
    case 'geometry': {
      // polygons -> rings -> vertices (each a 2-vector lon, lat) -> interleaved ring array.
      const polygons: number[][][] = [];
      const multi = value as Vector;
      for (let p = 0; p < multi.length; p++) {
        const polygon = multi.get(p) as Vector;
        const rings: number[][] = [];
        for (let r = 0; r < polygon.length; r++) {
          const ring = polygon.get(r) as Vector;
          const xy: number[] = [];
          for (let v = 0; v < ring.length; v++) {
            const vertex = ring.get(v) as Vector;
            xy.push(Number(vertex.get(0)), Number(vertex.get(1)));
          }
          rings.push(xy);
        }
        polygons.push(rings);
      }
      return polygons;
    }
  }
}

/** Every row of an Arrow table of the snapshot schema as a plain object, in file order. */
export function decodeTable(table: Table, country: string): RefBuilding[] {
  const rows: Record<string, unknown>[] = [];
  for (let i = 0; i < table.numRows; i++) rows.push({ country });
  for (const spec of COLUMNS) {
    const column = table.getChild(spec.name);
    if (!column) throw new Error(`reference: column ${spec.name} is missing`);
    for (let i = 0; i < table.numRows; i++) rows[i][spec.name] = plainValue(spec, column.get(i));
  }
  return rows as unknown as RefBuilding[];
}

export function decodeSnapshotFile(path: string): RefSnapshot {
  const { metadata, table } = readSnapshot(path);
  return { country: metadata.country, snapshotDate: metadata.snapshotDate, buildings: decodeTable(table, metadata.country) };
}

/** Every `<dir>/<CC>/<YYYY-MM-DD>.arrow`, the latest date of each country. */
export function decodeSnapshotDir(dir: string): RefSnapshot[] {
  const out: RefSnapshot[] = [];
  for (const cc of readdirSync(dir).sort()) {
    if (!/^[A-Z]{2}$/.test(cc) || !statSync(join(dir, cc)).isDirectory()) continue;
    const files = readdirSync(join(dir, cc))
      .filter((f) => /^\d{4}-\d{2}-\d{2}\.arrow$/.test(f))
      .sort();
    if (files.length > 0) out.push(decodeSnapshotFile(join(dir, cc, files[files.length - 1])));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// GET /buildings
// ---------------------------------------------------------------------------------------------

/** The query, field for field as the engine takes it (declared here so nothing is shared). */
export interface RefBuildingsQuery {
  bbox: { minLon: number; minLat: number; maxLon: number; maxLat: number };
  sort: 'volume' | 'area' | 'height' | 'registered_business_turnover' | 'registered_business_employees';
  limit: number;
  offset: number;
  category?: string[];
  buildingType?: string[];
  roofShape?: string[];
  minFloors?: number;
  maxFloors?: number;
  minDwellings?: number;
  maxDwellings?: number;
  minEntrances?: number;
  maxEntrances?: number;
  addressCorroboration?: string[];
  minAreaM2?: number;
  maxAreaM2?: number;
  minHeightM?: number;
  maxHeightM?: number;
  minVolumeM3?: number;
  maxVolumeM3?: number;
  measuredHeightOnly?: boolean;
  solarPresence?: string[];
  excludeSolarPresence?: string[];
  existingSolarPanels?: string[];
  registeredSolar?: boolean;
  registeredSolarStorage?: boolean;
  minRegisteredSolarKw?: number;
  hasSolarPotential?: boolean;
  minPanelCount?: number;
  maxPanelCount?: number;
  minCapacityKwp?: number;
  maxCapacityKwp?: number;
  minYearlyEnergyKwh?: number;
  maxYearlyEnergyKwh?: number;
  minCo2SavingsKgPerYear?: number;
  maxCo2SavingsKgPerYear?: number;
  has3dModel?: boolean;
  hasRegisteredBusiness?: boolean;
  registeredBusinessName?: string;
  minRegisteredBusinessTurnover?: number;
  maxRegisteredBusinessTurnover?: number;
  registeredBusinessTurnoverCurrency?: string;
  registeredBusinessFinancialYear?: number;
  minRegisteredBusinessEmployees?: number;
  maxRegisteredBusinessEmployees?: number;
  hasAnnualHeatingEstimate?: boolean;
  hasThermalAssessment?: boolean;
  hasPeakHeatLoad?: boolean;
  hasRecentClimateTrend?: boolean;
  hasRecentTemperatureExtremes?: boolean;
  hasRecentPrecipitation?: boolean;
  minRecentFrostDays?: number;
  maxRecentMinimumDailyTemperatureC?: number;
  minRecentHotDays?: number;
  minRecentMaxOneDayPrecipitationMm?: number;
  floodZone?: string[];
  seismicRiskClass?: string[];
}

export const REF_CAP = 10_000;

export interface RefBuildingsResult {
  /** The page, in order. */
  buildings: RefBuilding[];
  ids: string[];
  /** Sort key of each building of the page (null = unknown). */
  keys: (number | null)[];
  total: number;
  totalIsCapped: boolean;
  /** Every match, uncapped (for diagnostics). */
  matches: number;
}

/** Rule 1: the representative point lies in the bbox, edges included. */
/** Edges included; a bbox whose minLon is above its maxLon crosses the antimeridian (as OGC API Features reads it). */
export function inBBox(b: RefBuilding, bbox: RefBuildingsQuery['bbox']): boolean {
  const lonIn =
    bbox.minLon <= bbox.maxLon
      ? b.longitude >= bbox.minLon && b.longitude <= bbox.maxLon
      : b.longitude >= bbox.minLon || b.longitude <= bbox.maxLon;
  return lonIn && b.latitude >= bbox.minLat && b.latitude <= bbox.maxLat;
}

/** Rule 3: the sort key of a building, or null when unknown. */
export function sortKey(b: RefBuilding, q: Pick<RefBuildingsQuery, 'sort' | 'registeredBusinessTurnoverCurrency'>): number | null {
  switch (q.sort) {
    case 'volume':
      return b.volume_m3;
    case 'area':
      return b.footprint_area_m2;
    case 'height':
      return b.height_m;
    case 'registered_business_employees': {
      let best: number | null = null;
      for (const business of b.businesses) {
        if (business.employees_min === null) continue;
        if (best === null || business.employees_min > best) best = business.employees_min;
      }
      return best;
    }
    case 'registered_business_turnover': {
      let best: number | null = null;
      for (const business of b.businesses) {
        if (business.turnover === null) continue;
        if (business.turnover_currency !== q.registeredBusinessTurnoverCurrency) continue;
        if (best === null || business.turnover > best) best = business.turnover;
      }
      return best;
    }
  }
}

/** What a building shows of its businesses: registered_business_count, _employees and _turnover. */
export interface RefShownBusinesses {
  count: number;
  employees: { min: number; max: number | null } | null;
  turnover: { amount: number; currency: string | null; financial_year: number | null } | null;
}

/**
 * DESIGN "Interpretations", word for word: every business at the address, active or not;
 * employees the largest stated size (a band counts where it starts; between bands that start
 * alike, the one reaching higher, an open top band highest); turnover the largest latest
 * turnover in the request's currency, or without one in the currency most businesses state a
 * turnover in (ties alphabetical, no currency last), the later year between equal amounts.
 */
export function refShownBusinesses(b: RefBuilding, currency: string | undefined): RefShownBusinesses {
  const all = b.businesses;
  let employees: RefShownBusinesses['employees'] = null;
  const sized = all.filter((x) => x.employees_min !== null);
  if (sized.length > 0) {
    const start = Math.max(...sized.map((x) => x.employees_min!));
    const ends = sized.filter((x) => x.employees_min === start).map((x) => x.employees_max);
    employees = { min: start, max: ends.includes(null) ? null : Math.max(...(ends as number[])) };
  }
  let turnover: RefShownBusinesses['turnover'] = null;
  const stated = all.filter((x) => x.turnover !== null);
  let chosen: string | null | undefined = currency;
  if (chosen === undefined && stated.length > 0) {
    const counts = new Map<string | null, number>();
    for (const x of stated) counts.set(x.turnover_currency, (counts.get(x.turnover_currency) ?? 0) + 1);
    const order = [...counts.keys()].sort((x, y) => {
      if (counts.get(x) !== counts.get(y)) return counts.get(y)! - counts.get(x)!;
      if (x === null || y === null) return x === null ? 1 : -1;
      return x < y ? -1 : x > y ? 1 : 0;
    });
    chosen = order[0];
  }
  const inCurrency = stated.filter((x) => x.turnover_currency === chosen);
  if (inCurrency.length > 0) {
    const amount = Math.max(...inCurrency.map((x) => x.turnover!));
    const years = inCurrency.filter((x) => x.turnover === amount).map((x) => x.turnover_financial_year);
    const known = years.filter((y): y is number => y !== null);
    turnover = { amount, currency: chosen ?? null, financial_year: known.length > 0 ? Math.max(...known) : null };
  }
  return { count: all.length, employees, turnover };
}

/** Rule 2: key descending, unknown keys last, ties and unknowns by building_id ascending. */
export function compareRanked(a: { id: string; key: number | null }, b: { id: string; key: number | null }): number {
  if (a.key !== null && b.key !== null && a.key !== b.key) return b.key - a.key;
  if (a.key !== null && b.key === null) return -1;
  if (a.key === null && b.key !== null) return 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

function inList(value: string | null, list: readonly string[]): boolean {
  return value !== null && list.includes(value);
}

/** value >= min, an unknown value is out. */
function atLeast(value: number | null, min: number): boolean {
  return value !== null && value >= min;
}

/** value <= max, an unknown value is out. */
function atMost(value: number | null, max: number): boolean {
  return value !== null && value <= max;
}

/** Rule 4: does the building pass every filter of the query? */
export function passesFilters(b: RefBuilding, q: RefBuildingsQuery): boolean {
  // Building
  if (q.category !== undefined && q.buildingType !== undefined) {
    if (!q.category.includes(b.category) && !q.buildingType.includes(b.building_type)) return false;
  } else if (q.category !== undefined) {
    if (!q.category.includes(b.category)) return false;
  } else if (q.buildingType !== undefined) {
    if (!q.buildingType.includes(b.building_type)) return false;
  }
  if (q.roofShape !== undefined && !inList(b.roof_shape, q.roofShape)) return false;
  if (q.minFloors !== undefined && !atLeast(b.floors, q.minFloors)) return false;
  if (q.maxFloors !== undefined && !atMost(b.floors, q.maxFloors)) return false;
  if (q.minDwellings !== undefined && !atLeast(b.dwellings, q.minDwellings)) return false;
  if (q.maxDwellings !== undefined && !atMost(b.dwellings, q.maxDwellings)) return false;
  const entrances = b.entrances.length;
  if (q.minEntrances !== undefined && (entrances === 0 || entrances < q.minEntrances)) return false;
  if (q.maxEntrances !== undefined && (entrances === 0 || entrances > q.maxEntrances)) return false;
  if (q.addressCorroboration !== undefined && !inList(b.address_corroboration, q.addressCorroboration)) return false;

  // Size
  if (q.minAreaM2 !== undefined && !atLeast(b.footprint_area_m2, q.minAreaM2)) return false;
  if (q.maxAreaM2 !== undefined && !atMost(b.footprint_area_m2, q.maxAreaM2)) return false;
  if (q.minHeightM !== undefined && !atLeast(b.height_m, q.minHeightM)) return false;
  if (q.maxHeightM !== undefined && !atMost(b.height_m, q.maxHeightM)) return false;
  if (q.minVolumeM3 !== undefined && !atLeast(b.volume_m3, q.minVolumeM3)) return false;
  if (q.maxVolumeM3 !== undefined && !atMost(b.volume_m3, q.maxVolumeM3)) return false;
  if (q.measuredHeightOnly === true && b.volume_basis !== 'measured') return false;

  // Roof and solar
  if (q.solarPresence !== undefined && !q.solarPresence.includes(b.solar_presence)) return false;
  if (q.excludeSolarPresence !== undefined && q.excludeSolarPresence.includes(b.solar_presence)) return false;
  if (q.existingSolarPanels !== undefined && !inList(b.panels_status, q.existingSolarPanels)) return false;
  if (q.registeredSolar === true && b.solar_installations.length === 0) return false;
  if (q.registeredSolar === false && b.solar_installations.length !== 0) return false;
  if (q.registeredSolarStorage !== undefined) {
    const someTrue = b.solar_installations.some((s) => s.storage === true);
    const someFalse = b.solar_installations.some((s) => s.storage === false);
    if (q.registeredSolarStorage === true && !someTrue) return false;
    if (q.registeredSolarStorage === false && !(someFalse && !someTrue)) return false;
  }
  if (q.minRegisteredSolarKw !== undefined) {
    let stated = 0;
    let sum = 0;
    for (const s of b.solar_installations) {
      if (s.power_kw === null) continue;
      stated++;
      sum += s.power_kw;
    }
    if (stated === 0 || sum < q.minRegisteredSolarKw) return false;
  }
  if (q.hasSolarPotential === true && b.solar_potential_basis === null) return false;
  if (q.minPanelCount !== undefined && !atLeast(b.solar_panel_count, q.minPanelCount)) return false;
  if (q.maxPanelCount !== undefined && !atMost(b.solar_panel_count, q.maxPanelCount)) return false;
  if (q.minCapacityKwp !== undefined && !atLeast(b.solar_capacity_kwp, q.minCapacityKwp)) return false;
  if (q.maxCapacityKwp !== undefined && !atMost(b.solar_capacity_kwp, q.maxCapacityKwp)) return false;
  if (q.minYearlyEnergyKwh !== undefined && !atLeast(b.solar_yearly_energy_kwh, q.minYearlyEnergyKwh)) return false;
  if (q.maxYearlyEnergyKwh !== undefined && !atMost(b.solar_yearly_energy_kwh, q.maxYearlyEnergyKwh)) return false;
  if (q.minCo2SavingsKgPerYear !== undefined && !atLeast(b.solar_co2_savings_kg_per_year, q.minCo2SavingsKgPerYear)) return false;
  if (q.maxCo2SavingsKgPerYear !== undefined && !atMost(b.solar_co2_savings_kg_per_year, q.maxCo2SavingsKgPerYear)) return false;
  if (q.has3dModel === true && !b.has_3d_model) return false;

  // Registered businesses
  if (q.hasRegisteredBusiness === true && !b.businesses.some((x) => x.active)) return false;
  if (q.registeredBusinessName !== undefined) {
    const text = q.registeredBusinessName.toLowerCase();
    if (!b.businesses.some((x) => x.name.toLowerCase().includes(text))) return false;
  }
  if (q.minRegisteredBusinessEmployees !== undefined) {
    const v = q.minRegisteredBusinessEmployees;
    if (!b.businesses.some((x) => x.employees_min !== null && x.employees_min >= v)) return false;
  }
  if (q.maxRegisteredBusinessEmployees !== undefined) {
    const v = q.maxRegisteredBusinessEmployees;
    const stated = b.businesses.filter((x) => x.employees_min !== null);
    if (stated.length === 0) return false;
    if (!stated.every((x) => x.employees_max !== null && x.employees_max <= v)) return false;
  }
  // Every business registered at the address counts, active or not (only has_registered_business reads activity),
  // and each business filter is a condition on the building of its own.
  const currency = q.registeredBusinessTurnoverCurrency;
  const statesIn = (x: RefBuilding['businesses'][number]): boolean => x.turnover !== null && x.turnover_currency === currency;
  if (q.minRegisteredBusinessTurnover !== undefined) {
    const v = q.minRegisteredBusinessTurnover;
    if (!b.businesses.some((x) => statesIn(x) && x.turnover! >= v)) return false;
  }
  if (q.maxRegisteredBusinessTurnover !== undefined) {
    const v = q.maxRegisteredBusinessTurnover;
    const considered = b.businesses.filter(statesIn);
    if (considered.length === 0) return false;
    if (!considered.every((x) => x.turnover! <= v)) return false;
  }
  if (q.registeredBusinessFinancialYear !== undefined) {
    const year = q.registeredBusinessFinancialYear;
    if (!b.businesses.some((x) => x.turnover_financial_year === year)) return false;
  }

  // Energy and climate
  if (q.hasAnnualHeatingEstimate === true && b.annual_heating_demand_kwh === null) return false;
  if (q.hasThermalAssessment === true && b.thermal_assessment === null) return false;
  if (q.hasPeakHeatLoad === true) {
    if (b.thermal_assessment === null || b.design_indoor_temperature_c === null || b.design_outdoor_temperature_c === null) return false;
  }
  if (q.hasRecentClimateTrend === true) {
    if (b.recent_mean_temperature_c === null || b.recent_temperature_trend_c_per_decade === null) return false;
  }
  if (q.hasRecentTemperatureExtremes === true) {
    if (
      b.recent_frost_days === null ||
      b.recent_hot_days === null ||
      b.recent_minimum_daily_temperature_c === null ||
      b.recent_maximum_daily_temperature_c === null
    )
      return false;
  }
  if (q.hasRecentPrecipitation === true) {
    if (b.recent_annual_precipitation_mm === null || b.recent_max_one_day_precipitation_mm === null) return false;
  }
  if (q.minRecentFrostDays !== undefined && !atLeast(b.recent_frost_days, q.minRecentFrostDays)) return false;
  if (
    q.maxRecentMinimumDailyTemperatureC !== undefined &&
    !atMost(b.recent_minimum_daily_temperature_c, q.maxRecentMinimumDailyTemperatureC)
  )
    return false;
  if (q.minRecentHotDays !== undefined && !atLeast(b.recent_hot_days, q.minRecentHotDays)) return false;
  if (
    q.minRecentMaxOneDayPrecipitationMm !== undefined &&
    !atLeast(b.recent_max_one_day_precipitation_mm, q.minRecentMaxOneDayPrecipitationMm)
  )
    return false;

  // Natural hazards
  if (q.floodZone !== undefined && !inList(b.flood_zone, q.floodZone)) return false;
  if (q.seismicRiskClass !== undefined && !inList(b.seismic_risk_class, q.seismicRiskClass)) return false;
  return true;
}

/** GET /buildings over every snapshot (rule 5: all countries contribute, merged by one order). */
export function refQueryBuildings(snapshots: readonly RefSnapshot[], q: RefBuildingsQuery): RefBuildingsResult {
  const ranked: { id: string; key: number | null; building: RefBuilding }[] = [];
  for (const snapshot of snapshots) {
    for (const b of snapshot.buildings) {
      if (!inBBox(b, q.bbox)) continue;
      if (!passesFilters(b, q)) continue;
      ranked.push({ id: b.building_id, key: sortKey(b, q), building: b });
    }
  }
  ranked.sort(compareRanked);
  const page = ranked.slice(q.offset, q.offset + q.limit);
  return {
    buildings: page.map((r) => r.building),
    ids: page.map((r) => r.id),
    keys: page.map((r) => r.key),
    total: Math.min(ranked.length, REF_CAP),
    totalIsCapped: ranked.length > REF_CAP,
    matches: ranked.length,
  };
}

// ---------------------------------------------------------------------------------------------
// GET /buildings/at
// ---------------------------------------------------------------------------------------------

export interface RefPointQuery {
  lat: number;
  lon: number;
  radiusM: number;
  limit: number;
}

/**
 * A vertex in the local frame centred on (lon0, lat0), in metres: the azimuthal equidistant
 * projection on the WGS84 ellipsoid, through GeographicLib's geodesics, so a vertex's distance
 * from the centre is its geodesic distance. Edges are straight in this frame; for outlines
 * within a few hundred metres of the centre they stray from geodesics by far less than a micrometre.
 */
export function toLocal(lon: number, lat: number, lon0: number, lat0: number): [number, number] {
  return azimuthalEquidistant(lon, lat, lon0, lat0);
}

/** Even-odd test of the origin against one ring (local coordinates, interleaved). */
export function originInRing(ring: readonly number[]): boolean {
  let inside = false;
  const n = ring.length / 2;
  for (let i = 0, j = n - 1; i < n; j = i++) {
    const xi = ring[2 * i],
      yi = ring[2 * i + 1];
    const xj = ring[2 * j],
      yj = ring[2 * j + 1];
    if (yi > 0 !== yj > 0) {
      // x where the edge crosses the horizontal line y = 0
      const xCross = xi + ((0 - yi) * (xj - xi)) / (yj - yi);
      if (xCross > 0) inside = !inside;
    }
  }
  return inside;
}

/** Distance from the origin to the segment (ax, ay)-(bx, by). */
export function originToSegment(ax: number, ay: number, bx: number, by: number): number {
  const dx = bx - ax;
  const dy = by - ay;
  const len2 = dx * dx + dy * dy;
  let t = len2 === 0 ? 0 : ((0 - ax) * dx + (0 - ay) * dy) / len2;
  if (t < 0) t = 0;
  if (t > 1) t = 1;
  const px = ax + t * dx;
  const py = ay + t * dy;
  return Math.sqrt(px * px + py * py);
}

function originToRing(ring: readonly number[]): number {
  let best = Infinity;
  const n = ring.length / 2;
  for (let i = 0; i + 1 < n; i++) {
    const d = originToSegment(ring[2 * i], ring[2 * i + 1], ring[2 * i + 2], ring[2 * i + 3]);
    if (d < best) best = d;
  }
  return best;
}

/** Rule 6: distance in metres from (lon0, lat0) to the outline: 0 inside, a hole is outside. */
export function distanceToFootprint(footprint: readonly (readonly (readonly number[])[])[], lon0: number, lat0: number): number {
  let best = Infinity;
  for (const polygon of footprint) {
    const rings = polygon.map((ring) => {
      const local: number[] = [];
      for (let i = 0; i < ring.length; i += 2) local.push(...toLocal(ring[i], ring[i + 1], lon0, lat0));
      return local;
    });
    const insideOuter = originInRing(rings[0]);
    const insideHole = rings.slice(1).some((hole) => originInRing(hole));
    if (insideOuter && !insideHole) return 0;
    for (const ring of rings) best = Math.min(best, originToRing(ring));
  }
  return best;
}

const MEAN_EARTH_RADIUS_M = 6_371_008.8;

const boundsCache = new WeakMap<RefBuilding, { minLon: number; minLat: number; maxLon: number; maxLat: number }>();

/**
 * Only a shortcut, never a change of answer: when the outline's box lies more than 1% + 1 m
 * beyond the radius on one side of the query point, measured with the sphere of mean radius
 * (whose metres per degree are within 0.6% of the ellipsoid's everywhere) and, east-west, at
 * the most poleward latitude of the box and the point (and 0.01° beyond, for a geodesic's bulge
 * towards the pole), so does every point of the outline.
 */
function clearlyFarther(b: RefBuilding, q: RefPointQuery): boolean {
  let box = boundsCache.get(b);
  if (box === undefined) {
    box = { minLon: Infinity, minLat: Infinity, maxLon: -Infinity, maxLat: -Infinity };
    for (const polygon of b.footprint) {
      for (const ring of polygon) {
        for (let i = 0; i < ring.length; i += 2) {
          box.minLon = Math.min(box.minLon, ring[i]);
          box.maxLon = Math.max(box.maxLon, ring[i]);
          box.minLat = Math.min(box.minLat, ring[i + 1]);
          box.maxLat = Math.max(box.maxLat, ring[i + 1]);
        }
      }
    }
    boundsCache.set(b, box);
  }
  const degM = (MEAN_EARTH_RADIUS_M * Math.PI) / 180;
  const poleward = Math.max(Math.abs(q.lat), Math.abs(box.minLat), Math.abs(box.maxLat)) + 0.01;
  const cos = poleward >= 90 ? 0 : Math.cos((poleward * Math.PI) / 180);
  const x0 = (box.minLon - q.lon) * cos * degM;
  const x1 = (box.maxLon - q.lon) * cos * degM;
  const y0 = (box.minLat - q.lat) * degM;
  const y1 = (box.maxLat - q.lat) * degM;
  const margin = q.radiusM * 1.01 + 1;
  return x0 > margin || -x1 > margin || y0 > margin || -y1 > margin;
}

export interface RefPointRow {
  id: string;
  distanceM: number;
  building: RefBuilding;
}

/** GET /buildings/at: within radiusM, nearest first, ties by building_id, at most limit. */
export function refQueryPoint(snapshots: readonly RefSnapshot[], q: RefPointQuery): { rows: RefPointRow[]; all: RefPointRow[] } {
  const near: RefPointRow[] = [];
  for (const snapshot of snapshots) {
    for (const b of snapshot.buildings) {
      if (clearlyFarther(b, q)) continue;
      const d = distanceToFootprint(b.footprint, q.lon, q.lat);
      if (d <= q.radiusM) near.push({ id: b.building_id, distanceM: d, building: b });
    }
  }
  near.sort((a, b) => (a.distanceM !== b.distanceM ? a.distanceM - b.distanceM : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return { rows: near.slice(0, q.limit), all: near };
}

// ---------------------------------------------------------------------------------------------
// GET /buildings/{id}/units (and the building's businesses)
// ---------------------------------------------------------------------------------------------

export function findBuilding(snapshots: readonly RefSnapshot[], buildingId: string): RefBuilding | undefined {
  for (const snapshot of snapshots) {
    for (const b of snapshot.buildings) if (b.building_id === buildingId) return b;
  }
  return undefined;
}

/** Rule 7: file order, sliced [offset, offset+limit), total = list length; unknown building: undefined. */
export function refListUnits(
  snapshots: readonly RefSnapshot[],
  buildingId: string,
  limit: number,
  offset: number,
): { units: RefBuilding['units']; total: number } | undefined {
  const b = findBuilding(snapshots, buildingId);
  if (b === undefined) return undefined;
  return { units: b.units.slice(offset, offset + limit), total: b.units.length };
}

export function refListBusinesses(
  snapshots: readonly RefSnapshot[],
  buildingId: string,
  limit: number,
  offset: number,
): { businesses: RefBuilding['businesses']; total: number } | undefined {
  const b = findBuilding(snapshots, buildingId);
  if (b === undefined) return undefined;
  return { businesses: b.businesses.slice(offset, offset + limit), total: b.businesses.length };
}
