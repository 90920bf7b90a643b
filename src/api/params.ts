/**
 * THE table of parameters (spec 4.1-4.3). One row per parameter and the operations that take it.
 * It drives the validator (`validate.ts`), the OpenAPI document (`openapi.ts`) and the docs
 * (`docs.ts`), so the three cannot drift: change a range here and all three follow.
 *
 * Cross-parameter rules are rows' data too: every `min_X`/`max_X` pair must have min <= max,
 * `requiredWith` (spec 4.1 rule 5), `refusedWith` (rule 7), `disjointFrom` (rule 6). The window
 * rule offset + limit <= 10,000 (rule 3) holds for every operation that pages by offset.
 */
import { MAX_BBOX_SIDE_DEG, MAX_WINDOW, SORT_KEYS } from '../query/types.ts';
import {
  ADDRESS_CORROBORATION,
  CATEGORY,
  FLOOD_ZONE,
  PANELS_STATUS,
  ROOF_SHAPE,
  SEISMIC_RISK_CLASS,
  SOLAR_PRESENCE,
} from '../snapshot/schema.ts';
import type { OperationId } from './operations.ts';
import { BUILDING_KEYS } from './fields.ts';
import { GEOMETRY_CHOICES } from './geojson.ts';
import { FORMATS } from './output.ts';
import { EXPORT_FORMATS } from './export.ts';

export type ParamType = 'integer' | 'number' | 'boolean' | 'string' | 'enum';

/** A parameter given (not defaulted), optionally with one value (its canonical text, e.g. `false`). */
export interface Condition {
  name: string;
  value?: string;
}

export interface ParamSpec {
  /** The spec's name, as on the wire. */
  readonly name: string;
  readonly in: 'query' | 'path';
  readonly operations: readonly OperationId[];
  /** Field of the parsed query (`BuildingsQuery`, `PointQuery`, `ChildPageQuery`). */
  readonly key: string;
  readonly type: ParamType;
  /** Repeatable and comma-separated: `category=a,b` and `category=a&category=b`; values OR. */
  readonly list: boolean;
  readonly required: boolean;
  /** Inclusive bounds, unless `exclusiveMin` (then value > min). */
  readonly min?: number;
  readonly max?: number;
  readonly exclusiveMin?: boolean;
  /** Applied when absent. A boolean defaulting to false is left out of the parsed query. */
  readonly default?: number | string | boolean;
  /** ECMA-262 regular expression, anchored; shared with OpenAPI `pattern`. */
  readonly pattern?: string;
  /** In characters (Unicode code points), as JSON Schema counts them. */
  readonly minLength?: number;
  readonly maxLength?: number;
  /** Allowed values of an enum. */
  readonly values?: readonly string[];
  /** What a valid string looks like, in words, for messages and docs (strings with a pattern). */
  readonly expected?: string;
  /** Strings with a grammar of their own. */
  readonly format?: 'bbox' | 'uuid';
  /** Section of the docs (the spec's table headings). */
  readonly group: string;
  /** What it does, in the spec's words. */
  readonly doc: string;
  /** Required when any condition holds (rule 5). */
  readonly requiredWith?: readonly Condition[];
  /** Refused when any condition holds (rule 7). */
  readonly refusedWith?: readonly Condition[];
  /** No value may also be a value of that list parameter (rule 6). */
  readonly disjointFrom?: string;
}

/** Largest integer a JSON number holds exactly; the bound of ranges the spec leaves open. */
export const MAX_EXACT_INTEGER = Number.MAX_SAFE_INTEGER;

export const BBOX_PARTS = ['minLon', 'minLat', 'maxLon', 'maxLat'] as const;
export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

const BUILDINGS: readonly OperationId[] = ['listBuildings', 'exportBuildings'];
const POINT: readonly OperationId[] = ['listBuildingsAtPoint'];
const CHILDREN: readonly OperationId[] = ['listBuildingUnits', 'listRegisteredBusinesses'];
const PAGED: readonly OperationId[] = ['listBuildings', ...CHILDREN];

type Row = Omit<ParamSpec, 'in' | 'operations' | 'list' | 'required' | 'group'> & Partial<Pick<ParamSpec, 'in' | 'list' | 'required'>>;

