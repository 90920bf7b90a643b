/**
 * Raw query string (and path parameters) → a validated query, driven by the parameter table.
 * The http layer passes `req.getQuery()` as is; anything refused is thrown as
 * `ApiError('invalid_parameter')` naming the parameter, with a message a person understands.
 *
 * Grammar of values (decided here where the spec is silent):
 * - integers: plain decimal digits with an optional leading minus (the range decides whether a
 *   negative passes; no range of the spec has one, and `-0` reads as 0);
 * - numbers: JSON number syntax (`12`, `-3.5`, `2.5e3`, `1e-7`), so whatever a JSON, JavaScript or
 *   Python number formatter writes is accepted; NaN, Infinity, hex, `+1`, `.5`, `5.`, spaces are not;
 * - booleans: exactly `true` or `false`;
 * - list parameters: repeated (`category=a&category=b`) and/or comma-separated (`category=a,b`),
 *   duplicates ignored; a non-list parameter given twice, an empty value or an empty list item
 *   is refused, and so is an unknown parameter (spec 4.1 rule 1).
 * The first problem found is reported: unknown, empty or repeated parameters in the order of the
 * query string, then a bad path parameter, a missing required one, each value in the order of the
 * query string, min/max pairs, the offset window, and the rules between parameters (spec 4.1
 * rules 5, 6, 7).
 */
import {
  MAX_BBOX_SIDE_DEG,
  MAX_BBOX_SIDE_WITH_ROUNDING,
  MAX_WINDOW,
  type BBox,
  type BuildingsQuery,
  type PointQuery,
} from '../query/types.ts';
import { lonSpan } from '../geo/bbox.ts';
import { ApiError, cut, show } from './errors.ts';
import { operationLabel, type OperationId } from './operations.ts';
import { BBOX_PARTS, parametersOf, rangePairs, type Condition, type ParamSpec } from './params.ts';
import { didYouMean } from './suggest.ts';

/** A page of a building's units or registered businesses. `buildingId` is lowercase. */
export interface ChildPageQuery {
  buildingId: string;
  limit: number;
  offset: number;
}

const INTEGER = /^-?[0-9]+$/;
const NUMBER = /^-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?$/;

const fmt = new Intl.NumberFormat('en-US', { maximumFractionDigits: 10 });

/** What a decoder puts in place of bytes that are not UTF-8; a client never means it. */
const REPLACEMENT = '\uFFFD';
const NOT_UTF8 = 'bytes that are not UTF-8 (or U+FFFD, which stands for them); send text as UTF-8, raw or percent-encoded';

/** C0 controls and DEL: no parameter's value holds one (a NUL would reach a name search as is). */
const CONTROL = /[\p{Cc}--[\x80-\x9f]]/v;

/**
 * One name or value of the query string, `+` read as a space and percent-decoded as UTF-8 (as
 * URLSearchParams does), except that what it would let through is refused: a `%` not followed by
 * two hex digits (URLSearchParams keeps it as text: `name=%zz` searched for "%zz"), bytes that are
 * not UTF-8, raw or percent-encoded (decoders put U+FFFD in their place), and control characters. `name`: the parameter whose
 * value this is, null for a name.
 */
function decodeQueryPart(raw: string, name: string | null): string {
  let text = raw;
  if (text.indexOf('+') >= 0) text = text.replace(/\+/g, ' ');
  if (text.indexOf('%') >= 0) {
    try {
      text = decodeURIComponent(text);
    } catch {
      const what = 'not valid percent-encoding (each % must be followed by two hex digits, and the bytes must form UTF-8)';
      if (name === null) throw invalid(cut(raw), `a parameter name that is ${what}`);
      throw invalid(name, `${show(raw)} is ${what}`);
    }
  }
  // The server reads raw bytes that are not UTF-8 as U+FFFD: refused as their percent-encoded form is.
  if (text.indexOf(REPLACEMENT) >= 0) {
    if (name === null) throw invalid(cut(text), `a parameter name holding ${NOT_UTF8}`);
    throw invalid(name, `${show(text)} holds ${NOT_UTF8}`);
  }
  if (CONTROL.test(text)) {
    if (name === null) throw invalid(cut(text), 'a parameter name holding a control character (U+0000 to U+001F, U+007F)');
    throw invalid(name, `${show(text)} holds a control character (U+0000 to U+001F, U+007F)`);
  }
  return text;
}

