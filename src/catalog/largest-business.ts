/**
 * What a building shows of its registered businesses (DESIGN "Interpretations"): every business
 * registered at the address counts, active or not, and each figure is the one the building
 * ranks by, so that a page reads in the order of what it shows.
 *
 * - size (`registered_business_employees`): the largest stated size; a band counts where it
 *   starts, a tie goes to the larger band end (an open top band is the largest);
 * - turnover (`registered_business_turnover`): the largest latest turnover in the currency the
 *   request gives, or else in the currency most of the businesses state a turnover in (ties:
 *   alphabetical, a turnover without a currency last); a tie goes to the later financial year.
 *   Null only when none states a turnover (in the currency asked for, when one is).
 *
 * The rule is written once, over index ranges of figure arrays: the store marks the row's chosen
 * businesses at load (`shownFlags`), and records (reports, hand-made buildings) go through the
 * same functions (`shownOfRecords`).
 */
import type { BusinessRecord } from '../snapshot/schema.ts';
import { NULL_I32 } from './arrow.ts';
import { sharedU8 } from './shared.ts';
import { NULL_CURRENCY } from './snapshot.ts';

/** The figures the rule reads: NULL_I32 and NaN are null; currency codes, NULL_CURRENCY = none. */
export interface BusinessFigures {
  employeesMin: ArrayLike<number>;
  employeesMax: ArrayLike<number>;
  turnover: ArrayLike<number>;
  currency: ArrayLike<number>;
  year: ArrayLike<number>;
}

/** Bits of `BusinessColumns.shown`: the business whose size, and whose turnover, the row shows without a currency asked for. */
export const SHOWN_SIZE = 1;
export const SHOWN_TURNOVER = 2;

/** Index in [first, last) of the largest stated size, or -1 when none states one. */
export function largestSize(b: BusinessFigures, first: number, last: number): number {
  const { employeesMin, employeesMax } = b;
  let best = -1;
  let bestMin = 0;
  let bestMax = 0;
  for (let j = first; j < last; j++) {
    const min = employeesMin[j];
    if (min === NULL_I32) continue;
    const max = employeesMax[j] === NULL_I32 ? Infinity : employeesMax[j];
    if (best < 0 || min > bestMin || (min === bestMin && max > bestMax)) {
      best = j;
      bestMin = min;
      bestMax = max;
    }
  }
  return best;
}

/** Index in [first, last) of the largest turnover stated in currency `code` (later year first on a tie), or -1. */
export function largestTurnover(b: BusinessFigures, first: number, last: number, code: number): number {
  const { turnover, currency, year } = b;
  let best = -1;
  let bestAmount = 0;
  let bestYear = 0;
  for (let j = first; j < last; j++) {
    const t = turnover[j];
    if (t !== t || currency[j] !== code) continue;
    if (best < 0 || t > bestAmount || (t === bestAmount && year[j] > bestYear)) {
      best = j;
      bestAmount = t;
      bestYear = year[j];
    }
  }
  return best;
}

/**
 * The currency most of [first, last) state a turnover in, or -1 when none states one.
 * `rank[code]` orders ties (alphabetical); a turnover without a currency counts in slot
 * rank.length and loses ties. `counts` (rank.length + 1 zeros) is scratch, left zeroed.
 */
export function mainCurrency(b: BusinessFigures, first: number, last: number, rank: ArrayLike<number>, counts: Uint32Array): number {
  const { turnover, currency } = b;
  const none = rank.length;
  for (let j = first; j < last; j++) {
    const t = turnover[j];
    if (t === t) counts[currency[j] === NULL_CURRENCY ? none : currency[j]]++;
  }
  let best = -1;
  let bestCount = 0;
  let bestRank = 0;
  for (let j = first; j < last; j++) {
    const t = turnover[j];
    if (t !== t) continue;
    const code = currency[j];
    const slot = code === NULL_CURRENCY ? none : code;
    const n = counts[slot];
    const r = code === NULL_CURRENCY ? none : rank[code];
    if (best < 0 || n > bestCount || (n === bestCount && r < bestRank)) {
      best = code;
      bestCount = n;
      bestRank = r;
    }
  }
  for (let j = first; j < last; j++) counts[currency[j] === NULL_CURRENCY ? none : currency[j]] = 0;
  return best;
}

