/**
 * The Building object of spec 2.1: BuildingRecord → snake_case, every field, null for unknown,
 * in the spec's field order. Two equal forms:
 * - `serializeBuilding` builds the object (MessagePack, tests, anything that wants an object);
 * - `writeBuildingJson` writes the same JSON's UTF-8 bytes straight from a snapshot's store (through
 *   its row reader, catalog/building-row.ts), byte for byte what
 *   `JSON.stringify(serializeBuilding(snapshot.record(row), ctx))` encodes to, without the record,
 *   any intermediate object or the text (a record costs ~25 µs to rebuild).
 *
 * Inner shapes the spec leaves open (documented in the OpenAPI schemas):
 * - height {metres, basis}, floor_area {square_metres, basis, scope}: always objects; basis null when the value is;
 * - existing_solar_panels {status, photo_date, confidence, analysed_on, photo_resolution_cm}, null with no photo result;
 * - registered_solar {installed_power_kw, installations: [{power_kw, storage, register, commissioned_on}]}, null
 *   with no registered installation; installed_power_kw is the sum only when every installation states its power;
 * - solar_potential {panel_count, capacity_kwp, yearly_energy_kwh, co2_savings_kg_per_year, basis}, null without an estimate;
 * - registered_business_employees {min, max}: the largest stated size; registered_business_turnover {amount,
 *   currency, financial_year}: the largest latest turnover in the request's currency, or else in the currency most of
 *   the businesses state; each the value the building ranks by (catalog/largest-business.ts);
 * - registered_business_count: every business registered at the address, active or not.
 */
import type {
  AddressCorroboration,
  AddressEvidence,
  Basis,
  BuildingRecord,
  Category,
  CategoryEvidence,
  FloodZone,
  FloorAreaScope,
  PanelsStatus,
  RoofShape,
  SeismicRiskClass,
  SolarBasis,
  SolarInstallationRecord,
  SolarPresence,
  SolarRegister,
} from '../snapshot/schema.ts';
import { columnSpec } from '../snapshot/schema.ts';
import { buildingRows, type BuildingRows, type CodeColumn, type NumberColumn } from '../catalog/building-row.ts';
import type { Snapshot } from '../catalog/snapshot.ts';
import type { ByteWriter } from './byte-writer.ts';
import { shownOfRecords } from '../catalog/largest-business.ts';
import { employeesOf, turnoverOf, type EmployeesOut, type TurnoverOut } from './business.ts';

export interface BuildingContext {
  /** Two-letter code of the snapshot's country. */
  country: string;
  /** Base of the web app, without trailing slash; app_url is `${appUrl}/buildings/${building_id}`. */
  appUrl: string;
  /** The request's registered_business_turnover_currency: the turnover shown is the largest in it. */
  turnoverCurrency?: string;
}

export interface SolarInstallationOut {
  power_kw: number | null;
  storage: boolean | null;
  register: SolarRegister;
  commissioned_on: string | null;
}

export interface BuildingOut {
  building_id: string;
  address: string | null;
  nearest_road: string | null;
  address_evidence: AddressEvidence;
  address_corroboration: AddressCorroboration | null;
  postal_code: string | null;
  locality: string;
  country: string;
  latitude: number;
  longitude: number;
  category: Category;
  category_evidence: CategoryEvidence;
  building_type: string;
  roof_shape: RoofShape | null;
  footprint_area_m2: number;
  height: { metres: number | null; basis: Basis | null };
  volume_m3: number | null;
  volume_basis: Basis | null;
  floor_area: { square_metres: number | null; basis: Basis | null; scope: FloorAreaScope | null };
  floors: number | null;
  floors_including_underground: number | null;
  construction_year: number | null;
  completed_by_year: number | null;
  dwellings: number | null;
  existing_solar_panels: {
    status: PanelsStatus;
    photo_date: string | null;
    confidence: number | null;
    analysed_on: string | null;
    photo_resolution_cm: number | null;
  } | null;
  solar_presence: SolarPresence;
  registered_solar: { installed_power_kw: number | null; installations: SolarInstallationOut[] } | null;
  solar_potential: {
    panel_count: number | null;
    capacity_kwp: number | null;
    yearly_energy_kwh: number | null;
    co2_savings_kg_per_year: number | null;
    basis: SolarBasis;
  } | null;
  registered_business_count: number;
  registered_business_employees: EmployeesOut | null;
  registered_business_turnover: TurnoverOut | null;
  flood_zone: FloodZone | null;
  flood_zone_mapped: boolean;
  flood_zone_source: string | null;
  seismic_design_acceleration_g: number | null;
  seismic_risk_class: SeismicRiskClass | null;
  seismic_risk_assessment_year: number | null;
  app_url: string;
}

