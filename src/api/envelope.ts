/**
 * Response envelopes (spec 2.2): the ranked page of GET /buildings, the point lookup of
 * GET /buildings/at, and the pages of a building's units and registered businesses.
 *
 * links.next is the absolute URL of the next page: the request's own query string with every
 * parameter kept exactly (order, spelling, encoding), only offset changed or added at the end.
 * It is null on the last page (offset + limit >= total, or the 10,000 window is used up); a next
 * page that would end past the window asks for fewer items, so it can still be requested.
 *
 * Each envelope comes as an object, and as JSON or MessagePack bytes assembled from the
 * buildings' own encoded bytes, so that a page of cached buildings costs a copy.
 */
import { pack } from 'msgpackr';
import { ByteWriter } from './byte-writer.ts';
import { MAX_WINDOW, type SortKey } from '../query/types.ts';
import type { BusinessRecord, UnitRecord } from '../snapshot/schema.ts';
import { serializeBusiness, type RegisteredBusinessOut } from './business.ts';
import { serializeUnit, type UnitOut } from './unit.ts';
import type { ChildPageQuery } from './validate.ts';

/** Where the request came in: what links.next is built from. */
export interface LinkContext {
  /** Base URL of the API, ending in /v1 (a trailing slash is dropped). */
  baseUrl: string;
  /** The request's query string as received (`req.getQuery()`), with or without its `?`. */
  rawQuery: string | undefined;
}

export interface RankedPageInfo {
  /** Matches counted, at most 10,000. */
  total: number;
  /** Counting stopped at 10,000. */
  totalIsCapped: boolean;
  limit: number;
  offset: number;
  sort: SortKey;
}

export interface RankedPage<T> {
  data: T[];
  meta: { total: number; total_is_capped: boolean; limit: number; offset: number; sort: SortKey };
  links: { next: string | null };
}

export interface PointPage<T> {
  data: T[];
}

/** A page of a building's units or registered businesses; total is exact. */
export interface ChildPage<T> {
  data: T[];
  meta: { total: number; limit: number; offset: number };
  links: { next: string | null };
}

/** Is this `key=value` segment's key `name` (percent-decoded)? */
function keyIs(segment: string, name: string): boolean {
  const eq = segment.indexOf('=');
  const key = eq < 0 ? segment : segment.slice(0, eq);
  if (key === name) return true;
  if (key.indexOf('%') < 0 && key.indexOf('+') < 0) return false;
  try {
    return decodeURIComponent(key.replace(/\+/g, ' ')) === name;
  } catch {
    return false;
  }
}

/** The query string with `name` set to `value` (added at the end if absent): every other parameter kept as sent. */
function withParam(raw: string, name: string, value: number): string {
  const segments = raw === '' ? [] : raw.split('&').filter((s) => s !== '');
  let found = false;
  for (let i = 0; i < segments.length; i++) {
    if (!keyIs(segments[i], name)) continue;
    const eq = segments[i].indexOf('=');
    segments[i] = `${eq < 0 ? segments[i] : segments[i].slice(0, eq)}=${value}`;
    found = true;
  }
  if (!found) segments.push(`${name}=${value}`);
  return segments.join('&');
}

/** The query string with offset set to `offset`: every other parameter kept as sent. */
export function withOffset(rawQuery: string | undefined, offset: number): string {
  const raw = rawQuery === undefined ? '' : rawQuery.startsWith('?') ? rawQuery.slice(1) : rawQuery;
  return withParam(raw, 'offset', offset);
}

/**
 * links.next of a page at `offset` of `limit` items out of `total`; null on the last page. Near
 * the 10,000 window the next page is made shorter (limit = 10,000 − offset) so that it can be
 * asked: a page is the last only when nothing comes after it.
 */