function rows(group: string, operations: readonly OperationId[], specs: readonly Row[]): ParamSpec[] {
  return specs.map((r) => ({ in: 'query', list: false, required: false, ...r, group, operations }));
}

const int = (name: string, key: string, min: number, max: number, doc: string, extra: Partial<Row> = {}): Row => ({
  name,
  key,
  type: 'integer',
  min,
  max,
  doc,
  ...extra,
});
const num = (name: string, key: string, min: number, max: number, doc: string, extra: Partial<Row> = {}): Row => ({
  name,
  key,
  type: 'number',
  min,
  max,
  doc,
  ...extra,
});
const bool = (name: string, key: string, doc: string, extra: Partial<Row> = {}): Row => ({ name, key, type: 'boolean', doc, ...extra });
const flag = (name: string, key: string, doc: string): Row => bool(name, key, doc, { default: false });
const enumList = (name: string, key: string, values: readonly string[], doc: string, extra: Partial<Row> = {}): Row => ({
  name,
  key,
  type: 'enum',
  list: true,
  values,
  doc,
  ...extra,
});

const LIMIT_1E9 = 1_000_000_000;
const LIMIT_1E6 = 1_000_000;
const TURNOVER_SORT: Condition = { name: 'sort', value: 'registered_business_turnover' };
const NO_REGISTERED_SOLAR: Condition = { name: 'registered_solar', value: 'false' };