/** A number, or null when unknown (a NaN that leaked from a column store is unknown too). */
function num(v: number | null): number | null {
  return v === null || !Number.isFinite(v) ? null : v;
}

/** The sum of the installations' power when every one states it, else null; float noise rounded off. */
export function installedPowerKw(installations: readonly SolarInstallationRecord[]): number | null {
  let sum = 0;
  for (let i = 0; i < installations.length; i++) {
    const p = installations[i].power_kw;
    if (p === null || !Number.isFinite(p)) return null;
    sum += p;
  }
  return Math.round(sum * 1e6) / 1e6;
}

/** The fields of a record the Building object shows: `serializeBuilding` reads no other. */
export const BUILDING_FIELDS = [
  'building_id',
  'address',
  'nearest_road',
  'address_evidence',
  'address_corroboration',
  'postal_code',
  'locality',
  'latitude',
  'longitude',
  'category',
  'category_evidence',
  'building_type',
  'roof_shape',
  'footprint_area_m2',
  'height_m',
  'height_basis',
  'volume_m3',
  'volume_basis',
  'floor_area_m2',
  'floor_area_basis',
  'floor_area_scope',
  'floors',
  'floors_including_underground',
  'construction_year',
  'completed_by_year',
  'dwellings',
  'panels_status',
  'panels_photo_date',
  'panels_confidence',
  'panels_analysed_on',
  'panels_photo_resolution_cm',
  'solar_presence',
  'solar_installations',
  'solar_panel_count',
  'solar_capacity_kwp',
  'solar_yearly_energy_kwh',
  'solar_co2_savings_kg_per_year',
  'solar_potential_basis',
  'businesses',
  'flood_zone',
  'flood_zone_mapped',
  'flood_zone_source',
  'seismic_design_acceleration_g',
  'seismic_risk_class',
  'seismic_risk_assessment_year',
] as const satisfies readonly (keyof BuildingRecord)[];

export type BuildingFields = Pick<BuildingRecord, (typeof BUILDING_FIELDS)[number]>;

