/**
 * Targeted random countries for the differential tests: clustered buildings, heavy ties in
 * every sort key, many unknowns in every filtered column, every enum value, awkward business
 * and solar-register lists. Deterministic for a given seed.
 */
import { join } from 'node:path';
import { SnapshotWriter } from '../../src/snapshot/writer.ts';
import { blankRecord } from '../../src/snapshot/record.ts';
import {
  ADDRESS_CORROBORATION,
  BASIS,
  CATEGORY,
  FLOOD_ZONE,
  PANELS_STATUS,
  ROOF_SHAPE,
  SEISMIC_RISK_CLASS,
  SOLAR_BASIS,
  SOLAR_PRESENCE,
  SOLAR_REGISTER,
  THERMAL_ASSESSMENT,
  UNIT_USE,
  type BuildingRecord,
  type BusinessRecord,
  type EntranceRecord,
  type Polygon,
  type SolarInstallationRecord,
  type UnitRecord,
} from '../../src/snapshot/schema.ts';
import { Rng } from './random.ts';

export const SOURCES = [{ name: 'reference-tests', licence: 'CC0-1.0', attribution: 'Edifice tests', retrieved: '2026-11-21' }];
export const SNAPSHOT_DATE = '2026-11-21';

/** Value sets: small, so that sort keys tie a lot and filter bounds land on data values. */
export const VALUES = {
  volume: [0, 120, 250, 250.5, 600, 1000, 4800, 12_000, 250_000],
  area: [12, 50, 80, 100, 100.25, 150, 400, 1200, 9000],
  height: [0, 2.5, 3, 6, 9, 12.5, 30, 120],
  floors: [0, 1, 2, 3, 5, 10, 25],
  dwellings: [0, 1, 2, 4, 12, 80],
  employees: [0, 1, 5, 9, 10, 19, 20, 49, 50, 249, 250],
  turnover: [0, 1000, 49_999, 50_000, 1_000_000, 2_500_000],
  currencies: ['EUR', 'RON', 'CHF'],
  years: [2021, 2022, 2023, 2024],
  power: [0.8, 2.5, 5, 10, 99.9],
  panels: [0, 4, 12, 40, 200],
  capacity: [0, 1.6, 4.8, 16, 80],
  yearly: [0, 1500, 4500, 15_000, 75_000],
  co2: [0, 600, 1800, 6000, 30_000],
  heating: [0, 9000, 24_000, 80_000],
  designIndoor: [18, 20, 22],
  designOutdoor: [-20, -15, -12],
  meanTemp: [8.5, 10, 11.2],
  trend: [0.1, 0.3, 0.5],
  frost: [0, 12, 40.5, 90, 120],
  hot: [0, 3, 15.5, 30],
  minDaily: [-31.2, -20, -12.5, -5, 0],
  maxDaily: [33, 36.5, 40],
  precipitation: [450, 600, 800],
  maxOneDay: [20, 45.5, 80, 150],
  buildingTypes: ['house', 'apartments', 'office', 'warehouse', 'school', 'garage', 'retail', 'unspecified'],
  businessNames: [
    'Alpen Bäckerei',
    'ACME GmbH',
    'acme trading',
    'Straße & Co',
    'İstanbul Döner',
    'ÆØÅ Invest',
    'Ελληνική Ταβέρνα',
    'Construct SRL',
    'Dr. Ionescu Cabinet',
    'Vaduz Print',
    'KLEIN & klein',
  ],
} as const;

export interface CountryShape {
  country: string;
  seed: number;
  /** Cluster centres are drawn in [lon0, lon1] x [lat0, lat1]. */
  lon0: number;
  lon1: number;
  lat0: number;
  lat1: number;
  clusters: number;
  /** Buildings spread evenly over the area on top of the clusters. */
  background: number;
  /** Average buildings per cluster. */
  perCluster: number;
  sourcePrefix: string;
}

function round(value: number, step: number): number {
  return Math.round(value / step) * step;
}

/** A stated turnover's currency: now and then none (a register that does not say). */
const TURNOVER_CURRENCIES = [...Array(10).fill(VALUES.currencies).flat(), null] as (string | null)[];

