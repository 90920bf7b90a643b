/**
 * What a writer of the Building object reads of a row, without the store's layout: typed getters
 * over the hot columns (unknown is -1 for a code, NaN for a number), the flood-zone flag, and the
 * registered businesses a row shows, as chosen at load (largest-business.ts). One reader per
 * snapshot (`buildingRows`); nothing is allocated per row.
 */
import { NULL_CODE_U8, NULL_I32 } from './arrow.ts';
import type { HotEnum, HotNum } from './columns.ts';
import { F } from './flags.ts';
import type { Footprints } from './geometry.ts';
import { SHOWN_SIZE, shownAt, turnoverShownAt, turnoverView } from './largest-business.ts';
import { numberAt, type NumColumn } from './numeric.ts';
import { NULL_CURRENCY, type BusinessColumns, type Snapshot } from './snapshot.ts';

/** A hot enum column, read a row at a time. */
export class CodeColumn {
  constructor(private readonly codes: Uint8Array) {}

  /** The row's index into its enum's values (snapshot/schema.ts), or -1 when unknown. */
  at(row: number): number {
    const c = this.codes[row];
    return c === NULL_CODE_U8 ? -1 : c;
  }
}

/** A hot number column, read a row at a time. */
export class NumberColumn {
  /**
   * 10^d when the column keeps each value as the integer value·10^d (`integerAt`), so that a
   * writer can print its decimals without a double's rounding; 0 when it keeps doubles.
   */
  readonly scale: number;

  constructor(private readonly column: NumColumn) {
    this.scale = column.kind === 'f64' ? 0 : column.scale;
  }

  /** The row's value, NaN when unknown. */
  at(row: number): number {
    return numberAt(this.column, row);
  }

  /** The row's value times `scale`, an integer; only for a known value of a column whose scale is not 0. */
  integerAt(row: number): number {
    return this.column.values[row];
  }
}

export class BuildingRows {
  readonly codes: Readonly<Record<HotEnum, CodeColumn>>;
  readonly numbers: Readonly<Record<HotNum, NumberColumn>>;
  /** Outlines, row by row (geometry.ts). */
  readonly footprints: Footprints;
  private readonly business: Readonly<BusinessColumns>;

  constructor(private readonly s: Snapshot) {
    this.codes = Object.fromEntries(Object.entries(s.enums).map(([k, v]) => [k, new CodeColumn(v)])) as Record<HotEnum, CodeColumn>;
    this.numbers = Object.fromEntries(Object.entries(s.num).map(([k, v]) => [k, new NumberColumn(v)])) as Record<HotNum, NumberColumn>;
    this.footprints = s.footprints;
    this.business = s.business;
  }

  /** building_id: a lowercase UUID. */
  id(row: number): string {
    return this.s.buildingId(row);
  }

  longitude(row: number): number {
    return this.s.lon[row];
  }

  latitude(row: number): number {
    return this.s.lat[row];
  }

  buildingType(row: number): string {
    return this.s.buildingTypes[this.s.buildingType[row]];
  }

  floodZoneMapped(row: number): boolean {
    return (this.s.flags[row] & F.FLOOD_ZONE_MAPPED) !== 0;
  }

  /** Businesses registered at the row's address, active or not. */
  businessCount(row: number): number {
    return this.business.offsets[row + 1] - this.business.offsets[row];
  }

  /** The business whose stated size the row shows (the largest), or -1 when none states one. */
  sizeShown(row: number): number {
    return shownAt(this.business, row, SHOWN_SIZE);
  }

  /** The business whose turnover the row shows, in `currency` when one is asked for; -1 when none states one (in it). */
  turnoverShown(row: number, currency: string | undefined): number {
    return turnoverShownAt(this.business, row, currency);
  }

  /** Which form of the row's Building `currency` asks for (largest-business.ts `turnoverView`): 0 when the same as without one. */
  turnoverView(row: number, currency: string | undefined): number {
    return turnoverView(this.business, row, currency);
  }

  /** Business j's stated size: where its band starts. */
  employeesMin(j: number): number {
    return this.business.employeesMin[j];
  }

  /** Where business j's size band ends; null for an open top band. */
  employeesMax(j: number): number | null {
    const max = this.business.employeesMax[j];
    return max === NULL_I32 ? null : max;
  }

  /** Business j's latest turnover, NaN when it states none. */
  turnover(j: number): number {
    return this.business.turnover[j];
  }

  turnoverCurrency(j: number): string | null {
    const code = this.business.currency[j];
    return code === NULL_CURRENCY ? null : this.business.currencies[code];
  }

  turnoverYear(j: number): number | null {
    const year = this.business.year[j];
    return year === NULL_I32 ? null : year;
  }
}

const readers = new WeakMap<Snapshot, BuildingRows>();

/** The row reader of a snapshot, made once. */
export function buildingRows(s: Snapshot): BuildingRows {
  let r = readers.get(s);
  if (r === undefined) {
    r = new BuildingRows(s);
    readers.set(s, r);
  }
  return r;
}
