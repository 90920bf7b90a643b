/**
 * A business register as a CSV file: the only source of a building's registered businesses
 * (those whose registered office is at its address). A shop or restaurant mapped in
 * OpenStreetMap is a business listing at most, never a registered business.
 *
 * Columns, named in the header (any order, lowercase; a column not listed here is refused, so a
 * misspelt one is not dropped without a word):
 *
 * | column | | |
 * |---|---|---|
 * | registration_id | required | the register's number of the business; unique in the file |
 * | name | required | registered name |
 * | active | required | `true`/`false` (also `yes`/`no`, `1`/`0`) |
 * | financial_year | | year of the latest financial statement |
 * | turnover | | latest turnover, whole units of `currency` (digits, `.` for decimals) |
 * | currency | with turnover | ISO 4217 code, e.g. `EUR` |
 * | employees | | stated size: `12`, a band `10-19`, or an open top band `250+` |
 * | building | one of the three places | the building: its source id (`osm:way/123`) or its `building_id` |
 * | lat, lon | | the registered office's position, WGS84 degrees: the outline containing it, else the nearest within 10 m |
 * | street, house_number, postal_code, city | | the registered office's address, matched to the buildings' address |
 *   records; postal code and city, when both sides state one, must agree |
 *
 * A row gives its place by the first of building, lat/lon, street with house number that it fills.
 */
import { basename } from 'node:path';
import { buildingId } from '../snapshot/building-id.ts';
import type { BusinessRecord } from '../snapshot/schema.ts';
import { BadRowError, type RowLog, type Where } from './bad-rows.ts';
import { readCsv } from './csv.ts';
import { localityKey } from './locality.ts';
import type { TaggedAddress } from './osm-tags.ts';
import type { OutlineIndex } from './outline-index.ts';

export const BUSINESS_COLUMNS = [
  'registration_id',
  'name',
  'active',
  'financial_year',
  'turnover',
  'currency',
  'employees',
  'building',
  'lat',
  'lon',
  'street',
  'house_number',
  'postal_code',
  'city',
] as const;
type Column = (typeof BUSINESS_COLUMNS)[number];

/** How far a registered office's position may lie from an outline that does not contain it. */
export const BUSINESS_MAX_M = 10;

export class BusinessInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BusinessInputError';
  }
}

export type BusinessPlace =
  | { kind: 'building'; ref: string }
  | { kind: 'position'; lon: number; lat: number }
  | { kind: 'address'; street: string; house_number: string; postal_code: string | null; city: string | null };

export interface RegisterRow {
  where: Where;
  business: BusinessRecord;
  place: BusinessPlace;
}

const TRUE = new Set(['true', 'yes', '1']);
const FALSE = new Set(['false', 'no', '0']);

/** A size cell: [min, max] (max null: open top band), null for empty, undefined when unreadable. */
export function employeeBand(text: string): [number, number | null] | null | undefined {
  const s = text.trim();
  if (s === '') return null;
  let m: RegExpExecArray | null;
  if ((m = /^(\d{1,7})$/.exec(s))) return [Number(m[1]), Number(m[1])];
  if ((m = /^(\d{1,7})\s*[-–]\s*(\d{1,7})$/.exec(s))) return Number(m[2]) >= Number(m[1]) ? [Number(m[1]), Number(m[2])] : undefined;
  if ((m = /^(\d{1,7})\s*\+$/.exec(s))) return [Number(m[1]), null];
  return undefined;
}

