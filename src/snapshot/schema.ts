/**
 * Snapshot format v2: the columns of one country's nightly Arrow file.
 *
 * This table is the single source of truth for the writer, the reader, the column store and
 * `snapshots/README.md` (generated from it by `npm run docs:snapshot`). A producer (the OSM
 * builder, the synthetic generator) hands the writer `BuildingRecord`s; the writer turns
 * them into Arrow columns in this order.
 */

export const SCHEMA_VERSION = 2;
/** Versions the reader still opens; an older file is read as the current one (see reader.ts). */
export const READABLE_VERSIONS = [1, 2] as const;

export const CATEGORY = [
  'residential_house',
  'apartment_block',
  'commercial',
  'industrial',
  'public',
  'agricultural',
  'ancillary',
  'unknown',
] as const;
export const CATEGORY_EVIDENCE = ['confirmed', 'inferred'] as const;
export const ADDRESS_EVIDENCE = ['address_record', 'business_listing', 'none'] as const;
export const ADDRESS_CORROBORATION = ['corroborated', 'single_source', 'conflicting'] as const;
export const ROOF_SHAPE = [
  'gabled',
  'hipped',
  'flat',
  'pyramidal',
  'skillion',
  'round',
  'mansard',
  'half_hipped',
  'gambrel',
  'dome',
] as const;
export const BASIS = ['measured', 'stated', 'estimated'] as const;
export const SOLAR_BASIS = ['measured', 'stated', 'estimated', 'measured_cut_to_outline'] as const;
export const FLOOR_AREA_SCOPE = ['gross_above_ground'] as const;
export const PANELS_STATUS = ['detected', 'none_seen', 'unclear'] as const;
export const SOLAR_PRESENCE = ['registered', 'detected', 'registered_at_address', 'none_seen', 'unclear', 'unknown'] as const;
export const SOLAR_REGISTER = ['grid_operator', 'energy_regulator'] as const;
export const FLOOD_ZONE = [
  '5_year',
  '10_year',
  '20_year',
  '50_year',
  '100_year',
  '100_year_climate_change',
  '500_year',
  '1000_year',
  '10000_year',
] as const;
export const SEISMIC_RISK_CLASS = ['RsI', 'RsII', 'RsIII', 'RsIV', 'U1', 'U2', 'U3', 'consolidated'] as const;
export const THERMAL_ASSESSMENT = ['energy_certificate', 'audit', 'as_built_model', 'survey'] as const;
export const UNIT_USE = ['residential', 'commercial', 'office', 'storage', 'parking', 'other'] as const;
/** Whether a building's own records name its locality, or it is the nearest place's name. */
export const LOCALITY_BASIS = ['stated', 'inferred'] as const;

export type Category = (typeof CATEGORY)[number];
export type CategoryEvidence = (typeof CATEGORY_EVIDENCE)[number];
export type AddressEvidence = (typeof ADDRESS_EVIDENCE)[number];
export type AddressCorroboration = (typeof ADDRESS_CORROBORATION)[number];
export type RoofShape = (typeof ROOF_SHAPE)[number];
export type Basis = (typeof BASIS)[number];
export type SolarBasis = (typeof SOLAR_BASIS)[number];
export type FloorAreaScope = (typeof FLOOR_AREA_SCOPE)[number];
export type PanelsStatus = (typeof PANELS_STATUS)[number];
export type SolarPresence = (typeof SOLAR_PRESENCE)[number];
export type SolarRegister = (typeof SOLAR_REGISTER)[number];
export type FloodZone = (typeof FLOOD_ZONE)[number];
export type SeismicRiskClass = (typeof SEISMIC_RISK_CLASS)[number];
export type ThermalAssessment = (typeof THERMAL_ASSESSMENT)[number];
export type UnitUse = (typeof UNIT_USE)[number];
export type LocalityBasis = (typeof LOCALITY_BASIS)[number];

