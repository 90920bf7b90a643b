/**
 * GET /buildings in the engine: each filter on a tiny hand-built snapshot whose expected
 * buildings are written by hand (unknown values, bands, currencies, storage and power mixes),
 * then order, paging, the count cap, bbox edges, refusals and two countries merged.
 *
 * Buildings are named; a name is the source id `t:<name>`, so ids are stable and readable.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog, type CatalogView } from '../src/catalog/catalog.ts';
import { queryBuildings } from '../src/query/buildings.ts';
import { QueryError, withEveryField, type BuildingsQuery } from '../src/query/types.ts';
import { buildingId } from '../src/snapshot/building-id.ts';
import { blankRecord } from '../src/snapshot/record.ts';
import type { BuildingRecord, BusinessRecord, SolarInstallationRecord } from '../src/snapshot/schema.ts';
import { SnapshotWriter } from '../src/snapshot/writer.ts';

const root = mkdtempSync(join(tmpdir(), 'edifice-filters-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const SOURCES = [{ name: 'filter-tests', licence: 'CC0-1.0', attribution: 'Edifice tests', retrieved: '2026-11-21' }];
const BBOX = { minLon: 20, minLat: 45, maxLon: 21, maxLat: 46 };
const names = new Map<string, string>(); // building_id -> name
const idOf = (name: string): string => {
  const id = buildingId(`t:${name}`);
  names.set(id, name);
  return id;
};
let dirs = 0;

type Buildings = Record<string, Partial<BuildingRecord>>;

/** Writes one country of named buildings (spread inside BBOX unless placed) and opens it. */
async function open(countries: Record<string, Buildings>): Promise<CatalogView> {
  const dir = join(root, `c${dirs++}`);
  for (const [country, buildings] of Object.entries(countries)) {
    const writer = new SnapshotWriter({ country, snapshotDate: '2026-11-21', sources: SOURCES });
    Object.entries(buildings).forEach(([name, overrides], i) => {
      idOf(name);
      const lon = overrides.longitude ?? 20.1 + (i % 50) * 0.01;
      const lat = overrides.latitude ?? 45.1 + Math.floor(i / 50) * 0.01;
      writer.add(blankRecord(`t:${name}`, lon, lat, overrides));
    });
    await writer.finish(join(dir, country, '2026-11-21.arrow'));
  }
  return Catalog.open(dir, { log: () => {} }).view();
}

/** The planner's answer, once every path forced (plain scan, walk, best-first) is seen to give the same. */
function run(view: CatalogView, q: Partial<BuildingsQuery>): { names: string[]; total: number; totalIsCapped: boolean } {
  const [planned, ...forced] = (['auto', 'scan', 'walk', 'best-first'] as const).map((path) => {
    const r = queryBuildings(view, { bbox: BBOX, sort: 'volume', limit: 100, offset: 0, ...q }, { path });
    return { names: r.rows.map((x) => names.get(x.snapshot.buildingId(x.row)) ?? '?'), total: r.total, totalIsCapped: r.totalIsCapped };
  });
  for (const other of forced) expect(other).toEqual(planned);
  return planned;
}

/** The names a filter keeps, in alphabetical order (the order itself is tested separately). */
function kept(view: CatalogView, q: Partial<BuildingsQuery>): string[] {
  const r = run(view, q);
  expect(r.total).toBe(r.names.length);
  return [...r.names].sort();
}

/** Names in building_id order: the tie rule, stated plainly. */
const byId = (...list: string[]): string[] => [...list].sort((a, b) => (idOf(a) < idOf(b) ? -1 : 1));

const business = (o: Partial<BusinessRecord>): BusinessRecord => ({
  business_id: `b${Math.random().toString(36).slice(2)}`,
  registration_number: null,
  name: 'Firm',
  active: true,
  employees_min: null,
  employees_max: null,
  turnover: null,
  turnover_currency: null,
  turnover_financial_year: null,
  ...o,
});
const install = (power_kw: number | null, storage: boolean | null): SolarInstallationRecord => ({
  power_kw,
  storage,
  register: 'grid_operator',
  commissioned_on: null,
});
const entrance = (i: number) => ({ address: `Strada ${i}`, house_number: null, postal_code: null, source: `t:e/${i}` });