/** Streams the usable rows of a register; a row that cannot be used is counted as a bad row and skipped. */
export async function* readBusinessRegister(path: string, log: RowLog): AsyncGenerator<RegisterRow> {
  const file = basename(path);
  let at: Record<Column, number> | null = null;
  const seen = new Set<string>();
  try {
    for await (const { fields, line } of readCsv(path)) {
      if (!at) {
        at = header(path, fields);
        continue;
      }
      if (fields.length === 1 && fields[0].trim() === '') continue; // a blank line
      const where = { file, line };
      const cell = (c: Column): string => (at![c] < 0 ? '' : (fields[at![c]] ?? '').trim());
      const bad = (reason: string, detail: string): null => {
        log.bad(reason, where, detail);
        return null;
      };
      const id = cell('registration_id');
      const name = cell('name');
      if (id === '' || name === '') {
        bad('business_missing_field', `registration_id "${id}", name "${name}": both are required`);
        continue;
      }
      if (seen.has(id)) {
        bad('business_duplicate', `registration_id ${id} is listed again; the first row is kept`);
        continue;
      }
      const activeText = cell('active').toLowerCase();
      if (!TRUE.has(activeText) && !FALSE.has(activeText)) {
        bad('business_bad_value', `${id}: active "${cell('active')}" (true or false)`);
        continue;
      }
      const yearText = cell('financial_year');
      if (yearText !== '' && !(/^\d{4}$/.test(yearText) && Number(yearText) >= 1900 && Number(yearText) <= 2100)) {
        bad('business_bad_value', `${id}: financial_year "${yearText}"`);
        continue;
      }
      const turnoverText = cell('turnover');
      const currency = cell('currency');
      if (turnoverText !== '' && !/^\d+(\.\d+)?$/.test(turnoverText)) {
        bad('business_bad_value', `${id}: turnover "${turnoverText}" (digits, "." for decimals)`);
        continue;
      }
      if (turnoverText !== '' && !/^[A-Z]{3}$/.test(currency)) {
        bad('business_bad_value', `${id}: turnover ${turnoverText} with currency "${currency}" (three uppercase letters, ISO 4217)`);
        continue;
      }
      const band = employeeBand(cell('employees'));
      if (band === undefined) {
        bad('business_bad_value', `${id}: employees "${cell('employees')}" (a number, a band 10-19, or 250+)`);
        continue;
      }
      const place = placeOf(cell);
      if (typeof place === 'string') {
        bad('business_without_place', `${id}: ${place}`);
        continue;
      }
      seen.add(id);
      yield {
        where,
        place,
        business: {
          business_id: `register:${id}`,
          registration_number: id,
          name,
          active: TRUE.has(activeText),
          employees_min: band?.[0] ?? null,
          employees_max: band ? band[1] : null,
          turnover: turnoverText === '' ? null : Number(turnoverText),
          turnover_currency: turnoverText === '' ? null : currency,
          turnover_financial_year: yearText === '' ? null : Number(yearText),
        },
      };
    }
  } catch (err) {
    if (err instanceof BusinessInputError || err instanceof BadRowError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    throw new BusinessInputError(`${path}: ${code ? `cannot read (${code})` : (err as Error).message}`);
  }
  if (!at) throw new BusinessInputError(`${path}: empty, no header row`);
}

function header(path: string, fields: string[]): Record<Column, number> {
  const names = fields.map((f) => f.trim().toLowerCase());
  const at = {} as Record<Column, number>;
  for (const c of BUSINESS_COLUMNS) at[c] = names.indexOf(c);
  const unknown = names.filter((n) => !(BUSINESS_COLUMNS as readonly string[]).includes(n));
  if (unknown.length > 0) {
    throw new BusinessInputError(
      `${path}: unknown column${unknown.length > 1 ? 's' : ''} ${unknown.map((n) => `"${n}"`).join(', ')} (columns: ${BUSINESS_COLUMNS.join(', ')})`,
    );
  }
  const missing = (['registration_id', 'name', 'active'] as const).filter((c) => at[c] < 0);
  if (missing.length > 0) throw new BusinessInputError(`${path}: the header lacks ${missing.join(', ')}`);
  if (at.building < 0 && (at.lat < 0 || at.lon < 0) && (at.street < 0 || at.house_number < 0)) {
    throw new BusinessInputError(`${path}: the header names no place: give building, or lat and lon, or street and house_number`);
  }
  if (at.turnover >= 0 && at.currency < 0) throw new BusinessInputError(`${path}: a turnover column needs a currency column`);
  return at;
}

function placeOf(cell: (c: Column) => string): BusinessPlace | string {
  const building = cell('building');
  if (building !== '') return { kind: 'building', ref: building };
  const latText = cell('lat');
  const lonText = cell('lon');
  if (latText !== '' || lonText !== '') {
    const lat = Number(latText);
    const lon = Number(lonText);
    if (latText === '' || lonText === '' || !Number.isFinite(lat) || !Number.isFinite(lon) || Math.abs(lat) > 90 || Math.abs(lon) > 180) {
      return `lat "${latText}", lon "${lonText}" is no position`;
    }
    return { kind: 'position', lon, lat };
  }
  const street = cell('street');
  const number = cell('house_number');
  if (street !== '' && number !== '') {
    return { kind: 'address', street, house_number: number, postal_code: cell('postal_code') || null, city: cell('city') || null };
  }
  return 'no building, no lat and lon, no street with a house number';
}

/** What a register row can be matched on, per building (in the order of the outline index). */
export interface RegisterBuilding {
  sourceId: string;
  /** Address records of the building: its own tags, the address points inside it. */
  addresses: readonly TaggedAddress[];
  /** The building's own postal code and city, for records that state none. */
  postal_code: string | null;
  city: string | null;
}

interface AddressHolder {
  building: number;
  postal_code: string | null;
  city: string | null;
}

/** Finds the building of a register row: by reference, by position, or by address. */
export class RegisterPlaces {
  private readonly byRef = new Map<string, number>();
  private readonly byAddress = new Map<string, AddressHolder[]>();

  /** `mergedInto`: source ids of outlines merged into another, to the kept one's. */
  constructor(
    buildings: readonly RegisterBuilding[],
    private readonly index: OutlineIndex,
    mergedInto: ReadonlyMap<string, string>,
  ) {
    buildings.forEach((b, i) => {
      this.byRef.set(b.sourceId, i).set(buildingId(b.sourceId), i);
      for (const a of b.addresses) {
        if (a.street === null || a.house_number === null) continue;
        const key = addressKey(a.street, a.house_number);
        let list = this.byAddress.get(key);
        if (!list) this.byAddress.set(key, (list = []));
        list.push({ building: i, postal_code: a.postal_code ?? b.postal_code, city: a.city ?? b.city });
      }
    });
    for (const [inner, outer] of mergedInto) {
      const i = this.byRef.get(outer)!;
      this.byRef.set(inner, i).set(buildingId(inner), i);
    }
  }

  /** The row's building, or -1 with the reason logged: unmatched (a note), or an address several buildings state (a bad row). */
  find(row: RegisterRow, log: RowLog): number {
    const p = row.place;
    const id = row.business.registration_number;
    if (p.kind === 'building') {
      const i = this.byRef.get(p.ref) ?? this.byRef.get(p.ref.toLowerCase());
      if (i === undefined) log.note('business_unmatched', row.where, `${id}: no building ${p.ref}`);
      return i ?? -1;
    }
    if (p.kind === 'position') {
      const i = this.index.containingOrNearest(p.lon, p.lat, BUSINESS_MAX_M);
      if (i < 0) log.note('business_unmatched', row.where, `${id}: no outline within ${BUSINESS_MAX_M} m of ${p.lat}, ${p.lon}`);
      return i;
    }
    const found = new Set(
      (this.byAddress.get(addressKey(p.street, p.house_number)) ?? [])
        .filter((r) => samePlace(r.postal_code, p.postal_code) && samePlace(r.city, p.city))
        .map((r) => r.building),
    );
    if (found.size === 1) return [...found][0];
    if (found.size === 0) log.note('business_unmatched', row.where, `${id}: no building has the address ${p.street} ${p.house_number}`);
    // One office, one building: an address several buildings state does not say which.
    else log.bad('business_address_ambiguous', row.where, `${id}: ${found.size} buildings have the address ${p.street} ${p.house_number}`);
    return -1;
  }
}

/** "Rue Grimaldi" and "rue  grimaldi", "12 A" and "12a": one address. */
function addressKey(street: string, houseNumber: string): string {
  return `${localityKey(street)}|${houseNumber.toLowerCase().replace(/\s+/g, '')}`;
}

/** Postal codes and cities agree when either side states none, or both state the same. */
function samePlace(a: string | null, b: string | null): boolean {
  return a === null || b === null || localityKey(a) === localityKey(b);
}