/** A closed ring as interleaved lon,lat pairs: [x0, y0, x1, y1, ..., x0, y0]. */
export type Ring = ArrayLike<number>;
/** A polygon: outer ring first, then holes. */
export type Polygon = Ring[];

export interface EntranceRecord {
  address: string;
  house_number: string | null;
  postal_code: string | null;
  source: string;
}

export interface SolarInstallationRecord {
  power_kw: number | null;
  storage: boolean | null;
  register: SolarRegister;
  commissioned_on: string | null; // YYYY-MM-DD
}

export interface RoofPlaneRecord {
  azimuth_deg: number;
  tilt_deg: number;
  area_m2: number;
  panel_count: number | null;
  yearly_energy_kwh: number | null;
}

export interface BusinessRecord {
  business_id: string;
  registration_number: string | null;
  name: string;
  active: boolean;
  /** Exact size: min = max. Band: min..max. Open-ended top band: max null. Unknown: both null. */
  employees_min: number | null;
  employees_max: number | null;
  turnover: number | null;
  turnover_currency: string | null;
  turnover_financial_year: number | null;
}

export interface UnitRecord {
  unit_id: string;
  label: string | null;
  floor: number | null;
  use: UnitUse | null;
  area_m2: number | null;
  rooms: number | null;
}

/** One building as a producer hands it to the writer. null = unknown. */
export interface BuildingRecord {
  building_id: string;
  source_id: string;
  latitude: number;
  longitude: number;
  footprint: Polygon[];
  address: string | null;
  nearest_road: string | null;
  address_evidence: AddressEvidence;
  address_corroboration: AddressCorroboration | null;
  postal_code: string | null;
  locality: string;
  /** 'stated': the building's own record or address names the locality; 'inferred': the nearest
   *  place's name; null: no locality (locality ''), or the producer does not say. */
  locality_basis: LocalityBasis | null;
  category: Category;
  category_evidence: CategoryEvidence;
  building_type: string;
  roof_shape: RoofShape | null;
  footprint_area_m2: number;
  height_m: number | null;
  height_basis: Basis | null;
  volume_m3: number | null;
  volume_basis: Basis | null;
  floor_area_m2: number | null;
  floor_area_basis: Basis | null;
  floor_area_scope: FloorAreaScope | null;
  floors: number | null;
  floors_including_underground: number | null;
  construction_year: number | null;
  completed_by_year: number | null;
  dwellings: number | null;
  construction_year_is_estimate: boolean;
  floors_is_estimate: boolean;
  dwellings_is_estimate: boolean;
  has_3d_model: boolean;
  panels_status: PanelsStatus | null;
  panels_photo_date: string | null;
  panels_confidence: number | null;
  panels_analysed_on: string | null;
  panels_photo_resolution_cm: number | null;
  solar_presence: SolarPresence;
  solar_installations: SolarInstallationRecord[];
  solar_panel_count: number | null;
  solar_capacity_kwp: number | null;
  solar_yearly_energy_kwh: number | null;
  solar_co2_savings_kg_per_year: number | null;
  solar_potential_basis: SolarBasis | null;
  roof_planes: RoofPlaneRecord[];
  businesses: BusinessRecord[];
  units: UnitRecord[];
  entrances: EntranceRecord[];
  flood_zone: FloodZone | null;
  flood_zone_mapped: boolean;
  flood_zone_source: string | null;
  seismic_design_acceleration_g: number | null;
  /** An official seismic list names the building, whatever its class and year (N/A, none). */
  seismic_listed: boolean;
  seismic_risk_class: SeismicRiskClass | null;
  seismic_risk_assessment_year: number | null;
  annual_heating_demand_kwh: number | null;
  thermal_assessment: ThermalAssessment | null;
  design_indoor_temperature_c: number | null;
  design_outdoor_temperature_c: number | null;
  recent_mean_temperature_c: number | null;
  recent_temperature_trend_c_per_decade: number | null;
  recent_frost_days: number | null;
  recent_hot_days: number | null;
  recent_minimum_daily_temperature_c: number | null;
  recent_maximum_daily_temperature_c: number | null;
  recent_annual_precipitation_mm: number | null;
  recent_max_one_day_precipitation_mm: number | null;
  district_heating_available: boolean | null;
  gas_network_available: boolean | null;
}