describe('building filters', () => {
  it('category, building_type, and both OR-ed', async () => {
    const v = await open({
      XA: {
        house: { category: 'residential_house', building_type: 'house' },
        shop: { category: 'commercial', building_type: 'retail' },
        plant: { category: 'industrial', building_type: 'factory' },
        school: { category: 'public', building_type: 'school' },
      },
    });
    expect(kept(v, { category: ['commercial', 'industrial'] })).toEqual(['plant', 'shop']);
    expect(kept(v, { buildingType: ['school', 'retail'] })).toEqual(['school', 'shop']);
    expect(kept(v, { buildingType: ['no_such_type'] })).toEqual([]);
    expect(kept(v, { category: ['industrial'], buildingType: ['school'] })).toEqual(['plant', 'school']);
    expect(kept(v, { category: ['agricultural'], buildingType: ['house'] })).toEqual(['house']);
    expect(kept(v, { category: ['agricultural'], buildingType: ['no_such_type'] })).toEqual([]);
  });

  it('roof_shape, address_corroboration, existing_solar_panels, flood_zone, seismic_risk_class: null matches none', async () => {
    const v = await open({
      XA: {
        a: {
          roof_shape: 'flat',
          address_corroboration: 'corroborated',
          panels_status: 'detected',
          flood_zone: '100_year',
          seismic_risk_class: 'RsI',
        },
        b: {
          roof_shape: 'gabled',
          address_corroboration: 'conflicting',
          panels_status: 'none_seen',
          flood_zone: '10_year',
          seismic_risk_class: 'U2',
        },
        c: {},
      },
    });
    expect(kept(v, { roofShape: ['flat', 'dome'] })).toEqual(['a']);
    expect(kept(v, { roofShape: ['dome'] })).toEqual([]);
    expect(kept(v, { addressCorroboration: ['corroborated', 'single_source'] })).toEqual(['a']);
    expect(kept(v, { addressCorroboration: ['conflicting'] })).toEqual(['b']);
    expect(kept(v, { existingSolarPanels: ['none_seen', 'unclear'] })).toEqual(['b']);
    expect(kept(v, { floodZone: ['100_year', '10_year'] })).toEqual(['a', 'b']);
    expect(kept(v, { seismicRiskClass: ['U2', 'consolidated'] })).toEqual(['b']);
  });

  it('min/max floors and dwellings: bounds inclusive, unknown out of both', async () => {
    const v = await open({
      XA: {
        a: { floors: 0, dwellings: 0 },
        b: { floors: 3, dwellings: 12 },
        c: { floors: 10, dwellings: 80 },
        d: {},
      },
    });
    expect(kept(v, { minFloors: 3 })).toEqual(['b', 'c']);
    expect(kept(v, { maxFloors: 3 })).toEqual(['a', 'b']);
    expect(kept(v, { minFloors: 3, maxFloors: 3 })).toEqual(['b']);
    expect(kept(v, { minFloors: 0 })).toEqual(['a', 'b', 'c']);
    expect(kept(v, { maxDwellings: 11 })).toEqual(['a']);
    expect(kept(v, { minDwellings: 12, maxDwellings: 1_000_000 })).toEqual(['b', 'c']);
  });

  it('min/max entrances count entrance records; a building with none is out of both', async () => {
    const v = await open({
      XA: {
        none: {},
        one: { entrances: [entrance(1)] },
        three: { entrances: [1, 2, 3].map(entrance) },
        many: { entrances: Array.from({ length: 300 }, (_, i) => entrance(i)) },
      },
    });
    expect(kept(v, { minEntrances: 1 })).toEqual(['many', 'one', 'three']);
    expect(kept(v, { maxEntrances: 1 })).toEqual(['one']);
    expect(kept(v, { maxEntrances: 5 })).toEqual(['one', 'three']);
    expect(kept(v, { minEntrances: 2, maxEntrances: 3 })).toEqual(['three']);
    expect(kept(v, { minEntrances: 256 })).toEqual(['many']);
    expect(kept(v, { minEntrances: 300, maxEntrances: 300 })).toEqual(['many']);
    expect(kept(v, { maxEntrances: 299 })).toEqual(['one', 'three']);
  });

  it('area, height and volume bounds are exact, on rounded and on arbitrary values', async () => {
    const v = await open({
      XA: {
        a: { footprint_area_m2: 50, height_m: null, volume_m3: 1000 / 3 },
        b: { footprint_area_m2: 100.25, height_m: 3, volume_m3: 250.5 },
        c: { footprint_area_m2: 1000, height_m: 12.5, volume_m3: Math.PI * 1000 },
      },
    });
    expect(kept(v, { minAreaM2: 100.25 })).toEqual(['b', 'c']);
    expect(kept(v, { minAreaM2: 100.25 + 1e-9 })).toEqual(['c']);
    expect(kept(v, { maxAreaM2: 100.2 })).toEqual(['a']);
    expect(kept(v, { minHeightM: 3 })).toEqual(['b', 'c']);
    expect(kept(v, { maxHeightM: 12.4999 })).toEqual(['b']);
    expect(kept(v, { maxHeightM: 1000 })).toEqual(['b', 'c']);
    expect(kept(v, { minVolumeM3: 1000 / 3 })).toEqual(['a', 'c']);
    expect(kept(v, { minVolumeM3: 250.5 })).toEqual(['a', 'b', 'c']);
    expect(kept(v, { minVolumeM3: 1000 / 3 + 1e-9 })).toEqual(['c']);
    expect(kept(v, { maxVolumeM3: 250.5 })).toEqual(['b']);
  });

  it('measured_height_only keeps volume_basis measured', async () => {
    const v = await open({
      XA: {
        a: { volume_m3: 100, volume_basis: 'measured', height_basis: 'estimated' },
        b: { volume_m3: 100, volume_basis: 'estimated', height_basis: 'measured' },
        c: {},
      },
    });
    expect(kept(v, { measuredHeightOnly: true })).toEqual(['a']);
  });

  it('solar_presence keeps, exclude_solar_presence leaves out', async () => {
    const v = await open({
      XA: {
        reg: { solar_presence: 'registered' },
        det: { solar_presence: 'detected' },
        unk: { solar_presence: 'unknown' },
        none: { solar_presence: 'none_seen' },
      },
    });
    expect(kept(v, { solarPresence: ['registered', 'detected'] })).toEqual(['det', 'reg']);
    expect(kept(v, { excludeSolarPresence: ['unknown', 'detected'] })).toEqual(['none', 'reg']);
    expect(kept(v, { solarPresence: ['registered', 'unknown'], excludeSolarPresence: ['detected'] })).toEqual(['reg', 'unk']);
  });

  it('registered_solar, registered_solar_storage (true, false, unsaid mixes) and min_registered_solar_kw (sum of stated)', async () => {
    const v = await open({
      XA: {
        none: {},
        yes: { solar_installations: [install(5, true)] },
        no: { solar_installations: [install(null, false)] },
        unsaid: { solar_installations: [install(2.5, null)] },
        noAndUnsaid: { solar_installations: [install(2.5, false), install(2.5, null)] },
        yesAndNo: { solar_installations: [install(null, true), install(10, false)] },
        unstated: { solar_installations: [install(null, null), install(null, null)] },
      },
    });
    expect(kept(v, { registeredSolar: true })).toEqual(['no', 'noAndUnsaid', 'unsaid', 'unstated', 'yes', 'yesAndNo']);
    expect(kept(v, { registeredSolar: false })).toEqual(['none']);
    expect(kept(v, { registeredSolarStorage: true })).toEqual(['yes', 'yesAndNo']);
    expect(kept(v, { registeredSolarStorage: false })).toEqual(['no', 'noAndUnsaid']);
    // Sums: yes 5, unsaid 2.5, noAndUnsaid 5 (2.5 + 2.5), yesAndNo 10; no and unstated state none.
    expect(kept(v, { minRegisteredSolarKw: 5 })).toEqual(['noAndUnsaid', 'yes', 'yesAndNo']);
    expect(kept(v, { minRegisteredSolarKw: 5.000001 })).toEqual(['yesAndNo']);
    expect(kept(v, { minRegisteredSolarKw: 0.1 })).toEqual(['noAndUnsaid', 'unsaid', 'yes', 'yesAndNo']);
    expect(kept(v, { minRegisteredSolarKw: 1, registeredSolarStorage: true })).toEqual(['yes', 'yesAndNo']);
  });

  it('has_solar_potential and the panel count, capacity, yearly energy and CO2 bounds', async () => {
    const potential = (n: number, kwp: number, kwh: number, co2: number): Partial<BuildingRecord> => ({
      solar_potential_basis: 'estimated',
      solar_panel_count: n,
      solar_capacity_kwp: kwp,
      solar_yearly_energy_kwh: kwh,
      solar_co2_savings_kg_per_year: co2,
    });
    const v = await open({
      XA: { small: potential(4, 1.6, 1500, 600), big: potential(40, 16, 15_000, 6000), zero: potential(0, 0, 0, 0), none: {} },
    });
    expect(kept(v, { hasSolarPotential: true })).toEqual(['big', 'small', 'zero']);
    expect(kept(v, { minPanelCount: 4 })).toEqual(['big', 'small']);
    expect(kept(v, { maxPanelCount: 4 })).toEqual(['small', 'zero']);
    expect(kept(v, { minCapacityKwp: 1.6, maxCapacityKwp: 1.6 })).toEqual(['small']);
    expect(kept(v, { maxYearlyEnergyKwh: 1499 })).toEqual(['zero']);
    expect(kept(v, { minCo2SavingsKgPerYear: 601 })).toEqual(['big']);
  });

  it('has_3d_model; a "default false" boolean given as false keeps everything', async () => {
    const v = await open({ XA: { model: { has_3d_model: true }, plain: {} } });
    expect(kept(v, { has3dModel: true })).toEqual(['model']);
    expect(kept(v, { has3dModel: false })).toEqual(['model', 'plain']);
    expect(kept(v, { hasSolarPotential: false, measuredHeightOnly: false })).toEqual(['model', 'plain']);
  });
});

