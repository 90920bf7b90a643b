/**
 * Compiles a GET /buildings query, once per snapshot, into the steps the scan runs (spec 4.1,
 * DESIGN "Interpretations"): list filters become code tables, boolean filters one flags mask,
 * bounds become between-steps on typed columns, business filters loops over child columns.
 * Dictionary lookups (building types, currencies, business names) are done here, once, so
 * that kernels compare integers. A filter nothing in the snapshot can pass makes the plan null.
 *
 * Beside each step whose column has a node summary goes its proof (proofs.ts), and beside the
 * key source the per-node bound of the sort key (lowered by the filters where they cap it),
 * for the best-first search.
 */
import { NULL_CODE_U8, NULL_I32 } from '../catalog/arrow.ts';
import { HOT_NUM, type HotEnum, type HotNum } from '../catalog/columns.ts';
import { F } from '../catalog/flags.ts';
import type { BusinessColumns, Snapshot } from '../catalog/snapshot.ts';
import { FLOOR_STEPS, type FloorsKey, type NodeSummaries, type RoofKey } from '../catalog/summaries.ts';
import {
  ADDRESS_CORROBORATION,
  CATEGORY,
  FLOOD_ZONE,
  PANELS_STATUS,
  ROOF_SHAPE,
  SEISMIC_RISK_CLASS,
  SOLAR_PRESENCE,
} from '../snapshot/schema.ts';
import { lowerCode, upperCode, type NumColumn } from '../catalog/numeric.ts';
import {
  BetweenF64,
  BetweenI16,
  BetweenI32,
  BusinessNameStep,
  CodeIn,
  CodeOr,
  EmployeesMaxStep,
  EmployeesMinStep,
  EntrancesStep,
  FinancialYearStep,
  FlagsStep,
  SparseAtLeast,
  TurnoverMaxStep,
  TurnoverMinStep,
  type Step,
} from './kernels.ts';
import { KeyEmployees, KeyF64, KeyI16, KeyI32, KeyTurnover, KeyUnknown, type KeySource } from './sort-keys.ts';
import { CODES_FIRST, F64_FIRST, VECTOR_FIRST, orderSteps, type CostedStep } from './step-order.ts';
import { CodesProof, EitherCodesProof, FlagsProof, RangeProof, type NodeProof } from './proofs.ts';
import type { BuildingsQuery } from './types.ts';

export interface SearchPlan {
  /** Run in order: the column steps (ordered by step-order.ts), then the business steps. */
  steps: Step[];
  /** The sort key rows are offered to; a search's count walk may stand a HeldMatches in for it a while (bestfirst.ts). */
  key: KeySource;
  /** Proofs over the tree's node summaries; `complete` when every step has one (a node can then be proven ALL). */
  proofs: NodeProof[];
  complete: boolean;
  /** `complete`, and a list filter's proof counts rows per code: proofs.ts countOf can count some nodes unread. */
  countable: boolean;
  /** Per tree node, the greatest sort key a matching row can hold (boundAt); null when the key has no summary. */
  bound: NodeBound | null;
  /**
   * Per tree node, the greatest sort key of its rows, rounded up to a Float32 (floor.ts): a row
   * of a node proven ALL holds it. Null when the key's summary is only a bound (businesses).
   */
  attained: Float32Array | null;
  /**
   * The snapshot's rows by the sort key, as the page ranks them (catalog/key-order.ts), where the
   * key has such an order and every step takes rows in any order (key-order.ts); else null.
   */
  order: Uint32Array | null;
}

/**
 * A node's bound: each group of `parts` bounds the key on its own (the greatest of its arrays
 * at the node), and the bound is the least of the groups', at most `cap` (-Infinity: no
 * matching row has a known key). Read node by node as the search reaches them, so that a
 * bound combined from several summaries costs nothing for the nodes never reached.
 */
export interface NodeBound {
  parts: readonly (readonly Float32Array[])[];
  cap: number;
}