/** The Building object of a record, or of the fields of one a snapshot gives (`snapshot.fields(row, BUILDING_FIELDS)`). */
export function serializeBuilding(r: BuildingFields, ctx: BuildingContext): BuildingOut {
  const shown = shownOfRecords(r.businesses, ctx.turnoverCurrency);
  return {
    building_id: r.building_id,
    address: r.address,
    nearest_road: r.nearest_road,
    address_evidence: r.address_evidence,
    address_corroboration: r.address_corroboration,
    postal_code: r.postal_code,
    locality: r.locality,
    country: ctx.country,
    latitude: r.latitude,
    longitude: r.longitude,
    category: r.category,
    category_evidence: r.category_evidence,
    building_type: r.building_type,
    roof_shape: r.roof_shape,
    footprint_area_m2: r.footprint_area_m2,
    height: { metres: num(r.height_m), basis: r.height_basis },
    volume_m3: num(r.volume_m3),
    volume_basis: r.volume_basis,
    floor_area: { square_metres: num(r.floor_area_m2), basis: r.floor_area_basis, scope: r.floor_area_scope },
    floors: num(r.floors),
    floors_including_underground: num(r.floors_including_underground),
    construction_year: num(r.construction_year),
    completed_by_year: num(r.completed_by_year),
    dwellings: num(r.dwellings),
    existing_solar_panels:
      r.panels_status === null
        ? null
        : {
            status: r.panels_status,
            photo_date: r.panels_photo_date,
            confidence: num(r.panels_confidence),
            analysed_on: r.panels_analysed_on,
            photo_resolution_cm: num(r.panels_photo_resolution_cm),
          },
    solar_presence: r.solar_presence,
    registered_solar:
      r.solar_installations.length === 0
        ? null
        : {
            installed_power_kw: installedPowerKw(r.solar_installations),
            installations: r.solar_installations.map((s) => ({
              power_kw: num(s.power_kw),
              storage: s.storage,
              register: s.register,
              commissioned_on: s.commissioned_on,
            })),
          },
    solar_potential:
      r.solar_potential_basis === null
        ? null
        : {
            panel_count: num(r.solar_panel_count),
            capacity_kwp: num(r.solar_capacity_kwp),
            yearly_energy_kwh: num(r.solar_yearly_energy_kwh),
            co2_savings_kg_per_year: num(r.solar_co2_savings_kg_per_year),
            basis: r.solar_potential_basis,
          },
    registered_business_count: r.businesses.length,
    registered_business_employees: shown.size === null ? null : employeesOf(shown.size),
    registered_business_turnover: shown.turnover === null ? null : turnoverOf(shown.turnover),
    flood_zone: r.flood_zone,
    flood_zone_mapped: r.flood_zone_mapped,
    flood_zone_source: r.flood_zone_source,
    seismic_design_acceleration_g: num(r.seismic_design_acceleration_g),
    seismic_risk_class: r.seismic_risk_class,
    seismic_risk_assessment_year: num(r.seismic_risk_assessment_year),
    app_url: `${ctx.appUrl}/buildings/${r.building_id}`,
  };
}

// ---------------------------------------------------------------------------------------------
// The same object written as JSON bytes.
// ---------------------------------------------------------------------------------------------

/**
 * Free text, escaped as JSON.stringify escapes it. The common string (printable ASCII, nothing
 * to escape) is written a byte a character; other clean text goes through the native UTF-8
 * encoder; text to escape is escaped by JSON.stringify itself.
 */
function str(w: ByteWriter, v: string | null): void {
  if (v === null) return w.ascii('null');
  let ascii = true;
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) return w.text(JSON.stringify(v));
    if (c >= 0x80) ascii = false;
  }
  w.byte(0x22);
  if (ascii) w.ascii(v);
  else w.text(v);
  w.byte(0x22);
}

/**
 * A value of one of the schema's fixed enums (or a date the loader formatted): known clean
 * ASCII, written without a scan. The column store decodes these from its own constant tables.
 */
function e(w: ByteWriter, v: string | null): void {
  if (v === null) return w.ascii('null');
  w.byte(0x22);
  w.ascii(v);
  w.byte(0x22);
}

/** A number as JSON writes it; unknown → null. Integers are written digit by digit, others through String(v). */
function n(w: ByteWriter, v: number | null): void {
  if (v === null || !Number.isFinite(v)) w.ascii('null');
  else if (Number.isSafeInteger(v)) w.integer(v);
  else w.ascii(String(v));
}

function b(w: ByteWriter, v: boolean | null): void {
  w.ascii(v === null ? 'null' : v ? 'true' : 'false');
}

/** The UTF-8 of an app url's JSON string without its closing quote, kept for the one base a server has. */
let lastBase = '';
let lastBaseJson: Uint8Array = Buffer.from('"');
function rememberBase(appUrl: string): void {
  lastBase = appUrl;
  lastBaseJson = Buffer.from(JSON.stringify(appUrl).slice(0, -1));
}

function pieces<T extends Record<string, string>>(texts: T): { readonly [P in keyof T]: Uint8Array } {
  return Object.fromEntries(Object.entries(texts).map(([k, v]) => [k, Buffer.from(v, 'latin1')])) as unknown as {
    [P in keyof T]: Uint8Array;
  };
}

/**
 * The constant text between a building's values, encoded once: copied with one `set` it costs
 * half what writing it a character at a time does (the keys are ~1,000 of a building's ~1,350 bytes).
 */