describe('registered business filters', () => {
  it('has_registered_business counts active businesses only', async () => {
    const v = await open({
      XA: {
        active: { businesses: [business({ active: true })] },
        closed: { businesses: [business({ active: false })] },
        mixed: { businesses: [business({ active: false }), business({ active: true })] },
        none: {},
      },
    });
    expect(kept(v, { hasRegisteredBusiness: true })).toEqual(['active', 'mixed']);
  });

  it('registered_business_name: substring, case-insensitive, any business', async () => {
    const v = await open({
      XA: {
        acme: { businesses: [business({ name: 'ACME GmbH' })] },
        big: { businesses: [business({ name: 'Bakery' }), business({ name: 'Big Acme Trading' })] },
        strasse: { businesses: [business({ name: 'Straße & Co' })] },
        greek: { businesses: [business({ name: 'ΤΑΒΈΡΝΑ Ελληνική' })] },
        none: {},
      },
    });
    expect(kept(v, { registeredBusinessName: 'acme' })).toEqual(['acme', 'big']);
    expect(kept(v, { registeredBusinessName: 'ACME g' })).toEqual(['acme']);
    expect(kept(v, { registeredBusinessName: 'STRASSE' })).toEqual([]); // 'straße' does not contain 'strasse'
    expect(kept(v, { registeredBusinessName: 'STRAßE' })).toEqual(['strasse']);
    expect(kept(v, { registeredBusinessName: 'ταβέρνα' })).toEqual(['greek']);
    expect(kept(v, { registeredBusinessName: 'ry Bi' })).toEqual([]); // no match across two names
    expect(kept(v, { registeredBusinessName: 'zz' })).toEqual([]);
  });

  it('min_registered_business_employees: one business whose whole stated size is at least the value', async () => {
    const v = await open({
      XA: {
        band10to19: { businesses: [business({ employees_min: 10, employees_max: 19 })] },
        exact15: { businesses: [business({ employees_min: 15, employees_max: 15 })] },
        open250: { businesses: [business({ employees_min: 250, employees_max: null })] },
        unstated: { businesses: [business({})] },
        twoSmall: { businesses: [business({ employees_min: 5, employees_max: 9 }), business({ employees_min: 12, employees_max: 12 })] },
        none: {},
      },
    });
    expect(kept(v, { minRegisteredBusinessEmployees: 10 })).toEqual(['band10to19', 'exact15', 'open250', 'twoSmall']);
    expect(kept(v, { minRegisteredBusinessEmployees: 15 })).toEqual(['exact15', 'open250']); // 10 to 19 is not wholly >= 15
    expect(kept(v, { minRegisteredBusinessEmployees: 251 })).toEqual([]);
    expect(kept(v, { minRegisteredBusinessEmployees: 0 })).toEqual(['band10to19', 'exact15', 'open250', 'twoSmall']);
  });

  it('max_registered_business_employees: every stated size at most the value; open top never; none stated is out', async () => {
    const v = await open({
      XA: {
        band10to19: { businesses: [business({ employees_min: 10, employees_max: 19 })] },
        exact15: { businesses: [business({ employees_min: 15, employees_max: 15 })] },
        open250: { businesses: [business({ employees_min: 250, employees_max: null })] },
        openAndSmall: {
          businesses: [business({ employees_min: 0, employees_max: null }), business({ employees_min: 5, employees_max: 5 })],
        },
        unstated: { businesses: [business({})] },
        smallAndUnstated: { businesses: [business({ employees_min: 5, employees_max: 9 }), business({})] },
        twoSmall: { businesses: [business({ employees_min: 5, employees_max: 9 }), business({ employees_min: 12, employees_max: 12 })] },
        none: {},
      },
    });
    expect(kept(v, { maxRegisteredBusinessEmployees: 19 })).toEqual(['band10to19', 'exact15', 'smallAndUnstated', 'twoSmall']);
    expect(kept(v, { maxRegisteredBusinessEmployees: 12 })).toEqual(['smallAndUnstated', 'twoSmall']);
    expect(kept(v, { maxRegisteredBusinessEmployees: 1_000_000 })).toEqual(['band10to19', 'exact15', 'smallAndUnstated', 'twoSmall']);
  });

  it('min_registered_business_turnover: a business, active or not, in the currency at least the value; the year a filter of its own', async () => {
    const v = await open({
      XA: {
        eur1000: { businesses: [business({ turnover: 1000, turnover_currency: 'EUR', turnover_financial_year: 2023 })] },
        inactive: { businesses: [business({ active: false, turnover: 5000, turnover_currency: 'EUR' })] },
        ron: { businesses: [business({ turnover: 5000, turnover_currency: 'RON' })] },
        noFigure: { businesses: [business({ turnover: null, turnover_currency: 'EUR', turnover_financial_year: 2023 })] },
        two: {
          businesses: [
            business({ turnover: 500, turnover_currency: 'EUR', turnover_financial_year: 2023 }),
            business({ turnover: 2000, turnover_currency: 'EUR', turnover_financial_year: 2022 }),
          ],
        },
      },
    });
    const eur = { registeredBusinessTurnoverCurrency: 'EUR' };
    expect(kept(v, { ...eur, minRegisteredBusinessTurnover: 1000 })).toEqual(['eur1000', 'inactive', 'two']);
    expect(kept(v, { ...eur, minRegisteredBusinessTurnover: 0 })).toEqual(['eur1000', 'inactive', 'two']);
    expect(kept(v, { ...eur, minRegisteredBusinessTurnover: 5000 })).toEqual(['inactive']);
    // 'two': its 2023 statement is of 500, its 2,000 is for 2022; each filter holds of the building.
    expect(kept(v, { ...eur, minRegisteredBusinessTurnover: 1000, registeredBusinessFinancialYear: 2023 })).toEqual(['eur1000', 'two']);
    expect(kept(v, { ...eur, minRegisteredBusinessTurnover: 1000, registeredBusinessFinancialYear: 2022 })).toEqual(['two']);
    expect(kept(v, { registeredBusinessTurnoverCurrency: 'RON', minRegisteredBusinessTurnover: 1 })).toEqual(['ron']);
    expect(kept(v, { registeredBusinessTurnoverCurrency: 'USD', minRegisteredBusinessTurnover: 0 })).toEqual([]);
  });

  it('max_registered_business_turnover: a business in the currency, and every such (active or not) at most the value', async () => {
    const v = await open({
      XA: {
        eur1000: { businesses: [business({ turnover: 1000, turnover_currency: 'EUR' })] },
        eurTwo: {
          businesses: [
            business({ turnover: 1000, turnover_currency: 'EUR', turnover_financial_year: 2023 }),
            business({ turnover: 3000, turnover_currency: 'EUR', turnover_financial_year: 2022 }),
          ],
        },
        ron: { businesses: [business({ turnover: 100, turnover_currency: 'RON' })] },
        noFigure: { businesses: [business({ turnover: null, turnover_currency: 'EUR' })] },
        inactive: { businesses: [business({ active: false, turnover: 500, turnover_currency: 'EUR' })] },
        eurAndRon: {
          businesses: [business({ turnover: 900, turnover_currency: 'EUR' }), business({ turnover: 1e9, turnover_currency: 'RON' })],
        },
        none: {},
      },
    });
    const eur = { registeredBusinessTurnoverCurrency: 'EUR' };
    expect(kept(v, { ...eur, maxRegisteredBusinessTurnover: 1000 })).toEqual(['eur1000', 'eurAndRon', 'inactive']);
    expect(kept(v, { ...eur, maxRegisteredBusinessTurnover: 999 })).toEqual(['eurAndRon', 'inactive']);
    // The year does not narrow the businesses the turnover filter reads: eurTwo's 3,000 (2022) is above 1,000.
    expect(kept(v, { ...eur, maxRegisteredBusinessTurnover: 1000, registeredBusinessFinancialYear: 2023 })).toEqual([]);
    expect(kept(v, { ...eur, maxRegisteredBusinessTurnover: 3000, registeredBusinessFinancialYear: 2023 })).toEqual(['eurTwo']);
    expect(kept(v, { ...eur, minRegisteredBusinessTurnover: 950, maxRegisteredBusinessTurnover: 1000 })).toEqual(['eur1000']);
  });

  it('registered_business_financial_year: some business, active or not, reports that year, with or without a turnover', async () => {
    const v = await open({
      XA: {
        y2023: { businesses: [business({ turnover_financial_year: 2023, active: false })] },
        y2022: { businesses: [business({ turnover: 10, turnover_currency: 'EUR', turnover_financial_year: 2022 })] },
        none: {},
      },
    });
    expect(kept(v, { registeredBusinessFinancialYear: 2023 })).toEqual(['y2023']);
    expect(kept(v, { registeredBusinessFinancialYear: 2022, registeredBusinessTurnoverCurrency: 'EUR' })).toEqual(['y2022']);
    expect(kept(v, { registeredBusinessFinancialYear: 1990 })).toEqual([]);
  });
});