export function boundAt(b: NodeBound, node: number): number {
  const parts = b.parts;
  let bound = b.cap;
  for (let g = 0; g < parts.length; g++) {
    const group = parts[g];
    let v = group[0][node];
    for (let k = 1; k < group.length; k++) if (group[k][node] > v) v = group[k][node];
    if (v < bound) bound = v;
  }
  return bound;
}

/** 256-entry table of an enum list filter: 1 for each listed value; the null code stays 0. */
function enumTable(values: readonly string[], listed: readonly string[]): Uint8Array {
  const table = new Uint8Array(256);
  for (const v of listed) {
    const code = values.indexOf(v);
    if (code >= 0) table[code] = 1;
  }
  table[NULL_CODE_U8] = 0;
  return table;
}

const anySet = (table: Uint8Array): boolean => table.some((x) => x !== 0);

/** Names containing `text`, case-insensitively, as a table over name codes (null: none). */
function nameTable(b: BusinessColumns, text: string): Uint8Array | null {
  const needle = text.toLowerCase();
  const n = b.names.length;
  if (n === 0) return null;
  const table = new Uint8Array(n);
  let any = false;
  if (needle.includes('\0')) {
    // The separator itself: test the names one by one.
    for (let k = 0; k < n; k++) {
      if (b.names.at(k).toLowerCase().includes(needle)) {
        table[k] = 1;
        any = true;
      }
    }
    return any ? table : null;
  }
  const hay = b.namesLower.at(0);
  const starts = b.nameStarts;
  let from = 0;
  while (from <= hay.length) {
    const at = hay.indexOf(needle, from);
    if (at < 0) break;
    // The name holding position `at`: the last k with starts[k] <= at.
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (starts[mid] <= at) lo = mid;
      else hi = mid - 1;
    }
    table[lo] = 1;
    any = true;
    from = starts[lo + 1];
  }
  return any ? table : null;
}

const nameCache = new WeakMap<Snapshot, Map<string, Uint8Array | null>>();
const NAME_CACHE_SIZE = 64;

function cachedNameTable(s: Snapshot, text: string): Uint8Array | null {
  let cache = nameCache.get(s);
  if (!cache) nameCache.set(s, (cache = new Map()));
  if (cache.has(text)) return cache.get(text)!;
  const table = nameTable(s.business, text);
  if (cache.size >= NAME_CACHE_SIZE) cache.delete(cache.keys().next().value!);
  cache.set(text, table);
  return table;
}

function currencyCode(b: BusinessColumns, currency: string | undefined): number {
  return currency === undefined ? -1 : b.currencies.indexOf(currency);
}

/**
 * The parts of a plan as compile gathers them, filter by filter. A class rather than closures
 * inside compile: run under tsx (npm start), every arrow function compile creates is named at
 * run time (esbuild's keepNames), a large share of a street query's time.
 */
class PlanParts {
  /** The steps over the building's own columns, in any order (step-order.ts orders them). */
  readonly columns: CostedStep[] = [];
  readonly children: Step[] = [];
  readonly proofs: NodeProof[] = [];
  complete = true;
  /** Some step takes rows only in ascending order (a merge with a sparse column's rows): no key order. */
  inRowOrder = false;
  mask = 0;
  want = 0;

  constructor(readonly s: Snapshot) {}

  /** Requires flag `bit` to be `value`; false when the query already requires the opposite. */
  flag(bit: number, value: boolean): boolean {
    if ((this.mask & bit) !== 0 && ((this.want & bit) !== 0) !== value) return false;
    this.mask |= bit;
    if (value) this.want |= bit;
    return true;
  }

  /** A step of the building's columns, keeping `share` of the rows (1: unknown; NaN: estimated when ordered). */
  column(step: Step, share: number, firstCost: number, width: number): void {
    this.columns.push({ step, share, firstCost, width });
  }

