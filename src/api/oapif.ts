/**
 * OGC API – Features, Part 1 (Core) at the base URL, so that GIS clients (GDAL's OAPIF driver,
 * QGIS) open the catalogue as a layer: the landing page (`GET /v1`), /conformance, /collections,
 * one collection and its items in GeoJSON with footprints, paged by `next` links.
 *
 * One collection, `buildings`, for every covered country: a bbox query already crosses borders
 * and building ids are unique across countries, so a layer per country would only split a map
 * view at a border into two layers and two requests.
 *
 * Items take the parameters of GET /buildings and rank as it does, with OGC's rules for the two
 * that differ: bbox is optional and limit above its maximum (100) is read as 100, not refused.
 * Without a bbox (a client reading the layer's first features to learn its fields), items list
 * every building in storage order, and take no filter. Every building returned is charged as on
 * GET /buildings.
 */
import { MAX_WINDOW, type BBox, type BuildingsQuery } from '../query/types.ts';
import { dateToDays } from '../snapshot/columns.ts';
import { ApiError, cut, show } from './errors.ts';
import { OPERATIONS } from './operations.ts';
import { parametersOf } from './params.ts';
import { parameterObject } from './openapi.ts';
import { takeOutput, type Output } from './output.ts';
import { parseParameters } from './validate.ts';
import { withOffset, type LinkContext } from './envelope.ts';
import { ref, type Json } from './json-schema.ts';
import type { OpenApiPart } from './openapi.ts';

export const COLLECTION_ID = 'buildings';
export const CRS84 = 'http://www.opengis.net/def/crs/OGC/1.3/CRS84';
export const ITEMS_MAX_LIMIT = 100;
export const ITEMS_DEFAULT_LIMIT = 10;

export const CONFORMANCE_CLASSES = [
  'http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/core',
  'http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/geojson',
] as const;

const JSON_TYPE = 'application/json';
const GEOJSON_TYPE = 'application/geo+json';

interface Link {
  href: string;
  rel: string;
  type: string;
  title?: string;
}

const trim = (baseUrl: string) => (baseUrl.endsWith('/') ? baseUrl.slice(0, -1) : baseUrl);

export function landingPage(baseUrl: string): Json {
  const b = trim(baseUrl);
  return {
    title: 'Edifice building catalogue',
    description: 'Buildings, country by country, as OGC API – Features (one collection: buildings) and as the Edifice API (/openapi.json).',
    links: [
      { href: b, rel: 'self', type: JSON_TYPE, title: 'This document' },
      { href: `${b}/openapi.json`, rel: 'service-desc', type: 'application/vnd.oai.openapi+json;version=3.1', title: 'The API definition' },
      {
        href: `${b}/openapi.json?version=3.0`,
        rel: 'service-desc',
        type: 'application/vnd.oai.openapi+json;version=3.0',
        title: 'The API definition in OpenAPI 3.0',
      },
      { href: `${b}/docs`, rel: 'service-doc', type: 'text/html', title: 'The API documentation' },
      { href: `${b}/conformance`, rel: 'conformance', type: JSON_TYPE, title: 'Conformance classes' },
      { href: `${b}/collections`, rel: 'data', type: JSON_TYPE, title: 'Collections' },
    ] satisfies Link[],
  };
}

export function conformance(): Json {
  return { conformsTo: [...CONFORMANCE_CLASSES] };
}

/** The collection's document; `extent`: the union of the snapshots' extents (null before any is loaded). */
export function collection(baseUrl: string, extent: BBox | null, buildings: number): Json {
  const b = trim(baseUrl);
  const self = `${b}/collections/${COLLECTION_ID}`;
  const out: Json = {
    id: COLLECTION_ID,
    title: 'Buildings',
    description:
      `Every building of the covered countries (${buildings.toLocaleString('en-US')} now), each with its outline and the fields of the Edifice Building object. ` +
      'Every building returned costs 1 credit unless the workspace opened it in the last 365 days; a page is charged all or nothing.',
    itemType: 'feature',
    crs: [CRS84],
    links: [
      { href: self, rel: 'self', type: JSON_TYPE, title: 'This collection' },
      { href: `${self}/items`, rel: 'items', type: GEOJSON_TYPE, title: 'Buildings' },
    ] satisfies Link[],
  };
  if (extent) out.extent = { spatial: { bbox: [[extent.minLon, extent.minLat, extent.maxLon, extent.maxLat]], crs: CRS84 } };
  return out;
}