export const PARAMETERS: readonly ParamSpec[] = [
  // ---- GET /buildings: area and paging --------------------------------------------------------
  ...rows('Area and paging', BUILDINGS, [
    {
      name: 'bbox',
      key: 'bbox',
      type: 'string',
      format: 'bbox',
      required: true,
      doc:
        'Four comma-separated decimals minLon,minLat,maxLon,maxLat in WGS84 degrees: longitudes -180 to 180, ' +
        `latitudes -90 to 90, min at most max, each side at most ${MAX_BBOX_SIDE_DEG} degrees (a box across the antimeridian ` +
        'is asked as two). A building is inside when its representative point (latitude, longitude) lies in the box, edges included.',
    },
    {
      name: 'sort',
      key: 'sort',
      type: 'enum',
      values: SORT_KEYS,
      default: 'volume',
      doc:
        'Ranking, largest first; buildings whose value is unknown come last. registered_business_turnover ranks by the ' +
        'largest latest turnover in registered_business_turnover_currency; registered_business_employees by the largest ' +
        'stated size (a band ranks where it starts). Both read every business registered at the address, active or not, ' +
        'and rank by the value the Building shows in the field of that name.',
    },
  ]),
  // ---- GET /buildings/{building_id}/units, /registered-businesses -----------------------------
  ...rows(
    'Building of the path',
    [...CHILDREN, 'getPublicBuilding'],
    [
      {
        name: 'building_id',
        key: 'buildingId',
        in: 'path',
        type: 'string',
        format: 'uuid',
        required: true,
        pattern: UUID_PATTERN,
        expected: 'a UUID such as 0b7e3f4a-1c2d-5e6f-8a9b-0c1d2e3f4a5b',
        doc: 'The building_id of a Building (a UUID; uppercase hex digits are accepted and read as lowercase).',
      },
    ],
  ),
  ...rows('Paging', PAGED, [
    int('limit', 'limit', 1, 100, 'Page size.', { default: 25 }),
    int('offset', 'offset', 0, MAX_WINDOW, `Items to skip; offset + limit must be at most ${MAX_WINDOW.toLocaleString('en-US')}.`, {
      default: 0,
    }),
  ]),

  // ---- GET /buildings: building ---------------------------------------------------------------
  ...rows('Building', BUILDINGS, [
    enumList('category', 'category', CATEGORY, 'Building category; combined with building_type by OR.'),
    {
      name: 'building_type',
      key: 'buildingType',
      type: 'string',
      list: true,
      pattern: '^[a-z0-9_]{1,64}$',
      expected: '1 to 64 lowercase letters, digits or underscores',
      doc:
        'Granular type (e.g. office, warehouse, school, apartments, garage, retail): each 1 to 64 lowercase letters, ' +
        'digits or underscores; combined with category by OR.',
    },
    enumList('roof_shape', 'roofShape', ROOF_SHAPE, 'Roof shape.'),
    int('min_floors', 'minFloors', 0, 500, 'Floors above ground, at least.'),
    int('max_floors', 'maxFloors', 0, 500, 'Floors above ground, at most.'),
    int('min_dwellings', 'minDwellings', 0, LIMIT_1E6, 'Dwellings, at least.'),
    int('max_dwellings', 'maxDwellings', 0, LIMIT_1E6, 'Dwellings, at most.'),
    int('min_entrances', 'minEntrances', 1, LIMIT_1E6, 'Entrances, at least; each listed address of the building counts as one entrance.'),
    int('max_entrances', 'maxEntrances', 1, LIMIT_1E6, 'Entrances, at most; each listed address of the building counts as one entrance.'),
    enumList(
      'address_corroboration',
      'addressCorroboration',
      ADDRESS_CORROBORATION,
      'How well the house number is corroborated; a building shown without a house number matches none.',
    ),
  ]),

  // ---- GET /buildings: size -------------------------------------------------------------------
  ...rows('Size', BUILDINGS, [
    num('min_area_m2', 'minAreaM2', 0, LIMIT_1E9, 'Ground footprint in m², at least.'),
    num('max_area_m2', 'maxAreaM2', 0, LIMIT_1E9, 'Ground footprint in m², at most.'),
    num('min_height_m', 'minHeightM', 0, 1000, 'Height in metres, at least.'),
    num('max_height_m', 'maxHeightM', 0, 1000, 'Height in metres, at most.'),
    num('min_volume_m3', 'minVolumeM3', 0, LIMIT_1E9, 'Volume in m³, at least.'),
    num('max_volume_m3', 'maxVolumeM3', 0, LIMIT_1E9, 'Volume in m³, at most.'),
    flag(
      'measured_height_only',
      'measuredHeightOnly',
      'Keeps buildings whose volume comes from a measurement of the building itself (a survey, or a surface model ' +
        'measured over its roof); despite its name it reads the volume.',
    ),
  ]),

  // ---- GET /buildings: roof and solar ---------------------------------------------------------
  ...rows('Roof and solar', BUILDINGS, [
    enumList('solar_presence', 'solarPresence', SOLAR_PRESENCE, 'Keeps buildings whose settled solar answer is one of these.'),
    enumList(
      'exclude_solar_presence',
      'excludeSolarPresence',
      SOLAR_PRESENCE,
      'Leaves out buildings whose settled solar answer is one of these.',
      { disjointFrom: 'solar_presence' },
    ),
    enumList(
      'existing_solar_panels',
      'existingSolarPanels',
      PANELS_STATUS,
      'Result of the roof photo, read alone (whatever a register states).',
    ),
    bool(
      'registered_solar',
      'registeredSolar',
      'true keeps buildings with a registered installation (registered_solar not null); false keeps those with none ' +
        'registered (says nothing of their roofs); omitted keeps both.',
    ),
    bool(
      'registered_solar_storage',
      'registeredSolarStorage',
      'Among buildings with a registered installation: true keeps those a register states store energy, false those ' +
        'stated to store none; a building whose register does not say matches neither.',
      { refusedWith: [NO_REGISTERED_SOLAR] },
    ),
    num(
      'min_registered_solar_kw',
      'minRegisteredSolarKw',
      0,
      LIMIT_1E9,
      'Registered power in kW, at least: sums the installations that state their power; buildings with none stating ' +
        'power are left out.',
      { exclusiveMin: true, refusedWith: [NO_REGISTERED_SOLAR] },
    ),
    flag('has_solar_potential', 'hasSolarPotential', 'Keeps only buildings with a solar-potential estimate.'),
    int('min_panel_count', 'minPanelCount', 0, LIMIT_1E6, 'Solar potential: panels that fit, at least.'),
    int('max_panel_count', 'maxPanelCount', 0, LIMIT_1E6, 'Solar potential: panels that fit, at most.'),
    num('min_capacity_kwp', 'minCapacityKwp', 0, LIMIT_1E9, 'Solar potential: capacity in kWp, at least.'),
    num('max_capacity_kwp', 'maxCapacityKwp', 0, LIMIT_1E9, 'Solar potential: capacity in kWp, at most.'),
    num('min_yearly_energy_kwh', 'minYearlyEnergyKwh', 0, LIMIT_1E9, 'Solar potential: yearly energy in kWh, at least.'),
    num('max_yearly_energy_kwh', 'maxYearlyEnergyKwh', 0, LIMIT_1E9, 'Solar potential: yearly energy in kWh, at most.'),
    num('min_co2_savings_kg_per_year', 'minCo2SavingsKgPerYear', 0, LIMIT_1E9, 'Solar potential: CO2 savings in kg a year, at least.'),
    num('max_co2_savings_kg_per_year', 'maxCo2SavingsKgPerYear', 0, LIMIT_1E9, 'Solar potential: CO2 savings in kg a year, at most.'),
    flag('has_3d_model', 'has3dModel', 'Keeps only buildings with a reconstructed 3D roof model.'),
  ]),

  // ---- GET /buildings: registered businesses --------------------------------------------------
  ...rows('Registered businesses', BUILDINGS, [
    flag(
      'has_registered_business',
      'hasRegisteredBusiness',
      'At least one active business registered at the address. The only business filter that reads activity: every other ' +
        'one, both business sorts and the registered_business_* fields read every business registered there, active or not.',
    ),
    {
      name: 'registered_business_name',
      key: 'registeredBusinessName',
      type: 'string',
      minLength: 2,
      maxLength: 120,
      doc: 'A business registered at the address, active or not, has a name that contains this text (ignoring case).',
    },
    int(
      'min_registered_business_turnover',
      'minRegisteredBusinessTurnover',
      0,
      MAX_EXACT_INTEGER,
      'Latest turnover, in whole units of registered_business_turnover_currency, at least: some business at the address, ' +
        'active or not, has a latest turnover in that currency of at least this. No currency conversion: a turnover in ' +
        'another currency is unknown.',
    ),
    int(
      'max_registered_business_turnover',
      'maxRegisteredBusinessTurnover',
      0,
      MAX_EXACT_INTEGER,
      'Latest turnover, in whole units of registered_business_turnover_currency, at most: some business at the address ' +
        'states a latest turnover in that currency, and every one that does (active or not) is at most this.',
    ),
    {
      name: 'registered_business_turnover_currency',
      key: 'registeredBusinessTurnoverCurrency',
      type: 'string',
      pattern: '^[A-Z]{3}$',
      expected: 'three uppercase letters (ISO 4217), e.g. EUR',
      doc:
        'Currency of the turnover filters, of sort=registered_business_turnover and of the registered_business_turnover ' +
        'each Building of the page shows: three uppercase letters, ISO 4217.',
      requiredWith: [{ name: 'min_registered_business_turnover' }, { name: 'max_registered_business_turnover' }, TURNOVER_SORT],
    },
    int(
      'registered_business_financial_year',
      'registeredBusinessFinancialYear',
      1990,
      2100,
      'Some business at the address, active or not, has its latest financial statement for this year, whether or not ' +
        'the statement gives a turnover. Like every filter, a condition on the building: it need not hold for the same ' +
        'business as the turnover filters.',
    ),
    int(
      'min_registered_business_employees',
      'minRegisteredBusinessEmployees',
      0,
      LIMIT_1E6,
      "One business's whole stated size (active or not) is at least this: a band counts only when all of it is at or " +
        'above the value (10 to 19 matches 10, not 15); a business with no stated size never matches.',
    ),
    int(
      'max_registered_business_employees',
      'maxRegisteredBusinessEmployees',
      0,
      LIMIT_1E6,
      'Some business at the address states a size, and every one that does (active or not) is at most this; an ' +
        'open-ended top band never matches.',
    ),
  ]),

  // ---- GET /buildings: energy and climate -----------------------------------------------------
  ...rows('Energy and climate', BUILDINGS, [
    flag('has_annual_heating_estimate', 'hasAnnualHeatingEstimate', 'Annual heating-demand estimate for the local climate.'),
    flag(
      'has_thermal_assessment',
      'hasThermalAssessment',
      'Building-specific thermal assessment (energy certificate, audit, as-built model or survey).',
    ),
    flag('has_peak_heat_load', 'hasPeakHeatLoad', 'The thermal assessment supplies the design temperatures a peak heat load needs.'),
    flag('has_recent_climate_trend', 'hasRecentClimateTrend', 'Recent rolling climate average and trend at the location.'),
    flag('has_recent_temperature_extremes', 'hasRecentTemperatureExtremes', 'Complete recent temperature-extremes profile.'),
    flag('has_recent_precipitation', 'hasRecentPrecipitation', 'Complete recent precipitation profile.'),
    num('min_recent_frost_days', 'minRecentFrostDays', 0, 366, 'Frost days a year averaged over recent complete years, at least.'),
    num(
      'max_recent_minimum_daily_temperature_c',
      'maxRecentMinimumDailyTemperatureC',
      -100,
      100,
      'The coldest daily minimum of recent complete years is at most this, in °C.',
    ),
    num('min_recent_hot_days', 'minRecentHotDays', 0, 366, 'Hot days a year averaged over recent complete years, at least.'),
    num(
      'min_recent_max_one_day_precipitation_mm',
      'minRecentMaxOneDayPrecipitationMm',
      0,
      5000,
      'Wettest single day of recent complete years, in mm, at least.',
    ),
  ]),

  // ---- GET /buildings: natural hazards --------------------------------------------------------
  ...rows('Natural hazards', BUILDINGS, [
    enumList(
      'flood_zone',
      'floodZone',
      FLOOD_ZONE,
      'Most frequently flooded zone of an official flood hazard map the building lies in (100_year_climate_change: ' +
        'the 1-in-100-year flood under the climate the map projects); a building whose zone is unknown matches none.',
    ),
    enumList(
      'seismic_risk_class',
      'seismicRiskClass',
      SEISMIC_RISK_CLASS,
      'Seismic risk class of an official list of technically assessed buildings; a building on no list matches none.',
    ),
  ]),

  // ---- GET /buildings/at ----------------------------------------------------------------------
  ...rows('Point', POINT, [
    num('lat', 'lat', -90, 90, 'Latitude of the point, WGS84 degrees.', { required: true }),
    num('lon', 'lon', -180, 180, 'Longitude of the point, WGS84 degrees.', { required: true }),
    num('radius_m', 'radiusM', 1, 200, 'Buildings whose outline lies within this many metres of the point.', { default: 25 }),
    int('limit', 'limit', 1, 25, 'Page size.', { default: 10 }),
  ]),

  // ---- GET /buildings, /buildings/at: how the answer is written (extensions beyond the spec) ----
  ...rows(
    'Output',
    ['listBuildings', ...POINT],
    [
      {
        name: 'f',
        key: 'format',
        type: 'enum',
        values: FORMATS,
        doc:
          'Format of the answer: json, msgpack, or geojson (a GeoJSON FeatureCollection, application/geo+json, each building a ' +
          'Feature whose properties are its fields, paged as in JSON). Without it the Accept header chooses: application/geo+json, ' +
          'application/msgpack, else JSON.',
      },
      {
        name: 'geometry',
        key: 'geometry',
        type: 'enum',
        values: GEOMETRY_CHOICES,
        doc:
          'GeoJSON only: the geometry of each Feature, point (the default: the representative point, longitude and latitude) ' +
          "or footprint (the outline, a MultiPolygon of the snapshot's coordinates, exterior rings counter-clockwise and holes " +
          'clockwise as RFC 7946 asks). Refused with another format.',
      },
      enumList(
        'fields',
        'fields',
        BUILDING_KEYS,
        'Top-level fields of the Building object to keep; building_id is always kept. Shrinks every building of the page; ' +
          'charges as without it.',
        { expected: 'a top-level field of the Building object (building_id, address, … app_url: its properties in /v1/openapi.json)' },
      ),
    ],
  ),

  // ---- GET /buildings/export (an extension beyond the spec) ------------------------------------
  ...rows(
    'Export',
    ['exportBuildings'],
    [
      int(
        'limit',
        'limit',
        1,
        MAX_WINDOW,
        `The first this many buildings of the ranking (at most ${MAX_WINDOW.toLocaleString('en-US')}).`,
        { default: MAX_WINDOW },
      ),
      int(
        'max_credits',
        'maxCredits',
        0,
        MAX_WINDOW,
        'The most this export may cost: when more of its buildings than this were not opened in the last 365 days, the answer ' +
          'is 402 insufficient_credits and nothing is charged.',
      ),
      {
        name: 'f',
        key: 'format',
        type: 'enum',
        values: EXPORT_FORMATS,
        doc:
          'ndjson (application/x-ndjson: a building a line, as in data[] of GET /buildings), csv (text/csv, RFC 4180: a header ' +
          'of field names, then a row a building, nested fields as JSON text) or geojsonseq (application/geo+json-seq, RFC 8142: ' +
          'a GeoJSON Feature a record). Without it the Accept header chooses among these; else ndjson.',
      },
      {
        name: 'geometry',
        key: 'geometry',
        type: 'enum',
        values: GEOMETRY_CHOICES,
        doc: 'geojsonseq only: point (the default) or footprint (the outline as a MultiPolygon, RFC 7946 ring order).',
      },
      enumList(
        'fields',
        'fields',
        BUILDING_KEYS,
        'Top-level fields of the Building object to keep (the CSV columns); building_id is always kept.',
        { expected: 'a top-level field of the Building object (building_id, address, … app_url: its properties in /v1/openapi.json)' },
      ),
    ],
  ),

  // ---- /public place pages, reports ----------------------------------------------------------
  ...rows(
    'Place of the path',
    ['getPublicPlace', 'listPublicPlaces'],
    [
      {
        name: 'country',
        key: 'country',
        in: 'path',
        type: 'string',
        required: true,
        pattern: '^[A-Z]{2}$',
        expected: 'two uppercase letters (ISO 3166-1 alpha-2), e.g. RO',
        doc: 'A covered country, as GET /public/countries lists it.',
      },
    ],
  ),
  ...rows(
    'Place of the path',
    ['getPublicPlace'],
    [
      {
        name: 'locality',
        key: 'locality',
        in: 'path',
        type: 'string',
        required: true,
        minLength: 1,
        maxLength: 200,
        doc: "The locality's name as buildings carry it (percent-encoded in the path).",
      },
    ],
  ),
  ...rows(
    'Version',
    ['getOpenApi'],
    [
      {
        name: 'version',
        key: 'version',
        type: 'enum',
        values: ['3.1', '3.0'],
        default: '3.1',
        doc: 'The OpenAPI version the document is written in.',
      },
    ],
  ),
  ...rows(
    'Order',
    ['getReport'],
    [
      {
        name: 'order_id',
        key: 'orderId',
        in: 'path',
        type: 'string',
        required: true,
        pattern: '^ord_[0-9A-Za-z]{14}$',
        expected: 'an order id such as ord_4fQ9aZ0bC1dE2f',
        doc: 'The order_id the checkout answered.',
      },
      {
        name: 'token',
        key: 'token',
        type: 'string',
        required: true,
        pattern: '^rpt_[0-9A-Za-z]{32}$',
        expected: 'the read token the checkout answered (rpt_ and 32 letters or digits)',
        doc: 'The read token of the order, shown once at checkout.',
      },
    ],
  ),
];

