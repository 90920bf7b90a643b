/**
 * Time for the ledger. Every rule that depends on time (expiry, the 365-day window, the UTC day
 * of the quota, the month of a plan allowance) reads one injectable clock, so tests can move it.
 * Instants are milliseconds since the Unix epoch; days are `YYYY-MM-DD` in UTC.
 */
export type Clock = () => number;

export const SECOND_MS = 1_000;
export const MINUTE_MS = 60 * SECOND_MS;
export const DAY_MS = 24 * 60 * MINUTE_MS;

const DAY_RE = /^(\d{4})-(\d{2})-(\d{2})$/;

// Every request reads its day (the quota) and many its month (the plan allowance): the last
// day's text is kept rather than formatted again through a Date each time.
let lastDay = NaN;
let lastDayText = '';

/** `YYYY-MM-DD` of the UTC day holding `ms`. */
export function utcDay(ms: number): string {
  const day = Math.floor(ms / DAY_MS);
  if (day !== lastDay) {
    lastDayText = new Date(ms).toISOString().slice(0, 10);
    lastDay = day;
  }
  return lastDayText;
}

/** `YYYY-MM` of the UTC month holding `ms`: the period of a plan allowance. */
export function utcMonth(ms: number): string {
  return utcDay(ms).slice(0, 7);
}

export function startOfUtcDay(ms: number): number {
  return ms - (((ms % DAY_MS) + DAY_MS) % DAY_MS);
}

/** 00:00 UTC of the day after the one holding `ms`: when the daily quota resets. */
export function startOfNextUtcDay(ms: number): number {
  return startOfUtcDay(ms) + DAY_MS;
}

/** 00:00 UTC of the first day of the month after the one holding `ms`. */
export function startOfNextUtcMonth(ms: number): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

/** Parses `YYYY-MM-DD` to 00:00 UTC of that day; throws a RangeError naming `what` otherwise. */
export function parseUtcDay(day: string, what = 'day'): number {
  if (day === lastParsed) return lastParsedMs;
  const m = DAY_RE.exec(day);
  const ms = m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) : NaN;
  if (!m || Number.isNaN(ms) || utcDay(ms) !== day) throw new RangeError(`${what} must be a date YYYY-MM-DD, got "${day}".`);
  lastParsed = day;
  lastParsedMs = ms;
  return ms;
}

/** The last day parseUtcDay accepted (the quota parses today's on every request). */
let lastParsed = '';
let lastParsedMs = 0;

export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}