  /** A list filter on an enum column with a node summary; the proof counts rows per code where it can. */
  code(name: HotEnum, table: Uint8Array): void {
    const sum = this.s.summaries;
    this.column(new CodeIn(this.s.enums[name], table), sum.share(name, table), CODES_FIRST, 1);
    this.proofs.push(new CodesProof(sum.codes[name], table, sum.codeCounts[name], sum.countsFrom));
  }

  /** The list filter `listed` on enum `name` (values: its codes); false when no listed value can occur. */
  list(name: HotEnum, values: readonly string[], listed: readonly string[] | undefined): boolean {
    if (listed === undefined) return true;
    const table = enumTable(values, listed);
    if (!anySet(table)) return false;
    this.code(name, table);
    return true;
  }

  /** Bounds on a number column (an absent side is infinite; a null value fails both sides). */
  num(name: HotNum, min: number | undefined, max: number | undefined): void {
    if (min === undefined && max === undefined) return;
    const lo = min ?? -Infinity;
    const hi = max ?? Infinity;
    const col = this.s.num[name];
    const sum = this.s.summaries;
    this.proofs.push(new RangeProof(sum.min[name], sum.max[name], sum.nulls, 1 << HOT_NUM.indexOf(name), lo, hi));
    const step =
      col.kind === 'f64'
        ? new BetweenF64(col.values, lo, hi)
        : col.kind === 'i32'
          ? new BetweenI32(col.values, lowerCode(lo, col.scale), upperCode(hi, col.scale))
          : new BetweenI16(col.values, lowerCode(lo, col.scale), upperCode(hi, col.scale));
    this.column(step, NaN, col.kind === 'f64' ? F64_FIRST : VECTOR_FIRST, step.col.BYTES_PER_ELEMENT);
  }
}