function rangeText(p: ParamSpec): string {
  if (p.exclusiveMin) return `greater than ${fmt.format(p.min!)} and at most ${fmt.format(p.max!)}`;
  return `from ${fmt.format(p.min!)} to ${fmt.format(p.max!)}`;
}

function invalid(parameter: string, message: string): ApiError {
  return ApiError.invalidParameter(parameter, `${parameter}: ${message}`);
}

function inRange(p: ParamSpec, n: number): boolean {
  if (p.min !== undefined && (p.exclusiveMin ? !(n > p.min) : !(n >= p.min))) return false;
  if (p.max !== undefined && !(n <= p.max)) return false;
  return true;
}

function parseInteger(p: ParamSpec, text: string): number {
  if (!INTEGER.test(text)) {
    throw invalid(p.name, `expected a whole number written in digits, ${rangeText(p)}; got ${show(text)}`);
  }
  const n = Number(text) + 0; // + 0 turns -0 into 0
  if (!Number.isSafeInteger(n) || !inRange(p, n)) throw invalid(p.name, `must be ${rangeText(p)}; got ${show(text)}`);
  return n;
}

function parseDecimal(text: string): number | undefined {
  if (!NUMBER.test(text)) return undefined;
  const n = Number(text) + 0;
  return Number.isFinite(n) ? n : undefined;
}

function parseNumber(p: ParamSpec, text: string): number {
  if (!NUMBER.test(text)) throw invalid(p.name, `expected a decimal number such as 12.5, ${rangeText(p)}; got ${show(text)}`);
  const n = Number(text) + 0;
  if (!Number.isFinite(n) || !inRange(p, n)) throw invalid(p.name, `must be ${rangeText(p)}; got ${show(text)}`);
  return n;
}

function parseBoolean(p: ParamSpec, text: string): boolean {
  if (text === 'true') return true;
  if (text === 'false') return false;
  throw invalid(p.name, `expected true or false; got ${show(text)}`);
}

function parseEnum(p: ParamSpec, text: string): string {
  const values = p.values!;
  if (values.includes(text)) return text;
  throw invalid(p.name, `${show(text)} is not ${p.expected ?? `one of ${values.join(', ')}`}${didYouMean(text, values)}`);
}

const PATTERNS = new Map<string, RegExp>();
function regex(source: string): RegExp {
  let r = PATTERNS.get(source);
  if (!r) PATTERNS.set(source, (r = new RegExp(source, 'u')));
  return r;
}

function parseString(p: ParamSpec, text: string): string {
  if (p.pattern !== undefined && !regex(p.pattern).test(text)) {
    throw invalid(p.name, `expected ${p.expected ?? `text matching ${p.pattern}`}; got ${show(text)}`);
  }
  if (p.minLength !== undefined || p.maxLength !== undefined) {
    const length = Array.from(text).length;
    if ((p.minLength !== undefined && length < p.minLength) || (p.maxLength !== undefined && length > p.maxLength)) {
      throw invalid(p.name, `must be ${p.minLength ?? 0} to ${p.maxLength ?? '∞'} characters long; got ${length}`);
    }
  }
  return p.format === 'uuid' ? text.toLowerCase() : text;
}

/**
 * bbox: minLon,minLat,maxLon,maxLat; ranges, min <= max, each side at most 3 degrees (rule 2).
 * With `ogc`, as OGC API – Features reads it (ParseOptions.ogcBbox).
 */
