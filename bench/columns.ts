/**
 * The bench's own copy of the columns its query mix reads, decoded straight from the Arrow
 * file (nothing shared with src/catalog), so that the brute-force scan and the DuckDB loader
 * are an independent second and third opinion on every answer.
 *
 * Conventions: numbers are Float64Array with NaN for null (a comparison with NaN is false);
 * enums are Uint8Array codes in the schema's value order with NULL_CODE for null; building_id
 * is four big-endian 32-bit words per row, whose order is the order of the id strings.
 */
import type { Data, Table, Vector } from 'apache-arrow';
import { readSnapshot } from '../src/snapshot/reader.ts';
import {
  BASIS,
  CATEGORY,
  FLOOD_ZONE,
  PANELS_STATUS,
  ROOF_SHAPE,
  SEISMIC_RISK_CLASS,
  SOLAR_BASIS,
  SOLAR_PRESENCE,
} from '../src/snapshot/schema.ts';

export const NULL_CODE = 255;

export interface BenchColumns {
  country: string;
  snapshotDate: string;
  n: number;
  lat: Float64Array;
  lon: Float64Array;
  /** building_id as 4 words per row. */
  idWords: Uint32Array;
  category: Uint8Array;
  roofShape: Uint8Array;
  volumeBasis: Uint8Array;
  floodZone: Uint8Array;
  seismicRiskClass: Uint8Array;
  solarPresence: Uint8Array;
  panelsStatus: Uint8Array;
  solarPotentialBasis: Uint8Array;
  has3dModel: Uint8Array;
  floors: Float64Array;
  dwellings: Float64Array;
  heightM: Float64Array;
  volumeM3: Float64Array;
  areaM2: Float64Array;
  recentFrostDays: Float64Array;
  /** Businesses, flattened: rows of building bizRow[j]; NaN = null; currency index into `currencies` (NULL_CODE = null). */
  bizRow: Int32Array;
  bizEmployeesMin: Float64Array;
  bizTurnover: Float64Array;
  bizCurrency: Uint8Array;
  currencies: string[];
  /**
   * Footprint: building b has polygons [polyStart[b], polyStart[b+1]), polygon p rings
   * [ringStart[p], ...), ring r vertices [vertexStart[r], ...).
   */
  polyStart: Int32Array;
  ringStart: Int32Array;
  vertexStart: Int32Array;
  /** Interleaved lon, lat. */
  coords: Float64Array;
  /** Footprint bounding box per building. */
  fpMinLon: Float64Array;
  fpMinLat: Float64Array;
  fpMaxLon: Float64Array;
  fpMaxLat: Float64Array;
}

function isValid(data: Data, i: number): boolean {
  if (data.nullCount === 0) return true;
  const bitmap = data.nullBitmap;
  if (!bitmap || bitmap.length === 0) return true;
  const j = data.offset + i;
  return ((bitmap[j >> 3] >> (j & 7)) & 1) === 1;
}

function batches(table: Table, name: string): Data[] {
  const v = table.getChild(name) as Vector | null;
  if (!v) throw new Error(`bench: column ${name} is missing`);
  return v.data as Data[];
}

/** Float64 or Int32 column into a Float64Array, NaN for null. */
function numbers(table: Table, name: string, n: number): Float64Array {
  const out = new Float64Array(n);
  let base = 0;
  for (const d of batches(table, name)) {
    const values = d.values as Float64Array | Int32Array;
    for (let i = 0; i < d.length; i++) out[base + i] = isValid(d, i) ? values[d.offset + i] : NaN;
    base += d.length;
  }
  return out;
}

/** Dictionary-encoded enum into codes of `values`, NULL_CODE for null. */
function codes(table: Table, name: string, values: readonly string[], n: number): Uint8Array {
  const out = new Uint8Array(n);
  let base = 0;
  for (const d of batches(table, name)) {
    const dict = d.dictionary!;
    const remap = new Uint8Array(dict.length);
    for (let k = 0; k < dict.length; k++) {
      const at = values.indexOf(String(dict.get(k)));
      if (at < 0) throw new Error(`bench: column ${name} holds "${dict.get(k)}", not an enum value`);
      remap[k] = at;
    }
    const idx = d.values as Int8Array | Int32Array;
    for (let i = 0; i < d.length; i++) out[base + i] = isValid(d, i) ? remap[idx[d.offset + i]] : NULL_CODE;
    base += d.length;
  }
  return out;
}

