/**
 * Options of the synthetic generator, handled in phases: defaults, validation (a wrong or
 * misspelled option is refused by name), then the resolved values every module reads.
 */
import { DEFAULT_BOUNDS, type Bounds } from './bounds.ts';

export interface GenerateOptions {
  /** Seed of every random draw: same seed, same country, byte for byte. Integer 0 to 2^32 - 1. */
  seed: number;
  /** Number of buildings, 1 to 10,000,000. */
  buildings: number;
  /** Two uppercase letters; default 'XA' (user-assigned, so no real country is implied). */
  country?: string;
  /** Snapshot date YYYY-MM-DD; default '2026-11-21', fixed so that files are reproducible. */
  date?: string;
  /** Area the country fills, [minLon, minLat, maxLon, maxLat]; default [20, 44, 26, 48]. */
  bounds?: Bounds;
  /** Called with the number of buildings generated so far, every few thousand and at the end. */
  onProgress?: (done: number) => void;
}

export interface ResolvedOptions {
  seed: number;
  buildings: number;
  country: string;
  date: string;
  year: number;
  bounds: Bounds;
  onProgress: ((done: number) => void) | null;
}

const MAX_BUILDINGS = 10_000_000;
export const DEFAULT_COUNTRY = 'XA';
export const DEFAULT_DATE = '2026-11-21';
const KNOWN = ['seed', 'buildings', 'country', 'date', 'bounds', 'onProgress'];

function isCalendarDate(s: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(s)) return false;
  const ms = Date.parse(`${s}T00:00:00Z`);
  return Number.isFinite(ms) && new Date(ms).toISOString().slice(0, 10) === s;
}

/** Checks options and fills defaults; `extra` names further options a caller accepts. */
export function resolveOptions(options: GenerateOptions, extra: readonly string[] = []): ResolvedOptions {
  if (options === null || typeof options !== 'object') throw new TypeError('Expected an options object.');
  for (const key of Object.keys(options)) {
    if (!KNOWN.includes(key) && !extra.includes(key)) {
      throw new TypeError(`Unknown option "${key}" (known: ${[...KNOWN, ...extra].join(', ')}).`);
    }
  }
  const { seed, buildings } = options;
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) {
    throw new RangeError(`seed must be an integer from 0 to 4294967295, got ${String(seed)}.`);
  }
  if (!Number.isInteger(buildings) || buildings < 1 || buildings > MAX_BUILDINGS) {
    throw new RangeError(`buildings must be an integer from 1 to 10,000,000, got ${String(buildings)}.`);
  }
  const country = options.country ?? DEFAULT_COUNTRY;
  if (typeof country !== 'string' || !/^[A-Z]{2}$/.test(country)) {
    throw new RangeError(`country must be two uppercase letters, got "${String(country)}".`);
  }
  const date = options.date ?? DEFAULT_DATE;
  if (typeof date !== 'string' || !isCalendarDate(date)) {
    throw new RangeError(`date must be a calendar date YYYY-MM-DD, got "${String(date)}".`);
  }
  const year = Number(date.slice(0, 4));
  if (year < 2000 || year > 2100) throw new RangeError(`date must be in the years 2000 to 2100, got "${date}".`);
  const bounds = options.bounds ?? DEFAULT_BOUNDS;
  if (!Array.isArray(bounds) || bounds.length !== 4 || !bounds.every((v) => typeof v === 'number' && Number.isFinite(v))) {
    throw new TypeError('bounds must be four finite numbers [minLon, minLat, maxLon, maxLat].');
  }
  const [minLon, minLat, maxLon, maxLat] = bounds;
  if (minLon < -180 || maxLon > 180 || minLat < -80 || maxLat > 80) {
    throw new RangeError(`bounds must lie within longitude -180..180 and latitude -80..80, got [${bounds.join(', ')}].`);
  }
  if (maxLon - minLon < 0.01 || maxLat - minLat < 0.01) {
    throw new RangeError(`bounds must span at least 0.01 degrees each way (min before max), got [${bounds.join(', ')}].`);
  }
  const onProgress = options.onProgress ?? null;
  if (onProgress !== null && typeof onProgress !== 'function') throw new TypeError('onProgress must be a function.');
  return { seed, buildings, country, date, year, bounds: [minLon, minLat, maxLon, maxLat], onProgress };
}