/**
 * Column kinds and their Arrow types:
 * - f64: Float64; i32: Int32; bool: Bool; date: Date32 (days); utf8: Utf8;
 * - dict: Dictionary<Int32, Utf8> whose values depend on the file (localities, types...);
 * - enum: Dictionary<Int8, Utf8> whose dictionary is exactly `values`, in that order, in every file;
 * - list: List<Struct<children>>, never null (no child record = empty list);
 * - geometry: GeoArrow multipolygon, interleaved xy (List<List<List<FixedSizeList<2, Float64>>>>).
 */
export type ColumnKind = 'f64' | 'i32' | 'bool' | 'date' | 'utf8' | 'dict' | 'enum' | 'list' | 'geometry';

export interface ColumnSpec {
  name: string;
  kind: ColumnKind;
  nullable: boolean;
  /** Allowed values of an enum column, in code order. */
  values?: readonly string[];
  /** Fields of the struct of a list column. */
  children?: readonly ColumnSpec[];
  unit?: string;
  /** What the column holds and which spec field or filter it serves. */
  doc: string;
}

const col = (name: string, kind: ColumnKind, nullable: boolean, doc: string, extra: Partial<ColumnSpec> = {}): ColumnSpec => ({
  name,
  kind,
  nullable,
  doc,
  ...extra,
});

const enumCol = (name: string, values: readonly string[], nullable: boolean, doc: string): ColumnSpec =>
  col(name, 'enum', nullable, doc, { values });

export const ENTRANCE_COLUMNS: readonly ColumnSpec[] = [
  col('address', 'utf8', false, 'the listed address as the record states it'),
  col('house_number', 'utf8', true, 'house number of that record'),
  col('postal_code', 'utf8', true, 'postal code of that record'),
  col('source', 'utf8', false, 'where the record comes from, e.g. `osm:node/123`'),
];

export const SOLAR_INSTALLATION_COLUMNS: readonly ColumnSpec[] = [
  col('power_kw', 'f64', true, 'installed power if the register states it', { unit: 'kW' }),
  col('storage', 'bool', true, 'true: the register states storage; false: states none; null: says nothing'),
  enumCol('register', SOLAR_REGISTER, false, 'which official register lists it'),
  col('commissioned_on', 'date', true, 'date the installation was connected'),
];

export const ROOF_PLANE_COLUMNS: readonly ColumnSpec[] = [
  col('azimuth_deg', 'f64', false, 'direction the plane faces, clockwise from north', { unit: 'degrees' }),
  col('tilt_deg', 'f64', false, 'slope of the plane (0 = flat)', { unit: 'degrees' }),
  col('area_m2', 'f64', false, 'plane area', { unit: 'm²' }),
  col('panel_count', 'i32', true, 'panels that fit on the plane'),
  col('yearly_energy_kwh', 'f64', true, 'yearly yield of those panels', { unit: 'kWh' }),
];

export const BUSINESS_COLUMNS: readonly ColumnSpec[] = [
  col('business_id', 'utf8', false, 'stable identifier of the registered business'),
  col('registration_number', 'utf8', true, 'number in the business register'),
  col('name', 'utf8', false, 'registered name; `registered_business_name` filter (substring)'),
  col(
    'active',
    'bool',
    false,
    'still active; only `has_registered_business` reads it: every other business field, filter and sort counts every business',
  ),
  col(
    'employees_min',
    'i32',
    true,
    'stated size: exact number (min = max), band start, or open band start; null = no stated size; a building shows and ranks by its largest',
  ),
  col('employees_max', 'i32', true, 'band end (inclusive); null with employees_min set = open-ended top band'),
  col(
    'turnover',
    'f64',
    true,
    'latest turnover in whole units of turnover_currency; a building shows and ranks by its largest in one currency',
  ),
  col('turnover_currency', 'utf8', true, 'ISO 4217 code of turnover'),
  col(
    'turnover_financial_year',
    'i32',
    true,
    'financial year of the latest statement, with or without a turnover; `registered_business_financial_year`',
  ),
];

