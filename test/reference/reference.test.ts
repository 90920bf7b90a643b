/**
 * Sanity tests of the brute-force reference itself: the decoder gives back exactly what was
 * written, and the query rules give hand-computed answers on small fixtures.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { blankRecord } from '../../src/snapshot/record.ts';
import { buildingId } from '../../src/snapshot/building-id.ts';
import type { BuildingRecord, BusinessRecord, SolarInstallationRecord } from '../../src/snapshot/schema.ts';
import { randomCountry, randomPointCountry, writeCountry } from './fixtures.ts';
import {
  compareRanked,
  decodeSnapshotDir,
  decodeSnapshotFile,
  distanceToFootprint,
  originInRing,
  originToSegment,
  passesFilters,
  refListBusinesses,
  refListUnits,
  refQueryBuildings,
  refQueryPoint,
  refShownBusinesses,
  sortKey,
  type RefBuilding,
  type RefBuildingsQuery,
  type RefSnapshot,
} from './reference.ts';
import { destination, geodesicDistance } from './geodesic.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'edifice-ref-'));
  dirs.push(d);
  return d;
}

function plain(record: BuildingRecord, country: string): RefBuilding {
  return {
    ...record,
    footprint: record.footprint.map((polygon) => polygon.map((ring) => Array.from(ring))),
    country,
  };
}

function snapshotOf(records: BuildingRecord[], country = 'XA'): RefSnapshot {
  return { country, snapshotDate: '2026-11-21', buildings: records.map((r) => plain(r, country)) };
}

const WORLD = { minLon: -180, minLat: -90, maxLon: 180, maxLat: 90 };

function q(extra: Partial<RefBuildingsQuery> = {}): RefBuildingsQuery {
  return { bbox: WORLD, sort: 'volume', limit: 100, offset: 0, ...extra };
}

function business(extra: Partial<BusinessRecord>): BusinessRecord {
  return {
    business_id: 'b',
    registration_number: null,
    name: 'Business',
    active: true,
    employees_min: null,
    employees_max: null,
    turnover: null,
    turnover_currency: null,
    turnover_financial_year: null,
    ...extra,
  };
}

function installation(extra: Partial<SolarInstallationRecord>): SolarInstallationRecord {
  return { power_kw: null, storage: null, register: 'grid_operator', commissioned_on: null, ...extra };
}

describe('reference decoder', () => {
  it('gives back every record exactly as written, in any row order', async () => {
    const dir = tempDir();
    const a = randomCountry({
      country: 'XA',
      seed: 7,
      lon0: 20,
      lon1: 21,
      lat0: 44,
      lat1: 45,
      clusters: 5,
      perCluster: 80,
      background: 100,
      sourcePrefix: 'ref',
    });
    const b = randomPointCountry({
      country: 'XB',
      seed: 8,
      lon0: 21,
      lon1: 21.1,
      lat0: 44,
      lat1: 44.1,
      clusters: 5,
      perCluster: 40,
      background: 0,
      sourcePrefix: 'refp',
    });
    await writeCountry(dir, 'XA', a);
    await writeCountry(dir, 'XB', b);
    const decoded = decodeSnapshotDir(dir);
    expect(decoded.map((s) => s.country)).toEqual(['XA', 'XB']);
    for (const [records, snapshot] of [
      [a, decoded[0]],
      [b, decoded[1]],
    ] as const) {
      expect(snapshot.buildings.length).toBe(records.length);
      const byId = new Map(snapshot.buildings.map((x) => [x.building_id, x]));
      for (const r of records) expect(byId.get(r.building_id)).toEqual(plain(r, snapshot.country));
    }
    // Hilbert row order is not insertion order, so the test above is not trivially true.
    expect(decoded[0].buildings.map((x) => x.building_id)).not.toEqual(a.map((r) => r.building_id));
  });

  it('decodes one file by path', async () => {
    const dir = tempDir();
    const path = await writeCountry(dir, 'XC', [blankRecord('one', 1, 2, { panels_photo_date: '2024-02-29', floors: 0, height_m: 0 })]);
    const s = decodeSnapshotFile(path);
    expect(s).toMatchObject({ country: 'XC', snapshotDate: '2026-11-21' });
    expect(s.buildings[0]).toMatchObject({ panels_photo_date: '2024-02-29', floors: 0, height_m: 0, volume_m3: null, roof_shape: null });
  });
});

describe('reference ranking', () => {
  it('sorts key descending, unknown last, ties and unknowns by building_id', () => {
    const rows = [
      { id: 'c', key: 5 },
      { id: 'a', key: null },
      { id: 'b', key: 5 },
      { id: 'z', key: 7 },
      { id: 'd', key: null },
      { id: 'e', key: -1 },
      { id: 'f', key: 0 },
    ];
    expect(
      rows
        .sort(compareRanked)
        .map((r) => r.id)
        .join(''),
    ).toBe('zbcfead');
  });

  it('derives business sort keys from the rules', () => {
    const b = plain(
      blankRecord('k', 0, 0, {
        businesses: [
          business({ employees_min: 10, employees_max: 19, turnover: 500, turnover_currency: 'EUR' }),
          business({ employees_min: 250, employees_max: null, active: false, turnover: 900, turnover_currency: 'RON' }),
          business({ employees_min: null, turnover: 700, turnover_currency: 'EUR' }),
        ],
      }),
      'XA',
    );
    expect(sortKey(b, { sort: 'registered_business_employees' })).toBe(250);
    expect(sortKey(b, { sort: 'registered_business_turnover', registeredBusinessTurnoverCurrency: 'EUR' })).toBe(700);
    expect(sortKey(b, { sort: 'registered_business_turnover', registeredBusinessTurnoverCurrency: 'RON' })).toBe(900);
    expect(sortKey(b, { sort: 'registered_business_turnover', registeredBusinessTurnoverCurrency: 'CHF' })).toBe(null);
    expect(sortKey(plain(blankRecord('n', 0, 0), 'XA'), { sort: 'registered_business_employees' })).toBe(null);
  });

  it('shows of its businesses the largest size and turnover, by hand', () => {
    const shown = (list: BusinessRecord[], currency?: string) =>
      refShownBusinesses(plain(blankRecord('s', 0, 0, { businesses: list }), 'XA'), currency);
    const list = [
      business({ employees_min: 10, employees_max: 10, turnover: 0, turnover_currency: 'RON', turnover_financial_year: 2022 }),
      business({
        employees_min: 10,
        employees_max: 19,
        active: false,
        turnover: 20,
        turnover_currency: 'EUR',
        turnover_financial_year: 2021,
      }),
      business({ employees_min: 1, employees_max: 1, turnover: 20, turnover_currency: 'EUR', turnover_financial_year: 2023 }),
      business({ turnover: 7, turnover_currency: 'RON' }),
      business({ turnover_currency: 'CHF', turnover_financial_year: 2024 }),
    ];
    expect(shown(list)).toEqual({
      count: 5,
      employees: { min: 10, max: 19 },
      turnover: { amount: 20, currency: 'EUR', financial_year: 2023 },
    });
    expect(shown(list, 'RON').turnover).toEqual({ amount: 7, currency: 'RON', financial_year: null });
    expect(shown(list, 'CHF').turnover).toBeNull();
    expect(shown([...list, business({ turnover: 1, turnover_currency: 'RON' })]).turnover).toEqual({
      amount: 7,
      currency: 'RON',
      financial_year: null,
    });
    expect(
      shown([business({ employees_min: 250, employees_max: null }), business({ employees_min: 250, employees_max: 999 })]).employees,
    ).toEqual({ min: 250, max: null });
    expect(shown([])).toEqual({ count: 0, employees: null, turnover: null });
  });

  it('each building of a random country shows the value it ranks by under both business sorts', () => {
    const s = randomCountry({
      country: 'XA',
      seed: 3,
      lon0: 20,
      lon1: 21,
      lat0: 44,
      lat1: 45,
      clusters: 5,
      perCluster: 100,
      background: 200,
      sourcePrefix: 'shown',
    }).map((r) => plain(r, 'XA'));
    let mixed = 0;
    for (const b of s) {
      if (new Set(b.businesses.map((x) => x.turnover_currency)).size > 1) mixed++;
      expect(refShownBusinesses(b, undefined).employees?.min ?? null).toBe(sortKey(b, { sort: 'registered_business_employees' }));
      for (const currency of ['EUR', 'RON', 'CHF', 'USD']) {
        expect(refShownBusinesses(b, currency).turnover?.amount ?? null).toBe(
          sortKey(b, { sort: 'registered_business_turnover', registeredBusinessTurnoverCurrency: currency }),
        );
      }
    }
    expect(mixed).toBeGreaterThan(20);
  });

  it('pages, counts up to 10,000 and says when it stopped', () => {
    const records: BuildingRecord[] = [];
    for (let i = 0; i < 10_001; i++)
      records.push(
        blankRecord(`cap:${i}`, 10 + (i % 100) * 1e-4, 45 + Math.floor(i / 100) * 1e-4, { volume_m3: i % 3 === 0 ? null : i % 17 }),
      );
    const s = [snapshotOf(records)];
    const all = refQueryBuildings(s, q({ limit: 100, offset: 0 }));
    expect(all).toMatchObject({ total: 10_000, totalIsCapped: true, matches: 10_001 });
    const exact = refQueryBuildings(s, q({ bbox: { minLon: 10, minLat: 45, maxLon: 11, maxLat: 45 + 99 * 1e-4 } }));
    expect(exact).toMatchObject({ total: 10_000, totalIsCapped: false });
    // Consecutive pages neither overlap nor skip.
    const pages = [0, 100, 200].flatMap((offset) => refQueryBuildings(s, q({ offset })).ids);
    expect(pages).toEqual(refQueryBuildings(s, q({ limit: 300 })).ids.slice(0, 300));
    expect(new Set(pages).size).toBe(300);
    const keys = refQueryBuildings(s, q({ offset: 9_900 })).keys;
    expect(keys.every((k) => k === null)).toBe(true);
  });

  it('keeps a representative point on any bbox edge', () => {
    const r = [blankRecord('e1', 10, 45), blankRecord('e2', 10.5, 45.5), blankRecord('e3', 10.5000001, 45.2)];
    const s = [snapshotOf(r)];
    const ids = (bbox: RefBuildingsQuery['bbox']) => refQueryBuildings(s, q({ bbox })).ids.sort();
    expect(ids({ minLon: 10, minLat: 45, maxLon: 10.5, maxLat: 45.5 })).toEqual([r[0].building_id, r[1].building_id].sort());
    expect(ids({ minLon: 10.5, minLat: 45.5, maxLon: 10.5, maxLat: 45.5 })).toEqual([r[1].building_id]);
    expect(ids({ minLon: 10.0000001, minLat: 45, maxLon: 10.5, maxLat: 45.4999999 })).toEqual([]);
  });

  it('merges several countries by one order', () => {
    const a = snapshotOf([blankRecord('m1', 10, 45, { volume_m3: 5 }), blankRecord('m2', 10, 45, { volume_m3: null })], 'XA');
    const b = snapshotOf([blankRecord('m3', 11, 45, { volume_m3: 7 }), blankRecord('m4', 11, 45, { volume_m3: 5 })], 'XB');
    const ids = refQueryBuildings([a, b], q()).ids;
    const [m1, m4] = [buildingId('m1'), buildingId('m4')].sort();
    expect(ids).toEqual([buildingId('m3'), m1, m4, buildingId('m2')]);
  });
});

describe('reference filters', () => {
  const cases: [string, Partial<BuildingRecord>, Partial<RefBuildingsQuery>, boolean][] = [
    ['category alone', { category: 'commercial' }, { category: ['commercial', 'public'] }, true],
    [
      'category or building_type',
      { category: 'public', building_type: 'office' },
      { category: ['commercial'], buildingType: ['office'] },
      true,
    ],
    [
      'neither category nor type',
      { category: 'public', building_type: 'school' },
      { category: ['commercial'], buildingType: ['office'] },
      false,
    ],
    ['building_type alone', { building_type: 'school' }, { buildingType: ['office'] }, false],
    ['roof null matches none', { roof_shape: null }, { roofShape: ['flat'] }, false],
    ['address corroboration', { address_corroboration: 'conflicting' }, { addressCorroboration: ['conflicting'] }, true],
    ['floors null out of min', { floors: null }, { minFloors: 0 }, false],
    ['floors at bounds', { floors: 3 }, { minFloors: 3, maxFloors: 3 }, true],
    ['dwellings over max', { dwellings: 5 }, { maxDwellings: 4 }, false],
    ['no entrances out of max', { entrances: [] }, { maxEntrances: 5 }, false],
    [
      'two entrances',
      {
        entrances: [
          { address: 'a', house_number: null, postal_code: null, source: 's' },
          { address: 'b', house_number: null, postal_code: null, source: 's' },
        ],
      },
      { minEntrances: 2, maxEntrances: 2 },
      true,
    ],
    ['area at max', { footprint_area_m2: 100 }, { maxAreaM2: 100 }, true],
    ['height null out', { height_m: null }, { maxHeightM: 1000 }, false],
    ['volume under min', { volume_m3: 99.9 }, { minVolumeM3: 100 }, false],
    ['measured volume', { volume_m3: 10, volume_basis: 'measured', height_basis: 'estimated' }, { measuredHeightOnly: true }, true],
    [
      'measured height, estimated volume',
      { volume_m3: 10, volume_basis: 'estimated', height_basis: 'measured' },
      { measuredHeightOnly: true },
      false,
    ],
    ['solar presence kept', { solar_presence: 'detected' }, { solarPresence: ['registered', 'detected'] }, true],
    ['solar presence excluded', { solar_presence: 'unknown' }, { excludeSolarPresence: ['unknown'] }, false],
    ['panels null matches none', { panels_status: null }, { existingSolarPanels: ['none_seen'] }, false],
    ['registered solar false', { solar_installations: [] }, { registeredSolar: false }, true],
    ['registered solar true', { solar_installations: [] }, { registeredSolar: true }, false],
    [
      'storage true: some states storage',
      { solar_installations: [installation({ storage: false }), installation({ storage: true })] },
      { registeredSolarStorage: true },
      true,
    ],
    [
      'storage false: one states storage',
      { solar_installations: [installation({ storage: false }), installation({ storage: true })] },
      { registeredSolarStorage: false },
      false,
    ],
    [
      'storage false: some none, rest silent',
      { solar_installations: [installation({ storage: false }), installation({ storage: null })] },
      { registeredSolarStorage: false },
      true,
    ],
    ['storage: register silent', { solar_installations: [installation({ storage: null })] }, { registeredSolarStorage: false }, false],
    [
      'kw sums stated ones',
      { solar_installations: [installation({ power_kw: 2.5 }), installation({ power_kw: null }), installation({ power_kw: 2.5 })] },
      { minRegisteredSolarKw: 5 },
      true,
    ],
    ['kw none stated', { solar_installations: [installation({ power_kw: null })] }, { minRegisteredSolarKw: 0.001 }, false],
    ['solar potential', { solar_potential_basis: 'measured_cut_to_outline' }, { hasSolarPotential: true }, true],
    ['panel count range', { solar_panel_count: 12 }, { minPanelCount: 12, maxPanelCount: 40 }, true],
    ['capacity null', { solar_capacity_kwp: null }, { maxCapacityKwp: 1e9 }, false],
    ['3d model', { has_3d_model: false }, { has3dModel: true }, false],
    ['active business', { businesses: [business({ active: false })] }, { hasRegisteredBusiness: true }, false],
    [
      'business name any case',
      { businesses: [business({ name: 'Alpen Bäckerei', active: false })] },
      { registeredBusinessName: 'BÄCK' },
      true,
    ],
    [
      'min employees: band counts where it starts',
      { businesses: [business({ employees_min: 10, employees_max: 19 })] },
      { minRegisteredBusinessEmployees: 15 },
      false,
    ],
    [
      'min employees: open band',
      { businesses: [business({ employees_min: 250, employees_max: null })] },
      { minRegisteredBusinessEmployees: 250 },
      true,
    ],
    [
      'max employees: open band never',
      { businesses: [business({ employees_min: 250, employees_max: null })] },
      { maxRegisteredBusinessEmployees: 1_000_000 },
      false,
    ],
    [
      'max employees: unknown sizes ignored',
      { businesses: [business({ employees_min: 5, employees_max: 9 }), business({})] },
      { maxRegisteredBusinessEmployees: 9 },
      true,
    ],
    ['max employees: no stated size', { businesses: [business({})] }, { maxRegisteredBusinessEmployees: 9 }, false],
    [
      'max employees: one above',
      { businesses: [business({ employees_min: 5, employees_max: 9 }), business({ employees_min: 10, employees_max: 19 })] },
      { maxRegisteredBusinessEmployees: 18 },
      false,
    ],
    [
      'min turnover counts an inactive business',
      { businesses: [business({ active: false, turnover: 100, turnover_currency: 'EUR' })] },
      { minRegisteredBusinessTurnover: 50, registeredBusinessTurnoverCurrency: 'EUR' },
      true,
    ],
    [
      'min turnover other currency',
      { businesses: [business({ turnover: 100, turnover_currency: 'RON' })] },
      { minRegisteredBusinessTurnover: 50, registeredBusinessTurnoverCurrency: 'EUR' },
      false,
    ],
    [
      'min turnover year',
      { businesses: [business({ turnover: 100, turnover_currency: 'EUR', turnover_financial_year: 2023 })] },
      { minRegisteredBusinessTurnover: 50, registeredBusinessTurnoverCurrency: 'EUR', registeredBusinessFinancialYear: 2024 },
      false,
    ],
    [
      'max turnover: every one in currency',
      {
        businesses: [
          business({ turnover: 100, turnover_currency: 'EUR', active: false }),
          business({ turnover: 900, turnover_currency: 'RON' }),
        ],
      },
      { maxRegisteredBusinessTurnover: 100, registeredBusinessTurnoverCurrency: 'EUR' },
      true,
    ],
    [
      'max turnover: none in currency',
      { businesses: [business({ turnover: 900, turnover_currency: 'RON' })] },
      { maxRegisteredBusinessTurnover: 100, registeredBusinessTurnoverCurrency: 'EUR' },
      false,
    ],
    [
      'min turnover and year: two businesses may meet them',
      {
        businesses: [
          business({ turnover: 100, turnover_currency: 'EUR', turnover_financial_year: 2023 }),
          business({ turnover_financial_year: 2024 }),
        ],
      },
      { minRegisteredBusinessTurnover: 50, registeredBusinessTurnoverCurrency: 'EUR', registeredBusinessFinancialYear: 2024 },
      true,
    ],
    [
      'max turnover: the year does not narrow which businesses count',
      {
        businesses: [
          business({ turnover: 100, turnover_currency: 'EUR', turnover_financial_year: 2024 }),
          business({ turnover: 900, turnover_currency: 'EUR', turnover_financial_year: 2023 }),
        ],
      },
      { maxRegisteredBusinessTurnover: 100, registeredBusinessTurnoverCurrency: 'EUR', registeredBusinessFinancialYear: 2024 },
      false,
    ],
    [
      'financial year of a statement without a turnover',
      { businesses: [business({ turnover_financial_year: 2022, active: false })] },
      { registeredBusinessFinancialYear: 2022 },
      true,
    ],
    [
      'financial year alone',
      { businesses: [business({ turnover_financial_year: 2022 })] },
      { registeredBusinessFinancialYear: 2022 },
      true,
    ],
    [
      'financial year alone, other year',
      { businesses: [business({ turnover_financial_year: 2022 })] },
      { registeredBusinessFinancialYear: 2023, registeredBusinessTurnoverCurrency: 'EUR' },
      false,
    ],
    ['heating', { annual_heating_demand_kwh: 0 }, { hasAnnualHeatingEstimate: true }, true],
    [
      'peak heat load needs both temperatures',
      { thermal_assessment: 'audit', design_indoor_temperature_c: 20, design_outdoor_temperature_c: null },
      { hasPeakHeatLoad: true },
      false,
    ],
    ['climate trend', { recent_mean_temperature_c: 10, recent_temperature_trend_c_per_decade: 0 }, { hasRecentClimateTrend: true }, true],
    [
      'extremes incomplete',
      { recent_frost_days: 1, recent_hot_days: 1, recent_minimum_daily_temperature_c: -5, recent_maximum_daily_temperature_c: null },
      { hasRecentTemperatureExtremes: true },
      false,
    ],
    [
      'precipitation',
      { recent_annual_precipitation_mm: 500, recent_max_one_day_precipitation_mm: 40 },
      { hasRecentPrecipitation: true, minRecentMaxOneDayPrecipitationMm: 40 },
      true,
    ],
    ['frost days', { recent_frost_days: 40.5 }, { minRecentFrostDays: 40.6 }, false],
    ['coldest day', { recent_minimum_daily_temperature_c: -12.5 }, { maxRecentMinimumDailyTemperatureC: -12.5 }, true],
    ['hot days null', { recent_hot_days: null }, { minRecentHotDays: 0 }, false],
    ['flood zone null', { flood_zone: null }, { floodZone: ['100_year'] }, false],
    ['seismic class', { seismic_risk_class: 'RsI' }, { seismicRiskClass: ['RsI', 'U1'] }, true],
  ];
  it.each(cases)('%s', (_name, overrides, filters, expected) => {
    const b = plain(blankRecord('f', 0, 0, overrides), 'XA');
    expect(passesFilters(b, q(filters))).toBe(expected);
  });

  it('keeps a building with no filters', () => {
    expect(passesFilters(plain(blankRecord('f', 0, 0), 'XA'), q())).toBe(true);
  });
});

/** Least geodesic distance from (lon0, lat0) to the meridian segment at `lon` between two latitudes (golden-section search). */
function toMeridian(lon0: number, lat0: number, lon: number, latA: number, latB: number): number {
  const f = (lat: number) => geodesicDistance(lon0, lat0, lon, lat);
  const g = (Math.sqrt(5) - 1) / 2;
  let a = latA;
  let b = latB;
  for (let i = 0; i < 80; i++) {
    const c = b - g * (b - a);
    const d = a + g * (b - a);
    if (f(c) < f(d)) b = d;
    else a = c;
  }
  return f((a + b) / 2);
}