const K = pieces({
  building_id: '{"building_id":"',
  address: ',"address":',
  nearest_road: ',"nearest_road":',
  address_evidence: ',"address_evidence":',
  address_corroboration: ',"address_corroboration":',
  postal_code: ',"postal_code":',
  locality: ',"locality":',
  country: ',"country":',
  latitude: ',"latitude":',
  longitude: ',"longitude":',
  category: ',"category":',
  category_evidence: ',"category_evidence":',
  building_type: ',"building_type":',
  roof_shape: ',"roof_shape":',
  footprint_area_m2: ',"footprint_area_m2":',
  height: ',"height":{"metres":',
  basis: ',"basis":',
  volume_m3: '},"volume_m3":',
  volume_basis: ',"volume_basis":',
  floor_area: ',"floor_area":{"square_metres":',
  scope: ',"scope":',
  floors: '},"floors":',
  floors_including_underground: ',"floors_including_underground":',
  construction_year: ',"construction_year":',
  completed_by_year: ',"completed_by_year":',
  dwellings: ',"dwellings":',
  existing_solar_panels: ',"existing_solar_panels":',
  status: '{"status":',
  photo_date: ',"photo_date":',
  confidence: ',"confidence":',
  analysed_on: ',"analysed_on":',
  photo_resolution_cm: ',"photo_resolution_cm":',
  solar_presence: ',"solar_presence":',
  registered_solar: ',"registered_solar":',
  installed_power_kw: '{"installed_power_kw":',
  installations: ',"installations":[',
  power_kw: '{"power_kw":',
  next_power_kw: ',{"power_kw":',
  storage: ',"storage":',
  register: ',"register":',
  commissioned_on: ',"commissioned_on":',
  solar_potential: ',"solar_potential":',
  panel_count: '{"panel_count":',
  capacity_kwp: ',"capacity_kwp":',
  yearly_energy_kwh: ',"yearly_energy_kwh":',
  co2_savings_kg_per_year: ',"co2_savings_kg_per_year":',
  registered_business_count: ',"registered_business_count":',
  registered_business_employees: ',"registered_business_employees":',
  min: '{"min":',
  max: ',"max":',
  registered_business_turnover: ',"registered_business_turnover":',
  amount: '{"amount":',
  currency: ',"currency":',
  financial_year: ',"financial_year":',
  flood_zone: ',"flood_zone":',
  flood_zone_mapped_true: ',"flood_zone_mapped":true',
  flood_zone_mapped_false: ',"flood_zone_mapped":false',
  flood_zone_source: ',"flood_zone_source":',
  seismic_design_acceleration_g: ',"seismic_design_acceleration_g":',
  seismic_risk_class: ',"seismic_risk_class":',
  seismic_risk_assessment_year: ',"seismic_risk_assessment_year":',
  app_url: ',"app_url":',
  buildings_path: '/buildings/',
});

/** Cold columns the Building object shows (the rest of the building is in typed columns). */
const COLD_FIELDS = [
  'address',
  'nearest_road',
  'address_evidence',
  'postal_code',
  'locality',
  'category_evidence',
  'height_basis',
  'volume_basis',
  'floor_area_m2',
  'floor_area_basis',
  'floor_area_scope',
  'floors_including_underground',
  'construction_year',
  'completed_by_year',
  'panels_photo_date',
  'panels_confidence',
  'panels_analysed_on',
  'panels_photo_resolution_cm',
  'solar_installations',
  'solar_potential_basis',
  'flood_zone_source',
  'seismic_design_acceleration_g',
  'seismic_risk_assessment_year',
] as const;

type ColdFields = { -readonly [K in (typeof COLD_FIELDS)[number]]: BuildingRecord[K] };

/** Filled for one building at a time (serialisation is synchronous): one object per thread, always the same shape. */
const cold = Object.fromEntries(COLD_FIELDS.map((f) => [f, null])) as unknown as ColdFields;
/** Per snapshot, its row reader and the decoder of the cold fields above. */
const readers = new WeakMap<Snapshot, { rows: BuildingRows; pick: (row: number, out: Record<string, unknown>) => void }>();