export function nextPageUrl(link: LinkContext, path: string, offset: number, limit: number, total: number): string | null {
  const next = offset + limit;
  if (next >= total || next >= MAX_WINDOW) return null;
  const base = link.baseUrl.endsWith('/') ? link.baseUrl.slice(0, -1) : link.baseUrl;
  let query = withOffset(link.rawQuery, next);
  if (next + limit > MAX_WINDOW) query = withParam(query, 'limit', MAX_WINDOW - next);
  return `${base}${path}?${query}`;
}

function rankedMeta(info: RankedPageInfo): RankedPage<unknown>['meta'] {
  return { total: info.total, total_is_capped: info.totalIsCapped, limit: info.limit, offset: info.offset, sort: info.sort };
}

/** GET /buildings: {data, meta: {total, total_is_capped, limit, offset, sort}, links: {next}}. */
export function rankedPage<T>(data: T[], info: RankedPageInfo, link: LinkContext): RankedPage<T> {
  return { data, meta: rankedMeta(info), links: { next: nextPageUrl(link, '/buildings', info.offset, info.limit, info.total) } };
}

/**
 * The items of a page, each written into the body as it is reached: a cache of encoded
 * buildings copies its bytes straight in, so that nothing it returns has to outlive the call.
 */
export interface PageItems {
  count: number;
  write(i: number, out: ByteWriter): void;
}

/** Items given as their encoded bytes or JSON text. */
function itemsOf(items: readonly (Uint8Array | string)[] | PageItems): PageItems {
  if (!Array.isArray(items)) return items as PageItems;
  const list = items as readonly (Uint8Array | string)[];
  return {
    count: list.length,
    write: (i, out) => {
      const item = list[i];
      if (typeof item === 'string') out.text(item);
      else out.bytes(item);
    },
  };
}

/**
 * Where a body is assembled when the caller gives no writer: one per thread, and the body is
 * copied out of it (`take`) before anything else runs. A caller that gives its own writer gets a
 * view of it (`view`), valid until that writer is written again.
 */
const scratch = new ByteWriter();
const OPEN_DATA = Buffer.from('{"data":[');
const COMMA = 0x2c;

const OPEN_FEATURES = Buffer.from('{"type":"FeatureCollection","features":[');

/** `{"data":[item,item,...]` (or another opening) + tail, as one buffer. */
function assemble(items: PageItems, tail: string, out = scratch, open = OPEN_DATA): Buffer {
  out.reset();
  out.bytes(open);
  for (let i = 0; i < items.count; i++) {
    if (i > 0) out.byte(COMMA);
    items.write(i, out);
  }
  out.text(tail);
  return out === scratch ? out.take() : out.view();
}

/**
 * The ranked page as JSON bytes, from each building's JSON (`buildingJson`, as text or UTF-8
 * bytes); equal to `JSON.stringify(rankedPage(...))` of the same buildings.
 */
export function rankedPageJson(
  buildings: readonly (Uint8Array | string)[] | PageItems,
  info: RankedPageInfo,
  link: LinkContext,
  out?: ByteWriter,
): Buffer {
  const next = nextPageUrl(link, '/buildings', info.offset, info.limit, info.total);
  return assemble(itemsOf(buildings), `],"meta":${JSON.stringify(rankedMeta(info))},"links":{"next":${JSON.stringify(next)}}}`, out);
}

/**
 * The ranked page as a GeoJSON FeatureCollection: `features` in place of `data` (each item a
 * Feature), then the same meta and links as the JSON page.
 */
export function rankedPageGeoJson(features: PageItems, info: RankedPageInfo, link: LinkContext, out?: ByteWriter): Buffer {
  const next = nextPageUrl(link, '/buildings', info.offset, info.limit, info.total);
  return assemble(features, `],"meta":${JSON.stringify(rankedMeta(info))},"links":{"next":${JSON.stringify(next)}}}`, out, OPEN_FEATURES);
}