function parseBBox(p: ParamSpec, text: string, ogc: boolean): BBox {
  const all = text.split(',');
  if (all.length !== 4 && !(ogc && all.length === 6)) {
    const six = ogc ? ', or six minLon,minLat,minHeight,maxLon,maxLat,maxHeight' : '';
    throw invalid(
      p.name,
      `expected four comma-separated decimals minLon,minLat,maxLon,maxLat${six}; got ${all.length} value${all.length === 1 ? '' : 's'} in ${show(text)}`,
    );
  }
  // Six: minLon,minLat,minHeight,maxLon,maxLat,maxHeight.
  const parts = all.length === 6 ? [all[0], all[1], all[3], all[4]] : all;
  if (all.length === 6) {
    const heights = [all[2], all[5]].map(parseDecimal);
    if (heights[0] === undefined || heights[1] === undefined)
      throw invalid(p.name, `the heights (third and sixth of six values) must be decimal numbers; got ${show(text)}`);
    if (heights[0] > heights[1]) throw invalid(p.name, `the least height ${all[2]} is greater than the greatest ${all[5]}`);
  }
  const v = [0, 0, 0, 0];
  for (let i = 0; i < 4; i++) {
    const label = BBOX_PARTS[i];
    const isLon = i % 2 === 0;
    if (parts[i] === '') throw invalid(p.name, `${label} is empty in ${show(text)}`);
    const n = parseDecimal(parts[i]);
    if (n === undefined) throw invalid(p.name, `${label} is not a decimal number: ${show(parts[i])}`);
    const limit = isLon ? 180 : 90;
    if (n < -limit || n > limit) {
      throw invalid(p.name, `${label} is a ${isLon ? 'longitude' : 'latitude'} and must be from -${limit} to ${limit}; got ${parts[i]}`);
    }
    v[i] = n;
  }
  const [minLon, minLat, maxLon, maxLat] = v;
  if (minLon > maxLon && !ogc) {
    throw invalid(p.name, `minLon ${parts[0]} is greater than maxLon ${parts[2]} (a box across the antimeridian is asked as two boxes)`);
  }
  if (minLat > maxLat) throw invalid(p.name, `minLat ${parts[1]} is greater than maxLat ${parts[3]}`);
  if (ogc) return { minLon, minLat, maxLon, maxLat };
  for (const [span, axis] of [
    [lonSpan({ minLon, minLat, maxLon, maxLat }), minLon <= maxLon ? 'longitude' : 'longitude across the antimeridian'],
    [maxLat - minLat, 'latitude'],
  ] as const) {
    if (span > MAX_BBOX_SIDE_WITH_ROUNDING) {
      throw invalid(
        p.name,
        `each side may span at most ${MAX_BBOX_SIDE_DEG} degrees; this one spans ${fmt.format(Number(span.toPrecision(12)))} degrees of ${axis}`,
      );
    }
  }
  return { minLon, minLat, maxLon, maxLat };
}

function parseOne(p: ParamSpec, text: string, ogcBbox = false): unknown {
  switch (p.type) {
    case 'integer':
      return parseInteger(p, text);
    case 'number':
      return parseNumber(p, text);
    case 'boolean':
      return parseBoolean(p, text);
    case 'enum':
      return parseEnum(p, text);
    case 'string':
      return p.format === 'bbox' ? parseBBox(p, text, ogcBbox) : parseString(p, text);
  }
}

function parseList(p: ParamSpec, texts: readonly string[]): unknown[] {
  const out: unknown[] = [];
  for (const text of texts) {
    for (const item of text.split(',')) {
      if (item === '') throw invalid(p.name, `empty value in the list ${show(text)}; separate values with single commas`);
      const v = parseOne(p, item);
      if (!out.includes(v)) out.push(v);
    }
  }
  return out;
}

/** What validating one operation needs, worked out once from the table. */
interface Plan {
  query: ReadonlyMap<string, ParamSpec>;
  path: readonly ParamSpec[];
  required: readonly ParamSpec[];
  /** Parameters with a default the parsed query carries (a boolean defaulting to false is left out). */
  defaulted: readonly ParamSpec[];
  queryNames: readonly string[];
  pairs: readonly [ParamSpec, ParamSpec][];
  window: { offset: ParamSpec; limit: ParamSpec } | null;
  ruled: readonly ParamSpec[];
}

const PLANS = new Map<OperationId, Plan>();