export function collections(baseUrl: string, extent: BBox | null, buildings: number): Json {
  const b = trim(baseUrl);
  return {
    links: [{ href: `${b}/collections`, rel: 'self', type: JSON_TYPE, title: 'This document' }] satisfies Link[],
    collections: [collection(baseUrl, extent, buildings)],
  };
}

/** An unknown collection id: 404, as OGC asks. */
export function unknownCollection(id: string): ApiError {
  return new ApiError('not_found', `No collection ${show(cut(id))}; the one collection is ${COLLECTION_ID}.`, 'collectionId');
}

export type ItemsQuery =
  { kind: 'ranked'; query: BuildingsQuery; output: Output } | { kind: 'stored'; offset: number; limit: number; output: Output };

/** Names an items request may give without a bbox. */
const WITHOUT_BBOX = new Set(['limit', 'offset', 'geometry', 'fields']);

/** The items' path under the base, and a single feature's route. */
export const ITEMS_PATH = `/collections/${COLLECTION_ID}/items`;
export const FEATURE_ROUTE = `${ITEMS_PATH}/{featureId}`;

/** Unknown parameters of the items are named as theirs, not GET /buildings'. */
const ITEMS_LABEL = { label: `GET ${ITEMS_PATH}` };

function decodeName(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return raw; // refused by the validator below, with its message
  }
}

function wholeNumber(name: string, text: string, min: number): number {
  const n = /^[0-9]+$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n) || n < min)
    throw ApiError.invalidParameter(name, `${name}: expected a whole number of at least ${min}; got ${show(text)}`);
  return n;
}

/**
 * The items request's query: `limit` read as OGC asks (above 100 is 100), `f` (json or geojson:
 * items are GeoJSON either way) dropped, everything else validated as GET /buildings validates it.
 */
export function parseItemsQuery(rawQuery: string): ItemsQuery {
  const kept: string[] = [];
  let limit = ITEMS_DEFAULT_LIMIT;
  let offset = 0;
  let hasBbox = false;
  let other: string | undefined;
  let dated = false;
  for (const [name, value, segment] of pairs(rawQuery)) {
    if (name === 'limit') {
      limit = Math.min(ITEMS_MAX_LIMIT, wholeNumber('limit', value, 1));
      continue;
    }
    if (name === 'f') {
      checkFormat(value);
      continue;
    }
    if (name === 'datetime') {
      // Buildings have no temporal geometry: every one matches (OGC API Features Core, req. 25 C).
      if (dated) throw ApiError.invalidParameter('datetime', 'datetime: given twice; give it once');
      checkDatetime(value);
      dated = true;
      continue;
    }
    if (name === 'offset') offset = wholeNumber('offset', value, 0);
    if (name === 'bbox') hasBbox = true;
    else if (!WITHOUT_BBOX.has(name)) other ??= name;
    kept.push(segment);
  }
  if (!hasBbox) {
    // Validated as GET /buildings validates them, with an area that takes no part: an unknown
    // name or a bad value is refused as such before a good filter is refused for want of a bbox.
    const q = parseParameters('listBuildings', ['bbox=0,0,0,0', ...kept.filter((s) => !/^offset=/.test(s))].join('&'), {}, ITEMS_LABEL);
    if (other !== undefined) {
      throw ApiError.invalidParameter(
        cut(other),
        `${cut(other)}: filters and sort need a bbox on these items (without one they list every building in storage order)`,
      );
    }
    return { kind: 'stored', offset, limit, output: itemsOutput(q) };
  }
  // Near the 10,000 window a page is cut short, as links.next of GET /buildings does.
  const room = Math.max(1, MAX_WINDOW - offset);
  kept.push(`limit=${Math.min(limit, room)}`);
  const q = parseParameters('listBuildings', kept.join('&'), {}, { ...ITEMS_LABEL, ogcBbox: true });
  return { kind: 'ranked', query: q as unknown as BuildingsQuery, output: itemsOutput(q) };
}