function businesses(rng: Rng, id: string): BusinessRecord[] {
  if (rng.chance(0.45)) return [];
  const n = rng.pick([1, 1, 1, 2, 2, 3, 4]);
  const out: BusinessRecord[] = [];
  for (let i = 0; i < n; i++) {
    let employees_min: number | null = null;
    let employees_max: number | null = null;
    const size = rng.next();
    if (size < 0.3) {
      // exact
      employees_min = employees_max = rng.pick(VALUES.employees);
    } else if (size < 0.55) {
      // band
      const a = rng.pick(VALUES.employees);
      const b = rng.pick(VALUES.employees);
      employees_min = Math.min(a, b);
      employees_max = Math.max(a, b);
    } else if (size < 0.7) {
      // open-ended top band
      employees_min = rng.pick(VALUES.employees);
    } // else unknown
    const hasTurnover = rng.chance(0.65);
    out.push({
      business_id: `${id}-b${i}`,
      registration_number: rng.maybe(0.3, () => `J${rng.int(1, 40)}/${rng.int(1, 9999)}/${rng.int(1990, 2024)}`),
      name: rng.pick(VALUES.businessNames),
      active: rng.chance(0.75),
      employees_min,
      employees_max,
      turnover: hasTurnover ? rng.pick(VALUES.turnover) : null,
      turnover_currency: hasTurnover ? rng.pick(TURNOVER_CURRENCIES) : rng.chance(0.1) ? rng.pick(VALUES.currencies) : null,
      turnover_financial_year: hasTurnover || rng.chance(0.2) ? rng.maybe(0.1, () => rng.pick(VALUES.years)) : null,
    });
  }
  return out;
}

function installations(rng: Rng): SolarInstallationRecord[] {
  if (rng.chance(0.6)) return [];
  const n = rng.pick([1, 1, 2, 3]);
  const out: SolarInstallationRecord[] = [];
  for (let i = 0; i < n; i++) {
    out.push({
      power_kw: rng.maybe(0.35, () => rng.pick(VALUES.power)),
      storage: rng.pick([true, false, null, null]),
      register: rng.pick(SOLAR_REGISTER),
      commissioned_on: rng.maybe(0.5, () => `20${rng.int(10, 25)}-0${rng.int(1, 9)}-1${rng.int(0, 9)}`),
    });
  }
  return out;
}

function entrances(rng: Rng): EntranceRecord[] {
  const n = rng.pick([0, 0, 1, 1, 1, 2, 3]);
  const out: EntranceRecord[] = [];
  for (let i = 0; i < n; i++) {
    out.push({
      address: `Strada ${rng.int(1, 50)} ${i + 1}`,
      house_number: rng.maybe(0.3, () => String(i + 1)),
      postal_code: null,
      source: `test:entrance/${i}`,
    });
  }
  return out;
}

function units(rng: Rng, id: string): UnitRecord[] {
  if (rng.chance(0.8)) return [];
  const n = rng.int(1, 30);
  const out: UnitRecord[] = [];
  for (let i = 0; i < n; i++) {
    out.push({
      unit_id: `${id}-u${i}`,
      label: rng.maybe(0.3, () => `Ap. ${i + 1}`),
      floor: rng.maybe(0.2, () => rng.int(-2, 10)),
      use: rng.maybe(0.2, () => rng.pick(UNIT_USE)),
      area_m2: rng.maybe(0.3, () => round(rng.real(15, 200), 0.5)),
      rooms: rng.maybe(0.3, () => rng.int(1, 6)),
    });
  }
  return out;
}

