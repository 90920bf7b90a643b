/**
 * GET /buildings/export: the whole ranked result of a GET /buildings query as one stream of
 * records, in one of three line-oriented formats that data tools read a record at a time.
 */
import { ApiError } from './errors.ts';
import { ByteWriter } from './byte-writer.ts';
import { mediaRanges } from './encode.ts';
import { BUILDING_KEYS, FieldSelection, type BuildingKey } from './fields.ts';
import type { GeometryChoice } from './geojson.ts';
import type { PageItems } from './envelope.ts';
import { parseParameters } from './validate.ts';
import type { BuildingsQuery } from '../query/types.ts';

export type ExportFormat = 'ndjson' | 'csv' | 'geojsonseq';
export const EXPORT_FORMATS: readonly ExportFormat[] = ['ndjson', 'csv', 'geojsonseq'];

export const EXPORT_CONTENT_TYPE: Readonly<Record<ExportFormat, string>> = {
  ndjson: 'application/x-ndjson',
  csv: 'text/csv; charset=utf-8; header=present',
  geojsonseq: 'application/geo+json-seq',
};

const ACCEPTED: readonly [string, ExportFormat][] = [
  ['application/x-ndjson', 'ndjson'],
  ['application/ndjson', 'ndjson'],
  ['application/jsonl', 'ndjson'],
  ['text/csv', 'csv'],
  ['application/geo+json-seq', 'geojsonseq'],
];

export interface ExportQuery {
  /** The ranking asked for, as GET /buildings takes it (offset 0, limit up to 10,000). */
  query: BuildingsQuery;
  format: ExportFormat;
  geometry: GeometryChoice;
  fields: FieldSelection | null;
  /** Refuse (402) when more than this would be charged; undefined: no cap but the balance. */
  maxCredits: number | undefined;
}

/** The format the Accept header prefers among the export's (highest q, then the order above); null: none named. */
export function exportFormatOf(accept: string): ExportFormat | null {
  let best: ExportFormat | null = null;
  let bestQ = 0;
  for (const [media, q] of mediaRanges(accept)) {
    const format = ACCEPTED.find(([m]) => m === media)?.[1];
    if (format === undefined) continue;
    if (q > bestQ) {
      best = format;
      bestQ = q;
    }
  }
  return best;
}

export function parseExportQuery(rawQuery: string | undefined, accept: string): ExportQuery {
  const q = parseParameters('exportBuildings', rawQuery) as Record<string, unknown>;
  const format = (q.format as ExportFormat | undefined) ?? exportFormatOf(accept) ?? 'ndjson';
  const geometry = q.geometry as GeometryChoice | undefined;
  if (geometry !== undefined && format !== 'geojsonseq') {
    throw ApiError.invalidParameter('geometry', 'geometry: applies to f=geojsonseq only');
  }
  const fields = q.fields as string[] | undefined;
  const maxCredits = q.maxCredits as number | undefined;
  delete q.format;
  delete q.geometry;
  delete q.fields;
  delete q.maxCredits;
  q.offset = 0;
  return {
    query: q as unknown as BuildingsQuery,
    format,
    geometry: geometry ?? 'point',
    fields: fields === undefined ? null : new FieldSelection(fields),
    maxCredits,
  };
}

const CSV_NEEDS_QUOTES = /[",\r\n]/;

function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  return CSV_NEEDS_QUOTES.test(text) || text !== text.trim() ? `"${text.replaceAll('"', '""')}"` : text;
}

/** RFC 4180 rows of buildings: the header of the kept field names, then one line a building, CRLF. */
export class CsvRows {
  readonly columns: readonly BuildingKey[];
  private readonly json = new ByteWriter(16 * 1024);

  constructor(fields: FieldSelection | null) {
    this.columns = fields === null ? BUILDING_KEYS : fields.keys;
  }

  header(): string {
    return `${this.columns.join(',')}\r\n`;
  }

  /** One row from the building's JSON, which `writeJson` writes. */
  row(writeJson: (w: ByteWriter) => void): string {
    const w = this.json;
    w.reset();
    writeJson(w);
    const building = JSON.parse(w.view().toString('utf8')) as Record<string, unknown>;
    let line = '';
    for (let i = 0; i < this.columns.length; i++) line += (i === 0 ? '' : ',') + csvCell(building[this.columns[i]]);
    return `${line}\r\n`;
  }
}

const LF = 0x0a;
const RS = 0x1e;

/** The export's records from a page's items (each a Building's JSON, or a Feature for geojsonseq). */
export function exportRecords(
  items: PageItems,
  e: ExportQuery,
): { count: number; head: Uint8Array; write(i: number, w: ByteWriter): void } {
  if (e.format === 'csv') {
    const csv = new CsvRows(e.fields);
    return { count: items.count, head: Buffer.from(csv.header(), 'utf8'), write: (i, w) => w.text(csv.row((out) => items.write(i, out))) };
  }
  if (e.format === 'geojsonseq') {
    return {
      count: items.count,
      head: new Uint8Array(0),
      write: (i, w) => {
        w.byte(RS);
        items.write(i, w);
        w.byte(LF);
      },
    };
  }
  return {
    count: items.count,
    head: new Uint8Array(0),
    write: (i, w) => {
      items.write(i, w);
      w.byte(LF);
    },
  };
}