/** A single feature's query: nothing but `f` (json or geojson), as the items take it. */
export function parseFeatureQuery(rawQuery: string): void {
  for (const [name, value] of pairs(rawQuery)) {
    if (name !== 'f') throw ApiError.invalidParameter(cut(name), `${cut(name)}: not a parameter of a single feature (it takes only f)`);
    checkFormat(value);
  }
}

/** The query's pairs in order, decoded (name, value) beside the segment as written; `&&` gives none. */
function* pairs(rawQuery: string): Generator<[name: string, value: string, segment: string]> {
  const raw = rawQuery.startsWith('?') ? rawQuery.slice(1) : rawQuery;
  for (const segment of raw.split('&')) {
    if (segment === '') continue;
    const eq = segment.indexOf('=');
    yield [decodeName(eq < 0 ? segment : segment.slice(0, eq)), eq < 0 ? '' : decodeName(segment.slice(eq + 1)), segment];
  }
}

// RFC 3339 5.6 date-time (T and Z in either case, 5.6's note), or a full-date as many clients send.
const DATE_TIME = /^(\d{4}-\d{2}-\d{2})(?:[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|[+-](\d{2}):(\d{2})))?$/;

function instant(text: string): boolean {
  const m = DATE_TIME.exec(text);
  if (!m) return false;
  try {
    dateToDays(m[1]); // a calendar date
  } catch {
    return false;
  }
  if (m[2] === undefined) return true;
  // Second 60 is a leap second (RFC 3339 5.7).
  const offset = m[5] === undefined || (Number(m[5]) <= 23 && Number(m[6]) <= 59);
  return Number(m[2]) <= 23 && Number(m[3]) <= 59 && Number(m[4]) <= 60 && offset;
}

/** datetime as OGC API Features Core req. 25 D writes it: an instant, or an interval open at one end at most. */
function checkDatetime(value: string): void {
  const parts = value.split('/');
  const open = (p: string): boolean => p === '' || p === '..';
  const end = (p: string): boolean => instant(p) || open(p);
  const ok =
    parts.length === 1 ? instant(value) : parts.length === 2 && end(parts[0]) && end(parts[1]) && !(open(parts[0]) && open(parts[1]));
  if (!ok)
    throw ApiError.invalidParameter(
      'datetime',
      `datetime: expected an RFC 3339 date-time (2026-01-31T12:00:00Z) or an interval (start/end, either end open as ..); got ${show(value)}`,
    );
}

function checkFormat(value: string): void {
  if (value !== 'json' && value !== 'geojson')
    throw ApiError.invalidParameter('f', `f: features are GeoJSON; give f=geojson or f=json, or leave it out; got ${show(value)}`);
}

function itemsOutput(q: Record<string, unknown>): Output {
  q.format = 'geojson';
  return takeOutput(q, '', 'footprint');
}

/**
 * The end of the items FeatureCollection, after its features: numberReturned, numberMatched
 * (only when exact: the ranked count stops at 10,000), timeStamp, and the self and next links.
 */
export function itemsTail(link: LinkContext, returned: number, matched: number | null, next: number | null, now: Date): string {
  const b = trim(link.baseUrl);
  const items = `${b}${ITEMS_PATH}`;
  const raw = link.rawQuery ?? '';
  const links: Link[] = [
    { href: raw === '' ? items : `${items}?${raw.replace(/^\?/, '')}`, rel: 'self', type: GEOJSON_TYPE, title: 'This page' },
  ];
  if (next !== null)
    links.push({ href: `${items}?${withOffset(link.rawQuery, next)}`, rel: 'next', type: GEOJSON_TYPE, title: 'Next page' });
  const matchedText = matched === null ? '' : `,"numberMatched":${matched}`;
  return `],"numberReturned":${returned}${matchedText},"timeStamp":${JSON.stringify(now.toISOString().replace(/\.\d{3}Z$/, 'Z'))},"links":${JSON.stringify(links)}}`;
}

// ---------------------------------------------------------------------------------------------
// The OpenAPI document's part
// ---------------------------------------------------------------------------------------------