function bools(table: Table, name: string, n: number): Uint8Array {
  const out = new Uint8Array(n);
  let base = 0;
  for (const d of batches(table, name)) {
    const bits = d.values as Uint8Array;
    for (let i = 0; i < d.length; i++) {
      const j = d.offset + i;
      out[base + i] = isValid(d, i) ? (bits[j >> 3] >> (j & 7)) & 1 : 0;
    }
    base += d.length;
  }
  return out;
}

const HEX = new Int8Array(128).fill(-1);
for (let i = 0; i < 10; i++) HEX[48 + i] = i;
for (let i = 0; i < 6; i++) HEX[97 + i] = 10 + i;

function idWords(table: Table, n: number): Uint32Array {
  const out = new Uint32Array(4 * n);
  let base = 0;
  for (const d of batches(table, 'building_id')) {
    const offsets = d.valueOffsets as Int32Array;
    const bytes = d.values as Uint8Array;
    for (let i = 0; i < d.length; i++) {
      const s = offsets[d.offset + i];
      if (offsets[d.offset + i + 1] - s !== 36) throw new Error(`bench: building_id of row ${base + i} is not a UUID`);
      let w = 0;
      let word = 0;
      let digits = 0;
      for (let k = 0; k < 36; k++) {
        const c = bytes[s + k];
        if (c === 45) continue;
        const h = HEX[c];
        if (h === undefined || h < 0) throw new Error(`bench: building_id of row ${base + i} is not a lowercase UUID`);
        word = word * 16 + h;
        if (++digits === 8) {
          out[4 * (base + i) + w++] = word;
          word = 0;
          digits = 0;
        }
      }
    }
    base += d.length;
  }
  return out;
}

const HEX_BYTE = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
const hexWord = (w: number): string => HEX_BYTE[w >>> 24] + HEX_BYTE[(w >>> 16) & 255] + HEX_BYTE[(w >>> 8) & 255] + HEX_BYTE[w & 255];

/** The id string of row `row`. */
export function formatId(words: Uint32Array, row: number): string {
  const a = hexWord(words[4 * row]),
    b = hexWord(words[4 * row + 1]),
    c = hexWord(words[4 * row + 2]),
    d = hexWord(words[4 * row + 3]);
  return `${a}-${b.slice(0, 4)}-${b.slice(4)}-${c.slice(0, 4)}-${c.slice(4)}${d}`;
}

function childByName(d: Data, name: string): Data {
  const fields = (d.type as { children: { name: string }[] }).children;
  const at = fields.findIndex((f) => f.name === name);
  if (at < 0) throw new Error(`bench: struct field ${name} is missing`);
  return d.children[at];
}

function utf8At(d: Data, i: number): string | null {
  if (!isValid(d, i)) return null;
  const offsets = d.valueOffsets as Int32Array;
  const s = offsets[d.offset + i],
    e = offsets[d.offset + i + 1];
  return Buffer.from((d.values as Uint8Array).buffer, (d.values as Uint8Array).byteOffset + s, e - s).toString('utf8');
}

function businesses(
  table: Table,
  c: Pick<BenchColumns, 'bizRow' | 'bizEmployeesMin' | 'bizTurnover' | 'bizCurrency' | 'currencies'>,
): void {
  const rows: number[] = [];
  const emp: number[] = [];
  const turnover: number[] = [];
  const currency: number[] = [];
  const currencies: string[] = [];
  let base = 0;
  for (const d of batches(table, 'businesses')) {
    const offsets = d.valueOffsets as Int32Array;
    const struct = d.children[0];
    const empD = childByName(struct, 'employees_min');
    const turnD = childByName(struct, 'turnover');
    const curD = childByName(struct, 'turnover_currency');
    for (let i = 0; i < d.length; i++) {
      for (let j = offsets[d.offset + i]; j < offsets[d.offset + i + 1]; j++) {
        rows.push(base + i);
        emp.push(isValid(empD, j) ? (empD.values as Int32Array)[empD.offset + j] : NaN);
        turnover.push(isValid(turnD, j) ? (turnD.values as Float64Array)[turnD.offset + j] : NaN);
        const cur = utf8At(curD, j);
        let code = NULL_CODE;
        if (cur !== null) {
          code = currencies.indexOf(cur);
          if (code < 0) {
            code = currencies.push(cur) - 1;
            if (code >= NULL_CODE) throw new Error('bench: more than 254 currencies');
          }
        }
        currency.push(code);
      }
    }
    base += d.length;
  }
  c.bizRow = Int32Array.from(rows);
  c.bizEmployeesMin = Float64Array.from(emp);
  c.bizTurnover = Float64Array.from(turnover);
  c.bizCurrency = Uint8Array.from(currency);
  c.currencies = currencies;
}

