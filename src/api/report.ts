/**
 * The report of one building, bought without an account (POST /reports, GET /reports/{id}).
 *
 * At checkout the building's whole record (with its units) is frozen as JSON into the order, so
 * the report reads the snapshot current at purchase whatever is served later. At every read it is
 * rendered from that record, snake_case like the authenticated API, with the businesses an
 * approved removal hides taken out: a removal applies to every response, reports included.
 */
import { isRemoved, type RemovalSet } from '../catalog/removals.ts';
import type { BuildingRecord, UnitRecord } from '../snapshot/schema.ts';
import { serializeBuilding, type BuildingOut } from './building.ts';
import { serializeBusiness, type RegisteredBusinessOut } from './business.ts';
import { BUSINESS_CAUTION } from './facts.ts';
import { serializeUnit, type UnitOut } from './unit.ts';

interface Frozen {
  country: string;
  snapshotDate: string;
  record: BuildingRecord;
  units: UnitRecord[];
}

export interface ReportDoc {
  building: BuildingOut;
  /** The outline as a GeoJSON MultiPolygon, CRS84. */
  footprint: { type: 'MultiPolygon'; coordinates: number[][][][] };
  entrances: { address: string; house_number: string | null; postal_code: string | null }[];
  roof_planes: BuildingRecord['roof_planes'];
  climate: Record<string, number | null>;
  energy: Record<string, string | number | boolean | null>;
  units: UnitOut[];
  registered_businesses: { caution: string; data: RegisteredBusinessOut[] };
}

/** Interleaved rings (typed arrays in the store) as GeoJSON positions. */
function positions(ring: ArrayLike<number>): number[][] {
  const out: number[][] = [];
  for (let i = 0; i + 1 < ring.length; i += 2) out.push([ring[i], ring[i + 1]]);
  return out;
}

export function freezeReport(record: BuildingRecord, units: UnitRecord[], context: { country: string; snapshotDate: string }): string {
  const plain = { ...record, footprint: record.footprint.map((polygon) => polygon.map((ring) => Array.from(ring))) };
  return JSON.stringify({ country: context.country, snapshotDate: context.snapshotDate, record: plain, units } satisfies Frozen);
}

export function renderReport(frozen: string, removals: RemovalSet, context: { appUrl: string }): ReportDoc {
  const { country, record, units } = JSON.parse(frozen) as Frozen;
  const r: BuildingRecord = {
    ...record,
    businesses: record.businesses.filter((b) => !isRemoved(removals, b.business_id, b.registration_number)),
  };
  return {
    building: serializeBuilding(r, { country, appUrl: context.appUrl }),
    footprint: { type: 'MultiPolygon', coordinates: r.footprint.map((polygon) => polygon.map(positions)) },
    entrances: r.entrances.map((e) => ({ address: e.address, house_number: e.house_number, postal_code: e.postal_code })),
    roof_planes: r.roof_planes,
    climate: {
      recent_mean_temperature_c: r.recent_mean_temperature_c,
      recent_temperature_trend_c_per_decade: r.recent_temperature_trend_c_per_decade,
      recent_frost_days: r.recent_frost_days,
      recent_hot_days: r.recent_hot_days,
      recent_minimum_daily_temperature_c: r.recent_minimum_daily_temperature_c,
      recent_maximum_daily_temperature_c: r.recent_maximum_daily_temperature_c,
      recent_annual_precipitation_mm: r.recent_annual_precipitation_mm,
      recent_max_one_day_precipitation_mm: r.recent_max_one_day_precipitation_mm,
    },
    energy: {
      annual_heating_demand_kwh: r.annual_heating_demand_kwh,
      thermal_assessment: r.thermal_assessment,
      design_indoor_temperature_c: r.design_indoor_temperature_c,
      design_outdoor_temperature_c: r.design_outdoor_temperature_c,
      district_heating_available: r.district_heating_available,
      gas_network_available: r.gas_network_available,
    },
    units: units.map(serializeUnit),
    registered_businesses: { caution: BUSINESS_CAUTION, data: r.businesses.map(serializeBusiness) },
  };
}