describe('energy and climate filters', () => {
  it('has_annual_heating_estimate, has_thermal_assessment, has_peak_heat_load', async () => {
    const v = await open({
      XA: {
        full: {
          annual_heating_demand_kwh: 9000,
          thermal_assessment: 'audit',
          design_indoor_temperature_c: 20,
          design_outdoor_temperature_c: -15,
        },
        noOutdoor: { thermal_assessment: 'survey', design_indoor_temperature_c: 20 },
        tempsOnly: { design_indoor_temperature_c: 20, design_outdoor_temperature_c: -15 },
        heatingZero: { annual_heating_demand_kwh: 0 },
        none: {},
      },
    });
    expect(kept(v, { hasAnnualHeatingEstimate: true })).toEqual(['full', 'heatingZero']);
    expect(kept(v, { hasThermalAssessment: true })).toEqual(['full', 'noOutdoor']);
    expect(kept(v, { hasPeakHeatLoad: true })).toEqual(['full']);
  });

  it('has_recent_climate_trend, has_recent_temperature_extremes, has_recent_precipitation need every figure', async () => {
    const extremes = {
      recent_frost_days: 40.5,
      recent_hot_days: 3,
      recent_minimum_daily_temperature_c: -20,
      recent_maximum_daily_temperature_c: 36.5,
    };
    const v = await open({
      XA: {
        all: {
          recent_mean_temperature_c: 10,
          recent_temperature_trend_c_per_decade: 0.3,
          ...extremes,
          recent_annual_precipitation_mm: 600,
          recent_max_one_day_precipitation_mm: 45.5,
        },
        meanOnly: { recent_mean_temperature_c: 10 },
        noMax: { ...extremes, recent_maximum_daily_temperature_c: null },
        dryDay: { recent_max_one_day_precipitation_mm: 20 },
      },
    });
    expect(kept(v, { hasRecentClimateTrend: true })).toEqual(['all']);
    expect(kept(v, { hasRecentTemperatureExtremes: true })).toEqual(['all']);
    expect(kept(v, { hasRecentPrecipitation: true })).toEqual(['all']);
  });

  it('recent frost, hot days, minimum daily temperature and max one-day precipitation bounds', async () => {
    const v = await open({
      XA: {
        cold: {
          recent_frost_days: 120,
          recent_hot_days: 0,
          recent_minimum_daily_temperature_c: -31.2,
          recent_max_one_day_precipitation_mm: 20,
        },
        mild: {
          recent_frost_days: 40.5,
          recent_hot_days: 15.5,
          recent_minimum_daily_temperature_c: -12.5,
          recent_max_one_day_precipitation_mm: 80,
        },
        none: {},
      },
    });
    expect(kept(v, { minRecentFrostDays: 40.5 })).toEqual(['cold', 'mild']);
    expect(kept(v, { minRecentFrostDays: 40.6 })).toEqual(['cold']);
    expect(kept(v, { maxRecentMinimumDailyTemperatureC: -12.5 })).toEqual(['cold', 'mild']);
    expect(kept(v, { maxRecentMinimumDailyTemperatureC: -12.6 })).toEqual(['cold']);
    expect(kept(v, { minRecentHotDays: 0 })).toEqual(['cold', 'mild']);
    expect(kept(v, { minRecentHotDays: 15.5 })).toEqual(['mild']);
    expect(kept(v, { minRecentMaxOneDayPrecipitationMm: 20.0001 })).toEqual(['mild']);
  });

  it('filters of different names combine with AND', async () => {
    const v = await open({
      XA: {
        a: { category: 'commercial', floors: 3, has_3d_model: true },
        b: { category: 'commercial', floors: 3 },
        c: { category: 'public', floors: 3, has_3d_model: true },
      },
    });
    expect(kept(v, { category: ['commercial'], minFloors: 2, has3dModel: true })).toEqual(['a']);
  });
});

