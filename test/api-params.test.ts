/**
 * Parameter validation (spec 4.1, 4.2, 4.3): every parameter's bad values, good values parsing to
 * the exact query, list forms, and the rules between parameters.
 *
 * The ranges below are typed again from the spec's tables, not read from `src/api/params.ts`,
 * so a wrong row in the table fails here.
 */
import { describe, expect, it } from 'vitest';
import { ApiError } from '../src/api/errors.ts';
import { PARAMETERS, parametersOf } from '../src/api/params.ts';
import {
  parseBuildingsQuery,
  parseParameters,
  parsePointQuery,
  parseRegisteredBusinessesQuery,
  parseUnitsQuery,
} from '../src/api/validate.ts';
import type { OperationId } from '../src/api/operations.ts';
import { parseExportQuery } from '../src/api/export.ts';
import type { BuildingsQuery } from '../src/query/types.ts';

const BBOX = 'bbox=9.47,47.04,9.64,47.27';
const ID = '6f1c2a8e-3d4b-5e6f-9a0b-1c2d3e4f5a6b';
const ORDER = 'ord_4fQ9aZ0bC1dE2f';
const TOKEN = `rpt_${'aZ09'.repeat(8)}`;

/** The error a query is refused with; fails the test when it is accepted. */
function refusal(run: () => unknown): ApiError {
  try {
    const out = run();
    throw new Error(`accepted: ${JSON.stringify(out)}`);
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
}

function expectRefused(run: () => unknown, parameter: string): ApiError {
  const err = refusal(run);
  expect(err.status).toBe(400);
  expect(err.code).toBe('invalid_parameter');
  expect(err.parameter).toBe(parameter);
  expect(err.toBody()).toEqual({ error: { code: 'invalid_parameter', message: err.message, parameter } });
  expect(err.message.startsWith(`${parameter}: `)).toBe(true);
  return err;
}

/** Parse one operation with `name=value` added to what it needs otherwise. */
function run(op: OperationId, name: string, value: string): () => unknown {
  const enc = (v: string) => encodeURIComponent(v);
  switch (op) {
    case 'listBuildings':
      return () => parseBuildingsQuery(name === 'bbox' ? `bbox=${enc(value)}` : `${BBOX}&${name}=${enc(value)}`);
    case 'exportBuildings':
      return () => parseExportQuery(name === 'bbox' ? `bbox=${enc(value)}` : `${BBOX}&${name}=${enc(value)}`, '');
    case 'listBuildingsAtPoint': {
      const base = new URLSearchParams({ lat: '47.14', lon: '9.52' });
      base.set(name, value);
      return () => parsePointQuery(base.toString());
    }
    case 'listBuildingUnits':
      return name === 'building_id' ? () => parseUnitsQuery(value, '') : () => parseUnitsQuery(ID, `${name}=${enc(value)}`);
    case 'listRegisteredBusinesses':
      return name === 'building_id'
        ? () => parseRegisteredBusinessesQuery(value, '')
        : () => parseRegisteredBusinessesQuery(ID, `${name}=${enc(value)}`);
    case 'getPublicBuilding':
      return () => parseParameters(op, '', { building_id: value });
    case 'getPublicPlace': {
      const path = { country: 'RO', locality: 'Cluj-Napoca', [name]: value };
      return () => parseParameters(op, '', path);
    }
    case 'listPublicPlaces':
      return () => parseParameters(op, '', { country: value });
    case 'getOpenApi':
      return () => parseParameters(op, `${name}=${enc(value)}`);
    case 'getReport':
      return name === 'order_id'
        ? () => parseParameters(op, `token=${TOKEN}`, { order_id: value })
        : () => parseParameters(op, `token=${enc(value)}`, { order_id: ORDER });
    default:
      throw new Error(op);
  }
}

// ---------------------------------------------------------------------------------------------
// The spec's tables, typed again.
// ---------------------------------------------------------------------------------------------

/** [min, max] of every integer and number parameter of GET /buildings (spec 4.1). */
const BUILDINGS_RANGES: Record<string, [number, number]> = {
  limit: [1, 100],
  offset: [0, 10_000],
  min_floors: [0, 500],
  max_floors: [0, 500],
  min_dwellings: [0, 1_000_000],
  max_dwellings: [0, 1_000_000],
  min_entrances: [1, 1_000_000],
  max_entrances: [1, 1_000_000],
  min_area_m2: [0, 1e9],
  max_area_m2: [0, 1e9],
  min_height_m: [0, 1000],
  max_height_m: [0, 1000],
  min_volume_m3: [0, 1e9],
  max_volume_m3: [0, 1e9],
  min_registered_solar_kw: [0, 1e9], // greater than 0
  min_panel_count: [0, 1_000_000],
  max_panel_count: [0, 1_000_000],
  min_capacity_kwp: [0, 1e9],
  max_capacity_kwp: [0, 1e9],
  min_yearly_energy_kwh: [0, 1e9],
  max_yearly_energy_kwh: [0, 1e9],
  min_co2_savings_kg_per_year: [0, 1e9],
  max_co2_savings_kg_per_year: [0, 1e9],
  // The spec gives no range for turnovers: decided 0 to the largest exact integer.
  min_registered_business_turnover: [0, Number.MAX_SAFE_INTEGER],
  max_registered_business_turnover: [0, Number.MAX_SAFE_INTEGER],
  registered_business_financial_year: [1990, 2100],
  min_registered_business_employees: [0, 1_000_000],
  max_registered_business_employees: [0, 1_000_000],
  min_recent_frost_days: [0, 366],
  max_recent_minimum_daily_temperature_c: [-100, 100],
  min_recent_hot_days: [0, 366],
  min_recent_max_one_day_precipitation_mm: [0, 5000],
};

const POINT_RANGES: Record<string, [number, number]> = { lat: [-90, 90], lon: [-180, 180], radius_m: [1, 200], limit: [1, 25] };
const CHILD_RANGES: Record<string, [number, number]> = { limit: [1, 100], offset: [0, 10_000] };

const INTEGERS = new Set([
  'limit',
  'offset',
  'min_floors',
  'max_floors',
  'min_dwellings',
  'max_dwellings',
  'min_entrances',
  'max_entrances',
  'min_panel_count',
  'max_panel_count',
  'min_registered_business_turnover',
  'max_registered_business_turnover',
  'registered_business_financial_year',
  'min_registered_business_employees',
  'max_registered_business_employees',
]);

/** Bad values of every parameter of every operation, by hand from the spec. */
const BAD: Record<OperationId, Record<string, string[]>> = {
  listBuildings: {
    bbox: [
      '1,2,3',
      '1,2,3,4,5',
      'a,47,10,48',
      '9,,10,48',
      '-181,47,-180,48',
      '9,-91,10,-90',
      '179,47,181,48',
      '9,89,10,91',
      '10,47,9,48',
      '9,48,10,47',
      '9,47,12.5,48',
      '9,45,10,48.0001',
      'NaN,47,10,48',
      '9, 47,10,48',
      '0x1,47,1,48',
      '9;47;10;48',
      '9 47 10 48',
      '1e999,47,10,48',
    ],
    sort: ['Volume', 'turnover', 'random', 'volume,area', 'registered_business_turnover_eur'],
    limit: ['0', '101', '-1', '2.5', 'ten', '1e1', '+5', '0x10'],
    offset: ['-1', '10001', '1.5', 'x', '1e3'],
    category: ['house', 'Commercial', 'commercial,,public', 'commercial,', ',commercial', 'office'],
    building_type: ['Office', 'office-block', 'a'.repeat(65), 'bureau ', 'école', 'garage,', 'x y'],
    roof_shape: ['round_ish', 'FLAT', 'gable'],
    min_floors: ['-1', '501', '1.5', 'abc', '+3', '0x10', ' 3'],
    max_floors: ['-1', '501', '2.0', 'ten'],
    min_dwellings: ['-1', '1000001', '2.0'],
    max_dwellings: ['-1', '1000001', 'many'],
    min_entrances: ['0', '1000001', '-1', 'one'],
    max_entrances: ['0', '1000001', '1.5'],
    address_corroboration: ['confirmed', 'single-source', 'none'],
    min_area_m2: ['-0.5', '1000000000.5', 'NaN', 'Infinity', '0x10', '.5', '5.', '1,5', '1e', '--1', '1 000'],
    max_area_m2: ['-1', '2e9', 'Infinity', '-Infinity'],
    min_height_m: ['-1', '1000.01', 'tall'],
    max_height_m: ['-0.01', '1001', '12m'],
    min_volume_m3: ['-1', '1e10', '1e400'],
    max_volume_m3: ['-1', '1000000001', 'big'],
    measured_height_only: ['1', 'yes', 'TRUE', 'True', '0'],
    solar_presence: ['present', 'none', 'Registered'],
    exclude_solar_presence: ['nothing', 'Detected'],
    existing_solar_panels: ['registered', 'unknown', 'none'],
    registered_solar: ['0', 'no', 'null'],
    registered_solar_storage: ['1', 'null', 'maybe'],
    min_registered_solar_kw: ['0', '-1', '1000000001', 'x', '0.0'],
    has_solar_potential: ['on', '1'],
    min_panel_count: ['-1', '1000001', '2.5'],
    max_panel_count: ['-1', '1000001', 'lots'],
    min_capacity_kwp: ['-0.1', '1000000001'],
    max_capacity_kwp: ['-1', '1e10'],
    min_yearly_energy_kwh: ['-1', '2e9'],
    max_yearly_energy_kwh: ['-1', '1000000000.1'],
    min_co2_savings_kg_per_year: ['-1', '1000000000.1'],
    max_co2_savings_kg_per_year: ['-1', '3e9'],
    has_3d_model: ['yes', '1'],
    has_registered_business: ['1', 'no'],
    registered_business_name: ['a', 'x'.repeat(121), '😀', 'é'.repeat(121)],
    min_registered_business_turnover: ['-1', '1.5', '9007199254740992', '1e6', '1,000'],
    max_registered_business_turnover: ['-1', '2.5', '99999999999999999999'],
    registered_business_turnover_currency: ['eur', 'EURO', 'E1R', 'EU', 'EUR,CHF'],
    registered_business_financial_year: ['1989', '2101', '2023.0', 'FY2023'],
    min_registered_business_employees: ['-1', '1000001', '10-19'],
    max_registered_business_employees: ['-1', '1000001', '9.5'],
    has_annual_heating_estimate: ['1', 'yes'],
    has_thermal_assessment: ['1', 'yes'],
    has_peak_heat_load: ['1', 'yes'],
    has_recent_climate_trend: ['1', 'yes'],
    has_recent_temperature_extremes: ['1', 'yes'],
    has_recent_precipitation: ['1', 'yes'],
    min_recent_frost_days: ['-1', '366.5', 'many'],
    max_recent_minimum_daily_temperature_c: ['-100.5', '101', '-', '−5', '+5'],
    min_recent_hot_days: ['-1', '367'],
    min_recent_max_one_day_precipitation_mm: ['-1', '5000.1'],
    flood_zone: ['100', '100_years', '2_year', '100_YEAR'],
    seismic_risk_class: ['rsi', 'RsV', 'U4'],
    f: ['GeoJSON', 'csv', 'application/geo+json'],
    geometry: ['outline', 'Point', 'polygon'],
    fields: ['heigth', 'height.metres', 'Height', 'id'],
  },
  exportBuildings: {},
  listBuildingsAtPoint: {
    lat: ['-90.1', '91', 'north', 'NaN', '47,1'],
    lon: ['-180.5', '181', 'east', 'Infinity'],
    radius_m: ['0', '0.5', '201', 'x', '-5'],
    limit: ['0', '26', '2.5', '100'],
    f: ['GeoJSON', 'xml'],
    geometry: ['outline'],
    fields: ['footprint', 'distance'],
  },
  listBuildingUnits: {
    building_id: ['not-a-uuid', '6f1c2a8e3d4b5e6f9a0b1c2d3e4f5a6b', `{${ID}}`, 'g'.repeat(8) + ID.slice(8), `${ID}0`, ` ${ID}`],
    limit: ['0', '101', '2.5'],
    offset: ['-1', '10001', '5.5'],
  },
  listRegisteredBusinesses: {
    building_id: ['not-a-uuid', `${ID}-1`, 'urn:uuid:' + ID],
    limit: ['0', '101', 'x'],
    offset: ['-1', '10001', '1e2'],
  },
  getOpenApi: {
    version: ['3', '3.1.0', '2.0', 'v3.0'],
  },
  getPublicBuilding: {
    building_id: ['not-a-uuid', `${ID}0`, 'urn:uuid:' + ID],
  },
  getPublicPlace: {
    country: ['ro', 'ROU', 'R', 'R0'],
    locality: ['x'.repeat(201)],
  },
  listPublicPlaces: {
    country: ['ro', 'ROU', '12'],
  },
  listCountries: {},
  createCountryRequest: {},
  createRemovalRequest: {},
  createReportOrder: {},
  getReport: {
    order_id: ['ord_short', 'order_4fQ9aZ0bC1dE2f', 'ord_4fQ9aZ0bC1dE2f!', 'ws_4fQ9aZ0bC1dE2f'],
    token: ['rpt_short', `rpt_${'a'.repeat(33)}`, `tok_${'a'.repeat(32)}`, `rpt_${'a'.repeat(31)}-`],
  },
  confirmReportPayment: {},
};
// The export takes GET /buildings' area, sort and filters, and its own limit, cap and formats.
{
  const { limit: _limit, offset: _offset, f: _f, geometry: _geometry, fields, ...shared } = BAD.listBuildings;
  BAD.exportBuildings = {
    ...shared,
    fields,
    limit: ['0', '10001', '-1', '2.5', 'all'],
    max_credits: ['-1', '10001', '1.5', 'none'],
    f: ['json', 'geojson', 'CSV', 'text/csv'],
    geometry: ['outline', 'Point'],
  };
}

// ---------------------------------------------------------------------------------------------

describe('every parameter refuses its bad values with 400 invalid_parameter naming it', () => {
  it('every parameter of the table has bad values here, and nothing here is missing from the table', () => {
    for (const op of Object.keys(BAD) as OperationId[]) {
      expect(Object.keys(BAD[op]).sort(), op).toEqual(
        parametersOf(op)
          .map((p) => p.name)
          .sort(),
      );
    }
  });

  for (const op of Object.keys(BAD) as OperationId[]) {
    for (const [name, values] of Object.entries(BAD[op])) {
      const spec = parametersOf(op).find((p) => p.name === name)!;
      it(`${op} ${name}`, () => {
        for (const value of values) {
          const err = expectRefused(run(op, name, value), name);
          expect(err.message.length, value).toBeLessThan(400);
        }
        if (spec.in === 'query') {
          // An empty value.
          expectRefused(run(op, name, ''), name);
          // A non-list parameter given twice, even with the same value.
          if (!spec.list) {
            const good = op === 'listBuildingsAtPoint' ? 'lat=1&lon=2' : op === 'listBuildings' || op === 'exportBuildings' ? BBOX : '';
            const twice = `${good}&${name}=1&${name}=1`.replace(/^&/, '');
            const parse =
              op === 'listBuildings'
                ? () => parseBuildingsQuery(name === 'bbox' ? `${BBOX}&${BBOX}` : twice)
                : op === 'exportBuildings'
                  ? () => parseExportQuery(name === 'bbox' ? `${BBOX}&${BBOX}` : twice, '')
                  : op === 'listBuildingsAtPoint'
                    ? () => parsePointQuery(twice)
                    : () => parseParameters(op, twice, { building_id: ID });
            expectRefused(parse, name);
          }
        } else {
          expectRefused(run(op, name, ''), name);
        }
      });
    }
  }
});

describe("ranges are the spec's, ends included", () => {
  const cases: [OperationId, Record<string, [number, number]>][] = [
    ['listBuildings', BUILDINGS_RANGES],
    ['listBuildingsAtPoint', POINT_RANGES],
    ['listBuildingUnits', CHILD_RANGES],
    ['listRegisteredBusinesses', CHILD_RANGES],
  ];
  for (const [op, ranges] of cases) {
    it(`${op}: the table holds the spec's ranges`, () => {
      const numeric = parametersOf(op).filter((p) => p.type === 'integer' || p.type === 'number');
      expect(numeric.map((p) => p.name).sort()).toEqual(Object.keys(ranges).sort());
      for (const p of numeric) expect([p.name, p.min, p.max]).toEqual([p.name, ...ranges[p.name]]);
    });
    for (const [name, [min, max]] of Object.entries(ranges)) {
      it(`${op} ${name}: ${min} to ${max}`, () => {
        const spec = parametersOf(op).find((p) => p.name === name)!;
        const key = spec.key;
        const parse = (v: string) => (run(op, name, v)() as Record<string, unknown>)[key];
        const isInt = op === 'listBuildingsAtPoint' ? name === 'limit' : INTEGERS.has(name);
        const withCurrency = (v: string) => parseBuildingsQuery(`${BBOX}&${name}=${v}&registered_business_turnover_currency=EUR`);
        const parseOk =
          name.includes('registered_business_turnover') && name !== 'registered_business_turnover_currency'
            ? (v: string) => (withCurrency(v) as unknown as Record<string, unknown>)[key]
            : parse;
        if (name === 'min_registered_solar_kw') {
          expect(parseOk('0.001')).toBe(0.001);
          expectRefused(run(op, name, '0'), name);
        } else {
          expect(parseOk(String(min))).toBe(min);
        }
        // offset reaches 10,000 only with a limit that keeps the window (tested below).
        if (name !== 'offset') expect(parseOk(String(max))).toBe(max);
        if (isInt) {
          expectRefused(run(op, name, String(max + (max >= Number.MAX_SAFE_INTEGER ? 2 : 1))), name);
          expectRefused(run(op, name, String(min - 1)), name);
          expectRefused(run(op, name, `${min}.5`), name);
        } else {
          expectRefused(run(op, name, String(max + 0.001)), name);
          expectRefused(run(op, name, String(min - 0.001)), name);
        }
      });
    }
  }

  it('offset + limit up to 10,000 is accepted, beyond is refused on offset (rule 3)', () => {
    expect(parseBuildingsQuery(`${BBOX}&offset=9900&limit=100`).offset).toBe(9900);
    expect(parseBuildingsQuery(`${BBOX}&offset=9975`).offset).toBe(9975);
    const err = expectRefused(() => parseBuildingsQuery(`${BBOX}&offset=9990`), 'offset');
    expect(err.message).toBe('offset: offset + limit must be at most 10,000; got 9,990 + 25 = 10,015');
    expectRefused(() => parseBuildingsQuery(`${BBOX}&offset=10000&limit=1`), 'offset');
    expectRefused(() => parseUnitsQuery(ID, 'offset=9950&limit=100'), 'offset');
    expect(parseUnitsQuery(ID, 'offset=9900&limit=100').offset).toBe(9900);
  });
});

describe('good values parse to the exact query', () => {
  it('a query with every parameter of GET /buildings', () => {
    const raw = [
      'bbox=9.47,47.04,9.64,47.27',
      'sort=registered_business_turnover',
      'limit=100',
      'offset=200',
      'category=commercial,public',
      'building_type=office',
      'building_type=school,retail',
      'roof_shape=flat&roof_shape=hipped',
      'min_floors=2',
      'max_floors=12',
      'min_dwellings=0',
      'max_dwellings=40',
      'min_entrances=1',
      'max_entrances=3',
      'address_corroboration=corroborated,single_source',
      'min_area_m2=50.5',
      'max_area_m2=2e3',
      'min_height_m=3',
      'max_height_m=45.25',
      'min_volume_m3=100',
      'max_volume_m3=1000000000',
      'measured_height_only=true',
      'solar_presence=registered,detected',
      'exclude_solar_presence=unknown',
      'existing_solar_panels=detected,unclear',
      'registered_solar=true',
      'registered_solar_storage=false',
      'min_registered_solar_kw=0.5',
      'has_solar_potential=true',
      'min_panel_count=4',
      'max_panel_count=200',
      'min_capacity_kwp=1.6',
      'max_capacity_kwp=80',
      'min_yearly_energy_kwh=1500',
      'max_yearly_energy_kwh=75000',
      'min_co2_savings_kg_per_year=600',
      'max_co2_savings_kg_per_year=30000',
      'has_3d_model=true',
      'has_registered_business=true',
      'registered_business_name=B%C3%A4ckerei+%26+Co',
      'min_registered_business_turnover=50000',
      'max_registered_business_turnover=2500000',
      'registered_business_turnover_currency=CHF',
      'registered_business_financial_year=2023',
      'min_registered_business_employees=10',
      'max_registered_business_employees=249',
      'has_annual_heating_estimate=true',
      'has_thermal_assessment=true',
      'has_peak_heat_load=true',
      'has_recent_climate_trend=true',
      'has_recent_temperature_extremes=true',
      'has_recent_precipitation=true',
      'min_recent_frost_days=40.5',
      'max_recent_minimum_daily_temperature_c=-12.5',
      'min_recent_hot_days=3',
      'min_recent_max_one_day_precipitation_mm=45.5',
      'flood_zone=100_year,100_year_climate_change',
      'seismic_risk_class=RsI,U1,consolidated',
    ].join('&');
    const expected: Required<BuildingsQuery> = {
      bbox: { minLon: 9.47, minLat: 47.04, maxLon: 9.64, maxLat: 47.27 },
      sort: 'registered_business_turnover',
      limit: 100,
      offset: 200,
      category: ['commercial', 'public'],
      buildingType: ['office', 'school', 'retail'],
      roofShape: ['flat', 'hipped'],
      minFloors: 2,
      maxFloors: 12,
      minDwellings: 0,
      maxDwellings: 40,
      minEntrances: 1,
      maxEntrances: 3,
      addressCorroboration: ['corroborated', 'single_source'],
      minAreaM2: 50.5,
      maxAreaM2: 2000,
      minHeightM: 3,
      maxHeightM: 45.25,
      minVolumeM3: 100,
      maxVolumeM3: 1e9,
      measuredHeightOnly: true,
      solarPresence: ['registered', 'detected'],
      excludeSolarPresence: ['unknown'],
      existingSolarPanels: ['detected', 'unclear'],
      registeredSolar: true,
      registeredSolarStorage: false,
      minRegisteredSolarKw: 0.5,
      hasSolarPotential: true,
      minPanelCount: 4,
      maxPanelCount: 200,
      minCapacityKwp: 1.6,
      maxCapacityKwp: 80,
      minYearlyEnergyKwh: 1500,
      maxYearlyEnergyKwh: 75000,
      minCo2SavingsKgPerYear: 600,
      maxCo2SavingsKgPerYear: 30000,
      has3dModel: true,
      hasRegisteredBusiness: true,
      registeredBusinessName: 'Bäckerei & Co',
      minRegisteredBusinessTurnover: 50000,
      maxRegisteredBusinessTurnover: 2500000,
      registeredBusinessTurnoverCurrency: 'CHF',
      registeredBusinessFinancialYear: 2023,
      minRegisteredBusinessEmployees: 10,
      maxRegisteredBusinessEmployees: 249,
      hasAnnualHeatingEstimate: true,
      hasThermalAssessment: true,
      hasPeakHeatLoad: true,
      hasRecentClimateTrend: true,
      hasRecentTemperatureExtremes: true,
      hasRecentPrecipitation: true,
      minRecentFrostDays: 40.5,
      maxRecentMinimumDailyTemperatureC: -12.5,
      minRecentHotDays: 3,
      minRecentMaxOneDayPrecipitationMm: 45.5,
      floodZone: ['100_year', '100_year_climate_change'],
      seismicRiskClass: ['RsI', 'U1', 'consolidated'],
    };
    expect(parseBuildingsQuery(raw)).toStrictEqual(expected);
    // A leading `?` is read the same.
    expect(parseBuildingsQuery(`?${raw}`)).toStrictEqual(expected);
  });

  it('only bbox: defaults sort=volume, limit=25, offset=0, every filter off', () => {
    expect(parseBuildingsQuery('bbox=-0.5,51.25,0.25,51.75')).toStrictEqual({
      bbox: { minLon: -0.5, minLat: 51.25, maxLon: 0.25, maxLat: 51.75 },
      sort: 'volume',
      limit: 25,
      offset: 0,
    });
  });

  it('bbox: edges of the world, a point-sized box, exactly 3 degrees, exponent and percent-encoded commas', () => {
    expect(parseBuildingsQuery('bbox=177,-90,180,-87').bbox).toEqual({ minLon: 177, minLat: -90, maxLon: 180, maxLat: -87 });
    expect(parseBuildingsQuery('bbox=-180,87,-177,90').bbox).toEqual({ minLon: -180, minLat: 87, maxLon: -177, maxLat: 90 });
    expect(parseBuildingsQuery('bbox=9.5,47.1,9.5,47.1').bbox).toEqual({ minLon: 9.5, minLat: 47.1, maxLon: 9.5, maxLat: 47.1 });
    expect(parseBuildingsQuery('bbox=20.5,44,23.5,47').bbox).toEqual({ minLon: 20.5, minLat: 44, maxLon: 23.5, maxLat: 47 });
    expect(parseBuildingsQuery('bbox=9.47%2C47.04%2C9.64%2C47.27').bbox).toEqual({
      minLon: 9.47,
      minLat: 47.04,
      maxLon: 9.64,
      maxLat: 47.27,
    });
    expect(parseBuildingsQuery('bbox=9.5e0,4.7e1,96e-1,47.2').bbox).toEqual({ minLon: 9.5, minLat: 47, maxLon: 9.6, maxLat: 47.2 });
    expect(Object.is(parseBuildingsQuery('bbox=-0,0,1,1').bbox.minLon, 0)).toBe(true);
    // Decimals exactly 3 apart whose float difference rounds above 3 (-127.8 - -130.8 = 3.0000000000000142).
    expect(-127.8 - -130.8).toBeGreaterThan(3);
    expect(parseBuildingsQuery('bbox=-130.8,10.1,-127.8,13.1').bbox).toEqual({
      minLon: -130.8,
      minLat: 10.1,
      maxLon: -127.8,
      maxLat: 13.1,
    });
    expect(expectRefused(() => parseBuildingsQuery('bbox=-130.8,10,-127.799999,11'), 'bbox').message).toBe(
      'bbox: each side may span at most 3 degrees; this one spans 3.000001 degrees of longitude',
    );
    // Past 3 by less than a millionth: the message shows by how much, not a rounded 3.
    expect(expectRefused(() => parseBuildingsQuery('bbox=20,40,23.0000001,43'), 'bbox').message).toBe(
      'bbox: each side may span at most 3 degrees; this one spans 3.0000001 degrees of longitude',
    );
  });

  it('bbox: messages a person understands', () => {
    expect(expectRefused(() => parseBuildingsQuery('bbox=20,44,24.2,45'), 'bbox').message).toBe(
      'bbox: each side may span at most 3 degrees; this one spans 4.2 degrees of longitude',
    );
    expect(expectRefused(() => parseBuildingsQuery('bbox=20,44,21,47.5'), 'bbox').message).toBe(
      'bbox: each side may span at most 3 degrees; this one spans 3.5 degrees of latitude',
    );
    expect(expectRefused(() => parseBuildingsQuery('bbox=179,40,-179,41'), 'bbox').message).toBe(
      'bbox: minLon 179 is greater than maxLon -179 (a box across the antimeridian is asked as two boxes)',
    );
    expect(expectRefused(() => parseBuildingsQuery('bbox=20,95,21,96'), 'bbox').message).toBe(
      'bbox: minLat is a latitude and must be from -90 to 90; got 95',
    );
    expect(expectRefused(() => parseBuildingsQuery('bbox=20,44,21'), 'bbox').message).toBe(
      'bbox: expected four comma-separated decimals minLon,minLat,maxLon,maxLat; got 3 values in "20,44,21"',
    );
    expect(expectRefused(() => parseBuildingsQuery(''), 'bbox').message).toBe(
      'bbox: required (four comma-separated decimals minLon,minLat,maxLon,maxLat)',
    );
    expect(expectRefused(() => parseBuildingsQuery(undefined), 'bbox').message).toMatch(/^bbox: required/);
    expectRefused(() => parseBuildingsQuery('limit=5'), 'bbox');
  });

  it('numbers: JSON number syntax, nothing else', () => {
    const parse = (v: string) => parseBuildingsQuery(`${BBOX}&min_height_m=${encodeURIComponent(v)}`).minHeightM;
    expect(parse('12')).toBe(12);
    expect(parse('12.5')).toBe(12.5);
    expect(parse('0012.50')).toBe(12.5);
    expect(parse('2.5e2')).toBe(250);
    expect(parse('25E+1')).toBe(250);
    expect(parse('1e-7')).toBe(1e-7);
    expect(Object.is(parse('-0'), 0)).toBe(true);
    for (const bad of ['NaN', 'Infinity', '0x10', '0b1', '.5', '5.', '+1', '1_000', '١٢', '12 ', '1e', 'e1']) {
      const err = expectRefused(() => parse(bad), 'min_height_m');
      expect(err.message).toContain(JSON.stringify(bad));
    }
    expect(parsePointQuery('lat=-33.8688&lon=151.2093&radius_m=12.5')).toStrictEqual({
      lat: -33.8688,
      lon: 151.2093,
      radiusM: 12.5,
      limit: 10,
    });
  });

  it('integers: plain digits; a minus only where the range has negatives', () => {
    expect(parseBuildingsQuery(`${BBOX}&min_floors=007`).minFloors).toBe(7);
    expect(parseBuildingsQuery(`${BBOX}&min_floors=-0`).minFloors).toBe(0);
    expect(expectRefused(() => parseBuildingsQuery(`${BBOX}&min_floors=-1`), 'min_floors').message).toBe(
      'min_floors: must be from 0 to 500; got "-1"',
    );
    expect(expectRefused(() => parseBuildingsQuery(`${BBOX}&min_floors=1.5`), 'min_floors').message).toBe(
      'min_floors: expected a whole number written in digits, from 0 to 500; got "1.5"',
    );
  });

  it('booleans: true/false; a "default false" flag given false is off, registered_solar=false is kept', () => {
    const q = parseBuildingsQuery(
      `${BBOX}&has_3d_model=false&measured_height_only=false&has_solar_potential=false&registered_solar=false&has_registered_business=false`,
    );
    expect(q).toStrictEqual({ bbox: q.bbox, sort: 'volume', limit: 25, offset: 0, registeredSolar: false });
    expect(parseBuildingsQuery(`${BBOX}&registered_solar_storage=false`).registeredSolarStorage).toBe(false);
    expect(parseBuildingsQuery(`${BBOX}&registered_solar_storage=true`).registeredSolarStorage).toBe(true);
  });

  it('strings: building_type pattern, currency, business name length in characters', () => {
    expect(parseBuildingsQuery(`${BBOX}&building_type=${'a'.repeat(64)}`).buildingType).toEqual(['a'.repeat(64)]);
    expect(parseBuildingsQuery(`${BBOX}&building_type=block_2`).buildingType).toEqual(['block_2']);
    expect(parseBuildingsQuery(`${BBOX}&registered_business_name=ab`).registeredBusinessName).toBe('ab');
    // Two emoji are two characters (four UTF-16 units): accepted; 120 accented letters too.
    expect(parseBuildingsQuery(`${BBOX}&registered_business_name=${encodeURIComponent('😀😀')}`).registeredBusinessName).toBe('😀😀');
    expect(parseBuildingsQuery(`${BBOX}&registered_business_name=${encodeURIComponent('é'.repeat(120))}`).registeredBusinessName).toBe(
      'é'.repeat(120),
    );
    expect(parseBuildingsQuery(`${BBOX}&registered_business_name=a,b`).registeredBusinessName).toBe('a,b');
    expect(parseBuildingsQuery(`${BBOX}&registered_business_name=ACME+GmbH`).registeredBusinessName).toBe('ACME GmbH');
    expect(parseBuildingsQuery(`${BBOX}&registered_business_turnover_currency=RON`).registeredBusinessTurnoverCurrency).toBe('RON');
    expect(expectRefused(() => parseBuildingsQuery(`${BBOX}&building_type=Office`), 'building_type').message).toBe(
      'building_type: expected 1 to 64 lowercase letters, digits or underscores; got "Office"',
    );
    expect(
      expectRefused(() => parseBuildingsQuery(`${BBOX}&registered_business_turnover_currency=eur`), 'registered_business_turnover_currency')
        .message,
    ).toBe('registered_business_turnover_currency: expected three uppercase letters (ISO 4217), e.g. EUR; got "eur"');
  });

  it('an echoed value is cut short', () => {
    const err = expectRefused(() => parseBuildingsQuery(`${BBOX}&min_floors=${'9'.repeat(5000)}`), 'min_floors');
    expect(err.message.length).toBeLessThan(200);
  });
});

describe('list parameters: repeated, comma-separated, both', () => {
  const listParams = PARAMETERS.filter((p) => p.list);

  it("the lists are exactly the spec's", () => {
    expect([...new Set(listParams.map((p) => p.name))].sort()).toEqual([
      'address_corroboration',
      'building_type',
      'category',
      'exclude_solar_presence',
      'existing_solar_panels',
      'fields', // an extension beyond the spec: the fields kept
      'flood_zone',
      'roof_shape',
      'seismic_risk_class',
      'solar_presence',
    ]);
  });

  it('category=a,b and category=a&category=b give the same list, in order, duplicates once', () => {
    const comma = parseBuildingsQuery(`${BBOX}&category=commercial,industrial`).category;
    const repeated = parseBuildingsQuery(`${BBOX}&category=commercial&category=industrial`).category;
    const mixed = parseBuildingsQuery(`${BBOX}&category=commercial&category=industrial,commercial&category=industrial`).category;
    const encoded = parseBuildingsQuery(`${BBOX}&category=commercial%2Cindustrial`).category;
    expect(comma).toEqual(['commercial', 'industrial']);
    expect(repeated).toEqual(comma);
    expect(mixed).toEqual(comma);
    expect(encoded).toEqual(comma);
  });

  for (const p of listParams) {
    it(`${p.name}: both forms, every value`, () => {
      const values = p.values ?? ['office', 'warehouse', 'school'];
      const key = p.key as keyof BuildingsQuery;
      expect(parseBuildingsQuery(`${BBOX}&${p.name}=${values.join(',')}`)[key]).toEqual([...values]);
      expect(parseBuildingsQuery(`${BBOX}&${values.map((v) => `${p.name}=${v}`).join('&')}`)[key]).toEqual([...values]);
      expectRefused(() => parseBuildingsQuery(`${BBOX}&${p.name}=${values[0]},`), p.name);
      expectRefused(() => parseBuildingsQuery(`${BBOX}&${p.name}=${values[0]}&${p.name}=`), p.name);
    });
  }
});

describe('unknown parameters (rule 1)', () => {
  it('are refused, naming them, with a suggestion when one is near', () => {
    expect(expectRefused(() => parseBuildingsQuery(`${BBOX}&min_flors=2`), 'min_flors').message).toBe(
      'min_flors: not a parameter of GET /buildings; did you mean min_floors?',
    );
    expect(expectRefused(() => parseBuildingsQuery(`${BBOX}&foo=1`), 'foo').message).toBe(
      'foo: not a parameter of GET /buildings (its parameters are listed in /v1/openapi.json)',
    );
    expectRefused(() => parseBuildingsQuery(`${BBOX}&BBOX=1,2,3,4`), 'BBOX');
    expectRefused(() => parseBuildingsQuery(`${BBOX}&minFloors=2`), 'minFloors');
    expectRefused(() => parseBuildingsQuery(`${BBOX}&lat=47`), 'lat');
    expectRefused(() => parseBuildingsQuery(`${BBOX}&building_id=${ID}`), 'building_id');
    expectRefused(() => parseBuildingsQuery(`${BBOX}&has_3d_model`), 'has_3d_model');
    expectRefused(() => parsePointQuery('lat=1&lon=2&bbox=1,2,3,4'), 'bbox');
    expectRefused(() => parsePointQuery('lat=1&lon=2&offset=10'), 'offset');
    expectRefused(() => parseUnitsQuery(ID, 'sort=volume'), 'sort');
    expectRefused(() => parseRegisteredBusinessesQuery(ID, 'category=commercial'), 'category');
  });

  it('are reported before a problem of a known parameter further on', () => {
    expectRefused(() => parseBuildingsQuery('nope=1&bbox=1,2'), 'nope');
  });
});

describe("the query string's encoding", () => {
  it('refuses a broken percent-escape, bytes that are not UTF-8 and control characters, naming the parameter', () => {
    const name = (v: string) => () => parseBuildingsQuery(`${BBOX}&registered_business_name=${v}`);
    for (const bad of ['%zz', 'ab%', 'ab%4', '%ED%A0%80', '%C0%AE', '%FF', '%E2%82']) {
      expect(expectRefused(name(bad), 'registered_business_name').message).toContain('not valid percent-encoding');
    }
    for (const bad of ['a%00b', '%0A', '%1F', '%7F', 'a\tb']) {
      expect(expectRefused(name(bad), 'registered_business_name').message).toContain('control character');
    }
    expectRefused(() => parseBuildingsQuery(`bbox=9.47%2C47.04,9.64,47%.27`), 'bbox');
    expectRefused(() => parsePointQuery('lat=47.1&lon=9.5&limit=%31%'), 'limit');
    // In a name: the parameter is the name as sent.
    expect(expectRefused(() => parseBuildingsQuery(`${BBOX}&min_%zzfloors=2`), 'min_%zzfloors').message).toBe(
      'min_%zzfloors: a parameter name that is not valid percent-encoding (each % must be followed by two hex digits, and the bytes must form UTF-8)',
    );
    expectRefused(() => parseBuildingsQuery(`${BBOX}&a%00=1`), 'a\u0000');
  });

  it('decodes as URLSearchParams does whatever it accepts: + is a space, escapes are UTF-8, & and = may be escaped', () => {
    const names = ['ACME GmbH', 'Bäckerei & Co', 'a=b', '50%', 'x+y', '😀 é', 'a,b'];
    for (const text of names) {
      for (const encoded of [encodeURIComponent(text), new URLSearchParams({ v: text }).toString().slice(2)]) {
        const raw = `${BBOX}&registered_business_name=${encoded}`;
        const expected = new URLSearchParams(raw).get('registered_business_name');
        expect(expected).toBe(text);
        expect(parseBuildingsQuery(raw).registeredBusinessName).toBe(text);
      }
    }
    // Empty pairs are no parameters; a leading ? is the query's own.
    expect(parseBuildingsQuery(`?&&${BBOX}&&limit=5&`).limit).toBe(5);
    expect(parseBuildingsQuery(`${BBOX.replace('bbox', 'b%62ox')}&l%69mit=7`).limit).toBe(7);
  });

  it('reads a second ? as part of the first name, not as the start of the query', () => {
    expectRefused(() => parseBuildingsQuery(`??${BBOX}`), '?bbox');
  });

  it('does not echo a huge unknown name back', () => {
    const long = 'a'.repeat(100_000);
    const err = expectRefused(() => parseBuildingsQuery(`${BBOX}&${long}=1`), `${'a'.repeat(64)}…`);
    expect(JSON.stringify(err.toBody()).length).toBeLessThan(400);
  });
});

describe('rules between parameters', () => {
  it('rule 5: registered_business_turnover_currency is required with the turnover filters and sort', () => {
    for (const extra of ['min_registered_business_turnover=1', 'max_registered_business_turnover=1', 'sort=registered_business_turnover']) {
      const err = expectRefused(() => parseBuildingsQuery(`${BBOX}&${extra}`), 'registered_business_turnover_currency');
      expect(err.message).toContain(`required with ${extra.replace(/=1$/, '')}`);
      expect(parseBuildingsQuery(`${BBOX}&${extra}&registered_business_turnover_currency=EUR`).registeredBusinessTurnoverCurrency).toBe(
        'EUR',
      );
    }
    // Alone, or with the financial year or the employees sort, it is not required.
    expect(parseBuildingsQuery(`${BBOX}&registered_business_financial_year=2023&sort=registered_business_employees`).sort).toBe(
      'registered_business_employees',
    );
    expect(parseBuildingsQuery(`${BBOX}&registered_business_turnover_currency=EUR`).registeredBusinessTurnoverCurrency).toBe('EUR');
  });

  it('rule 6: a value kept by solar_presence must not be left out by exclude_solar_presence', () => {
    const err = expectRefused(
      () => parseBuildingsQuery(`${BBOX}&solar_presence=detected,registered&exclude_solar_presence=unclear,detected`),
      'exclude_solar_presence',
    );
    expect(err.message).toBe('exclude_solar_presence: detected is also kept by solar_presence; a value cannot be both kept and left out');
    expect(
      expectRefused(
        () => parseBuildingsQuery(`${BBOX}&solar_presence=detected,unclear&exclude_solar_presence=unclear,detected`),
        'exclude_solar_presence',
      ).message,
    ).toContain('unclear, detected are also kept');
    const q = parseBuildingsQuery(`${BBOX}&solar_presence=detected&exclude_solar_presence=unclear`);
    expect([q.solarPresence, q.excludeSolarPresence]).toEqual([['detected'], ['unclear']]);
  });

  it('rule 7: registered_solar_storage and min_registered_solar_kw are not accepted with registered_solar=false', () => {
    expect(
      expectRefused(() => parseBuildingsQuery(`${BBOX}&registered_solar=false&registered_solar_storage=true`), 'registered_solar_storage')
        .message,
    ).toBe('registered_solar_storage: not accepted with registered_solar=false');
    expectRefused(() => parseBuildingsQuery(`${BBOX}&registered_solar_storage=false&registered_solar=false`), 'registered_solar_storage');
    expectRefused(() => parseBuildingsQuery(`${BBOX}&min_registered_solar_kw=5&registered_solar=false`), 'min_registered_solar_kw');
    expect(
      parseBuildingsQuery(`${BBOX}&registered_solar=true&registered_solar_storage=true&min_registered_solar_kw=5`).minRegisteredSolarKw,
    ).toBe(5);
    expect(parseBuildingsQuery(`${BBOX}&registered_solar_storage=true&min_registered_solar_kw=5`).registeredSolarStorage).toBe(true);
  });

  const PAIRS = [
    ['floors', '5', '3'],
    ['dwellings', '10', '9'],
    ['entrances', '3', '2'],
    ['area_m2', '100.5', '100'],
    ['height_m', '12', '11.99'],
    ['volume_m3', '1000', '999'],
    ['panel_count', '40', '12'],
    ['capacity_kwp', '16', '4.8'],
    ['yearly_energy_kwh', '4500', '1500'],
    ['co2_savings_kg_per_year', '1800', '600'],
    ['registered_business_turnover', '50000', '49999'],
    ['registered_business_employees', '20', '19'],
  ] as const;
  for (const [pair, lo, hi] of PAIRS) {
    it(`min_${pair} <= max_${pair}`, () => {
      const currency = pair === 'registered_business_turnover' ? '&registered_business_turnover_currency=EUR' : '';
      const err = expectRefused(() => parseBuildingsQuery(`${BBOX}&min_${pair}=${lo}&max_${pair}=${hi}${currency}`), `min_${pair}`);
      expect(err.message).toContain(`is greater than max_${pair}`);
      const q = parseBuildingsQuery(`${BBOX}&min_${pair}=${hi}&max_${pair}=${hi}${currency}`) as unknown as Record<string, unknown>;
      expect(Object.values(q).filter((v) => v === Number(hi))).toHaveLength(2);
    });
  }
});

describe('GET /buildings/at', () => {
  it('lat and lon required; radius_m default 25, limit default 10', () => {
    expect(parsePointQuery('lat=47.14&lon=9.52')).toStrictEqual({ lat: 47.14, lon: 9.52, radiusM: 25, limit: 10 });
    expect(parsePointQuery('lon=-180&lat=-90&radius_m=200&limit=25')).toStrictEqual({ lat: -90, lon: -180, radiusM: 200, limit: 25 });
    expect(parsePointQuery('lat=90&lon=180&radius_m=1&limit=1')).toStrictEqual({ lat: 90, lon: 180, radiusM: 1, limit: 1 });
    expectRefused(() => parsePointQuery('lon=9.52'), 'lat');
    expectRefused(() => parsePointQuery('lat=47.14'), 'lon');
    expectRefused(() => parsePointQuery(''), 'lat');
  });
});

describe('units and registered businesses of a building', () => {
  it('building_id: lowercase kept, uppercase read as lowercase; limit 1..100 default 25, offset 0..10,000 default 0', () => {
    expect(parseUnitsQuery(ID, '')).toStrictEqual({ buildingId: ID, limit: 25, offset: 0 });
    expect(parseUnitsQuery(ID.toUpperCase(), 'limit=100&offset=50')).toStrictEqual({ buildingId: ID, limit: 100, offset: 50 });
    expect(parseRegisteredBusinessesQuery(ID, undefined)).toStrictEqual({ buildingId: ID, limit: 25, offset: 0 });
    expect(parseRegisteredBusinessesQuery(ID, 'offset=9999&limit=1')).toStrictEqual({ buildingId: ID, limit: 1, offset: 9999 });
  });

  it('a building_id that names no building is refused on building_id', () => {
    const err = ApiError.unknownBuilding(ID);
    expect([err.status, err.code, err.parameter]).toEqual([400, 'invalid_parameter', 'building_id']);
  });
});
