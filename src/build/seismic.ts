/**
 * Romanian lists of technically assessed buildings (seismic risk): one CSV per city, each with
 * its own columns. A column mapping names the column of each field; built-in presets cover the
 * layouts of the published lists, and `auto` picks the first preset whose columns the file has.
 *
 * Values: risk class `RS1`..`RS4` → RsI..RsIV, `U1`..`U3`, `C` → consolidated, `N/A` or empty
 * → null; a consolidation status `YES…` makes the class consolidated and `DEMOLISHED` drops
 * the row; year built → construction_year; the height regime → floors; apartments → dwellings;
 * examination year → seismic_risk_assessment_year. Every row joined to a building makes it
 * `seismic_listed`, whatever its class (N/A included) or year.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import type { SeismicRiskClass } from '../snapshot/schema.ts';
import { readCsv } from './csv.ts';
import { parseHeightRegime, type HeightRegime } from './height-regime.ts';
import { BadRowError, type RowLog } from './bad-rows.ts';

export const SEISMIC_FIELDS = [
  'lat',
  'lon',
  'class',
  'year_built',
  'height_regime',
  'apartments',
  'exam_year',
  'address',
  'number',
  'locality',
  'consolidation',
] as const;
export type SeismicField = (typeof SEISMIC_FIELDS)[number];
const REQUIRED: readonly SeismicField[] = ['lat', 'lon', 'class'];

/** Which column holds each field; lat, lon and class are required. */
export type SeismicColumns = { [F in SeismicField]?: string } & { lat: string; lon: string; class: string };

/** Presets, in the order `auto` tries them (the more columns a preset needs, the earlier). */
export const SEISMIC_PRESETS: Readonly<Record<string, SeismicColumns>> = {
  /** The county lists (expertiza-bacau.csv, -iasi.csv, ...): Title Case headers. */
  county: {
    lat: 'Lat',
    lon: 'Lng',
    class: 'Risk Category',
    year_built: 'Year Built',
    height_regime: 'Height Regime',
    apartments: 'Apartment Count',
    exam_year: 'Examination Year',
    address: 'Address',
    number: 'Street Number',
    locality: 'Locality',
  },
  /** Both Bucharest lists (expertiza-bucuresti.csv and -2021.csv): snake_case headers in different orders. */
  bucuresti: {
    lat: 'lat',
    lon: 'lng',
    class: 'risk_category',
    year_built: 'year_built',
    height_regime: 'height_regime',
    apartments: 'apartment_count',
    exam_year: 'examination_year',
    address: 'address',
    number: 'street_number',
    locality: 'locality',
    consolidation: 'consolidation_status',
  },
  /** Dolj: the number is inside the address, no apartment count. */
  dolj: {
    lat: 'lat',
    lon: 'lng',
    class: 'risk_category',
    year_built: 'year_built',
    height_regime: 'height_regime',
    exam_year: 'examination_year',
    address: 'address',
    locality: 'locality',
    consolidation: 'consolidation_status',
  },
  /** Neamț: no apartment count (its residents_count counts people) and no examination year. */
  neamt: {
    lat: 'lat',
    lon: 'lng',
    class: 'risk_category',
    year_built: 'year_built',
    height_regime: 'height_regime',
    address: 'address',
    number: 'street_number',
    locality: 'locality',
  },
};

export class SeismicInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SeismicInputError';
  }
}

/**
 * Reads a `--seismic-columns` value: `auto`, a preset name, inline JSON, or a .json file with
 * a mapping. A misspelled field is refused by name.
 */