describe('order, paging and counting', () => {
  it('sort key descending, unknown keys last, ties and unknowns by building_id', async () => {
    const v = await open({
      XA: {
        v100a: { volume_m3: 100, footprint_area_m2: 10, height_m: 3 },
        v100b: { volume_m3: 100, footprint_area_m2: 30, height_m: null },
        v500: { volume_m3: 500, footprint_area_m2: 20, height_m: 3 },
        v0: { volume_m3: 0, footprint_area_m2: 20, height_m: 9 },
        u1: { footprint_area_m2: 5 },
        u2: { footprint_area_m2: 5 },
        u3: { footprint_area_m2: 40 },
      },
    });
    expect(run(v, { sort: 'volume' }).names).toEqual(['v500', ...byId('v100a', 'v100b'), 'v0', ...byId('u1', 'u2', 'u3')]);
    expect(run(v, { sort: 'area' }).names).toEqual(['u3', 'v100b', ...byId('v500', 'v0'), 'v100a', ...byId('u1', 'u2')]);
    expect(run(v, { sort: 'height' }).names).toEqual(['v0', ...byId('v100a', 'v500'), ...byId('v100b', 'u1', 'u2', 'u3')]);
  });

  it('sort by employees (largest band start) and by turnover in the currency (other currencies unknown)', async () => {
    const v = await open({
      XA: {
        e250: { businesses: [business({ employees_min: 250, employees_max: null }), business({ employees_min: 1, employees_max: 1 })] },
        e10: { businesses: [business({ employees_min: 10, employees_max: 19, turnover: 5000, turnover_currency: 'RON' })] },
        e15: { businesses: [business({ employees_min: 15, employees_max: 15, turnover: 100, turnover_currency: 'EUR', active: false })] },
        unstated: {
          businesses: [business({ turnover: 90_000, turnover_currency: 'EUR' }), business({ turnover: 95_000, turnover_currency: 'RON' })],
        },
        none: {},
      },
    });
    expect(run(v, { sort: 'registered_business_employees' }).names).toEqual(['e250', 'e15', 'e10', ...byId('none', 'unstated')]);
    expect(run(v, { sort: 'registered_business_turnover', registeredBusinessTurnoverCurrency: 'EUR' }).names).toEqual([
      'unstated',
      'e15',
      ...byId('e10', 'e250', 'none'),
    ]);
    expect(run(v, { sort: 'registered_business_turnover', registeredBusinessTurnoverCurrency: 'RON' }).names).toEqual([
      'unstated',
      'e10',
      ...byId('e15', 'e250', 'none'),
    ]);
  });

  it('pages are [offset, offset + limit) of one order: they neither overlap nor skip', async () => {
    const buildings: Buildings = {};
    for (let i = 0; i < 60; i++) buildings[`p${i}`] = { volume_m3: i % 7 === 0 ? null : (i % 5) * 100 };
    const v = await open({ XA: buildings });
    const all = run(v, { limit: 100 }).names;
    expect(all).toHaveLength(60);
    const pages: string[] = [];
    for (let offset = 0; offset < 60; offset += 7) {
      const page = run(v, { offset, limit: 7 });
      expect(page.total).toBe(60);
      pages.push(...page.names);
    }
    expect(pages).toEqual(all);
    expect(run(v, { offset: 58, limit: 5 }).names).toEqual(all.slice(58));
    expect(run(v, { offset: 60, limit: 5 }).names).toEqual([]);
    expect(run(v, { offset: 3, limit: 0 })).toEqual({ names: [], total: 60, totalIsCapped: false });
  });

  it('total counts up to 10,000; past it total_is_capped, and deep pages still come from the full order', async () => {
    const buildings: Buildings = {};
    for (let i = 0; i < 10_001; i++) {
      buildings[`n${i}`] = { longitude: 20.2 + (i % 100) * 0.001, latitude: 45.2 + Math.floor(i / 100) * 0.001, volume_m3: i };
    }
    const v = await open({ XA: buildings });
    const all = run(v, { limit: 10 });
    expect(all).toEqual({
      names: ['n10000', 'n9999', 'n9998', 'n9997', 'n9996', 'n9995', 'n9994', 'n9993', 'n9992', 'n9991'],
      total: 10_000,
      totalIsCapped: true,
    });
    expect(run(v, { offset: 9_990, limit: 10 }).names).toEqual(['n10', 'n9', 'n8', 'n7', 'n6', 'n5', 'n4', 'n3', 'n2', 'n1']);
    // Exactly 10,000 matches: not capped.
    expect(run(v, { minVolumeM3: 1, limit: 1 })).toEqual({ names: ['n10000'], total: 10_000, totalIsCapped: false });
    expect(run(v, { minVolumeM3: 2, limit: 1, offset: 9_998 })).toEqual({ names: ['n2'], total: 9_999, totalIsCapped: false });
  });
});