function planOf(operation: OperationId): Plan {
  let plan = PLANS.get(operation);
  if (plan) return plan;
  const params = parametersOf(operation);
  const query = new Map(params.filter((p) => p.in === 'query').map((p) => [p.name, p]));
  const offset = query.get('offset');
  const limit = query.get('limit');
  plan = {
    query,
    path: params.filter((p) => p.in === 'path'),
    required: params.filter((p) => p.in === 'query' && p.required),
    defaulted: params.filter((p) => p.default !== undefined && p.default !== false),
    queryNames: [...query.keys()],
    pairs: rangePairs(operation),
    window: offset && limit ? { offset, limit } : null,
    ruled: params.filter((p) => p.requiredWith || p.refusedWith || p.disjointFrom),
  };
  PLANS.set(operation, plan);
  return plan;
}

function conditionText(c: Condition): string {
  return c.value === undefined ? c.name : `${c.name}=${c.value}`;
}

function holds(c: Condition, given: ReadonlyMap<string, unknown>): boolean {
  if (!given.has(c.name)) return false;
  return c.value === undefined || String(given.get(c.name)) === c.value;
}

export interface ParseOptions {
  /**
   * bbox as OGC API – Features reads it, not as rule 2: four numbers, or six with heights (checked,
   * then left out: footprints have none); a minLon above maxLon crosses the antimeridian; any size.
   */
  ogcBbox?: boolean;
  /** The request that messages about unknown parameters name; the operation's own by default (OGC items use GET /buildings' table). */
  label?: string;
}

/**
 * Validate the parameters of one operation. `rawQuery` is the query string with or without
 * its leading `?`; `path` holds the path parameters by name. Returns the parsed query keyed by
 * the table's `key`s, defaults applied; a boolean defaulting to false is left out when false.
 */
