/**
 * Streams the features of a GeoJSON file without holding the file in memory: a GeoJSON Text
 * Sequence (RFC 8142: each text led by RS 0x1E, as `osmium export -f geojsonseq` writes), a
 * newline-delimited sequence (one feature per line, as ogr2ogr's GeoJSONSeq writes), or a
 * FeatureCollection of any layout, scanned element by element.
 *
 * A record that is not JSON or not a Feature is a bad row: it is handed out as such and the
 * stream goes on (RFC 8142 §2.3: a sequence survives a damaged text). Input that cannot be
 * read as GeoJSON at all, or that ends inside a text, throws a `GeoJsonInputError`.
 */
import { createReadStream } from 'node:fs';

export interface Feature {
  type: 'Feature';
  id?: string | number;
  geometry: { type: string; coordinates?: unknown } | null;
  properties: Record<string, unknown> | null;
}

export type FeatureRow = { line: number; feature: Feature; error?: undefined } | { line: number; feature?: undefined; error: string };

/** The input as a whole is unusable: missing, empty, not GeoJSON, or cut off. */
export class GeoJsonInputError extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(`${path}: ${message}`);
    this.name = 'GeoJsonInputError';
  }
}

const RS = 0x1e;
const LF = 0x0a;

type Mode = 'rs' | 'lf' | 'collection';

function toRow(text: string, line: number): FeatureRow | null {
  if (/^\s*$/.test(text)) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { line, error: `not JSON (${(err as Error).message})` };
  }
  if (value === null || typeof value !== 'object' || (value as { type?: unknown }).type !== 'Feature') {
    return { line, error: 'not a GeoJSON Feature' };
  }
  return { line, feature: value as Feature };
}

