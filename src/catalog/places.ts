/**
 * Facts of each locality of a snapshot, for public place pages: counted once at load from the
 * same columns the store holds, so a place page costs a map lookup. Counts are exact; medians
 * are of the buildings whose value is known; each fact also counts how many of the values
 * behind it are modelled, which is what the page's estimate flag reports.
 *
 * Nothing here reads registered businesses: removals change those without a reload.
 */
import { CATEGORY, FLOOD_ZONE, SEISMIC_RISK_CLASS, SOLAR_PRESENCE } from '../snapshot/schema.ts';
import { NULL_CODE_U8, NULL_I32 } from './arrow.ts';
import { F } from './flags.ts';
import { kthLargest } from './selection.ts';
import { PackedStrings, type PackedStringsParts } from './packed-strings.ts';
import { sharedF64 } from './shared.ts';

/** A known count of values, how many of them are modelled, and their median (NaN when none). */
export interface MedianFact {
  known: number;
  estimated: number;
  median: number;
}

export interface PlaceFacts {
  locality: string;
  buildings: number;
  /** Buildings per category, in CATEGORY order. */
  byCategory: number[];
  constructionYear: MedianFact & { earliest: number; latest: number };
  heightM: MedianFact;
  floors: MedianFact;
  /** Buildings per solar_presence value, in SOLAR_PRESENCE order. */
  bySolarPresence: number[];
  withSolarPotential: number;
  /** Sum of solar potential capacity over the buildings that have an estimate (always modelled). */
  solarCapacityKwp: number;
  floodMapped: number;
  /** Buildings per flood zone, in FLOOD_ZONE order. */
  byFloodZone: number[];
  /** Buildings per seismic risk class, in SEISMIC_RISK_CLASS order. */
  bySeismicRiskClass: number[];
  /** Buildings an official seismic list names, whatever their class and year (`seismic_listed`). */
  onSeismicList: number;
  withHeatingEstimate: number;
  withThermalAssessment: number;
  districtHeatingAvailable: number;
  gasNetworkAvailable: number;
  /** Buildings whose district heating, or gas network, is known either way. */
  districtHeatingKnown: number;
  gasNetworkKnown: number;
}

/** Per-row inputs, in row order; `locality` codes index `names`. */
export interface PlaceInputs {
  rows: number;
  names: readonly string[];
  locality: Int32Array;
  category: Uint8Array;
  solarPresence: Uint8Array;
  floodZone: Uint8Array;
  seismicRiskClass: Uint8Array;
  /** 1 where an official seismic list names the building. */
  seismicListed: Uint8Array;
  flags: Uint32Array;
  /** NULL_I32 = unknown. */
  constructionYear: Int32Array;
  /** NaN = unknown. */
  heightM: Float64Array;
  /** 1 where the height basis is `estimated`. */
  heightEstimated: Uint8Array;
  /** NULL_I32 = unknown. */
  floors: Int32Array;
  /** NaN = none. */
  solarCapacityKwp: Float64Array;
}

/**
 * How a place's facts lie in `Places.values`, field by field: a number, a list of counts of that
 * length, a median fact, or the construction year's (a median fact, then earliest and latest).
 */
const LAYOUT: readonly [name: Exclude<keyof PlaceFacts, 'locality'>, shape: number | 'median' | 'year'][] = [
  ['buildings', 1],
  ['byCategory', CATEGORY.length],
  ['constructionYear', 'year'],
  ['heightM', 'median'],
  ['floors', 'median'],
  ['bySolarPresence', SOLAR_PRESENCE.length],
  ['withSolarPotential', 1],
  ['solarCapacityKwp', 1],
  ['floodMapped', 1],
  ['byFloodZone', FLOOD_ZONE.length],
  ['bySeismicRiskClass', SEISMIC_RISK_CLASS.length],
  ['onSeismicList', 1],
  ['withHeatingEstimate', 1],
  ['withThermalAssessment', 1],
  ['districtHeatingAvailable', 1],
  ['gasNetworkAvailable', 1],
  ['districtHeatingKnown', 1],
  ['gasNetworkKnown', 1],
];
const MEDIAN = ['known', 'estimated', 'median'] as const;
const YEAR = [...MEDIAN, 'earliest', 'latest'] as const;

