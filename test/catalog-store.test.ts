/**
 * The column store keeps every field: `record(row)` gives back exactly what the writer took,
 * whichever compact form a value was stored in (scaled integers, decimals, float32, back
 * references, templates and shared strings, flags), and units and businesses list in file order.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Catalog, type CatalogView } from '../src/catalog/catalog.ts';
import { COLD_COLUMNS } from '../src/catalog/columns.ts';
import { formatUuid, parseUuid } from '../src/catalog/ids.ts';
import { findBuilding, listBusinesses, listUnits } from '../src/query/children.ts';
import { buildingId } from '../src/snapshot/building-id.ts';
import { blankRecord, squareAround } from '../src/snapshot/record.ts';
import {
  BASIS,
  CATEGORY,
  COLUMNS,
  FLOOD_ZONE,
  PANELS_STATUS,
  ROOF_SHAPE,
  SEISMIC_RISK_CLASS,
  SOLAR_PRESENCE,
  THERMAL_ASSESSMENT,
  UNIT_USE,
  type BuildingRecord,
} from '../src/snapshot/schema.ts';
import { SnapshotWriter } from '../src/snapshot/writer.ts';

const root = mkdtempSync(join(tmpdir(), 'edifice-store-'));
const records: BuildingRecord[] = [];
let view: CatalogView;

/** Deterministic variety: row i exercises a different mix of nulls, number forms and strings. */
function building(i: number): BuildingRecord {
  const pick = <T>(list: readonly T[], k = 0): T => list[(i + k) % list.length];
  const lon = 21 + (i % 17) * 0.003 + i * 1e-7;
  const lat = 45 + Math.floor(i / 17) * 0.003;
  const none = i % 5 === 0;
  const street = pick(['Strada Mihai Eminescu', 'Bulevardul Unirii', 'Calea Victoriei', 'Straße der Einheit', 'Οδός Ερμού']);
  const address = none ? null : `${street} ${i % 40}, ${pick(['Cluj', 'Iași', 'Vaduz'])}`;
  const footprint =
    i % 7 === 3
      ? [
          [
            [
              lon - 0.001,
              lat - 0.001,
              lon + 0.001,
              lat - 0.001,
              lon + 0.001,
              lat + 0.001,
              lon - 0.001,
              lat + 0.001,
              lon - 0.001,
              lat - 0.001,
            ],
            [lon - 0.0002, lat - 0.0002, lon + 0.0002, lat - 0.0002, lon + 0.0002, lat + 0.0002, lon - 0.0002, lat - 0.0002],
          ],
          [[lon + 0.002, lat, lon + 0.003, lat, lon + 0.003, lat + 0.001, lon + 0.002, lat]],
        ]
      : squareAround(lon, lat, 8 + (i % 9)).map((p) => p.map((r) => Array.from(r)));
  return blankRecord(`osm:way/${1000 + i}`, lon, lat, {
    footprint,
    address,
    nearest_road: none ? pick(['Strada Lungă', 'Drumul Morii']) : null,
    address_evidence: none ? 'none' : 'address_record',
    address_corroboration: none ? null : pick(['corroborated', 'single_source', 'conflicting'] as const),
    postal_code: none ? null : String(100_000 + (i % 13)),
    locality: i % 3 === 2 ? '' : pick(['Cluj', 'Iași']),
    locality_basis: i % 3 === 2 ? null : pick(['stated', 'inferred', null] as const),
    category: pick(CATEGORY),
    category_evidence: i % 2 ? 'confirmed' : 'inferred',
    building_type: pick(['house', 'apartments', 'office', 'unspecified']),
    roof_shape: i % 3 ? pick(ROOF_SHAPE) : null,
    footprint_area_m2: pick([12.34, 100, 1 / 3, 87_000.5, -0, 2 ** 40 + 0.5]),
    height_m: i % 4 ? pick([3, 12.5, 0.1, 7.25]) : null,
    height_basis: i % 4 ? pick(BASIS) : null,
    volume_m3: i % 6 ? pick([100, 2_500_000, 33.3]) : null,
    volume_basis: i % 6 ? pick(BASIS, 1) : null,
    floor_area_m2: i % 2 ? 250.75 : null,
    floor_area_basis: i % 2 ? 'stated' : null,
    floor_area_scope: i % 2 ? 'gross_above_ground' : null,
    floors: i % 3 ? pick([0, 1, 4, 40_000]) : null,
    floors_including_underground: i % 3 ? -2 : null,
    construction_year: i % 2 ? 1890 + i : null,
    completed_by_year: i % 5 ? 2001 : null,
    dwellings: i % 4 ? pick([0, 12, 100_000]) : null,
    construction_year_is_estimate: i % 2 === 0,
    floors_is_estimate: i % 3 === 0,
    dwellings_is_estimate: i % 5 === 0,
    has_3d_model: i % 7 === 0,
    panels_status: i % 3 ? pick(PANELS_STATUS) : null,
    panels_photo_date: i % 3 ? '2025-06-01' : null,
    panels_confidence: i % 3 ? pick([0.9, 0.123456789, 1]) : null,
    panels_analysed_on: i % 6 ? '1969-12-31' : null,
    panels_photo_resolution_cm: i % 3 ? 12.5 : null,
    solar_presence: pick(SOLAR_PRESENCE),
    solar_installations:
      i % 4 === 1
        ? [
            { power_kw: 4.2, storage: true, register: 'grid_operator', commissioned_on: '2021-03-04' },
            { power_kw: null, storage: null, register: 'energy_regulator', commissioned_on: null },
          ]
        : [],
    solar_panel_count: i % 2 ? 14 + i : null,
    solar_capacity_kwp: i % 2 ? 5.6 : null,
    solar_yearly_energy_kwh: i % 2 ? 7108 + i : null,
    solar_co2_savings_kg_per_year: i % 2 ? 1e-7 * i : null,
    solar_potential_basis: i % 2 ? 'measured_cut_to_outline' : null,
    roof_planes: i % 3 === 2 ? [{ azimuth_deg: 180, tilt_deg: 35.5, area_m2: 61.5, panel_count: 14, yearly_energy_kwh: null }] : [],
    businesses:
      i % 4 === 2
        ? [
            {
              business_id: `RO${4000 + i}`,
              registration_number: `J12/${i}/2010`,
              name: pick(['ACME SRL', 'Café Ñandú']),
              active: true,
              employees_min: 10,
              employees_max: 19,
              turnover: 1_000_000.5,
              turnover_currency: 'RON',
              turnover_financial_year: 2023,
            },
            {
              business_id: `RO${5000 + i}`,
              registration_number: null,
              name: 'Second',
              active: false,
              employees_min: null,
              employees_max: null,
              turnover: null,
              turnover_currency: null,
              turnover_financial_year: null,
            },
          ]
        : [],
    units:
      i % 5 === 1
        ? Array.from({ length: 3 + (i % 4) }, (_, k) => ({
            unit_id: `osm:way/${1000 + i}:unit/${k}`,
            label: k === 0 ? null : `Ap. ${k}`,
            floor: k - 1,
            use: pick(UNIT_USE, k),
            area_m2: k % 2 ? 55.5 : null,
            rooms: k,
          }))
        : [],
    entrances:
      i === 4
        ? Array.from({ length: 300 }, (_, k) => ({
            address: `Bloc ${k}`,
            house_number: String(k),
            postal_code: null,
            source: `osm:node/${k}`,
          }))
        : address
          ? [{ address, house_number: String(i % 40), postal_code: String(100_000 + (i % 13)), source: `osm:node/${90_000 + i}` }]
          : [],
    flood_zone: i % 4 === 3 ? pick(FLOOD_ZONE) : null,
    flood_zone_mapped: i % 2 === 1,
    flood_zone_source: i % 4 === 3 ? 'ANAR 2020' : null,
    seismic_design_acceleration_g: i % 3 ? 0.3 : null,
    seismic_listed: i % 9 === 0 || i % 11 === 0, // every 11th: listed without class or year (N/A)
    seismic_risk_class: i % 9 === 0 ? pick(SEISMIC_RISK_CLASS) : null,
    seismic_risk_assessment_year: i % 9 === 0 ? 2015 : null,
    annual_heating_demand_kwh: i % 2 ? 24_000 : null,
    thermal_assessment: i % 3 === 0 ? pick(THERMAL_ASSESSMENT) : null,
    design_indoor_temperature_c: i % 3 === 0 ? 20 : null,
    design_outdoor_temperature_c: i % 3 === 0 ? -15.5 : null,
    recent_mean_temperature_c: 10.1,
    recent_temperature_trend_c_per_decade: 0.33,
    recent_frost_days: i % 8 ? 40.5 : null,
    recent_hot_days: 15.5,
    recent_minimum_daily_temperature_c: -31.2,
    recent_maximum_daily_temperature_c: 36.5,
    recent_annual_precipitation_mm: 600,
    recent_max_one_day_precipitation_mm: 45.5,
    district_heating_available: i % 3 === 0 ? null : i % 3 === 1,
    gas_network_available: i % 4 === 0 ? null : i % 2 === 0,
  });
}