/** An enum column's values as JSON strings (quotes included), by code. */
const valuesOf = (name: string): readonly Uint8Array[] => columnSpec(name).values!.map((v) => Buffer.from(JSON.stringify(v), 'latin1'));
const CATEGORY_VALUES = valuesOf('category');
const ROOF_SHAPE_VALUES = valuesOf('roof_shape');
const CORROBORATION_VALUES = valuesOf('address_corroboration');
const PANELS_STATUS_VALUES = valuesOf('panels_status');
const SOLAR_PRESENCE_VALUES = valuesOf('solar_presence');
const FLOOD_ZONE_VALUES = valuesOf('flood_zone');
const SEISMIC_CLASS_VALUES = valuesOf('seismic_risk_class');

/** A hot enum column's value as JSON. */
function code(w: ByteWriter, codes: CodeColumn, row: number, values: readonly Uint8Array[]): void {
  const c = codes.at(row);
  if (c < 0) w.ascii('null');
  else w.raw(values[c]);
}

/** A hot number column's value as JSON: a scaled column's from its integer (ByteWriter.decimal), not through String. */
function hot(w: ByteWriter, col: NumberColumn, row: number): void {
  const v = col.at(row);
  if (v !== v) w.ascii('null');
  else if (col.scale === 0) n(w, v);
  else w.decimal(col.integerAt(row), col.scale);
}

/**
 * Appends to w the UTF-8 bytes of `JSON.stringify(serializeBuilding(snapshot.record(row), ctx))`,
 * written straight from the store: typed columns read in place, only the cold columns the object
 * shows decoded (no record, no units, entrances, roof planes or footprint), and no text built on
 * the way (each piece goes into w as it is read: a building's JSON as one string, encoded to
 * UTF-8 after, would be most of a worker's young garbage under load).
 */