function footprints(table: Table, n: number, c: BenchColumns): void {
  const parts = batches(table, 'footprint');
  let polys = 0,
    rings = 0,
    vertices = 0;
  for (const d of parts) {
    const po = d.valueOffsets as Int32Array;
    const pd = d.children[0];
    const ro = pd.valueOffsets as Int32Array;
    const rd = pd.children[0];
    const vo = rd.valueOffsets as Int32Array;
    const p0 = po[d.offset],
      p1 = po[d.offset + d.length];
    polys += p1 - p0;
    rings += ro[p1] - ro[p0];
    vertices += vo[ro[p1]] - vo[ro[p0]];
  }
  c.polyStart = new Int32Array(n + 1);
  c.ringStart = new Int32Array(polys + 1);
  c.vertexStart = new Int32Array(rings + 1);
  c.coords = new Float64Array(2 * vertices);
  c.fpMinLon = new Float64Array(n);
  c.fpMinLat = new Float64Array(n);
  c.fpMaxLon = new Float64Array(n);
  c.fpMaxLat = new Float64Array(n);
  let b = 0,
    p = 0,
    r = 0,
    v = 0;
  for (const d of parts) {
    const po = d.valueOffsets as Int32Array;
    const pd = d.children[0];
    const ro = pd.valueOffsets as Int32Array;
    const rd = pd.children[0];
    const vo = rd.valueOffsets as Int32Array;
    const xy = rd.children[0].children[0];
    const values = xy.values as Float64Array;
    const xyOff = 2 * rd.children[0].offset + xy.offset;
    for (let i = 0; i < d.length; i++, b++) {
      c.polyStart[b] = p;
      let minX = Infinity,
        minY = Infinity,
        maxX = -Infinity,
        maxY = -Infinity;
      for (let fp = po[d.offset + i]; fp < po[d.offset + i + 1]; fp++, p++) {
        c.ringStart[p] = r;
        for (let fr = ro[pd.offset + fp]; fr < ro[pd.offset + fp + 1]; fr++, r++) {
          c.vertexStart[r] = v;
          for (let fv = vo[rd.offset + fr]; fv < vo[rd.offset + fr + 1]; fv++, v++) {
            const x = values[xyOff + 2 * fv],
              y = values[xyOff + 2 * fv + 1];
            c.coords[2 * v] = x;
            c.coords[2 * v + 1] = y;
            if (x < minX) minX = x;
            if (x > maxX) maxX = x;
            if (y < minY) minY = y;
            if (y > maxY) maxY = y;
          }
        }
      }
      c.fpMinLon[b] = minX;
      c.fpMinLat[b] = minY;
      c.fpMaxLon[b] = maxX;
      c.fpMaxLat[b] = maxY;
    }
  }
  c.polyStart[b] = p;
  c.ringStart[p] = r;
  c.vertexStart[r] = v;
}

/** Reads (and verifies) a snapshot file and decodes the columns the bench needs. */
export function decodeColumns(path: string): BenchColumns {
  const { metadata, table } = readSnapshot(path);
  const n = table.numRows;
  const c = {
    country: metadata.country,
    snapshotDate: metadata.snapshotDate,
    n,
    lat: numbers(table, 'latitude', n),
    lon: numbers(table, 'longitude', n),
    idWords: idWords(table, n),
    category: codes(table, 'category', CATEGORY, n),
    roofShape: codes(table, 'roof_shape', ROOF_SHAPE, n),
    volumeBasis: codes(table, 'volume_basis', BASIS, n),
    floodZone: codes(table, 'flood_zone', FLOOD_ZONE, n),
    seismicRiskClass: codes(table, 'seismic_risk_class', SEISMIC_RISK_CLASS, n),
    solarPresence: codes(table, 'solar_presence', SOLAR_PRESENCE, n),
    panelsStatus: codes(table, 'panels_status', PANELS_STATUS, n),
    solarPotentialBasis: codes(table, 'solar_potential_basis', SOLAR_BASIS, n),
    has3dModel: bools(table, 'has_3d_model', n),
    floors: numbers(table, 'floors', n),
    dwellings: numbers(table, 'dwellings', n),
    heightM: numbers(table, 'height_m', n),
    volumeM3: numbers(table, 'volume_m3', n),
    areaM2: numbers(table, 'footprint_area_m2', n),
    recentFrostDays: numbers(table, 'recent_frost_days', n),
  } as BenchColumns;
  businesses(table, c);
  footprints(table, n, c);
  return c;
}