/** The plan of q on snapshot s, or null when no building of s can match. */
export function compile(s: Snapshot, q: BuildingsQuery): SearchPlan | null {
  const p = new PlanParts(s);
  const sum = s.summaries;

  // Building: category OR-ed with building_type when both are given.
  if (q.category !== undefined || q.buildingType !== undefined) {
    const catTable = q.category ? enumTable(CATEGORY, q.category) : null;
    let typeTable: Uint8Array | null = null;
    if (q.buildingType) {
      typeTable = new Uint8Array(Math.max(1, s.buildingTypes.length));
      for (const t of q.buildingType) {
        const code = s.buildingTypeCode(t);
        if (code >= 0) typeTable[code] = 1;
      }
    }
    const catAny = catTable !== null && anySet(catTable);
    const typeAny = typeTable !== null && anySet(typeTable);
    if (!catAny && !typeAny) return null;
    if (catAny && typeAny) {
      p.column(new CodeOr(s.enums.category, catTable!, s.buildingType, typeTable!), 1, CODES_FIRST, 1);
      p.proofs.push(new EitherCodesProof(sum.codes.category, catTable!));
    } else if (catAny) p.code('category', catTable!);
    else {
      p.column(new CodeIn(s.buildingType, typeTable!), 1, CODES_FIRST, s.buildingType.BYTES_PER_ELEMENT);
      p.complete = false;
    }
  }
  if (!p.list('roof_shape', ROOF_SHAPE, q.roofShape)) return null;
  if (!p.list('address_corroboration', ADDRESS_CORROBORATION, q.addressCorroboration)) return null;
  if (!p.list('panels_status', PANELS_STATUS, q.existingSolarPanels)) return null;
  if (!p.list('flood_zone', FLOOD_ZONE, q.floodZone)) return null;
  if (!p.list('seismic_risk_class', SEISMIC_RISK_CLASS, q.seismicRiskClass)) return null;
  if (q.solarPresence !== undefined || q.excludeSolarPresence !== undefined) {
    const table = q.solarPresence ? enumTable(SOLAR_PRESENCE, q.solarPresence) : enumTable(SOLAR_PRESENCE, SOLAR_PRESENCE);
    for (const v of q.excludeSolarPresence ?? []) {
      const code = SOLAR_PRESENCE.indexOf(v);
      if (code >= 0) table[code] = 0;
    }
    if (!anySet(table)) return null;
    p.code('solar_presence', table);
  }

  p.num('floors', q.minFloors, q.maxFloors);
  p.num('dwellings', q.minDwellings, q.maxDwellings);
  if (q.minEntrances !== undefined || q.maxEntrances !== undefined) {
    // A building with no entrance is out of both.
    p.column(
      new EntrancesStep(s.entrances, s.entrancesOverflow, Math.max(1, q.minEntrances ?? 1), q.maxEntrances ?? Infinity),
      1,
      CODES_FIRST,
      1,
    );
    p.complete = false;
  }
  p.num('footprint_area_m2', q.minAreaM2, q.maxAreaM2);
  p.num('height_m', q.minHeightM, q.maxHeightM);
  p.num('volume_m3', q.minVolumeM3, q.maxVolumeM3);
  p.num('solar_panel_count', q.minPanelCount, q.maxPanelCount);
  p.num('solar_capacity_kwp', q.minCapacityKwp, q.maxCapacityKwp);
  p.num('solar_yearly_energy_kwh', q.minYearlyEnergyKwh, q.maxYearlyEnergyKwh);
  p.num('solar_co2_savings_kg_per_year', q.minCo2SavingsKgPerYear, q.maxCo2SavingsKgPerYear);
  p.num('recent_frost_days', q.minRecentFrostDays, undefined);
  p.num('recent_minimum_daily_temperature_c', undefined, q.maxRecentMinimumDailyTemperatureC);
  p.num('recent_hot_days', q.minRecentHotDays, undefined);
  p.num('recent_max_one_day_precipitation_mm', q.minRecentMaxOneDayPrecipitationMm, undefined);
  if (q.minRegisteredSolarKw !== undefined) {
    // Only buildings with an installation can state a power.
    if (!p.flag(F.REGISTERED_SOLAR, true)) return null;
    p.children.push(new SparseAtLeast(s.registeredKw, q.minRegisteredSolarKw));
    p.inRowOrder = true;
  }

  // Booleans: one mask. "Default false" filters are true or absent.
  let ok = true;
  if (q.measuredHeightOnly === true) ok &&= p.flag(F.VOLUME_MEASURED, true);
  if (q.registeredSolar !== undefined) ok &&= p.flag(F.REGISTERED_SOLAR, q.registeredSolar);
  if (q.registeredSolarStorage === true) ok &&= p.flag(F.STORAGE_TRUE, true);
  if (q.registeredSolarStorage === false) ok &&= p.flag(F.STORAGE_FALSE, true) && p.flag(F.STORAGE_TRUE, false);
  if (q.hasSolarPotential === true) ok &&= p.flag(F.SOLAR_POTENTIAL, true);
  if (q.has3dModel === true) ok &&= p.flag(F.HAS_3D_MODEL, true);
  if (q.hasRegisteredBusiness === true) ok &&= p.flag(F.ACTIVE_BUSINESS, true);
  if (q.hasAnnualHeatingEstimate === true) ok &&= p.flag(F.HEATING_ESTIMATE, true);
  if (q.hasThermalAssessment === true) ok &&= p.flag(F.THERMAL_ASSESSMENT, true);
  if (q.hasPeakHeatLoad === true) ok &&= p.flag(F.PEAK_HEAT_LOAD, true);
  if (q.hasRecentClimateTrend === true) ok &&= p.flag(F.CLIMATE_TREND, true);
  if (q.hasRecentTemperatureExtremes === true) ok &&= p.flag(F.TEMPERATURE_EXTREMES, true);
  if (q.hasRecentPrecipitation === true) ok &&= p.flag(F.PRECIPITATION, true);
  if (!ok) return null;
  if (p.mask !== 0) {
    p.column(new FlagsStep(s.flags, p.mask, p.want), NaN, VECTOR_FIRST, 4);
    p.proofs.push(new FlagsProof(sum.flagsAny, sum.flagsAll, p.mask, p.want));
  }

  // Registered businesses: loops over the child columns.
  const b = s.business;
  const children = p.children;
  if (q.minRegisteredBusinessEmployees !== undefined)
    children.push(new EmployeesMinStep(b.offsets, b.employeesMin, q.minRegisteredBusinessEmployees));
  if (q.maxRegisteredBusinessEmployees !== undefined)
    children.push(new EmployeesMaxStep(b.offsets, b.employeesMin, b.employeesMax, q.maxRegisteredBusinessEmployees));
  if (q.registeredBusinessName !== undefined) {
    const table = cachedNameTable(s, q.registeredBusinessName);
    if (table === null) return null;
    children.push(new BusinessNameStep(b.offsets, b.name, table));
  }
  if (q.minRegisteredBusinessTurnover !== undefined || q.maxRegisteredBusinessTurnover !== undefined) {
    const code = currencyCode(b, q.registeredBusinessTurnoverCurrency);
    if (code < 0) return null; // no business states a turnover in that currency
    if (q.minRegisteredBusinessTurnover !== undefined)
      children.push(new TurnoverMinStep(b.offsets, b.currency, b.turnover, code, q.minRegisteredBusinessTurnover));
    if (q.maxRegisteredBusinessTurnover !== undefined)
      children.push(new TurnoverMaxStep(b.offsets, b.currency, b.turnover, code, q.maxRegisteredBusinessTurnover));
  }
  const year = q.registeredBusinessFinancialYear;
  if (year !== undefined) {
    if (year === NULL_I32) return null;
    children.push(new FinancialYearStep(b.offsets, b.year, year));
  }

  const complete = p.complete && children.length === 0;
  const proofs = p.proofs;
  let countable = false;
  if (complete) for (const proof of proofs) if (proof instanceof CodesProof && proof.counts !== null) countable = true;
  const steps = [...orderSteps(p.columns), ...children];
  const plan: SearchPlan = {
    steps,
    key: keySource(s, q),
    proofs,
    complete,
    countable,
    bound: keyBound(s, q),
    attained: keyMax(s, q),
    order: p.inRowOrder ? null : keyOrderOf(s, q),
  };
  keepShapes(s, plan);
  return plan;
}

