/** A workspace's usage per UTC day, as both ledgers report it. */
import { DAY_MS, parseUtcDay, utcDay } from './clock.ts';

export interface UsageDay {
  day: string;
  /** Authenticated requests counted against the daily quota. */
  requests: number;
  /** Credits charged. */
  credits: number;
  /** Requests that cost credits. */
  charges: number;
  /** Distinct buildings returned by the requests that cost credits. */
  buildings: number;
}

/**
 * The days from `fromDay` to `toDay` inclusive (YYYY-MM-DD; default the 30 days ending on the
 * day of `now`), each at zero, to be filled in: at most 366 days; RangeError naming the argument.
 */
export function usageDays(now: number, fromDay?: string, toDay?: string): { from: string; to: string; byDay: Map<string, UsageDay> } {
  const to = toDay ?? utcDay(now);
  const toMs = parseUtcDay(to, 'toDay');
  const from = fromDay ?? utcDay(toMs - 29 * DAY_MS);
  const fromMs = parseUtcDay(from, 'fromDay');
  if (fromMs > toMs) throw new RangeError(`fromDay ${from} is after toDay ${to}.`);
  if (toMs - fromMs >= 366 * DAY_MS) throw new RangeError('usage spans at most 366 days.');
  const byDay = new Map<string, UsageDay>();
  for (let ms = fromMs; ms <= toMs; ms += DAY_MS) {
    const day = utcDay(ms);
    byDay.set(day, { day, requests: 0, credits: 0, charges: 0, buildings: 0 });
  }
  return { from, to, byDay };
}