/** Numbers a place takes. */
const PER_PLACE = LAYOUT.reduce((n, [, shape]) => n + (shape === 'median' ? MEDIAN.length : shape === 'year' ? YEAR.length : shape), 0);

function writeFacts(f: PlaceFacts, v: Float64Array, at: number): void {
  for (const [name, shape] of LAYOUT) {
    const x = f[name] as number | number[] | Record<string, number>;
    if (shape === 1) v[at++] = x as number;
    else if (typeof shape === 'number') for (const n of x as number[]) v[at++] = n;
    else for (const k of shape === 'median' ? MEDIAN : YEAR) v[at++] = (x as Record<string, number>)[k];
  }
}

function readFacts(locality: string, v: Float64Array, at: number): PlaceFacts {
  const f: Record<string, unknown> = { locality };
  for (const [name, shape] of LAYOUT) {
    if (shape === 1) f[name] = v[at++];
    else if (typeof shape === 'number') f[name] = Array.from({ length: shape }, () => v[at++]);
    else {
      const fact: Record<string, number> = {};
      for (const k of shape === 'median' ? MEDIAN : YEAR) fact[k] = v[at++];
      f[name] = fact;
    }
  }
  return f as unknown as PlaceFacts;
}

/** The fields a structured clone or a prepared file carries. */
export interface PlacesParts {
  names: PackedStringsParts;
  /** PER_PLACE numbers a place, in the order of `names`. */
  values: Float64Array;
}

/**
 * The places of a snapshot in two shared arrays, which every thread reads as they are (a view
 * of a large country holds thousands of places); a thread looks a name up in a map it builds
 * the first time it is asked, and a page's facts are read out when asked.
 */
export class Places implements PlacesParts {
  readonly names: PackedStrings;
  readonly values: Float64Array;
  #byName: Map<string, number> | null = null;

  constructor({ names, values }: PlacesParts) {
    this.names = names instanceof PackedStrings ? names : new PackedStrings(names);
    this.values = values;
  }

  static of(facts: readonly PlaceFacts[]): Places {
    const values = sharedF64(facts.length * PER_PLACE);
    facts.forEach((f, k) => writeFacts(f, values, k * PER_PLACE));
    return new Places({ names: PackedStrings.pack(facts.map((f) => f.locality)), values });
  }

  get(locality: string): PlaceFacts | undefined {
    if (this.#byName === null) {
      this.#byName = new Map();
      for (let k = 0; k < this.names.length; k++) this.#byName.set(this.names.at(k), k);
    }
    const k = this.#byName.get(locality);
    return k === undefined ? undefined : readFacts(locality, this.values, k * PER_PLACE);
  }

  /** Every place with its building count, by name. */
  list(): { locality: string; buildings: number }[] {
    return this.names
      .toArray()
      .map((locality, k) => ({ locality, buildings: this.values[k * PER_PLACE] }))
      .sort((a, b) => (a.locality < b.locality ? -1 : a.locality > b.locality ? 1 : 0));
  }

  get size(): number {
    return this.names.length;
  }

  get byteLength(): number {
    return this.names.byteLength + this.values.byteLength;
  }
}

/** Median of values[0..n) (reorders them); NaN when n = 0. */
export function median(values: Float64Array, n: number): number {
  if (n === 0) return NaN;
  // The upper middle is the (n - n/2)-th greatest; after its selection the values past it are at
  // most it, and the lower middle (n even) is their greatest.
  const k = n - (n >> 1);
  const upper = kthLargest(values, n, k);
  if (n % 2 === 1) return upper;
  let lower = values[k];
  for (let i = k + 1; i < n; i++) if (values[i] > lower) lower = values[i];
  return (lower + upper) / 2;
}