/** The rows of one operation, in table order. */
export function parametersOf(operation: OperationId): readonly ParamSpec[] {
  return PARAMETERS_BY_OPERATION[operation];
}

const PARAMETERS_BY_OPERATION = ((): Record<OperationId, ParamSpec[]> => {
  const out: Record<OperationId, ParamSpec[]> = {
    listBuildings: [],
    exportBuildings: [],
    listBuildingsAtPoint: [],
    listBuildingUnits: [],
    listRegisteredBusinesses: [],
    getOpenApi: [],
    getPublicBuilding: [],
    getPublicPlace: [],
    listPublicPlaces: [],
    listCountries: [],
    createCountryRequest: [],
    createRemovalRequest: [],
    createReportOrder: [],
    getReport: [],
    confirmReportPayment: [],
  };
  for (const p of PARAMETERS) {
    for (const op of p.operations) {
      if (out[op].some((q) => q.name === p.name)) throw new Error(`Parameter ${p.name} is declared twice for ${op}.`);
      out[op].push(p);
    }
  }
  return out;
})();

/** Every `min_X` of an operation whose `max_X` it also takes: [min, max]. */
export function rangePairs(operation: OperationId): [ParamSpec, ParamSpec][] {
  const params = parametersOf(operation);
  const out: [ParamSpec, ParamSpec][] = [];
  for (const p of params) {
    if (!p.name.startsWith('min_')) continue;
    const max = params.find((q) => q.name === `max_${p.name.slice(4)}`);
    if (max) out.push([p, max]);
  }
  return out;
}