/**
 * One instance of every step, proof and key class a snapshot's plans have used, kept while the
 * snapshot is. A class instance's shape (V8's map) is reachable from its constructor only
 * weakly: when every plan of a class is garbage at a full collection, its map dies, and all
 * the optimised kernels that check for it (scanRows, walk, the steps' range and refine, offer,
 * keyOf...) are thrown away, so the next queries run unoptimised, 3-15x slower, until they are
 * optimised again. Keyed weakly by the snapshot, so a replaced snapshot is not held.
 */
const shapes = new WeakMap<Snapshot, Map<unknown, object>>();

function keepShapes(s: Snapshot, plan: SearchPlan): void {
  let kept = shapes.get(s);
  if (kept === undefined) shapes.set(s, (kept = new Map()));
  for (const o of plan.steps) keepShape(kept, o);
  for (const o of plan.proofs) keepShape(kept, o);
  keepShape(kept, plan.key);
}

function keepShape(kept: Map<unknown, object>, o: object): void {
  if (!kept.has(o.constructor)) kept.set(o.constructor, o);
}

/** The rows of s by q's sort key, where the key has a whole order. */
function keyOrderOf(s: Snapshot, q: BuildingsQuery): Uint32Array | null {
  switch (q.sort) {
    case 'volume':
      return s.keyOrders.volume_m3;
    case 'area':
      return s.keyOrders.footprint_area_m2;
    case 'height':
      return s.keyOrders.height_m;
    case 'registered_business_employees':
      return s.keyOrders.employees;
    default:
      return null;
  }
}

function numberKey(col: NumColumn): KeySource {
  switch (col.kind) {
    case 'f64':
      return new KeyF64(col.values);
    case 'i32':
      return new KeyI32(col.values, col.scale);
    case 'i16':
      return new KeyI16(col.values, col.scale);
  }
}