describe('area', () => {
  it('the representative point decides, bbox edges included', async () => {
    const v = await open({
      XA: {
        sw: { longitude: 20.5, latitude: 45.5 },
        ne: { longitude: 20.7, latitude: 45.7 },
        mid: { longitude: 20.6, latitude: 45.6 },
        west: { longitude: 20.499999, latitude: 45.6 },
        north: { longitude: 20.6, latitude: 45.700001 },
      },
    });
    const box = { minLon: 20.5, minLat: 45.5, maxLon: 20.7, maxLat: 45.7 };
    expect(kept(v, { bbox: box })).toEqual(['mid', 'ne', 'sw']);
    expect(kept(v, { bbox: { minLon: 20.6, minLat: 45.6, maxLon: 20.6, maxLat: 45.6 } })).toEqual(['mid']);
    expect(kept(v, { bbox: { ...box, minLon: 20.499999 } })).toEqual(['mid', 'ne', 'sw', 'west']);
    expect(kept(v, { bbox: { minLon: 100, minLat: 10, maxLon: 101, maxLat: 11 } })).toEqual([]);
  });

  it('refuses a bbox that is not four numbers in range, offset + limit over 10,000 and a missing currency, before any scan', async () => {
    const v = await open({ XA: { a: {} } });
    const refused = (q: Partial<BuildingsQuery>): string | null => {
      try {
        run(v, q);
        return null;
      } catch (err) {
        expect(err).toBeInstanceOf(QueryError);
        return (err as QueryError).parameter;
      }
    };
    expect(refused({ bbox: { minLon: 20, minLat: 45, maxLon: NaN, maxLat: 46 } })).toBe('bbox');
    expect(refused({ bbox: { minLon: 20, minLat: 45, maxLon: 181, maxLat: 46 } })).toBe('bbox');
    expect(refused({ bbox: { minLon: 20, minLat: 47, maxLon: 21, maxLat: 46 } })).toBe('bbox');
    // 3 degrees are GET /buildings' rule (api/validate.ts); OGC API items rank a bbox of any size.
    expect(refused({ bbox: { minLon: 20, minLat: 45, maxLon: 23.000001, maxLat: 46 } })).toBeNull();
    expect(refused({ bbox: { minLon: -180, minLat: -90, maxLon: 180, maxLat: 90 } })).toBeNull();
    expect(refused({ offset: 9_991, limit: 10 })).toBe('offset');
    expect(refused({ offset: 10_000, limit: 1 })).toBe('offset');
    expect(refused({ sort: 'registered_business_turnover' })).toBe('registered_business_turnover_currency');
    expect(refused({ minRegisteredBusinessTurnover: 5 })).toBe('registered_business_turnover_currency');
    expect(refused({ bbox: { minLon: 20, minLat: 44, maxLon: 23, maxLat: 47 } })).toBeNull();
    expect(refused({ offset: 9_990, limit: 10 })).toBeNull();
  });

  it('two countries: both snapshots answer, merged by one order and one count; outside both, an empty page', async () => {
    const v = await open({
      XA: {
        a500: { longitude: 20.9, latitude: 45.5, volume_m3: 500 },
        a100: { longitude: 20.95, latitude: 45.5, volume_m3: 100 },
        aNone: { longitude: 20.8, latitude: 45.5 },
      },
      XB: {
        b300: { longitude: 21.05, latitude: 45.5, volume_m3: 300 },
        b100: { longitude: 21.1, latitude: 45.5, volume_m3: 100 },
        bNone: { longitude: 21.2, latitude: 45.5 },
      },
    });
    const box = { minLon: 20.5, minLat: 45, maxLon: 21.5, maxLat: 46 };
    const r = run(v, { bbox: box });
    expect(r.names).toEqual(['a500', 'b300', ...byId('a100', 'b100'), ...byId('aNone', 'bNone')]);
    expect(r.total).toBe(6);
    expect(run(v, { bbox: box, offset: 1, limit: 2 }).names).toEqual(['b300', byId('a100', 'b100')[0]]);
    expect(run(v, { bbox: { ...box, minLon: 21.01 } }).names).toEqual(['b300', 'b100', 'bNone']);
    expect(run(v, { bbox: { minLon: -10, minLat: 0, maxLon: -9, maxLat: 1 } })).toEqual({ names: [], total: 0, totalIsCapped: false });
  });
});