/** Each code's place among `currencies` sorted alphabetically. */
export function alphabeticalRanks(currencies: readonly string[]): Uint32Array {
  const rank = new Uint32Array(currencies.length);
  [...currencies.keys()]
    .sort((x, y) => (currencies[x] < currencies[y] ? -1 : currencies[x] > currencies[y] ? 1 : 0))
    .forEach((code, i) => {
      rank[code] = i;
    });
  return rank;
}

/**
 * Per business, SHOWN_SIZE and SHOWN_TURNOVER set on the one its row shows (without a currency
 * asked for): the rule run once at load, and again when removals rebuild the columns.
 */
export function shownFlags(b: BusinessFigures & { offsets: Uint32Array; currencies: readonly string[] }, rows: number): Uint8Array {
  const shown = sharedU8(b.turnover.length);
  const rank = alphabeticalRanks(b.currencies);
  const counts = new Uint32Array(b.currencies.length + 1);
  for (let r = 0; r < rows; r++) {
    const first = b.offsets[r];
    const last = b.offsets[r + 1];
    if (first === last) continue;
    const size = largestSize(b, first, last);
    if (size >= 0) shown[size] |= SHOWN_SIZE;
    const code = mainCurrency(b, first, last, rank, counts);
    if (code >= 0) shown[largestTurnover(b, first, last, code)] |= SHOWN_TURNOVER;
  }
  return shown;
}

/** The business of row marked `bit` (SHOWN_SIZE or SHOWN_TURNOVER), or -1. */
export function shownAt(b: { offsets: Uint32Array; shown: Uint8Array }, row: number, bit: number): number {
  const { offsets, shown } = b;
  for (let j = offsets[row], e = offsets[row + 1]; j < e; j++) if ((shown[j] & bit) !== 0) return j;
  return -1;
}

/** The business whose turnover row shows: in `currency` when one is asked for (-1 when none states one in it). */
export function turnoverShownAt(
  b: BusinessFigures & { offsets: Uint32Array; shown: Uint8Array; currencies: readonly string[] },
  row: number,
  currency: string | undefined,
): number {
  if (currency === undefined) return shownAt(b, row, SHOWN_TURNOVER);
  const code = b.currencies.indexOf(currency);
  return code < 0 ? -1 : largestTurnover(b, b.offsets[row], b.offsets[row + 1], code);
}

/** The businesses of a list whose size and whose turnover a building shows (null: none), by the same rule. */
export function shownOfRecords(
  list: readonly BusinessRecord[],
  currency?: string,
): { size: BusinessRecord | null; turnover: BusinessRecord | null } {
  const n = list.length;
  if (n === 0) return { size: null, turnover: null };
  const currencies = [...new Set(list.map((x) => x.turnover_currency).filter((c) => c !== null))].sort();
  const figures: BusinessFigures = {
    employeesMin: list.map((x) => x.employees_min ?? NULL_I32),
    employeesMax: list.map((x) => x.employees_max ?? NULL_I32),
    turnover: list.map((x) => x.turnover ?? NaN),
    currency: list.map((x) => (x.turnover_currency === null ? NULL_CURRENCY : currencies.indexOf(x.turnover_currency))),
    year: list.map((x) => x.turnover_financial_year ?? NULL_I32),
  };
  const code =
    currency === undefined
      ? mainCurrency(
          figures,
          0,
          n,
          currencies.map((_, i) => i),
          new Uint32Array(currencies.length + 1),
        )
      : currencies.indexOf(currency);
  const size = largestSize(figures, 0, n);
  const turnover = code < 0 ? -1 : largestTurnover(figures, 0, n, code);
  return { size: size < 0 ? null : list[size], turnover: turnover < 0 ? null : list[turnover] };
}

/**
 * Which form of row's Building a request's currency asks for: 0 when it shows the same turnover
 * as without one, else 1 + the currency's code (1 + currencies.length: a currency no business
 * of the snapshot states). Rows show the same bytes in the same form, so caches key on it.
 */
export function turnoverView(
  b: BusinessFigures & { offsets: Uint32Array; shown: Uint8Array; currencies: readonly string[] },
  row: number,
  currency: string | undefined,
): number {
  if (currency === undefined || turnoverShownAt(b, row, currency) === shownAt(b, row, SHOWN_TURNOVER)) return 0;
  const code = b.currencies.indexOf(currency);
  return 1 + (code < 0 ? b.currencies.length : code);
}
