/**
 * Which snapshot column lives where in the store. Hot columns (read by filters, sorts and
 * point lookups) are typed arrays, one per column, in row order; the booleans are bits of
 * `flags`; everything else is cold (see cold.ts) and only read to rebuild a record.
 */
import { COLUMNS, type ColumnSpec } from '../snapshot/schema.ts';
import { F } from './flags.ts';

/** The representative point: Float64Array each, exact, never null. */
export const HOT_POINT = ['latitude', 'longitude'] as const;

/** Numbers filters and sorts read: each a `NumColumn` (numeric.ts), in its narrowest exact form. */
export const HOT_NUM = [
  'footprint_area_m2',
  'height_m',
  'volume_m3',
  'floors',
  'dwellings',
  'solar_panel_count',
  'solar_capacity_kwp',
  'solar_yearly_energy_kwh',
  'solar_co2_savings_kg_per_year',
  'recent_frost_days',
  'recent_hot_days',
  'recent_minimum_daily_temperature_c',
  'recent_max_one_day_precipitation_mm',
] as const;

/** Uint8Array of the schema's enum codes, NULL_CODE_U8 = null. */
export const HOT_ENUM = [
  'category',
  'roof_shape',
  'address_corroboration',
  'panels_status',
  'solar_presence',
  'flood_zone',
  'seismic_risk_class',
] as const;

/** Non-null booleans kept as one bit of `flags`. */
export const FLAG_BOOLS: Readonly<Record<string, number>> = {
  has_3d_model: F.HAS_3D_MODEL,
  construction_year_is_estimate: F.CONSTRUCTION_YEAR_IS_ESTIMATE,
  floors_is_estimate: F.FLOORS_IS_ESTIMATE,
  dwellings_is_estimate: F.DWELLINGS_IS_ESTIMATE,
  flood_zone_mapped: F.FLOOD_ZONE_MAPPED,
};

/** Nullable booleans kept as two bits of `flags`: [known, value]. */
export const FLAG_NULLABLE_BOOLS: Readonly<Record<string, readonly [number, number]>> = {
  district_heating_available: [F.DISTRICT_HEATING_KNOWN, F.DISTRICT_HEATING],
  gas_network_available: [F.GAS_NETWORK_KNOWN, F.GAS_NETWORK],
};

/** Columns with a store of their own. */
export const SPECIAL = ['building_id', 'footprint', 'building_type', 'businesses'] as const;

export type HotNum = (typeof HOT_NUM)[number];
export type HotEnum = (typeof HOT_ENUM)[number];

const hot = new Set<string>([
  ...HOT_POINT,
  ...HOT_NUM,
  ...HOT_ENUM,
  ...SPECIAL,
  ...Object.keys(FLAG_BOOLS),
  ...Object.keys(FLAG_NULLABLE_BOOLS),
]);

/** Every other column, in schema order. */
export const COLD_COLUMNS: readonly ColumnSpec[] = COLUMNS.filter((c) => !hot.has(c.name));