/** The facts of every named locality (the empty name, "no record names one", is no place). */
export function buildPlaces(p: PlaceInputs): Places {
  const places = p.names.length;
  // Rows grouped by locality (a counting sort), so each place is one contiguous run.
  const starts = new Uint32Array(places + 1);
  for (let r = 0; r < p.rows; r++) starts[p.locality[r] + 1]++;
  for (let k = 0; k < places; k++) starts[k + 1] += starts[k];
  const order = new Uint32Array(p.rows);
  const fill = starts.slice(0, places);
  for (let r = 0; r < p.rows; r++) order[fill[p.locality[r]]++] = r;

  let largest = 0;
  for (let k = 0; k < places; k++) largest = Math.max(largest, starts[k + 1] - starts[k]);
  const scratch = new Float64Array(largest);
  const out: PlaceFacts[] = [];
  for (let k = 0; k < places; k++) {
    const locality = p.names[k];
    if (locality === '' || starts[k + 1] === starts[k]) continue;
    const byCategory = new Array<number>(CATEGORY.length).fill(0);
    const bySolarPresence = new Array<number>(SOLAR_PRESENCE.length).fill(0);
    const byFloodZone = new Array<number>(FLOOD_ZONE.length).fill(0);
    const bySeismicRiskClass = new Array<number>(SEISMIC_RISK_CLASS.length).fill(0);
    let withSolarPotential = 0,
      solarCapacityKwp = 0,
      floodMapped = 0,
      withHeatingEstimate = 0,
      withThermalAssessment = 0;
    let districtHeatingAvailable = 0,
      gasNetworkAvailable = 0,
      districtHeatingKnown = 0,
      gasNetworkKnown = 0,
      onSeismicList = 0;
    let yearEstimated = 0,
      earliest = Infinity,
      latest = -Infinity;
    for (let i = starts[k]; i < starts[k + 1]; i++) {
      const r = order[i];
      const f = p.flags[r];
      byCategory[p.category[r]]++;
      bySolarPresence[p.solarPresence[r]]++;
      if (p.floodZone[r] !== NULL_CODE_U8) byFloodZone[p.floodZone[r]]++;
      if (p.seismicRiskClass[r] !== NULL_CODE_U8) bySeismicRiskClass[p.seismicRiskClass[r]]++;
      if (p.seismicListed[r] === 1) onSeismicList++;
      if (f & F.SOLAR_POTENTIAL) {
        withSolarPotential++;
        const kwp = p.solarCapacityKwp[r];
        if (kwp === kwp) solarCapacityKwp += kwp;
      }
      if (f & F.FLOOD_ZONE_MAPPED) floodMapped++;
      if (f & F.HEATING_ESTIMATE) withHeatingEstimate++;
      if (f & F.THERMAL_ASSESSMENT) withThermalAssessment++;
      if (f & F.DISTRICT_HEATING_KNOWN) {
        districtHeatingKnown++;
        if (f & F.DISTRICT_HEATING) districtHeatingAvailable++;
      }
      if (f & F.GAS_NETWORK_KNOWN) {
        gasNetworkKnown++;
        if (f & F.GAS_NETWORK) gasNetworkAvailable++;
      }
      const y = p.constructionYear[r];
      if (y !== NULL_I32) {
        if (y < earliest) earliest = y;
        if (y > latest) latest = y;
        if (f & F.CONSTRUCTION_YEAR_IS_ESTIMATE) yearEstimated++;
      }
    }
    const fact = (value: (r: number) => number, estimated: (r: number) => boolean): MedianFact => {
      let n = 0,
        est = 0;
      for (let i = starts[k]; i < starts[k + 1]; i++) {
        const r = order[i];
        const v = value(r);
        if (v !== v) continue;
        scratch[n++] = v;
        if (estimated(r)) est++;
      }
      return { known: n, estimated: est, median: median(scratch, n) };
    };
    const year = fact(
      (r) => (p.constructionYear[r] === NULL_I32 ? NaN : p.constructionYear[r]),
      () => false,
    );
    out.push({
      locality,
      buildings: starts[k + 1] - starts[k],
      byCategory,
      constructionYear: { ...year, estimated: yearEstimated, earliest: year.known ? earliest : NaN, latest: year.known ? latest : NaN },
      heightM: fact(
        (r) => p.heightM[r],
        (r) => p.heightEstimated[r] === 1,
      ),
      floors: fact(
        (r) => (p.floors[r] === NULL_I32 ? NaN : p.floors[r]),
        (r) => (p.flags[r] & F.FLOORS_IS_ESTIMATE) !== 0,
      ),
      bySolarPresence,
      withSolarPotential,
      solarCapacityKwp,
      floodMapped,
      byFloodZone,
      bySeismicRiskClass,
      onSeismicList,
      withHeatingEstimate,
      withThermalAssessment,
      districtHeatingAvailable,
      gasNetworkAvailable,
      districtHeatingKnown,
      gasNetworkKnown,
    });
  }
  return Places.of(out);
}