async function* chunks(path: string, onBytes?: (n: number) => void): AsyncGenerator<Buffer> {
  const stream = createReadStream(path);
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      onBytes?.(chunk.length);
      yield chunk;
    }
  } catch (err) {
    throw new GeoJsonInputError(path, `cannot read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
}

/**
 * Decides the layout from the first text: RS first means RFC 8142; a first line that is a
 * Feature, whole or damaged, means one feature per line; anything else starting with `{` is
 * scanned as a FeatureCollection (its first line is an unfinished object).
 */
async function sniff(path: string): Promise<Mode> {
  const parts: Buffer[] = [];
  let first = -1;
  for await (const chunk of chunks(path)) {
    parts.push(chunk);
    const all = Buffer.concat(parts);
    if (first < 0) {
      first = 0;
      while (first < all.length && (all[first] === 0x20 || all[first] === 0x09 || all[first] === 0x0d || all[first] === LF)) first++;
      if (all[first] === 0xef && all[first + 1] === 0xbb && all[first + 2] === 0xbf) first += 3;
      if (first >= all.length) {
        first = -1;
        continue;
      }
      if (all[first] === RS) return 'rs';
      if (all[first] !== 0x7b)
        throw new GeoJsonInputError(path, `not GeoJSON: it starts with ${JSON.stringify(all.toString('utf8', first, first + 20))}`);
    }
    const end = all.indexOf(LF, first);
    if (end >= 0) return lineMode(all.toString('utf8', first, end));
    parts.length = 0;
    parts.push(all);
  }
  if (first < 0) throw new GeoJsonInputError(path, 'is empty');
  return lineMode(Buffer.concat(parts).toString('utf8', first));

  function lineMode(firstLine: string): Mode {
    try {
      const value = JSON.parse(firstLine) as { type?: unknown };
      if (value?.type === 'Feature') return 'lf';
      if (value?.type === 'FeatureCollection') return 'collection';
    } catch {
      // An unfinished first line opens a collection, unless it is a damaged Feature of a sequence.
      return /"type"\s*:\s*"Feature"/.test(firstLine) ? 'lf' : 'collection';
    }
    throw new GeoJsonInputError(path, 'not GeoJSON: the first text is neither a Feature nor a FeatureCollection');
  }
}

function countLf(buf: Buffer, start: number, end: number): number {
  let n = 0;
  for (let i = buf.indexOf(LF, start); i >= 0 && i < end; i = buf.indexOf(LF, i + 1)) n++;
  return n;
}

/** Splits a sequence at its delimiter (RS or LF); each record's line is where it starts. */
async function* sequence(path: string, delimiter: number, onBytes?: (n: number) => void): AsyncGenerator<FeatureRow> {
  // The pieces of a record that spans chunks, joined once its end is found: a many-megabyte
  // line (a country boundary) costs one copy, not one per chunk.
  let parts: Buffer[] = [];
  let line = 1;
  let seenDelimiter = false;
  const emit = (buf: Buffer): FeatureRow | null => {
    const recordLine = line;
    line += delimiter === RS ? countLf(buf, 0, buf.length) : 1;
    // Whatever precedes the first RS (normally nothing) is not a text of the sequence.
    if (delimiter === RS && !seenDelimiter) return null;
    return toRow(buf.toString('utf8'), recordLine);
  };
  for await (const chunk of chunks(path, onBytes)) {
    let start = 0;
    for (let at = chunk.indexOf(delimiter); at >= 0; at = chunk.indexOf(delimiter, start)) {
      let record = chunk.subarray(start, at);
      if (parts.length > 0) {
        parts.push(record);
        record = Buffer.concat(parts);
        parts = [];
      }
      const row = emit(record);
      if (delimiter === RS) seenDelimiter = true;
      if (row) yield row;
      start = at + 1;
    }
    if (start < chunk.length) parts.push(chunk.subarray(start));
  }
  const last = Buffer.concat(parts);
  const lastLine = line;
  const row = emit(last);
  if (row?.error !== undefined) {
    const complete = last.length > 0 && last[last.length - 1] === LF;
    // A last text without its LF that does not parse was cut off: the file is incomplete.
    if (!complete) throw new GeoJsonInputError(path, `truncated: the text starting at line ${lastLine} is cut off at the end of the file`);
  }
  if (row) yield row;
}

/** Scans a FeatureCollection of any layout and hands out the elements of its `features` array. */
async function* collection(path: string, onBytes?: (n: number) => void): AsyncGenerator<FeatureRow> {
  const decoder = new TextDecoder('utf-8');
  let depth = 0;
  let inString = false;
  let escaped = false;
  let line = 1;
  let key = ''; // the string being read at depth 1 (a key or a value of the collection)
  let lastString = '';
  let afterColon = false; // depth-1 value position: the next token is the value of `lastKey`
  let lastKey = '';
  let inFeatures = false;
  let sawFeatures = false;
  let topType: string | null = null;
  let capture: string[] | null = null;
  let captureLine = 0;
  let captureStart = 0;

  for await (const buf of chunks(path, onBytes)) {
    const text = decoder.decode(buf, { stream: true });
    const out: FeatureRow[] = [];
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === LF) line++;
      if (inString) {
        if (escaped) escaped = false;
        else if (c === 92)
          escaped = true; // backslash
        else if (c === 34) {
          inString = false;
          if (depth === 1) {
            lastString = key;
            if (afterColon && lastKey === 'type') topType = lastString;
            afterColon = false;
          }
        } else if (depth === 1) key += text[i];
        continue;
      }
      switch (c) {
        case 34: // quote
          inString = true;
          if (depth === 1) key = '';
          break;
        case 58: // colon
          if (depth === 1) {
            lastKey = lastString;
            afterColon = true;
          }
          break;
        case 0x7b: // {
        case 0x5b: // [
          if (depth === 0 && c !== 0x7b) throw new GeoJsonInputError(path, 'not GeoJSON: expected an object at the top');
          if (depth === 1 && afterColon && c === 0x5b && lastKey === 'features') {
            inFeatures = true;
            sawFeatures = true;
          }
          if (depth === 2 && inFeatures && c === 0x7b) {
            capture = [];
            captureStart = i;
            captureLine = line;
          }
          if (depth === 1) afterColon = false;
          depth++;
          break;
        case 0x7d: // }
        case 0x5d: // ]
          depth--;
          if (depth < 0) throw new GeoJsonInputError(path, `not JSON: unbalanced bracket at line ${line}`);
          if (depth === 2 && capture) {
            capture.push(text.slice(captureStart, i + 1));
            const row = toRow(capture.join(''), captureLine);
            if (row) out.push(row);
            capture = null;
          } else if (depth === 1 && inFeatures) {
            inFeatures = false;
          }
          break;
        case 44: // comma
          if (depth === 1) afterColon = false;
          break;
      }
    }
    if (capture) {
      capture.push(text.slice(captureStart));
      captureStart = 0;
    }
    yield* out;
  }
  if (depth !== 0 || inString) {
    const where = capture ? `the feature starting at line ${captureLine}` : `line ${line}`;
    throw new GeoJsonInputError(path, `truncated: the file ends inside ${where}`);
  }
  if (topType !== null && topType !== 'FeatureCollection') {
    throw new GeoJsonInputError(path, `not a FeatureCollection (type is "${topType}"); write one feature per line or a GeoJSON Sequence`);
  }
  if (!sawFeatures) throw new GeoJsonInputError(path, 'not GeoJSON: no "features" array');
}

/** Streams the features of `path`; `onBytes` is told how many bytes each chunk read had. */
export async function* readFeatures(path: string, onBytes?: (bytes: number) => void): AsyncGenerator<FeatureRow> {
  const mode = await sniff(path);
  if (mode === 'collection') yield* collection(path, onBytes);
  else yield* sequence(path, mode === 'rs' ? RS : LF, onBytes);
}
