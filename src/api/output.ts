/**
 * How a page of buildings is written, apart from which buildings it holds: the format (`f=` or
 * the Accept header), the GeoJSON geometry (`geometry=`) and the fields kept (`fields=`). These
 * are parameters of the table like the filters; `takeOutput` removes them from the parsed query
 * so that the engine and its ranking cache see the query alone.
 */
import { CONTENT_TYPE, mediaRanges, type Encoding } from './encode.ts';
import { ApiError } from './errors.ts';
import { FieldSelection } from './fields.ts';
import { GEOJSON_CONTENT_TYPE, type GeometryChoice } from './geojson.ts';

export type Format = Encoding | 'geojson';
export const FORMATS: readonly Format[] = ['json', 'msgpack', 'geojson'];

export interface Output {
  /** Chosen by f= or an Accept header that prefers GeoJSON; undefined: the encoding negotiated as for every answer. */
  format: Format | undefined;
  geometry: GeometryChoice;
  /** Null: every field. */
  fields: FieldSelection | null;
}

/** Every field, the negotiated encoding: what an answer is without these parameters. */
export const DEFAULT_OUTPUT: Output = { format: undefined, geometry: 'point', fields: null };

const GEOJSON = 'application/geo+json';
const OTHERS = new Set(['application/json', 'application/msgpack', 'application/x-msgpack', 'application/vnd.msgpack']);

/** Does the Accept header name application/geo+json (q > 0) at least as high as JSON and MessagePack? */
export function prefersGeoJson(accept: string): boolean {
  // Media types are case-insensitive (RFC 9110 8.3.1): the quick test too.
  if (!/geo\+json/i.test(accept)) return false;
  let qGeo = 0;
  let qOther = 0;
  for (const [media, q] of mediaRanges(accept)) {
    if (media === GEOJSON) qGeo = Math.max(qGeo, q);
    else if (OTHERS.has(media)) qOther = Math.max(qOther, q);
  }
  return qGeo > 0 && qGeo >= qOther;
}

/**
 * Removes `format`, `geometry` and `fields` from a parsed query and says how to write its page.
 * `geometry` is refused unless the answer is GeoJSON: it has nowhere else to go.
 */
export function takeOutput(parsed: object, accept: string, geometryDefault: GeometryChoice = 'point'): Output {
  const q = parsed as Record<string, unknown>;
  const f = q.format as Format | undefined;
  const geometry = q.geometry as GeometryChoice | undefined;
  const fields = q.fields as string[] | undefined;
  delete q.format;
  delete q.geometry;
  delete q.fields;
  const format = f ?? (prefersGeoJson(accept) ? 'geojson' : undefined);
  if (geometry !== undefined && format !== 'geojson') {
    throw ApiError.invalidParameter(
      'geometry',
      'geometry: applies to GeoJSON answers only; add f=geojson or send Accept: application/geo+json',
    );
  }
  if (format === undefined && fields === undefined) return DEFAULT_OUTPUT;
  return { format, geometry: geometry ?? geometryDefault, fields: fields === undefined ? null : new FieldSelection(fields) };
}

/** The Content-Type of an answer written as `format`. */
export function contentTypeOf(format: Format): string {
  return format === 'geojson' ? GEOJSON_CONTENT_TYPE : CONTENT_TYPE[format];
}