/** Every filtered and sorted field of one building, drawn from the value sets with many nulls. */
export function randomAttributes(rng: Rng, id: string): Partial<BuildingRecord> {
  const volume = rng.maybe(0.3, () => rng.pick(VALUES.volume));
  const height = rng.maybe(0.3, () => rng.pick(VALUES.height));
  const hasPotential = rng.chance(0.55);
  const thermal = rng.maybe(0.5, () => rng.pick(THERMAL_ASSESSMENT));
  const panels = rng.maybe(0.35, () => rng.pick(PANELS_STATUS));
  return {
    category: rng.pick(CATEGORY),
    category_evidence: rng.pick(['confirmed', 'inferred'] as const),
    building_type: rng.pick(VALUES.buildingTypes),
    roof_shape: rng.maybe(0.3, () => rng.pick(ROOF_SHAPE)),
    address_corroboration: rng.maybe(0.4, () => rng.pick(ADDRESS_CORROBORATION)),
    footprint_area_m2: rng.chance(0.9) ? rng.pick(VALUES.area) : round(rng.real(10, 2000), 0.01),
    height_m: height,
    height_basis: height === null ? null : rng.pick(BASIS),
    volume_m3: volume,
    volume_basis: volume === null ? null : rng.pick(BASIS),
    floors: rng.maybe(0.4, () => rng.pick(VALUES.floors)),
    dwellings: rng.maybe(0.4, () => rng.pick(VALUES.dwellings)),
    has_3d_model: rng.chance(0.3),
    panels_status: panels,
    panels_photo_date: panels === null ? null : '2025-06-01',
    panels_confidence: panels === null ? null : rng.pick([0.4, 0.9]),
    solar_presence: rng.pick(SOLAR_PRESENCE),
    solar_installations: installations(rng),
    solar_panel_count: hasPotential ? rng.pick(VALUES.panels) : null,
    solar_capacity_kwp: hasPotential ? rng.pick(VALUES.capacity) : null,
    solar_yearly_energy_kwh: hasPotential ? rng.pick(VALUES.yearly) : null,
    solar_co2_savings_kg_per_year: hasPotential ? rng.pick(VALUES.co2) : null,
    solar_potential_basis: hasPotential ? rng.pick(SOLAR_BASIS) : null,
    businesses: businesses(rng, id),
    units: units(rng, id),
    entrances: entrances(rng),
    flood_zone: rng.maybe(0.5, () => rng.pick(FLOOD_ZONE)),
    flood_zone_mapped: rng.chance(0.5),
    seismic_risk_class: rng.maybe(0.6, () => rng.pick(SEISMIC_RISK_CLASS)),
    annual_heating_demand_kwh: rng.maybe(0.35, () => rng.pick(VALUES.heating)),
    thermal_assessment: thermal,
    design_indoor_temperature_c: rng.maybe(0.4, () => rng.pick(VALUES.designIndoor)),
    design_outdoor_temperature_c: rng.maybe(0.4, () => rng.pick(VALUES.designOutdoor)),
    recent_mean_temperature_c: rng.maybe(0.3, () => rng.pick(VALUES.meanTemp)),
    recent_temperature_trend_c_per_decade: rng.maybe(0.3, () => rng.pick(VALUES.trend)),
    recent_frost_days: rng.maybe(0.25, () => rng.pick(VALUES.frost)),
    recent_hot_days: rng.maybe(0.25, () => rng.pick(VALUES.hot)),
    recent_minimum_daily_temperature_c: rng.maybe(0.25, () => rng.pick(VALUES.minDaily)),
    recent_maximum_daily_temperature_c: rng.maybe(0.25, () => rng.pick(VALUES.maxDaily)),
    recent_annual_precipitation_mm: rng.maybe(0.3, () => rng.pick(VALUES.precipitation)),
    recent_max_one_day_precipitation_mm: rng.maybe(0.3, () => rng.pick(VALUES.maxOneDay)),
  };
}

/**
 * One country: clusters of very different spread (a street, a town, a county) plus an even
 * background. Some buildings share their exact point with another, many sit on a 1e-4° grid,
 * so that bbox edges and sort ties are hit on purpose.
 */
export function randomCountry(shape: CountryShape): BuildingRecord[] {
  const rng = new Rng(shape.seed);
  const points: [number, number][] = [];
  const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));
  for (let c = 0; c < shape.clusters; c++) {
    const cx = rng.real(shape.lon0, shape.lon1);
    const cy = rng.real(shape.lat0, shape.lat1);
    const spread = rng.pick([0.0005, 0.002, 0.01, 0.05, 0.2]);
    const n = Math.max(1, Math.round(shape.perCluster * rng.real(0.3, 1.7)));
    for (let i = 0; i < n; i++) {
      points.push([clamp(cx + rng.normal() * spread, shape.lon0, shape.lon1), clamp(cy + rng.normal() * spread, shape.lat0, shape.lat1)]);
    }
  }
  for (let i = 0; i < shape.background; i++) points.push([rng.real(shape.lon0, shape.lon1), rng.real(shape.lat0, shape.lat1)]);

  const records: BuildingRecord[] = [];
  for (let i = 0; i < points.length; i++) {
    let [lon, lat] = points[i];
    const where = rng.next();
    if (where < 0.05 && i > 0)
      [lon, lat] = points[rng.int(0, i - 1)]; // same point as another building
    else if (where < 0.5) [lon, lat] = [round(lon, 1e-4), round(lat, 1e-4)];
    points[i] = [lon, lat];
    const sourceId = `${shape.sourcePrefix}:${shape.seed}:${i}`;
    const record = blankRecord(sourceId, lon, lat);
    Object.assign(record, randomAttributes(rng, record.building_id));
    // A class means a list names the building (schema v2's flag), as the writer also records.
    record.seismic_listed = record.seismic_risk_class !== null || record.seismic_risk_assessment_year !== null;
    records.push(record);
  }
  return records;
}

export async function writeCountry(dir: string, country: string, records: readonly BuildingRecord[]): Promise<string> {
  const writer = new SnapshotWriter({ country, snapshotDate: SNAPSHOT_DATE, sources: SOURCES });
  for (const r of records) writer.add(r);
  const path = join(dir, country, `${SNAPSHOT_DATE}.arrow`);
  await writer.finish(path);
  return path;
}

// ---------------------------------------------------------------------------------------------
// Geometry for point lookups
// ---------------------------------------------------------------------------------------------

const M_PER_DEG_LAT = 111_320;