describe('reference point lookup', () => {
  it('tests rings and segments in the local frame', () => {
    const square = [-1, -1, 1, -1, 1, 1, -1, 1, -1, -1];
    expect(originInRing(square)).toBe(true);
    expect(originInRing(square.map((v, i) => (i % 2 === 0 ? v + 3 : v)))).toBe(false);
    expect(originToSegment(3, -1, 3, 1)).toBe(3);
    expect(originToSegment(3, 4, 6, 8)).toBe(5);
    expect(originToSegment(-2, 0, -2, 0)).toBe(2);
  });

  it('measures to the outline: 0 inside, to the hole ring inside a hole, nearest part of a multipolygon', () => {
    const sq = (x0: number, y0: number, x1: number, y1: number) => [x0, y0, x1, y0, x1, y1, x0, y1, x0, y0];
    // Edges are straight in the frame, within 1e-7 m of geodesics at these lengths.
    expect(distanceToFootprint([[sq(-0.001, -0.001, 0.001, 0.001)]], 0, 0)).toBe(0);
    expect(distanceToFootprint([[sq(0.001, -0.001, 0.002, 0.001)]], 0, 0)).toBeCloseTo(geodesicDistance(0, 0, 0.001, 0), 7);
    // In the hole: its north and south edges are nearer than its east and west ones (at the
    // equator a degree of latitude is 0.7% shorter than one of longitude).
    expect(distanceToFootprint([[sq(-0.002, -0.002, 0.002, 0.002), sq(-0.0005, -0.0005, 0.0005, 0.0005)]], 0, 0)).toBeCloseTo(
      geodesicDistance(0, 0, 0, 0.0005),
      7,
    );
    expect(distanceToFootprint([[sq(-0.002, -0.002, 0.002, 0.002), sq(-0.0005, -0.0005, 0.0005, 0.0005)]], 0.001, 0)).toBe(0);
    expect(distanceToFootprint([[sq(0.003, 0, 0.004, 0.001)], [sq(-0.002, 0, -0.001, 0.001)]], 0, 0)).toBeCloseTo(
      geodesicDistance(0, 0, -0.001, 0),
      7,
    );
    // At 60°N, to the foot of the perpendicular on a meridian edge.
    const lat0 = 60;
    const d = distanceToFootprint([[sq(0.001, lat0 - 0.0001, 0.002, lat0 + 0.0001)]], 0, lat0);
    expect(d).toBeCloseTo(toMeridian(0, lat0, 0.001, lat0 - 0.0001, lat0 + 0.0001), 7);
    expect(d).toBeCloseTo(55.8, 3);
  });

  it('keeps what lies within the radius, nearest first, ties by id, at most limit', () => {
    const lon = 10;
    const lat = 45;
    // A 5 m wide box whose west edge is dxM metres east of the point.
    const east = (m: number) => destination(lon, lat, 90, m)[0];
    const at = (id: string, dxM: number) =>
      blankRecord(id, east(dxM), lat, {
        footprint: [
          [
            [
              east(dxM),
              lat - 0.00001,
              east(dxM + 5),
              lat - 0.00001,
              east(dxM + 5),
              lat + 0.00001,
              east(dxM),
              lat + 0.00001,
              east(dxM),
              lat - 0.00001,
            ],
          ],
        ],
      });
    const s = [snapshotOf([at('p30', 30), at('p10a', 10), at('p10b', 10), at('p50', 50)])];
    const res = refQueryPoint(s, { lon, lat, radiusM: 30.000001, limit: 10 });
    expect(res.rows.map((r) => r.distanceM.toFixed(6))).toEqual(['10.000000', '10.000000', '30.000000']);
    expect(res.rows.map((r) => r.id)).toEqual([...[buildingId('p10a'), buildingId('p10b')].sort(), buildingId('p30')]);
    expect(refQueryPoint(s, { lon, lat, radiusM: 200, limit: 1 }).rows.length).toBe(1);
  });
});

describe('reference units and businesses', () => {
  const units = Array.from({ length: 7 }, (_, i) => ({ unit_id: `u${i}`, label: null, floor: i, use: null, area_m2: null, rooms: null }));
  const s = [
    snapshotOf([blankRecord('c1', 0, 0, { units, businesses: [business({ business_id: 'x' }), business({ business_id: 'y' })] })]),
  ];
  it('slices in file order and counts the whole list', () => {
    expect(refListUnits(s, buildingId('c1'), 3, 5)).toEqual({ units: units.slice(5, 7), total: 7 });
    expect(refListUnits(s, buildingId('c1'), 3, 9)).toEqual({ units: [], total: 7 });
    expect(refListBusinesses(s, buildingId('c1'), 1, 1)!.businesses.map((b) => b.business_id)).toEqual(['y']);
    expect(refListUnits(s, buildingId('nope'), 3, 0)).toBeUndefined();
    expect(refListBusinesses(s, buildingId('nope'), 3, 0)).toBeUndefined();
  });
});