export const UNIT_COLUMNS: readonly ColumnSpec[] = [
  col('unit_id', 'utf8', false, 'stable identifier of the unit'),
  col('label', 'utf8', true, 'unit number or name as recorded, e.g. `Ap. 12`'),
  col('floor', 'i32', true, 'floor the unit is on (0 = ground, negative = underground)'),
  enumCol('use', UNIT_USE, true, 'what the unit is used for'),
  col('area_m2', 'f64', true, 'usable area of the unit', { unit: 'm²' }),
  col('rooms', 'i32', true, 'number of rooms'),
];

export const COLUMNS: readonly ColumnSpec[] = [
  col('building_id', 'utf8', false, '`building_id`: UUIDv5 of `source_id` (lowercase, 36 chars), stable across snapshots'),
  col('source_id', 'utf8', false, "the source's own identifier, e.g. `osm:way/12345` or `synthetic:<seed>:<index>`"),
  col('latitude', 'f64', false, '`latitude`: representative point, inside the outline; decides bbox membership', { unit: 'degrees WGS84' }),
  col('longitude', 'f64', false, '`longitude`: representative point', { unit: 'degrees WGS84' }),
  col('footprint', 'geometry', false, 'outline, GeoArrow `geoarrow.multipolygon`, CRS84; `GET /buildings/at` distance'),
  col('address', 'utf8', true, '`address`, as a record states it'),
  col('nearest_road', 'utf8', true, '`nearest_road`: set only when no address names the building'),
  enumCol(
    'address_evidence',
    ADDRESS_EVIDENCE,
    false,
    '`address_evidence`: address_record, business_listing, or none when there is no address',
  ),
  enumCol(
    'address_corroboration',
    ADDRESS_CORROBORATION,
    true,
    '`address_corroboration` and its filter; null when shown without a house number',
  ),
  col('postal_code', 'dict', true, '`postal_code`'),
  col(
    'locality',
    'dict',
    false,
    "`locality`: named by the building's own record or address, else the nearest place's name (see `locality_basis`); empty string when there is neither",
  ),
  enumCol(
    'locality_basis',
    LOCALITY_BASIS,
    true,
    "stated: the building's own record or address names the locality; inferred: the nearest place's name (public pages: `estimate: true`); null when locality is empty or the producer does not say (v1 files)",
  ),
  enumCol('category', CATEGORY, false, '`category` and its filter'),
  enumCol('category_evidence', CATEGORY_EVIDENCE, false, '`category_evidence`: confirmed (a record states it) or inferred'),
  col('building_type', 'dict', false, '`building_type` and its filter; `unspecified` when no record names a type'),
  enumCol('roof_shape', ROOF_SHAPE, true, '`roof_shape` and its filter'),
  col('footprint_area_m2', 'f64', false, '`footprint_area_m2`, on the WGS84 ellipsoid; `min_area_m2`/`max_area_m2`, sort=area', {
    unit: 'm²',
  }),
  col('height_m', 'f64', true, '`height.metres`; `min_height_m`/`max_height_m`, sort=height', { unit: 'm' }),
  enumCol('height_basis', BASIS, true, '`height.basis`; null when height is null'),
  col('volume_m3', 'f64', true, '`volume_m3`; `min_volume_m3`/`max_volume_m3`, sort=volume', { unit: 'm³' }),
  enumCol('volume_basis', BASIS, true, '`volume_basis`; `measured_height_only` keeps `measured`'),
  col('floor_area_m2', 'f64', true, '`floor_area.square_metres`', { unit: 'm²' }),
  enumCol('floor_area_basis', BASIS, true, '`floor_area.basis`'),
  enumCol('floor_area_scope', FLOOR_AREA_SCOPE, true, '`floor_area.scope`'),
  col('floors', 'i32', true, '`floors` above ground; `min_floors`/`max_floors`'),
  col('floors_including_underground', 'i32', true, '`floors_including_underground`'),
  col('construction_year', 'i32', true, '`construction_year`'),
  col('completed_by_year', 'i32', true, '`completed_by_year`: latest year by which the building stood'),
  col('dwellings', 'i32', true, '`dwellings`; `min_dwellings`/`max_dwellings`'),
  col('construction_year_is_estimate', 'bool', false, 'public page estimate flag of constructionYear'),
  col('floors_is_estimate', 'bool', false, 'public page estimate flag of floors'),
  col('dwellings_is_estimate', 'bool', false, 'public page estimate flag of dwellings'),
  col('has_3d_model', 'bool', false, '`has_3d_model`: a reconstructed 3D roof model exists'),
  enumCol(
    'panels_status',
    PANELS_STATUS,
    true,
    '`existing_solar_panels.status` and `existing_solar_panels` filter; null = no photo result',
  ),
  col('panels_photo_date', 'date', true, '`existing_solar_panels.photo_date`'),
  col('panels_confidence', 'f64', true, '`existing_solar_panels.confidence`, 0 to 1'),
  col('panels_analysed_on', 'date', true, '`existing_solar_panels.analysed_on`'),
  col('panels_photo_resolution_cm', 'f64', true, '`existing_solar_panels.photo_resolution_cm`', { unit: 'cm' }),
  enumCol(
    'solar_presence',
    SOLAR_PRESENCE,
    false,
    '`solar_presence`, settled at build time from register and photo; `solar_presence`/`exclude_solar_presence`',
  ),
  col(
    'solar_installations',
    'list',
    false,
    'registered installations at the address; empty = `registered_solar` null. `registered_solar`, `registered_solar_storage`, `min_registered_solar_kw`',
    { children: SOLAR_INSTALLATION_COLUMNS },
  ),
  col(
    'solar_panel_count',
    'i32',
    true,
    'solar potential: panels that fit; `min_panel_count`/`max_panel_count`. All solar_* potential columns are null together = `solar_potential` null',
  ),
  col('solar_capacity_kwp', 'f64', true, 'solar potential capacity; `min_capacity_kwp`/`max_capacity_kwp`', { unit: 'kWp' }),
  col('solar_yearly_energy_kwh', 'f64', true, 'solar potential yearly yield; `min_yearly_energy_kwh`/`max_yearly_energy_kwh`', {
    unit: 'kWh',
  }),
  col('solar_co2_savings_kg_per_year', 'f64', true, 'CO2 avoided; `min_co2_savings_kg_per_year`/`max_co2_savings_kg_per_year`', {
    unit: 'kg/year',
  }),
  enumCol('solar_potential_basis', SOLAR_BASIS, true, 'basis of the solar potential; non-null = `has_solar_potential`'),
  col('roof_planes', 'list', false, 'roof analysis plane by plane', { children: ROOF_PLANE_COLUMNS }),
  col('businesses', 'list', false, 'businesses whose registered office is at the address; `registered_business_*` fields and filters', {
    children: BUSINESS_COLUMNS,
  }),
  col('units', 'list', false, 'units of the building; `GET /buildings/{id}/units`', { children: UNIT_COLUMNS }),
  col('entrances', 'list', false, 'listed addresses of the building, one entrance each; `min_entrances`/`max_entrances`', {
    children: ENTRANCE_COLUMNS,
  }),
  enumCol('flood_zone', FLOOD_ZONE, true, '`flood_zone` and its filter: most frequently flooded zone the building lies in'),
  col('flood_zone_mapped', 'bool', false, '`flood_zone_mapped`: an official flood map covers the location'),
  col('flood_zone_source', 'dict', true, '`flood_zone_source`'),
  col('seismic_design_acceleration_g', 'f64', true, '`seismic_design_acceleration_g`', { unit: 'g' }),
  col(
    'seismic_listed',
    'bool',
    false,
    "an official seismic list names the building, whatever its class and year (a list's N/A with no year included); true wherever a class or assessment year is set; place fact `buildingsOnSeismicList`",
  ),
  enumCol('seismic_risk_class', SEISMIC_RISK_CLASS, true, '`seismic_risk_class` and its filter; only buildings on an official list'),
  col('seismic_risk_assessment_year', 'i32', true, '`seismic_risk_assessment_year`'),
  col(
    'annual_heating_demand_kwh',
    'f64',
    true,
    'modelled annual heating demand for the local climate; non-null = `has_annual_heating_estimate`',
    { unit: 'kWh/year' },
  ),
  enumCol('thermal_assessment', THERMAL_ASSESSMENT, true, 'building-specific thermal assessment; non-null = `has_thermal_assessment`'),
  col('design_indoor_temperature_c', 'f64', true, 'design indoor temperature from the thermal assessment', { unit: '°C' }),
  col(
    'design_outdoor_temperature_c',
    'f64',
    true,
    'design outdoor temperature from the thermal assessment; with the indoor one and an assessment = `has_peak_heat_load`',
    { unit: '°C' },
  ),
  col('recent_mean_temperature_c', 'f64', true, 'rolling mean temperature of recent complete years', { unit: '°C' }),
  col('recent_temperature_trend_c_per_decade', 'f64', true, 'trend of that mean; with the mean = `has_recent_climate_trend`', {
    unit: '°C/decade',
  }),
  col('recent_frost_days', 'f64', true, 'frost days a year, averaged; `min_recent_frost_days`', { unit: 'days/year' }),
  col('recent_hot_days', 'f64', true, 'hot days a year, averaged; `min_recent_hot_days`', { unit: 'days/year' }),
  col('recent_minimum_daily_temperature_c', 'f64', true, 'coldest daily minimum; `max_recent_minimum_daily_temperature_c`', { unit: '°C' }),
  col(
    'recent_maximum_daily_temperature_c',
    'f64',
    true,
    'hottest daily maximum; the four extremes columns all set = `has_recent_temperature_extremes`',
    { unit: '°C' },
  ),
  col('recent_annual_precipitation_mm', 'f64', true, 'yearly precipitation, averaged', { unit: 'mm' }),
  col(
    'recent_max_one_day_precipitation_mm',
    'f64',
    true,
    'wettest single day; `min_recent_max_one_day_precipitation_mm`; with the annual one = `has_recent_precipitation`',
    { unit: 'mm' },
  ),
  col('district_heating_available', 'bool', true, 'a district heating network serves the location'),
  col('gas_network_available', 'bool', true, 'a gas network serves the location'),
];