const TAG = 'Features (OGC API)';
const errors = (codes: readonly number[]): Json =>
  Object.fromEntries(
    codes.map((c) => [
      String(c),
      {
        $ref: `#/components/responses/${
          {
            400: 'InvalidParameter',
            401: 'Unauthorized',
            402: 'InsufficientCredits',
            403: 'Forbidden',
            404: 'NotFound',
            429: 'TooManyRequests',
            503: 'Unavailable',
          }[c]
        }`,
      },
    ]),
  );

function keyless(id: string, summary: string, schema: string, extra: Json = {}): Json {
  return {
    get: {
      operationId: id,
      tags: [TAG],
      summary,
      security: [],
      description: `${summary}. Needs no key.`,
      responses: { 200: { description: summary, content: { [JSON_TYPE]: { schema: ref(schema) } } }, ...extra },
    },
  };
}

const collectionIdParam: Json = {
  name: 'collectionId',
  in: 'path',
  required: true,
  description: `The collection: ${COLLECTION_ID}, the only one.`,
  schema: { type: 'string', enum: [COLLECTION_ID] },
};

export function featuresOpenApi(): OpenApiPart {
  const list = OPERATIONS.listBuildings;
  const filters = parametersOf('listBuildings')
    .filter((p) => !['bbox', 'limit', 'offset', 'f'].includes(p.name))
    .map((p) => parameterObject(p, list));
  const rated = (description: string, schema: string): Json => ({
    description,
    headers: Object.fromEntries(
      [
        'RateLimit-Limit',
        'RateLimit-Remaining',
        'RateLimit-Reset',
        'RateLimit-Policy',
        'RateLimit',
        'X-Daily-Quota-Limit',
        'X-Daily-Quota-Remaining',
        'X-Credits-Charged',
        'X-Credits-Remaining',
      ].map((h) => [h, { $ref: `#/components/headers/${h}` }]),
    ),
    content: { [GEOJSON_TYPE]: { schema: ref(schema) } },
  });
  const link = {
    type: 'object',
    required: ['href', 'rel'],
    properties: { href: { type: 'string', format: 'uri' }, rel: { type: 'string' }, type: { type: 'string' }, title: { type: 'string' } },
  };
  const links = { type: 'array', items: ref('OgcLink') };
  return {
    tags: [
      {
        name: TAG,
        description:
          'OGC API – Features, Part 1 (Core): the catalogue as one collection of GeoJSON features with footprints, for GIS clients (GDAL\'s OAPIF driver, QGIS). The documents need no key; items need one (GDAL: GDAL_HTTP_HEADERS="Authorization: Bearer <API_KEY>") and are charged as GET /buildings.',
      },
    ],
    paths: {
      '/': keyless('getLandingPage', 'The landing page of OGC API – Features', 'OgcLandingPage'),
      '/conformance': keyless('getConformance', 'The conformance classes implemented (Core, GeoJSON)', 'OgcConformance'),
      '/collections': keyless('listCollections', 'The collections: one, buildings', 'OgcCollections'),
      '/collections/{collectionId}': {
        get: {
          ...(keyless('getCollection', 'One collection, with its extent', 'OgcCollection', errors([404])).get as Json),
          parameters: [collectionIdParam],
        },
      },
      '/collections/{collectionId}/items': {
        get: {
          operationId: 'getFeatures',
          tags: [TAG],
          summary: 'Buildings of the collection, as GeoJSON features',
          description:
            'With bbox (of any size, unlike GET /buildings): the buildings whose representative point lies in it that pass every filter, ranked as GET /buildings ranks them ' +
            `(sort), paged by limit and offset within the first ${MAX_WINDOW.toLocaleString('en-US')}; numberMatched is given when the count is exact. Without bbox: every building ` +
            'in storage order, no filter. Features carry footprints (geometry=point for points). A limit above 100 is read as 100. ' +
            'Every building returned costs 1 credit unless the workspace opened it in the last 365 days; a page is charged all or nothing.',
          parameters: [
            collectionIdParam,
            {
              name: 'bbox',
              in: 'query',
              required: false,
              style: 'form',
              explode: false,
              description:
                'minLon,minLat,maxLon,maxLat (CRS84), of any size; a building is inside when its representative point is. Six numbers ' +
                'minLon,minLat,minHeight,maxLon,maxLat,maxHeight are read without the heights: footprints have none. A minLon above ' +
                'maxLon crosses the antimeridian (179.9,-17,-179.9,-16.5): the buildings either side, ranked as one list.',
              schema: {
                type: 'array',
                oneOf: [
                  { minItems: 4, maxItems: 4 },
                  { minItems: 6, maxItems: 6 },
                ],
                items: { type: 'number' },
              },
            },
            {
              name: 'datetime',
              in: 'query',
              required: false,
              style: 'form',
              explode: false,
              description:
                'An RFC 3339 date-time, or an interval start/end with either end open (..). Buildings carry no time of their own, so every ' +
                'building matches any valid value, as OGC API – Features Core asks of features without a temporal geometry.',
              schema: { type: 'string' },
            },
            {
              name: 'limit',
              in: 'query',
              required: false,
              style: 'form',
              explode: false,
              description: 'Features a page; above 100 reads as 100.',
              schema: { type: 'integer', minimum: 1, maximum: ITEMS_MAX_LIMIT, default: ITEMS_DEFAULT_LIMIT },
            },
            {
              name: 'offset',
              in: 'query',
              required: false,
              style: 'form',
              explode: false,
              description: 'Features to skip; with bbox, offset + limit at most 10,000. The next link moves it on.',
              schema: { type: 'integer', minimum: 0, default: 0 },
            },
            ...filters,
          ],
          responses: { 200: rated('A page of features.', 'OgcFeatureCollection'), ...errors([400, 401, 402, 403, 404, 429, 503]) },
        },
      },
      '/collections/{collectionId}/items/{featureId}': {
        get: {
          operationId: 'getFeature',
          tags: [TAG],
          summary: 'One building as a GeoJSON feature',
          description:
            'The building whose building_id is featureId, with its footprint. 1 credit unless the workspace opened it in the last 365 days; an id that names no building is 404.',
          parameters: [
            collectionIdParam,
            { name: 'featureId', in: 'path', required: true, description: 'A building_id.', schema: { type: 'string', format: 'uuid' } },
          ],
          responses: { 200: rated('The feature.', 'OgcFeature'), ...errors([400, 401, 402, 403, 404, 429, 503]) },
        },
      },
    },
    schemas: {
      OgcLink: link,
      OgcLandingPage: {
        type: 'object',
        required: ['links'],
        properties: { title: { type: 'string' }, description: { type: 'string' }, links },
      },
      OgcConformance: {
        type: 'object',
        required: ['conformsTo'],
        properties: { conformsTo: { type: 'array', items: { type: 'string', format: 'uri' } } },
      },
      OgcCollection: {
        type: 'object',
        required: ['id', 'links'],
        properties: {
          id: { type: 'string' },
          title: { type: 'string' },
          description: { type: 'string' },
          itemType: { type: 'string' },
          crs: { type: 'array', items: { type: 'string' } },
          links,
          extent: {
            type: 'object',
            properties: {
              spatial: {
                type: 'object',
                properties: {
                  bbox: { type: 'array', items: { type: 'array', minItems: 4, maxItems: 4, items: { type: 'number' } } },
                  crs: { type: 'string' },
                },
              },
            },
          },
        },
      },
      OgcCollections: {
        type: 'object',
        required: ['links', 'collections'],
        properties: { links, collections: { type: 'array', items: ref('OgcCollection') } },
      },
      OgcFeature: { allOf: [ref('BuildingFeature')], description: 'A building as a GeoJSON Feature, with links.' },
      OgcFeatureCollection: {
        type: 'object',
        required: ['type', 'features', 'numberReturned', 'links'],
        properties: {
          type: { type: 'string', const: 'FeatureCollection' },
          features: { type: 'array', maxItems: ITEMS_MAX_LIMIT, items: ref('BuildingFeature') },
          numberReturned: { type: 'integer', minimum: 0 },
          numberMatched: { type: 'integer', minimum: 0, description: 'Every match; left out when counting stopped at 10,000.' },
          timeStamp: { type: 'string', format: 'date-time' },
          links,
        },
      },
    },
  };
}