/** The point lookup as a GeoJSON FeatureCollection, nearest first. */
export function pointPageGeoJson(features: PageItems, out?: ByteWriter): Buffer {
  return assemble(features, ']}', out, OPEN_FEATURES);
}

/** A FeatureCollection of `features` followed by `tail` (foreign members, then the closing brace). */
export function featureCollectionJson(features: PageItems, tail: string, out?: ByteWriter): Buffer {
  return assemble(features, tail, out, OPEN_FEATURES);
}

const MSGPACK_DATA_KEY = Buffer.from([0xa4, 0x64, 0x61, 0x74, 0x61]); // fixstr "data"

/** A MessagePack map of `entries` whose first entry is "data": [items...], then `tail` (the other entries, encoded). */
function assembleMsgpack(items: PageItems, entries: number, tail: Uint8Array[], out = scratch): Buffer {
  const n = items.count;
  if (n > 0xffff) throw new RangeError(`A page holds at most 65,535 items, got ${n}.`);
  out.reset();
  out.byte(0x80 | entries);
  out.bytes(MSGPACK_DATA_KEY);
  if (n < 16) out.byte(0x90 | n);
  else {
    out.byte(0xdc);
    out.byte(n >> 8);
    out.byte(n & 0xff);
  }
  for (let i = 0; i < n; i++) items.write(i, out);
  for (const t of tail) out.bytes(t);
  return out === scratch ? out.take() : out.view();
}

/**
 * The ranked page as MessagePack, from each building's MessagePack bytes (`pack(serializeBuilding(...))`);
 * decodes to the same document as `pack(rankedPage(...))`.
 */
export function rankedPageMsgpack(
  buildings: readonly Uint8Array[] | PageItems,
  info: RankedPageInfo,
  link: LinkContext,
  out?: ByteWriter,
): Buffer {
  const next = nextPageUrl(link, '/buildings', info.offset, info.limit, info.total);
  return assembleMsgpack(itemsOf(buildings), 3, [pack('meta'), pack(rankedMeta(info)), pack('links'), pack({ next })], out);
}

export function pointPageMsgpack(buildings: readonly Uint8Array[] | PageItems, out?: ByteWriter): Buffer {
  return assembleMsgpack(itemsOf(buildings), 1, [], out);
}

/** GET /buildings/at: {data}. */
export function pointPage<T>(data: T[]): PointPage<T> {
  return { data };
}

export function pointPageJson(buildings: readonly (Uint8Array | string)[] | PageItems, out?: ByteWriter): Buffer {
  return assemble(itemsOf(buildings), ']}', out);
}

function childPage<R, T>(
  items: readonly R[],
  total: number,
  serialize: (r: R) => T,
  q: ChildPageQuery,
  path: string,
  link: LinkContext,
): ChildPage<T> {
  const data: T[] = new Array(items.length);
  for (let i = 0; i < items.length; i++) data[i] = serialize(items[i]);
  return {
    data,
    meta: { total, limit: q.limit, offset: q.offset },
    links: { next: nextPageUrl(link, path, q.offset, q.limit, total) },
  };
}

/**
 * GET /buildings/{building_id}/units: the page of units the engine returned (already cut to
 * offset, limit, e.g. `listUnits` of `query/children.ts`) and the building's unit count.
 */
export function unitsPage(units: readonly UnitRecord[], total: number, q: ChildPageQuery, link: LinkContext): ChildPage<UnitOut> {
  return childPage(units, total, serializeUnit, q, `/buildings/${q.buildingId}/units`, link);
}

/** GET /buildings/{building_id}/registered-businesses: the page the engine returned and the building's count. */
export function registeredBusinessesPage(
  businesses: readonly BusinessRecord[],
  total: number,
  q: ChildPageQuery,
  link: LinkContext,
): ChildPage<RegisteredBusinessOut> {
  return childPage(businesses, total, serializeBusiness, q, `/buildings/${q.buildingId}/registered-businesses`, link);
}