describe('one shape for every query (withEveryField)', () => {
  it('lists every field once in one order, whatever fields and order the caller gave, and keeps their values', () => {
    const a: BuildingsQuery = { bbox: BBOX, sort: 'volume', limit: 5, offset: 0, minFloors: 2, category: ['apartment_block'] };
    const b = { seismicRiskClass: ['RsII'], offset: 3, hasPeakHeatLoad: true, limit: 1, sort: 'height', bbox: BBOX } as BuildingsQuery;
    const fa = withEveryField(a);
    const fb = withEveryField(b);
    expect(Object.keys(fa)).toEqual(Object.keys(fb));
    // The 57 fields the interface declares (counted there), first to last; none the caller left out is defined.
    expect(Object.keys(fa)[0]).toBe('bbox');
    expect(Object.keys(fa).at(-1)).toBe('seismicRiskClass');
    expect(new Set(Object.keys(fa)).size).toBe(57);
    for (const [q, full] of [
      [a, fa],
      [b, fb],
    ] as const) {
      for (const key of Object.keys(full) as (keyof BuildingsQuery)[]) expect(full[key]).toBe(q[key]);
    }
    expect(a).toEqual({ bbox: BBOX, sort: 'volume', limit: 5, offset: 0, minFloors: 2, category: ['apartment_block'] });
  });
});