function keyBound(s: Snapshot, q: BuildingsQuery): NodeBound | null {
  const sum = s.summaries;
  switch (q.sort) {
    case 'volume':
      return { parts: withRoofShape(sum, 'volume_m3', q, byFloors(sum, 'volume_m3', q.maxFloors)), cap: q.maxVolumeM3 ?? Infinity };
    case 'area':
      return { parts: withRoofShape(sum, 'footprint_area_m2', q, sum.max.footprint_area_m2), cap: q.maxAreaM2 ?? Infinity };
    case 'height':
      return { parts: withRoofShape(sum, 'height_m', q, byFloors(sum, 'height_m', q.maxFloors)), cap: q.maxHeightM ?? Infinity };
    case 'registered_business_employees': {
      // A category list alone (building_type would widen it): the best of the listed categories.
      if (q.category === undefined || q.buildingType !== undefined) return { parts: [[sum.employeesMax]], cap: Infinity };
      const parts = q.category.map((c) => sum.employeesMaxByCategory[CATEGORY.indexOf(c)]).filter((m) => m !== undefined);
      return parts.length > 0 ? { parts: [parts], cap: Infinity } : null;
    }
    case 'registered_business_turnover': {
      const code = currencyCode(s.business, q.registeredBusinessTurnoverCurrency);
      const max = code < 0 ? null : sum.turnoverMaxOf(code);
      return max === null ? null : { parts: [[max]], cap: Infinity };
    }
  }
}

/**
 * `max` as a group, and under a roof_shape list the best of the listed shapes (summaries.ts
 * roofMax) as a second: a list of 7 shapes of 10 leaves out about 60% of the rows (those of
 * unknown shape with the others), and a node's maximum is often one of theirs.
 */
function withRoofShape(sum: NodeSummaries, key: RoofKey, q: BuildingsQuery, max: Float32Array): Float32Array[][] {
  if (q.roofShape === undefined) return [[max]];
  const listed = q.roofShape.map((shape) => sum.roofMax[key][ROOF_SHAPE.indexOf(shape)]).filter((m) => m !== undefined);
  return listed.length > 0 ? [[max], listed] : [[max]];
}

function keyMax(s: Snapshot, q: BuildingsQuery): Float32Array | null {
  switch (q.sort) {
    case 'volume':
      return s.summaries.max.volume_m3;
    case 'area':
      return s.summaries.max.footprint_area_m2;
    case 'height':
      return s.summaries.max.height_m;
    default:
      return null;
  }
}

/**
 * Per node, the greatest height or volume among its rows of at most maxFloors floors (the
 * summaries' next step up), or among all its rows. Without this, a filter that works against
 * the key (sort=height&max_floors=4) leaves every node holding one tall building bounded above
 * the k-th key, and best-first reads them all.
 */
function byFloors(sum: NodeSummaries, key: FloorsKey, maxFloors: number | undefined): Float32Array {
  if (maxFloors === undefined) return sum.max[key];
  const step = FLOOR_STEPS.findIndex((t) => t >= maxFloors);
  return step < 0 ? sum.max[key] : sum.floorsMax[key][step];
}

function keySource(s: Snapshot, q: BuildingsQuery): KeySource {
  switch (q.sort) {
    case 'volume':
      return numberKey(s.num.volume_m3);
    case 'area':
      return numberKey(s.num.footprint_area_m2);
    case 'height':
      return numberKey(s.num.height_m);
    case 'registered_business_employees':
      return new KeyEmployees(s.business.offsets, s.business.row, s.business.employeesMin);
    case 'registered_business_turnover': {
      const code = currencyCode(s.business, q.registeredBusinessTurnoverCurrency);
      return code < 0
        ? new KeyUnknown()
        : new KeyTurnover(s.business.offsets, s.business.row, s.business.currency, s.business.turnover, code);
    }
  }
}