export function parseParameters(
  operation: OperationId,
  rawQuery: string | undefined,
  path: Readonly<Record<string, string>> = {},
  options: ParseOptions = {},
): Record<string, unknown> {
  const plan = planOf(operation);
  const raw = rawQuery === undefined ? '' : rawQuery.startsWith('?') ? rawQuery.slice(1) : rawQuery;

  // Names and repetitions, in the order of the query string.
  const texts = new Map<string, string[]>();
  for (let at = 0; at <= raw.length;) {
    let end = raw.indexOf('&', at);
    if (end < 0) end = raw.length;
    if (end === at) {
      // `&&`, or a query ending in `&`: no pair
      at = end + 1;
      continue;
    }
    const eq = raw.indexOf('=', at);
    const split = eq >= 0 && eq < end ? eq : end;
    const rawName = raw.slice(at, split);
    at = end + 1;
    const name = decodeQueryPart(rawName, null);
    const rawValue = split === end ? '' : raw.slice(split + 1, end);
    const p = plan.query.get(name);
    if (!p) {
      if (name === '')
        throw ApiError.invalidParameter(
          '',
          `a parameter without a name (=${show(rawValue)}) is not a parameter of ${options.label ?? operationLabel(operation)}`,
        );
      const hint = didYouMean(name, plan.queryNames);
      const label = cut(name);
      throw ApiError.invalidParameter(
        label,
        `${label}: not a parameter of ${options.label ?? operationLabel(operation)}${hint || ' (its parameters are listed in /v1/openapi.json)'}`,
      );
    }
    const value = decodeQueryPart(rawValue, name);
    if (value === '') throw invalid(name, 'empty value; give a value or leave the parameter out');
    const seen = texts.get(name);
    if (seen && !p.list) throw invalid(name, 'given more than once; it takes one value');
    if (seen) seen.push(value);
    else texts.set(name, [value]);
  }

  // Defaults, path parameters, required parameters, then each parameter given, in query order.
  const out: Record<string, unknown> = {};
  for (const p of plan.defaulted) out[p.key] = p.default;
  const given = new Map<string, unknown>();
  for (const p of plan.path) {
    const v = path[p.name];
    if (v === undefined || v === '') throw invalid(p.name, 'required');
    const value = parseOne(p, v);
    given.set(p.name, value);
    out[p.key] = value;
  }
  for (const p of plan.required) {
    if (!texts.has(p.name))
      throw invalid(p.name, `required${p.format === 'bbox' ? ' (four comma-separated decimals minLon,minLat,maxLon,maxLat)' : ''}`);
  }
  for (const [name, values] of texts) {
    const p = plan.query.get(name)!;
    const value = p.list ? parseList(p, values) : parseOne(p, values[0], options.ogcBbox);
    given.set(name, value);
    if (value === false && p.default === false) continue; // "default false" keeps everything: the filter is off
    out[p.key] = value;
  }

  // min_X <= max_X.
  for (const [min, max] of plan.pairs) {
    if (!given.has(min.name) || !given.has(max.name)) continue;
    const lo = given.get(min.name) as number;
    const hi = given.get(max.name) as number;
    if (lo > hi) throw invalid(min.name, `${fmt.format(lo)} is greater than ${max.name} ${fmt.format(hi)}`);
  }

  // offset + limit <= 10,000 (rule 3).
  if (plan.window) {
    const o = out[plan.window.offset.key] as number;
    const l = out[plan.window.limit.key] as number;
    if (o + l > MAX_WINDOW) {
      throw invalid(
        'offset',
        `offset + limit must be at most ${fmt.format(MAX_WINDOW)}; got ${fmt.format(o)} + ${fmt.format(l)} = ${fmt.format(o + l)}`,
      );
    }
  }

  // Rules between parameters (rules 5, 6, 7).
  for (const p of plan.ruled) {
    if (p.requiredWith && !given.has(p.name)) {
      const c = p.requiredWith.find((c) => holds(c, given));
      if (c) throw invalid(p.name, `required with ${conditionText(c)}${p.expected ? `; give ${p.expected}` : ''}`);
    }
    if (p.refusedWith && given.has(p.name)) {
      const c = p.refusedWith.find((c) => holds(c, given));
      if (c) throw invalid(p.name, `not accepted with ${conditionText(c)}`);
    }
    if (p.disjointFrom && given.has(p.name) && given.has(p.disjointFrom)) {
      const other = given.get(p.disjointFrom) as unknown[];
      const both = (given.get(p.name) as unknown[]).filter((v) => other.includes(v));
      if (both.length > 0) {
        throw invalid(
          p.name,
          `${both.join(', ')} ${both.length === 1 ? 'is' : 'are'} also kept by ${p.disjointFrom}; a value cannot be both kept and left out`,
        );
      }
    }
  }
  return out;
}

/** A path segment as the client sent it, percent-decoded; a broken escape is refused naming the parameter. */
export function decodePathSegment(raw: string, name: string): string {
  let text: string;
  try {
    text = decodeURIComponent(raw);
  } catch {
    throw invalid(name, 'not a valid percent-encoded path segment');
  }
  if (text.indexOf(REPLACEMENT) >= 0) throw invalid(name, `${show(text)} holds ${NOT_UTF8}`);
  return text;
}

/** GET /buildings. */
export function parseBuildingsQuery(rawQuery: string | undefined): BuildingsQuery {
  return parseParameters('listBuildings', rawQuery) as unknown as BuildingsQuery;
}

/** GET /buildings/at. */
export function parsePointQuery(rawQuery: string | undefined): PointQuery {
  return parseParameters('listBuildingsAtPoint', rawQuery) as unknown as PointQuery;
}

/** GET /buildings/{building_id}/units; `buildingId` as it appears in the path. */
export function parseUnitsQuery(buildingId: string, rawQuery: string | undefined): ChildPageQuery {
  return parseParameters('listBuildingUnits', rawQuery, { building_id: buildingId }) as unknown as ChildPageQuery;
}

/** GET /buildings/{building_id}/registered-businesses; `buildingId` as it appears in the path. */
export function parseRegisteredBusinessesQuery(buildingId: string, rawQuery: string | undefined): ChildPageQuery {
  return parseParameters('listRegisteredBusinesses', rawQuery, { building_id: buildingId }) as unknown as ChildPageQuery;
}