export function parseSeismicColumns(spec: string): SeismicColumns | 'auto' {
  const s = spec.trim();
  if (s === 'auto') return 'auto';
  if (Object.hasOwn(SEISMIC_PRESETS, s)) return SEISMIC_PRESETS[s];
  let text: string;
  if (s.startsWith('{')) text = s;
  else if (s.endsWith('.json')) {
    try {
      text = readFileSync(s, 'utf8');
    } catch (err) {
      throw new SeismicInputError(
        `seismic column mapping ${s}: cannot read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
      );
    }
  } else {
    throw new SeismicInputError(
      `unknown seismic column preset "${s}" (presets: auto, ${Object.keys(SEISMIC_PRESETS).join(', ')}; or a JSON mapping)`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new SeismicInputError(`seismic column mapping is not JSON (${(err as Error).message})`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new SeismicInputError('seismic column mapping must be a JSON object of field → column name');
  for (const [key, column] of Object.entries(value)) {
    if (!(SEISMIC_FIELDS as readonly string[]).includes(key)) {
      throw new SeismicInputError(`seismic column mapping: unknown field "${key}" (fields: ${SEISMIC_FIELDS.join(', ')})`);
    }
    if (typeof column !== 'string' || column === '')
      throw new SeismicInputError(`seismic column mapping: field "${key}" must name a column`);
  }
  for (const f of REQUIRED) if (!(f in value)) throw new SeismicInputError(`seismic column mapping: field "${f}" is required`);
  return value as SeismicColumns;
}

/** Column index of each mapped field in `header`, or -1 for a field the mapping leaves out. */
function resolve(path: string, header: string[], columns: SeismicColumns | 'auto'): Record<SeismicField, number> {
  // A list saved with another separator reads as one column, which no layout or mapping could match.
  const separator = header.length === 1 ? [';', '\t'].find((c) => header[0].includes(c)) : undefined;
  if (separator !== undefined) {
    throw new SeismicInputError(
      `${path}: its header is separated by ${separator === ';' ? 'semicolons (;)' : 'tabs'}, not commas: a seismic list must be comma-separated`,
    );
  }
  const names = header.map((h) => h.trim());
  const has = (m: SeismicColumns): boolean => Object.values(m).every((c) => names.includes(c));
  let mapping: SeismicColumns;
  if (columns === 'auto') {
    const found = Object.values(SEISMIC_PRESETS).find(has);
    if (!found) {
      throw new SeismicInputError(
        `${path}: no built-in column layout matches its header (${names.join(', ')}); ` +
          'pass --seismic-columns with a JSON mapping, e.g. {"lat":"...","lon":"...","class":"..."}',
      );
    }
    mapping = found;
  } else {
    mapping = columns;
  }
  const fields = {} as Record<SeismicField, number>;
  for (const f of SEISMIC_FIELDS) {
    const column = mapping[f];
    fields[f] = column === undefined ? -1 : names.indexOf(column);
    if (column !== undefined && fields[f] < 0) {
      throw new SeismicInputError(`${path}: column "${column}" (for ${f}) is not in the header (${names.join(', ')})`);
    }
  }
  return fields;
}

export interface SeismicRow {
  /** `ro-seismic:<file>:<line>`: where the row comes from. */
  source: string;
  line: number;
  lon: number;
  lat: number;
  risk_class: SeismicRiskClass | null;
  assessment_year: number | null;
  construction_year: number | null;
  regime: HeightRegime | null;
  dwellings: number | null;
  /** Street and number as the list writes them, or null. */
  address: string | null;
  house_number: string | null;
  locality: string | null;
}

const CLASSES: Readonly<Record<string, SeismicRiskClass>> = {
  RS1: 'RsI',
  RSI: 'RsI',
  RS2: 'RsII',
  RSII: 'RsII',
  RS3: 'RsIII',
  RSIII: 'RsIII',
  RS4: 'RsIV',
  RSIV: 'RsIV',
  U1: 'U1',
  U2: 'U2',
  U3: 'U3',
  C: 'consolidated',
};

/** A risk class cell: the class, null for none stated, undefined for a value not understood. */
export function riskClass(value: string): SeismicRiskClass | null | undefined {
  const v = value.trim().toUpperCase().replace(/[\s.]/g, '');
  if (v === '' || v === 'N/A' || v === 'NA' || v === '-') return null;
  return CLASSES[v];
}

const cell = (fields: string[], i: number): string => (i < 0 ? '' : (fields[i] ?? '').trim());

function year(text: string): number | null | undefined {
  if (text === '') return null;
  if (!/^\d{3,4}$/.test(text)) return undefined;
  const y = Number(text);
  return y >= 100 && y <= 2100 ? y : undefined;
}

/**
 * Streams the usable rows of one list. Bad values are logged and left null; rows without a
 * usable position are logged and skipped; demolished buildings are noted and skipped.
 */
export async function* readSeismicList(
  path: string,
  columns: SeismicColumns | 'auto',
  log: RowLog,
  onBytes?: (n: number) => void,
): AsyncGenerator<SeismicRow> {
  const file = basename(path);
  let fields: Record<SeismicField, number> | null = null;
  let needed = 0; // fields a row must have to reach every mapped column
  try {
    for await (const { fields: row, line } of readCsv(path, onBytes)) {
      if (!fields) {
        fields = resolve(path, row, columns);
        needed = Math.max(...Object.values(fields)) + 1;
        continue;
      }
      const where = { file, line };
      if (row.length < needed) {
        log.bad('missing_fields', where, `${row.length} fields, the mapped columns need ${needed}`);
        continue;
      }
      const consolidation = cell(row, fields.consolidation).toUpperCase();
      if (consolidation.startsWith('DEMOLISHED')) {
        log.note('seismic_demolished', where, 'the list says the building was demolished');
        continue;
      }
      const lat = Number(cell(row, fields.lat).replace(',', '.'));
      const lon = Number(cell(row, fields.lon).replace(',', '.'));
      if (
        cell(row, fields.lat) === '' ||
        cell(row, fields.lon) === '' ||
        !Number.isFinite(lat) ||
        !Number.isFinite(lon) ||
        Math.abs(lat) > 90 ||
        Math.abs(lon) > 180 ||
        (lat === 0 && lon === 0)
      ) {
        log.bad('bad_coordinates', where, `lat "${cell(row, fields.lat)}", lon "${cell(row, fields.lon)}"`);
        continue;
      }
      let risk = riskClass(cell(row, fields.class));
      if (risk === undefined) {
        log.bad('unknown_risk_class', where, `risk class "${cell(row, fields.class)}"`);
        risk = null;
      }
      if (consolidation.startsWith('YES')) risk = 'consolidated';

      const built = year(cell(row, fields.year_built));
      if (built === undefined) log.bad('unparseable_year', where, `year built "${cell(row, fields.year_built)}"`);
      const examined = year(cell(row, fields.exam_year));
      if (examined === undefined) log.bad('unparseable_year', where, `examination year "${cell(row, fields.exam_year)}"`);

      const regimeText = cell(row, fields.height_regime);
      const regime = regimeText === '' ? null : parseHeightRegime(regimeText);
      if (regimeText !== '' && regime === null) log.bad('unparseable_height_regime', where, `height regime "${regimeText}"`);

      const apartmentsText = cell(row, fields.apartments);
      let dwellings: number | null = null;
      if (apartmentsText !== '') {
        if (/^\d+$/.test(apartmentsText)) dwellings = Number(apartmentsText);
        else log.bad('unparseable_number', where, `apartment count "${apartmentsText}"`);
      }

      const street = cell(row, fields.address);
      const number = cell(row, fields.number);
      const address = [street, number].filter((s) => s !== '').join(' ');
      yield {
        source: `ro-seismic:${file}:${line}`,
        line,
        lon,
        lat,
        risk_class: risk,
        assessment_year: examined ?? null,
        construction_year: built ?? null,
        regime,
        dwellings,
        address: address === '' ? null : address,
        house_number: number === '' ? null : number,
        locality: cell(row, fields.locality) || null,
      };
    }
  } catch (err) {
    if (err instanceof SeismicInputError || err instanceof BadRowError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    throw new SeismicInputError(`${path}: ${code ? `cannot read (${code})` : (err as Error).message}`);
  }
  if (!fields) throw new SeismicInputError(`${path}: empty, no header row`);
}