export function writeBuildingJson(w: ByteWriter, s: Snapshot, row: number, ctx: BuildingContext): void {
  let reader = readers.get(s);
  if (reader === undefined) {
    reader = { rows: buildingRows(s), pick: s.coldPicker(COLD_FIELDS) };
    readers.set(s, reader);
  }
  reader.pick(row, cold as unknown as Record<string, unknown>);
  const r = cold;
  const store = reader.rows;
  const num = store.numbers;
  const enums = store.codes;
  // A building id is a lowercase UUID: nothing to escape.
  const id = store.id(row);
  w.raw(K.building_id);
  w.ascii(id);
  w.byte(0x22);
  w.raw(K.address);
  str(w, r.address);
  w.raw(K.nearest_road);
  str(w, r.nearest_road);
  w.raw(K.address_evidence);
  e(w, r.address_evidence);
  w.raw(K.address_corroboration);
  code(w, enums.address_corroboration, row, CORROBORATION_VALUES);
  w.raw(K.postal_code);
  str(w, r.postal_code);
  w.raw(K.locality);
  str(w, r.locality);
  w.raw(K.country);
  str(w, ctx.country);
  w.raw(K.latitude);
  n(w, store.latitude(row));
  w.raw(K.longitude);
  n(w, store.longitude(row));
  w.raw(K.category);
  code(w, enums.category, row, CATEGORY_VALUES);
  w.raw(K.category_evidence);
  e(w, r.category_evidence);
  w.raw(K.building_type);
  str(w, store.buildingType(row));
  w.raw(K.roof_shape);
  code(w, enums.roof_shape, row, ROOF_SHAPE_VALUES);
  w.raw(K.footprint_area_m2);
  hot(w, num.footprint_area_m2, row);
  w.raw(K.height);
  hot(w, num.height_m, row);
  w.raw(K.basis);
  e(w, r.height_basis);
  w.raw(K.volume_m3);
  hot(w, num.volume_m3, row);
  w.raw(K.volume_basis);
  e(w, r.volume_basis);
  w.raw(K.floor_area);
  n(w, r.floor_area_m2);
  w.raw(K.basis);
  e(w, r.floor_area_basis);
  w.raw(K.scope);
  e(w, r.floor_area_scope);
  w.raw(K.floors);
  hot(w, num.floors, row);
  w.raw(K.floors_including_underground);
  n(w, r.floors_including_underground);
  w.raw(K.construction_year);
  n(w, r.construction_year);
  w.raw(K.completed_by_year);
  n(w, r.completed_by_year);
  w.raw(K.dwellings);
  hot(w, num.dwellings, row);
  w.raw(K.existing_solar_panels);
  if (enums.panels_status.at(row) < 0) w.ascii('null');
  else {
    w.raw(K.status);
    code(w, enums.panels_status, row, PANELS_STATUS_VALUES);
    w.raw(K.photo_date);
    e(w, r.panels_photo_date);
    w.raw(K.confidence);
    n(w, r.panels_confidence);
    w.raw(K.analysed_on);
    e(w, r.panels_analysed_on);
    w.raw(K.photo_resolution_cm);
    n(w, r.panels_photo_resolution_cm);
    w.byte(0x7d);
  }
  w.raw(K.solar_presence);
  code(w, enums.solar_presence, row, SOLAR_PRESENCE_VALUES);
  w.raw(K.registered_solar);
  const inst = r.solar_installations;
  if (inst.length === 0) w.ascii('null');
  else {
    w.raw(K.installed_power_kw);
    n(w, installedPowerKw(inst));
    w.raw(K.installations);
    for (let i = 0; i < inst.length; i++) {
      const x = inst[i];
      w.raw(i === 0 ? K.power_kw : K.next_power_kw);
      n(w, x.power_kw);
      w.raw(K.storage);
      b(w, x.storage);
      w.raw(K.register);
      e(w, x.register);
      w.raw(K.commissioned_on);
      e(w, x.commissioned_on);
      w.byte(0x7d);
    }
    w.ascii(']}');
  }
  w.raw(K.solar_potential);
  if (r.solar_potential_basis === null) w.ascii('null');
  else {
    w.raw(K.panel_count);
    hot(w, num.solar_panel_count, row);
    w.raw(K.capacity_kwp);
    hot(w, num.solar_capacity_kwp, row);
    w.raw(K.yearly_energy_kwh);
    hot(w, num.solar_yearly_energy_kwh, row);
    w.raw(K.co2_savings_kg_per_year);
    hot(w, num.solar_co2_savings_kg_per_year, row);
    w.raw(K.basis);
    e(w, r.solar_potential_basis);
    w.byte(0x7d);
  }
  const size = store.sizeShown(row);
  w.raw(K.registered_business_count);
  w.integer(store.businessCount(row));
  w.raw(K.registered_business_employees);
  if (size < 0) w.ascii('null');
  else {
    const max = store.employeesMax(size);
    w.raw(K.min);
    w.integer(store.employeesMin(size));
    w.raw(K.max);
    if (max === null) w.ascii('null');
    else w.integer(max);
    w.byte(0x7d);
  }
  w.raw(K.registered_business_turnover);
  const shownTurnover = store.turnoverShown(row, ctx.turnoverCurrency);
  if (shownTurnover < 0) w.ascii('null');
  else {
    const year = store.turnoverYear(shownTurnover);
    w.raw(K.amount);
    n(w, store.turnover(shownTurnover));
    w.raw(K.currency);
    str(w, store.turnoverCurrency(shownTurnover));
    w.raw(K.financial_year);
    if (year === null) w.ascii('null');
    else w.integer(year);
    w.byte(0x7d);
  }
  w.raw(K.flood_zone);
  code(w, enums.flood_zone, row, FLOOD_ZONE_VALUES);
  w.raw(store.floodZoneMapped(row) ? K.flood_zone_mapped_true : K.flood_zone_mapped_false);
  w.raw(K.flood_zone_source);
  str(w, r.flood_zone_source);
  w.raw(K.seismic_design_acceleration_g);
  n(w, r.seismic_design_acceleration_g);
  w.raw(K.seismic_risk_class);
  code(w, enums.seismic_risk_class, row, SEISMIC_CLASS_VALUES);
  w.raw(K.seismic_risk_assessment_year);
  n(w, r.seismic_risk_assessment_year);
  w.raw(K.app_url);
  // JSON.stringify escapes a string a character at a time (a surrogate pair as one), so the
  // url's escaped base, then the path, equals the whole url escaped.
  if (ctx.appUrl !== lastBase) rememberBase(ctx.appUrl);
  w.raw(lastBaseJson);
  w.raw(K.buildings_path);
  w.ascii(id);
  w.ascii('"}');
}