/** A ring around (lon, lat) from offsets in metres (dx east, dy north), closed. */
export function ringFromMetres(lon: number, lat: number, offsets: readonly [number, number][]): number[] {
  const mPerDegLon = M_PER_DEG_LAT * Math.cos((lat * Math.PI) / 180);
  const ring: number[] = [];
  for (const [dx, dy] of offsets) ring.push(lon + dx / mPerDegLon, lat + dy / M_PER_DEG_LAT);
  ring.push(ring[0], ring[1]);
  return ring;
}

function rectangle(w: number, h: number, cx = 0, cy = 0, clockwise = false): [number, number][] {
  const r: [number, number][] = [
    [cx - w / 2, cy - h / 2],
    [cx + w / 2, cy - h / 2],
    [cx + w / 2, cy + h / 2],
    [cx - w / 2, cy + h / 2],
  ];
  return clockwise ? r.reverse() : r;
}

/** A star-shaped (often concave) polygon of n vertices with radii in [rMin, rMax] metres. */
function star(rng: Rng, n: number, rMin: number, rMax: number): [number, number][] {
  const out: [number, number][] = [];
  for (let i = 0; i < n; i++) {
    const a = (2 * Math.PI * i) / n;
    const r = rng.real(rMin, rMax);
    out.push([r * Math.cos(a), r * Math.sin(a)]);
  }
  return out;
}

/** A footprint of one of several kinds, and a representative point inside it. */
export function randomFootprint(rng: Rng, lon: number, lat: number): { footprint: Polygon[]; lon: number; lat: number } {
  const kind = rng.next();
  const size = rng.pick([3, 8, 15, 40, 120]);
  if (kind < 0.3) {
    const w = size * rng.real(0.5, 1.5);
    const h = size * rng.real(0.5, 1.5);
    return { footprint: [[ringFromMetres(lon, lat, rectangle(w, h, 0, 0, rng.chance(0.5)))]], lon, lat };
  }
  if (kind < 0.55) {
    return { footprint: [[ringFromMetres(lon, lat, star(rng, rng.int(3, 12), size * 0.3, size))]], lon, lat };
  }
  if (kind < 0.75) {
    // A courtyard block: outer square with a square hole; the point sits in the ring part.
    const outer = rectangle(size * 2, size * 2);
    const hole = rectangle(size, size, 0, 0, true);
    const pointLat = lat + (size * 0.75) / M_PER_DEG_LAT;
    return { footprint: [[ringFromMetres(lon, lat, outer), ringFromMetres(lon, lat, hole)]], lon, lat: pointLat };
  }
  if (kind < 0.9) {
    // Two parts side by side, a gap between them.
    const a = ringFromMetres(lon, lat, rectangle(size, size, -size, 0));
    const b = ringFromMetres(lon, lat, rectangle(size, size, size, 0));
    const mPerDegLon = M_PER_DEG_LAT * Math.cos((lat * Math.PI) / 180);
    return { footprint: [[a], [b]], lon: lon - size / mPerDegLon, lat };
  }
  // An L shape.
  const s = size;
  return {
    footprint: [
      [
        ringFromMetres(lon, lat, [
          [0, 0],
          [2 * s, 0],
          [2 * s, s],
          [s, s],
          [s, 2 * s],
          [0, 2 * s],
        ]),
      ],
    ],
    lon: lon + 1e-7,
    lat: lat + 1e-7,
  };
}

/**
 * A country for point lookups: dense clusters of varied outlines, some exact duplicates of a
 * neighbour's outline (ties at equal distance), every building otherwise blank.
 */
export function randomPointCountry(shape: CountryShape): BuildingRecord[] {
  const rng = new Rng(shape.seed);
  const records: BuildingRecord[] = [];
  let i = 0;
  for (let c = 0; c < shape.clusters; c++) {
    const cx = rng.real(shape.lon0, shape.lon1);
    const cy = rng.real(shape.lat0, shape.lat1);
    const spread = rng.pick([0.0002, 0.0005, 0.001, 0.003]);
    const n = Math.max(1, Math.round(shape.perCluster * rng.real(0.3, 1.7)));
    for (let k = 0; k < n; k++, i++) {
      const sourceId = `${shape.sourcePrefix}:${shape.seed}:${i}`;
      if (records.length > 0 && rng.chance(0.05)) {
        const twin = records[rng.int(Math.max(0, records.length - 20), records.length - 1)];
        records.push(blankRecord(sourceId, twin.longitude, twin.latitude, { footprint: twin.footprint }));
        continue;
      }
      const lon = Math.min(shape.lon1, Math.max(shape.lon0, cx + rng.normal() * spread));
      const lat = Math.min(shape.lat1, Math.max(shape.lat0, cy + rng.normal() * spread));
      const f = randomFootprint(rng, lon, lat);
      records.push(blankRecord(sourceId, f.lon, f.lat, { footprint: f.footprint }));
    }
  }
  return records;
}