export const METADATA_KEYS = {
  schemaVersion: 'edifice.schema_version',
  country: 'edifice.country',
  snapshotDate: 'edifice.snapshot_date',
  sources: 'edifice.sources',
  checksum: 'edifice.checksum',
  rowCount: 'edifice.row_count',
} as const;

/** Where the data of a snapshot comes from; carried in the file's metadata. */
export interface SnapshotSource {
  name: string;
  licence: string;
  attribution: string;
  retrieved: string; // YYYY-MM-DD
}

export interface SnapshotMetadata {
  schemaVersion: number;
  country: string;
  snapshotDate: string;
  sources: SnapshotSource[];
  checksum: string;
  rowCount: number;
}

/** Columns a v1 file lacks; the reader adds them (see upgrade.ts). */
export const ADDED_IN_V2: readonly string[] = ['locality_basis', 'seismic_listed'];

/** The columns a file of `version` holds, in schema order. */
export function columnsOf(version: number): readonly ColumnSpec[] {
  return version >= 2 ? COLUMNS : COLUMNS.filter((c) => !ADDED_IN_V2.includes(c.name));
}

export function columnSpec(name: string): ColumnSpec {
  const spec = COLUMNS.find((c) => c.name === name);
  if (!spec) throw new RangeError(`Unknown snapshot column "${name}".`);
  return spec;
}