beforeAll(async () => {
  const writer = new SnapshotWriter({
    country: 'XA',
    snapshotDate: '2026-11-21',
    sources: [{ name: 't', licence: 'CC0-1.0', attribution: 't', retrieved: '2026-11-21' }],
  });
  for (let i = 0; i < 120; i++) {
    records.push(building(i));
    writer.add(records[i]);
  }
  await writer.finish(join(root, 'XA', '2026-11-21.arrow'));
  view = Catalog.open(root, { log: () => {} }).view();
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('the store keeps every field', () => {
  it('record(row) equals the record written, for every row', () => {
    for (const want of records) {
      const ref = findBuilding(view, want.building_id);
      expect(ref, want.source_id).toBeDefined();
      expect(ref!.snapshot.record(ref!.row), want.source_id).toStrictEqual(want);
    }
  });

  it('negative zero, float32-exact and arbitrary doubles survive', () => {
    const ref = findBuilding(view, records[4].building_id)!;
    expect(Object.is(ref.snapshot.record(ref.row).footprint_area_m2, -0)).toBe(true);
    expect(ref.snapshot.record(ref.row).entrances).toHaveLength(300);
  });

  it('coldPicker reads any choice of cold columns as record(row) has them, passing over the others', () => {
    const s = view.snapshots[0];
    const names = COLD_COLUMNS.map((c) => c.name);
    // Each column alone, each with its neighbours, the last few after every list, and all of them.
    const choices = [
      ...names.map((n) => [n]),
      ...names.slice(1).map((n, i) => [names[i], n]),
      names.slice(-8),
      names,
      ['address', 'flood_zone_source'],
      ['source_id', 'entrances', 'seismic_risk_assessment_year'],
      ['units', 'recent_annual_precipitation_mm'],
    ];
    for (const chosen of choices) {
      const pick = s.coldPicker(chosen);
      for (let row = 0; row < s.rows; row++) {
        const out: Record<string, unknown> = {};
        pick(row, out);
        const want = s.record(row) as unknown as Record<string, unknown>;
        expect(Object.keys(out).sort(), chosen.join()).toEqual([...chosen].sort());
        for (const name of chosen) expect(out[name], `${name} of row ${row}`).toStrictEqual(want[name]);
      }
    }
    expect(() => s.coldPicker(['height_m'])).toThrow(/No cold column "height_m"/);
  });

  it('fields(row, names) gives each named field as record(row) has it, and only those', () => {
    const s = view.snapshots[0];
    const all = COLUMNS.map((c) => c.name) as (keyof BuildingRecord)[];
    // Every field alone, every other one, and all.
    const choices = [...all.map((n) => [n]), all.filter((_, i) => i % 2 === 0), all.filter((_, i) => i % 2 === 1), all];
    for (const chosen of choices) {
      for (let row = 0; row < s.rows; row++) {
        const got = s.fields(row, chosen) as Record<string, unknown>;
        const want = s.record(row) as unknown as Record<string, unknown>;
        expect(Object.keys(got).sort()).toEqual([...chosen].sort());
        for (const name of chosen) expect(got[name], `${name} of row ${row}`).toStrictEqual(want[name]);
      }
    }
    expect(() => s.fields(s.rows, ['height_m'])).toThrow(RangeError);
  });

  it('row numbers outside the snapshot are refused', () => {
    const s = view.snapshots[0];
    expect(() => s.record(s.rows)).toThrow(RangeError);
    expect(() => s.record(-1)).toThrow(RangeError);
  });
});

describe('children', () => {
  it('findBuilding: any known id, and undefined for unknown or malformed ids', () => {
    for (const r of records) expect(view.snapshots[0].buildingId(findBuilding(view, r.building_id)!.row)).toBe(r.building_id);
    expect(findBuilding(view, buildingId('osm:way/999999'))).toBeUndefined();
    expect(findBuilding(view, 'not-a-building')).toBeUndefined();
    expect(findBuilding(view, records[0].building_id.toUpperCase())).toBeUndefined();
  });

  it('listUnits pages the units in file order, with the total', () => {
    const withUnits = records.find((r) => r.units.length === 6)!;
    expect(listUnits(view, withUnits.building_id, 100, 0)).toEqual({ units: withUnits.units, total: 6 });
    expect(listUnits(view, withUnits.building_id, 2, 1)).toEqual({ units: withUnits.units.slice(1, 3), total: 6 });
    expect(listUnits(view, withUnits.building_id, 5, 10)).toEqual({ units: [], total: 6 });
    expect(listUnits(view, records[0].building_id, 10, 0)).toEqual({ units: [], total: 0 });
    expect(listUnits(view, buildingId('nobody'), 10, 0)).toBeUndefined();
  });

  it('listBusinesses pages the businesses in file order, with the total', () => {
    const withBusinesses = records.find((r) => r.businesses.length === 2)!;
    expect(listBusinesses(view, withBusinesses.building_id, 10, 0)).toEqual({ businesses: withBusinesses.businesses, total: 2 });
    expect(listBusinesses(view, withBusinesses.building_id, 1, 1)).toEqual({ businesses: [withBusinesses.businesses[1]], total: 2 });
    expect(listBusinesses(view, withBusinesses.building_id, 0, 0)).toEqual({ businesses: [], total: 2 });
    expect(listBusinesses(view, buildingId('nobody'), 10, 0)).toBeUndefined();
  });
});

describe('building ids as words', () => {
  it('formatUuid spells back every id parseUuid read, leading zeros and all', () => {
    const words = new Uint32Array(4);
    const hex = '0123456789abcdef';
    let seed = 17;
    const ids = ['00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff', '01234567-89ab-cdef-0123-456789abcdef'];
    for (let n = 0; n < 500; n++) {
      let id = '';
      for (let i = 0; i < 36; i++) {
        seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
        id += i === 8 || i === 13 || i === 18 || i === 23 ? '-' : hex[(seed >>> 16) & 15];
      }
      ids.push(id);
    }
    for (const id of ids) {
      expect(parseUuid(id, words, 0)).toBe(true);
      expect(formatUuid(words, 0)).toBe(id);
    }
  });
});
