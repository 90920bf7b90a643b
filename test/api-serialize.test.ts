/**
 * Serializers and envelopes: a hand-made BuildingRecord against a hand-written Building object
 * (spec 2.1), the JSON writer over the store against JSON.stringify, every response object against the
 * OpenAPI schemas, links.next, and the Accept negotiation.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { pack, unpack } from 'msgpackr';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILDING_FIELDS, serializeBuilding, writeBuildingJson, type BuildingContext } from '../src/api/building.ts';
import { ByteWriter } from '../src/api/byte-writer.ts';
import { Catalog, type Snapshot } from '../src/catalog/catalog.ts';
import { SnapshotWriter } from '../src/snapshot/writer.ts';
import { serializeBusiness } from '../src/api/business.ts';
import { encode, negotiateEncoding, CONTENT_TYPE } from '../src/api/encode.ts';
import {
  nextPageUrl,
  pointPage,
  pointPageJson,
  pointPageMsgpack,
  rankedPage,
  rankedPageJson,
  rankedPageMsgpack,
  registeredBusinessesPage,
  unitsPage,
  withOffset,
} from '../src/api/envelope.ts';
import { ApiError } from '../src/api/errors.ts';
import { buildOpenApi } from '../src/api/openapi.ts';
import { serializeUnit } from '../src/api/unit.ts';
import { parseBuildingsQuery, parseUnitsQuery } from '../src/api/validate.ts';
import { blankRecord } from '../src/snapshot/record.ts';
import { COLUMNS, type BuildingRecord, type BusinessRecord, type ColumnSpec, type UnitRecord } from '../src/snapshot/schema.ts';
import { randomAttributes } from './reference/fixtures.ts';
import { Rng } from './reference/random.ts';

const CTX: BuildingContext = { country: 'LI', appUrl: 'https://app.edifice.example' };

// ---------------------------------------------------------------------------------------------
// The OpenAPI schemas as a JSON Schema 2020-12 validator.
// ---------------------------------------------------------------------------------------------

const doc = buildOpenApi({ baseUrl: 'https://api.edifice.example/v1' });
const ajv = new Ajv2020({ strict: true, allErrors: true });
ajv.addFormat('date', /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/);
ajv.addFormat('uuid', /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i);
ajv.addFormat('uri', /^https?:\/\/[^\s]+$/);
// The components' `#/components/schemas/X` references, rewritten to a standalone `$defs` document.
const defs = JSON.parse(JSON.stringify(doc.components.schemas).replaceAll('#/components/schemas/', 'https://edifice.test/schemas#/$defs/'));
ajv.addSchema({ $id: 'https://edifice.test/schemas', $defs: defs });
const validators = new Map<string, ValidateFunction>();
function schemaOf(name: string): ValidateFunction {
  let v = validators.get(name);
  if (!v) validators.set(name, (v = ajv.compile({ $ref: `https://edifice.test/schemas#/$defs/${name}` })));
  return v;
}
function expectValid(name: string, value: unknown): void {
  const v = schemaOf(name);
  const ok = v(value);
  expect(ok ? [] : v.errors, `${name} schema`).toEqual([]);
}

// ---------------------------------------------------------------------------------------------
// A hand-made building with every field known.
// ---------------------------------------------------------------------------------------------

const business = (over: Partial<BusinessRecord>): BusinessRecord => ({
  business_id: 'b',
  registration_number: null,
  name: 'X',
  active: true,
  employees_min: null,
  employees_max: null,
  turnover: null,
  turnover_currency: null,
  turnover_financial_year: null,
  ...over,
});

const FULL: BuildingRecord = blankRecord('test:full', 9.5213, 47.1389, {
  address: 'Städtle 35, 9490 Vaduz',
  address_evidence: 'address_record',
  address_corroboration: 'corroborated',
  postal_code: '9490',
  locality: 'Vaduz',
  category: 'commercial',
  category_evidence: 'confirmed',
  building_type: 'office',
  roof_shape: 'hipped',
  footprint_area_m2: 412.5,
  height_m: 14.2,
  height_basis: 'measured',
  volume_m3: 5857.5,
  volume_basis: 'estimated',
  floor_area_m2: 1650,
  floor_area_basis: 'stated',
  floor_area_scope: 'gross_above_ground',
  floors: 4,
  floors_including_underground: 5,
  construction_year: 1962,
  completed_by_year: 1965,
  dwellings: 3,
  construction_year_is_estimate: true,
  has_3d_model: true,
  panels_status: 'detected',
  panels_photo_date: '2025-06-14',
  panels_confidence: 0.93,
  panels_analysed_on: '2025-09-01',
  panels_photo_resolution_cm: 10,
  solar_presence: 'registered',
  solar_installations: [
    { power_kw: 9.9, storage: true, register: 'grid_operator', commissioned_on: '2021-04-30' },
    { power_kw: 0.8, storage: null, register: 'energy_regulator', commissioned_on: null },
  ],
  solar_panel_count: 120,
  solar_capacity_kwp: 48,
  solar_yearly_energy_kwh: 45600,
  solar_co2_savings_kg_per_year: 18240,
  solar_potential_basis: 'measured_cut_to_outline',
  roof_planes: [{ azimuth_deg: 180, tilt_deg: 30, area_m2: 200, panel_count: 60, yearly_energy_kwh: 24000 }],
  businesses: [
    business({
      business_id: 'b-1',
      name: 'Alpen Bäckerei',
      employees_min: 10,
      employees_max: 19,
      turnover: 2_500_000,
      turnover_currency: 'CHF',
      turnover_financial_year: 2023,
    }),
    business({ business_id: 'b-2', name: 'Old Shop', active: false, employees_min: 50, employees_max: 50 }),
    business({
      business_id: 'b-3',
      name: 'Vaduz Print',
      employees_min: 50,
      employees_max: null,
      turnover: 1_000_000,
      turnover_currency: 'CHF',
      turnover_financial_year: 2024,
    }),
  ],
  units: [{ unit_id: 'u-1', label: 'Ap. 1', floor: 2, use: 'residential', area_m2: 74.5, rooms: 3 }],
  entrances: [{ address: 'Städtle 35', house_number: '35', postal_code: '9490', source: 'osm:node/1' }],
  flood_zone: '100_year',
  flood_zone_mapped: true,
  flood_zone_source: 'Amt für Bevölkerungsschutz',
  seismic_design_acceleration_g: 0.12,
  seismic_risk_class: 'RsII',
  seismic_risk_assessment_year: 2019,
  annual_heating_demand_kwh: 80000,
  thermal_assessment: 'audit',
});

const FULL_EXPECTED = {
  building_id: FULL.building_id,
  address: 'Städtle 35, 9490 Vaduz',
  nearest_road: null,
  address_evidence: 'address_record',
  address_corroboration: 'corroborated',
  postal_code: '9490',
  locality: 'Vaduz',
  country: 'LI',
  latitude: 47.1389,
  longitude: 9.5213,
  category: 'commercial',
  category_evidence: 'confirmed',
  building_type: 'office',
  roof_shape: 'hipped',
  footprint_area_m2: 412.5,
  height: { metres: 14.2, basis: 'measured' },
  volume_m3: 5857.5,
  volume_basis: 'estimated',
  floor_area: { square_metres: 1650, basis: 'stated', scope: 'gross_above_ground' },
  floors: 4,
  floors_including_underground: 5,
  construction_year: 1962,
  completed_by_year: 1965,
  dwellings: 3,
  existing_solar_panels: {
    status: 'detected',
    photo_date: '2025-06-14',
    confidence: 0.93,
    analysed_on: '2025-09-01',
    photo_resolution_cm: 10,
  },
  solar_presence: 'registered',
  registered_solar: {
    installed_power_kw: 10.7,
    installations: [
      { power_kw: 9.9, storage: true, register: 'grid_operator', commissioned_on: '2021-04-30' },
      { power_kw: 0.8, storage: null, register: 'energy_regulator', commissioned_on: null },
    ],
  },
  solar_potential: {
    panel_count: 120,
    capacity_kwp: 48,
    yearly_energy_kwh: 45600,
    co2_savings_kg_per_year: 18240,
    basis: 'measured_cut_to_outline',
  },
  registered_business_count: 3,
  // b-2 and b-3 both start at 50; b-3 has the larger turnover.
  registered_business_employees: { min: 50, max: null },
  registered_business_turnover: { amount: 2_500_000, currency: 'CHF', financial_year: 2023 },
  flood_zone: '100_year',
  flood_zone_mapped: true,
  flood_zone_source: 'Amt für Bevölkerungsschutz',
  seismic_design_acceleration_g: 0.12,
  seismic_risk_class: 'RsII',
  seismic_risk_assessment_year: 2019,
  app_url: `https://app.edifice.example/buildings/${FULL.building_id}`,
};

const BLANK = blankRecord('test:blank', -0.1276, 51.5072);
const BLANK_EXPECTED = {
  building_id: BLANK.building_id,
  address: null,
  nearest_road: null,
  address_evidence: 'none',
  address_corroboration: null,
  postal_code: null,
  locality: '',
  country: 'GB',
  latitude: 51.5072,
  longitude: -0.1276,
  category: 'unknown',
  category_evidence: 'inferred',
  building_type: 'unspecified',
  roof_shape: null,
  footprint_area_m2: 100,
  height: { metres: null, basis: null },
  volume_m3: null,
  volume_basis: null,
  floor_area: { square_metres: null, basis: null, scope: null },
  floors: null,
  floors_including_underground: null,
  construction_year: null,
  completed_by_year: null,
  dwellings: null,
  existing_solar_panels: null,
  solar_presence: 'unknown',
  registered_solar: null,
  solar_potential: null,
  registered_business_count: 0,
  registered_business_employees: null,
  registered_business_turnover: null,
  flood_zone: null,
  flood_zone_mapped: false,
  flood_zone_source: null,
  seismic_design_acceleration_g: null,
  seismic_risk_class: null,
  seismic_risk_assessment_year: null,
  app_url: `https://app.edifice.example/buildings/${BLANK.building_id}`,
};

function randomRecords(n: number, seed: number): BuildingRecord[] {
  const rng = new Rng(seed);
  const out: BuildingRecord[] = [];
  for (let i = 0; i < n; i++) {
    const r = blankRecord(`test:random:${i}`, rng.real(-180, 180), rng.real(-90, 90));
    Object.assign(r, randomAttributes(rng, r.building_id));
    out.push(r);
  }
  return out;
}

describe('Building (spec 2.1)', () => {
  it('a building with every field known matches the hand-written object field by field', () => {
    const out = serializeBuilding(FULL, CTX) as unknown as Record<string, unknown>;
    for (const [field, value] of Object.entries(FULL_EXPECTED)) expect(out[field], field).toStrictEqual(value);
    expect(Object.keys(out)).toEqual(Object.keys(FULL_EXPECTED));
    expectValid('Building', out);
  });

  it('a blank building: unknowns are null, never zero', () => {
    const out = serializeBuilding(BLANK, { ...CTX, country: 'GB' });
    expect(out).toStrictEqual(BLANK_EXPECTED);
    expectValid('Building', out);
  });

  it("field order is the spec's and the schema lists exactly those fields, all required", () => {
    const schema = doc.components.schemas.Building as { required: string[]; properties: Record<string, unknown> };
    expect(Object.keys(serializeBuilding(FULL, CTX))).toEqual(schema.required);
    expect(Object.keys(schema.properties)).toEqual(schema.required);
  });

  it('registered_solar.installed_power_kw is the sum only when every installation states its power', () => {
    const some = blankRecord('t:1', 0, 0, {
      solar_installations: [
        { power_kw: 5, storage: false, register: 'grid_operator', commissioned_on: null },
        { power_kw: null, storage: null, register: 'grid_operator', commissioned_on: null },
      ],
    });
    expect(serializeBuilding(some, CTX).registered_solar).toStrictEqual({
      installed_power_kw: null,
      installations: [
        { power_kw: 5, storage: false, register: 'grid_operator', commissioned_on: null },
        { power_kw: null, storage: null, register: 'grid_operator', commissioned_on: null },
      ],
    });
    const floats = blankRecord('t:2', 0, 0, {
      solar_installations: [0.1, 0.2].map((p) => ({
        power_kw: p,
        storage: null,
        register: 'grid_operator' as const,
        commissioned_on: null,
      })),
    });
    expect(serializeBuilding(floats, CTX).registered_solar!.installed_power_kw).toBe(0.3);
  });

  it('solar_potential is null exactly when its basis is', () => {
    const noBasis = blankRecord('t:3', 0, 0, { solar_panel_count: 12 });
    expect(serializeBuilding(noBasis, CTX).solar_potential).toBeNull();
    const estimated = blankRecord('t:4', 0, 0, { solar_potential_basis: 'estimated', solar_panel_count: 12 });
    expect(serializeBuilding(estimated, CTX).solar_potential).toStrictEqual({
      panel_count: 12,
      capacity_kwp: null,
      yearly_energy_kwh: null,
      co2_savings_kg_per_year: null,
      basis: 'estimated',
    });
  });

  it('registered_business_employees: the largest stated size among every business, active or not; a band counts where it starts', () => {
    const shown = (...list: BusinessRecord[]) =>
      serializeBuilding(blankRecord('t:5', 0, 0, { businesses: list }), CTX).registered_business_employees;
    const band = business({ business_id: 'a', employees_min: 10, employees_max: 19, turnover: 5, turnover_currency: 'EUR' });
    const exact = business({ business_id: 'b', employees_min: 10, employees_max: 10, turnover: 7, turnover_currency: 'EUR' });
    const open = business({ business_id: 'c', employees_min: 10, employees_max: null });
    const small = business({ business_id: 'd', employees_min: 9, employees_max: 9, turnover: 1e9, turnover_currency: 'EUR' });
    // Equal starts: the band reaching higher, an open top band highest; turnover plays no part.
    expect(shown(exact, band, small)).toEqual({ min: 10, max: 19 });
    expect(shown(band, open, exact)).toEqual({ min: 10, max: null });
    expect(shown(small, business({ business_id: 'e', active: false, employees_min: 250, employees_max: null }))).toEqual({
      min: 250,
      max: null,
    });
    expect(shown(business({ turnover: 3, turnover_currency: 'EUR' }))).toBeNull();
    expect(shown()).toBeNull();
  });

  it("registered_business_turnover: the largest latest turnover, in the request's currency or else the one most businesses state", () => {
    const t = (amount: number, currency: string | null, year: number | null, over: Partial<BusinessRecord> = {}) =>
      business({ turnover: amount, turnover_currency: currency, turnover_financial_year: year, ...over });
    const shown = (list: BusinessRecord[], turnoverCurrency?: string) =>
      serializeBuilding(blankRecord('t:6', 0, 0, { businesses: list }), { ...CTX, turnoverCurrency }).registered_business_turnover;
    // The largest business by size states no turnover: the turnover shown is another's, not null.
    const big = business({ business_id: 'x', employees_min: 250, employees_max: null });
    expect(shown([big, t(476_063_163, 'RON', 2023, { employees_min: 1, employees_max: 1 })], 'RON')).toEqual({
      amount: 476_063_163,
      currency: 'RON',
      financial_year: 2023,
    });
    expect(shown([big, t(476_063_163, 'RON', 2023)])).toEqual({ amount: 476_063_163, currency: 'RON', financial_year: 2023 });
    // In the currency asked for, whatever the other businesses state; null when none states one in it.
    const mixed = [
      t(0, 'RON', 2022, { employees_min: 100, employees_max: 100 }),
      t(20_000_000, 'EUR', 2023),
      t(5, 'RON', 2021, { active: false }),
    ];
    expect(shown(mixed, 'EUR')).toEqual({ amount: 20_000_000, currency: 'EUR', financial_year: 2023 });
    expect(shown(mixed, 'RON')).toEqual({ amount: 5, currency: 'RON', financial_year: 2021 });
    expect(shown(mixed, 'USD')).toBeNull();
    // Without a currency: the one most businesses state (2 RON, 1 EUR), its largest.
    expect(shown(mixed)).toEqual({ amount: 5, currency: 'RON', financial_year: 2021 });
    // A tie of currencies goes alphabetically; a turnover without a currency loses ties.
    expect(shown([t(1, 'RON', null), t(2, 'EUR', null)])).toEqual({ amount: 2, currency: 'EUR', financial_year: null });
    expect(shown([t(9, null, null), t(1, 'RON', null)])).toEqual({ amount: 1, currency: 'RON', financial_year: null });
    expect(shown([t(9, null, 2020)])).toEqual({ amount: 9, currency: null, financial_year: 2020 });
    // A currency stated without a turnover does not count; equal amounts show the later year.
    expect(
      shown([
        business({ turnover_currency: 'CHF' }),
        business({ turnover_currency: 'CHF' }),
        t(3, 'EUR', 2022),
        t(3, 'EUR', 2024),
        t(3, 'EUR', null),
      ]),
    ).toEqual({ amount: 3, currency: 'EUR', financial_year: 2024 });
    expect(shown([business({ turnover_currency: 'CHF', turnover_financial_year: 2024 })])).toBeNull();
  });

  it('app_url and country come from the context', () => {
    const out = serializeBuilding(BLANK, { country: 'RO', appUrl: 'https://app.example.ro' });
    expect([out.country, out.app_url]).toEqual(['RO', `https://app.example.ro/buildings/${BLANK.building_id}`]);
  });

  it('a NaN that leaked from a column store is written as null', () => {
    const r = blankRecord('t:7', 0, 0, { height_m: Number.NaN, volume_m3: Number.POSITIVE_INFINITY });
    const out = serializeBuilding(r, CTX);
    expect([out.height.metres, out.volume_m3]).toEqual([null, null]);
    expect(JSON.parse(JSON.stringify(out)).volume_m3).toBeNull();
  });

  it('random buildings validate against the schema', () => {
    for (const r of randomRecords(300, 11)) expectValid('Building', serializeBuilding(r, CTX));
  });
});

describe('writeBuildingJson writes exactly the UTF-8 of JSON.stringify(serializeBuilding(record)) from the store', () => {
  // A small writer, so that buildings also land across its growth; written after a prefix, as in a page.
  const writer = new ByteWriter(64);
  function jsonAt(snapshot: Snapshot, row: number, ctx: BuildingContext): Buffer {
    writer.reset();
    writer.ascii('[');
    writeBuildingJson(writer, snapshot, row, ctx);
    return writer.take().subarray(1);
  }
  const expected = (record: BuildingRecord, ctx: BuildingContext): Buffer => Buffer.from(JSON.stringify(serializeBuilding(record, ctx)));

  const NASTY = [
    '"quoted"',
    'back\\slash',
    'tab\there',
    'new\nline',
    '\u0000\u001f',
    '\ud800 lone',
    'lone \udfff',
    '😀 ok',
    '</script>',
    '\u2028\u2029',
  ];
  const root = mkdtempSync(join(tmpdir(), 'edifice-json-'));
  let snapshot: Snapshot;

  beforeAll(async () => {
    // Every kind of building a test here makes, through the real writer and loader.
    const writer = new SnapshotWriter({
      country: 'LI',
      snapshotDate: '2026-11-21',
      sources: [{ name: 't', licence: 'CC0-1.0', attribution: 't', retrieved: '2026-11-21' }],
    });
    writer.add(FULL);
    writer.add(BLANK);
    for (const r of randomRecords(2000, 5)) writer.add(r);
    NASTY.forEach((text, i) =>
      writer.add(
        blankRecord(`t:esc:${i}`, 9.5, 47.1, {
          address: text,
          nearest_road: text,
          postal_code: text,
          locality: text,
          building_type: text,
          flood_zone_source: text,
          businesses: [business({ turnover: 1, turnover_currency: text })],
        }),
      ),
    );
    // Strings the store keeps as references to earlier ones of the row (the source id, the
    // address), and lists of strings the writer passes over before the fields after them.
    writer.add(
      blankRecord('osm:way/4242', 9.51, 47.14, {
        address: 'osm:way/4242 Gasse 1',
        nearest_road: 'osm:way/4242 Gasse 1',
        flood_zone_source: 'Amt 2020',
        seismic_risk_assessment_year: 2019,
        units: [0, 1, 2].map((k) => ({
          unit_id: `osm:way/4242:unit/${k}`,
          label: k ? `Top ${k}` : null,
          floor: k,
          use: 'residential' as const,
          area_m2: 50 + k,
          rooms: k,
        })),
        entrances: [
          { address: 'osm:way/4242 Gasse 1', house_number: '1', postal_code: '9490', source: 'osm:node/1' },
          { address: 'osm:way/4242 Gasse 1a', house_number: null, postal_code: null, source: 'osm:node/2' },
        ],
        roof_planes: [{ azimuth_deg: 180, tilt_deg: 30.5, area_m2: 40.25, panel_count: 12, yearly_energy_kwh: null }],
      }),
    );
    await writer.finish(join(root, 'LI', '2026-11-21.arrow'));
    snapshot = Catalog.open(root, { log: () => {} }).view().snapshots[0];
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('every row: the full and the blank building, 2,000 random ones, text that needs escaping, strings kept as references', () => {
    expect(snapshot.rows).toBe(2 + 2000 + NASTY.length + 1);
    for (let row = 0; row < snapshot.rows; row++) {
      const got = jsonAt(snapshot, row, CTX);
      expect(got.toString()).toBe(JSON.stringify(serializeBuilding(snapshot.record(row), CTX)));
      expect(got.equals(expected(snapshot.record(row), CTX))).toBe(true);
    }
  });

  it('every row under each turnover currency a request may give (stated in the snapshot or not)', () => {
    for (const turnoverCurrency of ['EUR', 'RON', 'CHF', 'USD', NASTY[0]]) {
      const ctx = { ...CTX, turnoverCurrency };
      for (let row = 0; row < snapshot.rows; row++) {
        expect(jsonAt(snapshot, row, ctx).toString()).toBe(JSON.stringify(serializeBuilding(snapshot.record(row), ctx)));
        if (row % 5 === 0)
          expect(serializeBuilding(snapshot.fields(row, BUILDING_FIELDS), ctx)).toStrictEqual(serializeBuilding(snapshot.record(row), ctx));
      }
    }
  });

  it('text that needs escaping: quotes, backslashes, control characters, lone surrogates, emoji, also in the context', () => {
    for (let row = 0; row < snapshot.rows; row++) {
      const record = snapshot.record(row);
      if (!record.building_id.startsWith('t:esc') && !record.source_id.startsWith('t:esc')) continue;
      for (const text of NASTY) {
        const ctx = { country: text, appUrl: `https://x.example/${text}` };
        const json = jsonAt(snapshot, row, ctx);
        expect(json.toString()).toBe(JSON.stringify(serializeBuilding(record, ctx)));
        expect(json.equals(expected(record, ctx))).toBe(true);
        expect(JSON.parse(json.toString()).address).toBe(record.address);
      }
    }
  });

  it('the MessagePack form from the fields the object shows is byte for byte the one from the whole record', () => {
    for (let row = 0; row < snapshot.rows; row++) {
      const whole = serializeBuilding(snapshot.record(row), CTX);
      const fromFields = serializeBuilding(snapshot.fields(row, BUILDING_FIELDS), CTX);
      expect(fromFields).toStrictEqual(whole);
      expect(Buffer.compare(pack(fromFields), pack(whole))).toBe(0);
    }
  });

  it('every enum value of the schema is printable ASCII with nothing to escape (written a byte a character, unescaped)', () => {
    const values = (spec: ColumnSpec): string[] => [...(spec.values ?? []), ...(spec.children ?? []).flatMap(values)];
    const all = COLUMNS.flatMap(values);
    expect(all.length).toBeGreaterThan(50);
    for (const v of all) expect(v).toMatch(/^[\x20-\x21\x23-\x5b\x5d-\x7e]*$/);
  });

  it('FULL read back from the store is the hand-written Building', () => {
    const row = [...Array(snapshot.rows).keys()].find((r) => snapshot.record(r).source_id === FULL.source_id)!;
    expect(JSON.parse(jsonAt(snapshot, row, CTX).toString())).toStrictEqual(FULL_EXPECTED);
  });
});

describe('Unit and RegisteredBusiness', () => {
  it('a unit, field by field', () => {
    const u: UnitRecord = { unit_id: 'u-7', label: 'Ap. 12', floor: -1, use: 'storage', area_m2: 8.5, rooms: null };
    expect(serializeUnit(u)).toStrictEqual({ unit_id: 'u-7', label: 'Ap. 12', floor: -1, use: 'storage', area_m2: 8.5, rooms: null });
    expectValid('Unit', serializeUnit(u));
  });

  it('a registered business, field by field', () => {
    const b = business({
      business_id: 'b-9',
      registration_number: 'J40/123/2001',
      name: 'Construct SRL',
      active: false,
      employees_min: 10,
      employees_max: 19,
      turnover: 250000,
      turnover_currency: 'RON',
      turnover_financial_year: 2023,
    });
    expect(serializeBusiness(b)).toStrictEqual({
      business_id: 'b-9',
      registration_number: 'J40/123/2001',
      name: 'Construct SRL',
      active: false,
      employees: { min: 10, max: 19 },
      turnover: { amount: 250000, currency: 'RON', financial_year: 2023 },
    });
    expectValid('RegisteredBusiness', serializeBusiness(b));
    expect(serializeBusiness(business({})).employees).toBeNull();
    expect(serializeBusiness(business({})).turnover).toBeNull();
    expectValid('RegisteredBusiness', serializeBusiness(business({})));
  });
});

// ---------------------------------------------------------------------------------------------
// Envelopes
// ---------------------------------------------------------------------------------------------

const BASE = 'https://api.edifice.example/v1';

describe('ranked page and links.next', () => {
  const raw = 'bbox=9.4%2C47.0%2C9.7%2C47.3&category=commercial&category=public&registered_business_name=B%C3%A4ckerei+%26+Co&limit=25';

  it('envelope {data, meta: {total, total_is_capped, limit, offset, sort}, links: {next}}', () => {
    const page = rankedPage(
      [serializeBuilding(FULL, CTX)],
      { total: 240, totalIsCapped: false, limit: 25, offset: 0, sort: 'volume' },
      { baseUrl: BASE, rawQuery: raw },
    );
    expect(page).toStrictEqual({
      data: [FULL_EXPECTED],
      meta: { total: 240, total_is_capped: false, limit: 25, offset: 0, sort: 'volume' },
      links: { next: `${BASE}/buildings?${raw}&offset=25` },
    });
    expectValid('BuildingsPage', page);
  });

  it('keeps every parameter exactly, in order, and changes only offset where it stands', () => {
    const q = 'offset=25&bbox=9.4,47.0,9.7,47.3&flood_zone=100_year,500_year&limit=25&min_area_m2=2.5e2';
    expect(nextPageUrl({ baseUrl: BASE, rawQuery: `?${q}` }, '/buildings', 25, 25, 1000)).toBe(
      `${BASE}/buildings?offset=50&bbox=9.4,47.0,9.7,47.3&flood_zone=100_year,500_year&limit=25&min_area_m2=2.5e2`,
    );
    expect(withOffset('bbox=1,2,3,4&%6Fffset=10', 20)).toBe('bbox=1,2,3,4&%6Fffset=20');
    expect(withOffset('bbox=1,2,3,4&', 20)).toBe('bbox=1,2,3,4&offset=20');
    expect(withOffset('', 20)).toBe('offset=20');
    expect(withOffset(undefined, 20)).toBe('offset=20');
    expect(withOffset('offsets=1&x_offset=2', 5)).toBe('offsets=1&x_offset=2&offset=5');
    // A trailing slash on the base is not doubled.
    expect(nextPageUrl({ baseUrl: `${BASE}/`, rawQuery: 'bbox=1,2,3,4' }, '/buildings', 0, 25, 100)).toBe(
      `${BASE}/buildings?bbox=1,2,3,4&offset=25`,
    );
  });

  it('the next link asks for the same query at the next offset', () => {
    const q = parseBuildingsQuery(raw);
    const page = rankedPage(
      [],
      { total: 100, totalIsCapped: false, limit: q.limit, offset: q.offset, sort: q.sort },
      { baseUrl: BASE, rawQuery: raw },
    );
    const next = new URL(page.links.next!);
    expect(next.pathname).toBe('/v1/buildings');
    expect(parseBuildingsQuery(next.search)).toStrictEqual({ ...q, offset: 25 });
  });

  it('a next link is at most 11 bytes longer than its request, and 12 longer than the first of its chain', () => {
    // Chains of pages followed to the end from several first requests, offset and limit written or left out.
    const bbox = 'bbox=9.4,47.0,9.7,47.3';
    const prefix = `${BASE}/buildings?`;
    let step = 0;
    let chain = 0;
    for (const limit of [1, 7, 25, 30, 99, 100]) {
      for (const start of [0, 1, 9, 10, 99, 100, 999]) {
        const firsts = [`${bbox}&offset=${start}&limit=${limit}`, `limit=${limit}&offset=${start}&${bbox}`];
        if (start === 0) firsts.push(`${bbox}&limit=${limit}`);
        if (limit === 25) firsts.push(`${bbox}&offset=${start}`);
        if (start === 0 && limit === 25) firsts.push(bbox);
        for (const first of firsts) {
          let raw = first;
          let offset = start;
          let size = limit;
          for (;;) {
            const next = nextPageUrl({ baseUrl: BASE, rawQuery: raw }, '/buildings', offset, size, 10_000);
            if (next === null) break;
            step = Math.max(step, next.length - prefix.length - raw.length);
            chain = Math.max(chain, next.length - prefix.length - first.length);
            raw = next.slice(prefix.length);
            const q = new URLSearchParams(raw);
            offset = Number(q.get('offset'));
            size = Number(q.get('limit') ?? 25);
          }
        }
      }
    }
    // "&offset=100" on a first page of 100; "&offset=9975" at the end of a chain of 25s, or
    // "offset=1" grown to "offset=9976" with "&limit=24" added.
    expect(step).toBe(11);
    expect(chain).toBe(12);
    // The items of OGC API – Features page past 10,000 without a bbox: the offset gains a digit at most.
    for (const offset of [0, 1, 9, 95, 99_950, 999_999, 9_999_901]) {
      const raws = offset === 0 ? ['limit=100', 'limit=100&offset=0'] : [`limit=100&offset=${offset}`];
      for (const raw of raws) expect(withOffset(raw, offset + 100).length - raw.length).toBeLessThanOrEqual(11);
    }
  });

  it('null on the last page only; near the 10,000 window the next page asks for what is left of it', () => {
    const link = { baseUrl: BASE, rawQuery: 'bbox=1,2,3,4' };
    expect(nextPageUrl(link, '/buildings', 225, 25, 240)).toBeNull();
    expect(nextPageUrl(link, '/buildings', 225, 25, 250)).toBeNull();
    expect(nextPageUrl(link, '/buildings', 200, 25, 250)).toBe(`${BASE}/buildings?bbox=1,2,3,4&offset=225`);
    expect(nextPageUrl(link, '/buildings', 0, 25, 0)).toBeNull();
    // Capped total: pages go on up to the window, no further.
    expect(nextPageUrl(link, '/buildings', 9800, 100, 10_000)).toBe(`${BASE}/buildings?bbox=1,2,3,4&offset=9900`);
    expect(nextPageUrl(link, '/buildings', 9900, 100, 10_000)).toBeNull();
    expect(nextPageUrl(link, '/buildings', 9960, 30, 10_000)).toBe(`${BASE}/buildings?bbox=1,2,3,4&offset=9990&limit=10`);
    expect(nextPageUrl({ ...link, rawQuery: 'bbox=1,2,3,4&limit=30&offset=9960' }, '/buildings', 9960, 30, 10_000)).toBe(
      `${BASE}/buildings?bbox=1,2,3,4&limit=10&offset=9990`,
    );
    expect(nextPageUrl(link, '/buildings', 9990, 10, 10_000)).toBeNull(); // the window is used up
  });

  it("rankedPageJson is JSON.stringify(rankedPage) from the buildings' own JSON, text or bytes", () => {
    const records = randomRecords(40, 3);
    const info = { total: 10_000, totalIsCapped: true, limit: 40, offset: 80, sort: 'height' as const };
    const link = { baseUrl: BASE, rawQuery: raw };
    const expected = JSON.stringify(
      rankedPage(
        records.map((r) => serializeBuilding(r, CTX)),
        info,
        link,
      ),
    );
    expect(
      rankedPageJson(
        records.map((r) => JSON.stringify(serializeBuilding(r, CTX))),
        info,
        link,
      ).toString('utf8'),
    ).toBe(expected);
    expect(
      rankedPageJson(
        records.map((r) => Buffer.from(JSON.stringify(serializeBuilding(r, CTX)))),
        info,
        link,
      ).toString('utf8'),
    ).toBe(expected);
    const empty = { ...info, total: 0, totalIsCapped: false, offset: 0 };
    expect(rankedPageJson([], empty, link).toString()).toBe(JSON.stringify(rankedPage([], empty, link)));
    expectValid('BuildingsPage', JSON.parse(expected));
  });

  it('rankedPageMsgpack decodes to the same document as the page packed whole, for pages of 0, 15, 16 and 100', () => {
    const link = { baseUrl: BASE, rawQuery: raw };
    for (const n of [0, 1, 15, 16, 100]) {
      const records = randomRecords(n, 5 + n);
      const info = { total: 5_000, totalIsCapped: false, limit: Math.max(1, n), offset: 25, sort: 'volume' as const };
      const objects = records.map((r) => serializeBuilding(r, CTX));
      const bytes = rankedPageMsgpack(
        objects.map((o) => pack(o)),
        info,
        link,
      );
      expect(unpack(bytes)).toEqual(unpack(pack(rankedPage(objects, info, link))));
      expect(unpack(bytes)).toEqual(
        JSON.parse(
          rankedPageJson(
            records.map((r) => JSON.stringify(serializeBuilding(r, CTX))),
            info,
            link,
          ).toString(),
        ),
      );
    }
  });
});

describe('point lookup', () => {
  it('{data: [Building]} and nothing else', () => {
    const page = pointPage([serializeBuilding(FULL, CTX), serializeBuilding(BLANK, CTX)]);
    expect(Object.keys(page)).toEqual(['data']);
    expect(pointPageJson([JSON.stringify(serializeBuilding(FULL, CTX)), JSON.stringify(serializeBuilding(BLANK, CTX))]).toString()).toBe(
      JSON.stringify(page),
    );
    expect(pointPageJson([]).toString()).toBe('{"data":[]}');
    expect(unpack(pointPageMsgpack([pack(serializeBuilding(FULL, CTX)), pack(serializeBuilding(BLANK, CTX))]))).toEqual(unpack(pack(page)));
    expect(unpack(pointPageMsgpack([]))).toEqual({ data: [] });
    expectValid('PointPage', page);
  });
});

describe('units and registered businesses pages', () => {
  const id = FULL.building_id;
  const units: UnitRecord[] = Array.from({ length: 60 }, (_, i) => ({
    unit_id: `u-${i}`,
    label: `Ap. ${i + 1}`,
    floor: i % 5,
    use: 'residential',
    area_m2: 50 + i,
    rooms: 2,
  }));

  it('pages by limit and offset, with links.next to the path of the building', () => {
    // The engine cuts the page (query/children.ts); the envelope gets it and the count.
    const cut = (q: { limit: number; offset: number }) => units.slice(q.offset, q.offset + q.limit);
    const q = parseUnitsQuery(id.toUpperCase(), 'limit=25');
    const first = unitsPage(cut(q), units.length, q, { baseUrl: BASE, rawQuery: 'limit=25' });
    expect(first.data.map((u) => u.unit_id)).toEqual(units.slice(0, 25).map((u) => u.unit_id));
    expect(first.meta).toStrictEqual({ total: 60, limit: 25, offset: 0 });
    expect(first.links.next).toBe(`${BASE}/buildings/${id}/units?limit=25&offset=25`);
    expectValid('UnitsPage', first);
    const q2 = parseUnitsQuery(id, 'limit=25&offset=50');
    const last = unitsPage(cut(q2), units.length, q2, { baseUrl: BASE, rawQuery: 'limit=25&offset=50' });
    expect(last.data.map((u) => u.unit_id)).toEqual(['u-50', 'u-51', 'u-52', 'u-53', 'u-54', 'u-55', 'u-56', 'u-57', 'u-58', 'u-59']);
    expect(last.links.next).toBeNull();
    const q3 = parseUnitsQuery(id, 'offset=100');
    const beyond = unitsPage(cut(q3), units.length, q3, { baseUrl: BASE, rawQuery: 'offset=100' });
    expect([beyond.data, beyond.meta.total, beyond.links.next]).toEqual([[], 60, null]);
  });

  it('registered businesses', () => {
    const q = parseUnitsQuery(id, 'limit=2');
    const page = registeredBusinessesPage(FULL.businesses.slice(0, 2), FULL.businesses.length, q, { baseUrl: BASE, rawQuery: 'limit=2' });
    expect(page.data.map((b) => b.business_id)).toEqual(['b-1', 'b-2']);
    expect(page.meta).toStrictEqual({ total: 3, limit: 2, offset: 0 });
    expect(page.links.next).toBe(`${BASE}/buildings/${id}/registered-businesses?limit=2&offset=2`);
    expectValid('RegisteredBusinessesPage', page);
  });
});

describe('errors', () => {
  it('the error body validates against the Error schema', () => {
    try {
      parseBuildingsQuery('bbox=1,2,3,4&min_floors=x');
    } catch (err) {
      expect(err).toBeInstanceOf(ApiError);
      expectValid('Error', (err as ApiError).toBody());
    }
    expectValid('Error', new ApiError('rate_limited', 'Too many requests.', '', 12).toBody());
    expect(new ApiError('quota_exceeded', 'x').status).toBe(429);
    expect(new ApiError('unavailable', 'x', '', 5).retryAfter).toBe(5);
  });
});

describe('encoding by Accept', () => {
  it('MessagePack only when asked for, JSON otherwise', () => {
    const cases: [string | undefined, 'json' | 'msgpack'][] = [
      [undefined, 'json'],
      ['', 'json'],
      ['*/*', 'json'],
      ['application/json', 'json'],
      ['text/html', 'json'],
      ['application/msgpack', 'msgpack'],
      ['application/x-msgpack', 'msgpack'],
      ['Application/MsgPack', 'msgpack'],
      ['application/msgpack, application/json', 'msgpack'],
      ['application/json, application/msgpack;q=0.5', 'json'],
      ['application/json;q=0.5, application/msgpack', 'msgpack'],
      ['application/msgpack;q=0', 'json'],
      ['*/*, application/msgpack', 'msgpack'],
      ['application/vnd.msgpack; q=0.9, */*; q=0.1', 'msgpack'],
    ];
    for (const [accept, expected] of cases) expect(negotiateEncoding(accept), String(accept)).toBe(expected);
    expect(CONTENT_TYPE).toEqual({ json: 'application/json; charset=utf-8', msgpack: 'application/msgpack' });
  });

  it('the same document either way', () => {
    const page = rankedPage(
      [serializeBuilding(FULL, CTX), serializeBuilding(BLANK, CTX)],
      { total: 2, totalIsCapped: false, limit: 25, offset: 0, sort: 'area' },
      { baseUrl: BASE, rawQuery: 'bbox=1,2,3,4' },
    );
    expect(unpack(encode(page, 'msgpack'))).toStrictEqual(page);
    expect(JSON.parse(encode(page, 'json').toString('utf8'))).toStrictEqual(page);
    // Plain MessagePack maps (0x80-0x8f fixmap or 0xde map16), not msgpackr's record extension.
    const first = encode(page, 'msgpack')[0];
    expect(first === 0xde || (first >= 0x80 && first <= 0x8f)).toBe(true);
  });
});
