/**
 * The peer: DuckDB (in process, `@duckdb/node-api`) holding the same columns in a table, in the
 * snapshot's row order (Hilbert order of the representative point, so DuckDB's per-row-group
 * min/max zonemaps on latitude/longitude prune like a coarse spatial index), and SQL with the
 * semantics of GET /buildings and GET /buildings/at.
 *
 * Loading: no extension can be downloaded here (spatial and arrow are not built in; parquet,
 * json, icu and core_functions are), so the bench appends typed data chunks of 2,048 rows
 * through the appender into staging tables of plain numbers (NaN / 255 for unknown), then one
 * CREATE TABLE AS turns them into the real types: ENUMs, NULLs, INTEGERs and a
 * LIST<STRUCT> of businesses. Footprints become a table of edges (one row per ring edge),
 * which is what the point query's SQL measures distances on.
 */
import {
  DuckDBBooleanType,
  DuckDBDataChunk,
  DuckDBDoubleType,
  DuckDBInstance,
  DuckDBIntegerType,
  DuckDBUTinyIntType,
  DuckDBVarCharType,
  type DuckDBAppender,
  type DuckDBBooleanVector,
  type DuckDBConnection,
  type DuckDBDoubleVector,
  type DuckDBIntegerVector,
  type DuckDBType,
  type DuckDBUTinyIntVector,
  type DuckDBVarCharVector,
} from '@duckdb/node-api';
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
import { MAX_WINDOW, type BuildingsQuery, type PointQuery } from '../src/query/types.ts';
import { formatId, type BenchColumns } from './columns.ts';
import type { Answer, Engine, MixQuery } from './engine.ts';
import { filterConditions, sqlString, SORT_COLUMNS } from './sql-filters.ts';
import { LocalFrame } from '../src/geo/wgs84.ts';
import { EARTH_RADIUS_M, checkSupported } from './scan.ts';

const CHUNK = 2048;

type Col =
  | { name: string; type: 'double'; values: (i: number) => number }
  | { name: string; type: 'int'; values: (i: number) => number }
  | { name: string; type: 'u8'; values: (i: number) => number }
  | { name: string; type: 'bool'; values: (i: number) => boolean }
  | { name: string; type: 'varchar'; values: (i: number) => string | null };

const DUCK_TYPE: Record<Col['type'], DuckDBType> = {
  double: DuckDBDoubleType.instance,
  int: DuckDBIntegerType.instance,
  u8: DuckDBUTinyIntType.instance,
  bool: DuckDBBooleanType.instance,
  varchar: DuckDBVarCharType.instance,
};
const SQL_TYPE: Record<Col['type'], string> = { double: 'DOUBLE', int: 'INTEGER', u8: 'UTINYINT', bool: 'BOOLEAN', varchar: 'VARCHAR' };

// One function per vector type keeps each setItem call site monomorphic.
function fillDouble(v: DuckDBDoubleVector, f: (i: number) => number, start: number, n: number): void {
  for (let j = 0; j < n; j++) v.setItem(j, f(start + j));
}
function fillInt(v: DuckDBIntegerVector, f: (i: number) => number, start: number, n: number): void {
  for (let j = 0; j < n; j++) v.setItem(j, f(start + j));
}
function fillU8(v: DuckDBUTinyIntVector, f: (i: number) => number, start: number, n: number): void {
  for (let j = 0; j < n; j++) v.setItem(j, f(start + j));
}
function fillBool(v: DuckDBBooleanVector, f: (i: number) => boolean, start: number, n: number): void {
  for (let j = 0; j < n; j++) v.setItem(j, f(start + j));
}
function fillVarchar(v: DuckDBVarCharVector, f: (i: number) => string | null, start: number, n: number): void {
  for (let j = 0; j < n; j++) v.setItem(j, f(start + j));
}

/** Creates `table` with `cols` and appends rows 0..rows-1, chunk by chunk. */
async function appendTable(
  conn: DuckDBConnection,
  table: string,
  cols: Col[],
  rows: number,
  progress?: (done: number) => void,
): Promise<void> {
  await conn.run(`CREATE TABLE ${table} (${cols.map((c) => `${c.name} ${SQL_TYPE[c.type]}`).join(', ')})`);
  const appender: DuckDBAppender = await conn.createAppender(table);
  const types = cols.map((c) => DUCK_TYPE[c.type]);
  let chunk: DuckDBDataChunk | null = null;
  for (let start = 0; start < rows; start += CHUNK) {
    const n = Math.min(CHUNK, rows - start);
    if (!chunk || n !== CHUNK) chunk = DuckDBDataChunk.create(types, n);
    for (let k = 0; k < cols.length; k++) {
      const col = cols[k];
      const vec = chunk.getColumnVector(k);
      switch (col.type) {
        case 'double':
          fillDouble(vec as DuckDBDoubleVector, col.values, start, n);
          break;
        case 'int':
          fillInt(vec as DuckDBIntegerVector, col.values, start, n);
          break;
        case 'u8':
          fillU8(vec as DuckDBUTinyIntVector, col.values, start, n);
          break;
        case 'bool':
          fillBool(vec as DuckDBBooleanVector, col.values, start, n);
          break;
        case 'varchar':
          fillVarchar(vec as DuckDBVarCharVector, col.values, start, n);
          break;
      }
      vec.flush();
    }
    appender.appendDataChunk(chunk);
    if (progress && (start / CHUNK) % 256 === 0) progress(start);
  }
  appender.flushSync();
  appender.closeSync();
}

const sqlList = (values: readonly string[]): string => `[${values.map(sqlString).join(', ')}]`;
/** A DOUBLE literal that parses back to exactly `v` (an exponent makes DuckDB read a DOUBLE, not a DECIMAL). */
export const sqlDouble = (v: number): string => {
  if (!Number.isFinite(v)) throw new RangeError(`bench: not a finite number: ${v}`);
  return v.toExponential();
};

/** code (UTINYINT, 255 = null) -> ENUM value, NULL for 255 (a list index out of range is NULL). */
const enumOf = (col: string, values: readonly string[], type: string): string => `(${sqlList(values)})[${col}::INTEGER + 1]::${type}`;
const nullNaN = (col: string): string => `nullif(${col}, 'NaN'::DOUBLE)`;

export interface DuckLoad {
  seconds: number;
  edges: number;
  businesses: number;
}

export class DuckDbEngine implements Engine<{ ids: string[]; total?: number; capped?: boolean }> {
  readonly name = 'duckdb';
  readonly async = true;

  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly conn: DuckDBConnection,
  ) {}

  /** Opens an in-memory DuckDB and loads the columns into it. */
  static async load(c: BenchColumns, log: (msg: string) => void): Promise<{ engine: DuckDbEngine; load: DuckLoad }> {
    const t0 = performance.now();
    const instance = await DuckDBInstance.create(':memory:');
    const conn = await instance.connect();
    const n = c.n;
    const nanIfNull = (a: Float64Array) => (i: number) => a[i];
    await appendTable(
      conn,
      'raw',
      [
        { name: 'rid', type: 'int', values: (i) => i },
        { name: 'building_id', type: 'varchar', values: (i) => formatId(c.idWords, i) },
        { name: 'latitude', type: 'double', values: nanIfNull(c.lat) },
        { name: 'longitude', type: 'double', values: nanIfNull(c.lon) },
        { name: 'category', type: 'u8', values: (i) => c.category[i] },
        { name: 'roof_shape', type: 'u8', values: (i) => c.roofShape[i] },
        { name: 'volume_basis', type: 'u8', values: (i) => c.volumeBasis[i] },
        { name: 'flood_zone', type: 'u8', values: (i) => c.floodZone[i] },
        { name: 'seismic_risk_class', type: 'u8', values: (i) => c.seismicRiskClass[i] },
        { name: 'solar_presence', type: 'u8', values: (i) => c.solarPresence[i] },
        { name: 'panels_status', type: 'u8', values: (i) => c.panelsStatus[i] },
        { name: 'solar_potential_basis', type: 'u8', values: (i) => c.solarPotentialBasis[i] },
        { name: 'has_3d_model', type: 'bool', values: (i) => c.has3dModel[i] === 1 },
        { name: 'floors', type: 'double', values: nanIfNull(c.floors) },
        { name: 'dwellings', type: 'double', values: nanIfNull(c.dwellings) },
        { name: 'height_m', type: 'double', values: nanIfNull(c.heightM) },
        { name: 'volume_m3', type: 'double', values: nanIfNull(c.volumeM3) },
        { name: 'footprint_area_m2', type: 'double', values: nanIfNull(c.areaM2) },
        { name: 'recent_frost_days', type: 'double', values: nanIfNull(c.recentFrostDays) },
        { name: 'fp_min_lon', type: 'double', values: nanIfNull(c.fpMinLon) },
        { name: 'fp_min_lat', type: 'double', values: nanIfNull(c.fpMinLat) },
        { name: 'fp_max_lon', type: 'double', values: nanIfNull(c.fpMaxLon) },
        { name: 'fp_max_lat', type: 'double', values: nanIfNull(c.fpMaxLat) },
      ],
      n,
      (done) => log(`duckdb: appending buildings ${done.toLocaleString('en')}/${n.toLocaleString('en')}`),
    );

    const nb = c.bizRow.length;
    await appendTable(
      conn,
      'biz_raw',
      [
        { name: 'rid', type: 'int', values: (j) => c.bizRow[j] },
        { name: 'employees_min', type: 'double', values: (j) => c.bizEmployeesMin[j] },
        { name: 'turnover', type: 'double', values: (j) => c.bizTurnover[j] },
        { name: 'currency', type: 'varchar', values: (j) => (c.bizCurrency[j] === 255 ? null : c.currencies[c.bizCurrency[j]]) },
      ],
      nb,
    );

    // Edges: every ring's consecutive vertex pairs, plus the closing pair (last -> first) flagged,
    // which only the even-odd test reads (as the reference does).
    let edges = 0;
    const nRings = c.vertexStart.length - 1;
    for (let r = 0; r < nRings; r++) edges += c.vertexStart[r + 1] - c.vertexStart[r];
    const eRid = new Int32Array(edges),
      ePoly = new Int32Array(edges),
      eRing = new Int32Array(edges),
      eClosing = new Uint8Array(edges);
    const eA = new Int32Array(edges),
      eB = new Int32Array(edges);
    let e = 0;
    for (let b = 0; b < n; b++) {
      for (let p = c.polyStart[b]; p < c.polyStart[b + 1]; p++) {
        for (let r = c.ringStart[p]; r < c.ringStart[p + 1]; r++) {
          const v0 = c.vertexStart[r],
            v1 = c.vertexStart[r + 1];
          for (let v = v0; v < v1; v++, e++) {
            eRid[e] = b;
            ePoly[e] = p - c.polyStart[b];
            eRing[e] = r - c.ringStart[p];
            const last = v === v1 - 1;
            eA[e] = v;
            eB[e] = last ? v0 : v + 1;
            eClosing[e] = last ? 1 : 0;
          }
        }
      }
    }
    const xy = c.coords;
    await appendTable(
      conn,
      'edges',
      [
        { name: 'rid', type: 'int', values: (i) => eRid[i] },
        { name: 'poly', type: 'int', values: (i) => ePoly[i] },
        { name: 'ring', type: 'int', values: (i) => eRing[i] },
        { name: 'closing', type: 'bool', values: (i) => eClosing[i] === 1 },
        { name: 'x0', type: 'double', values: (i) => xy[2 * eA[i]] },
        { name: 'y0', type: 'double', values: (i) => xy[2 * eA[i] + 1] },
        { name: 'x1', type: 'double', values: (i) => xy[2 * eB[i]] },
        { name: 'y1', type: 'double', values: (i) => xy[2 * eB[i] + 1] },
      ],
      edges,
      (done) => log(`duckdb: appending edges ${done.toLocaleString('en')}/${edges.toLocaleString('en')}`),
    );

    log('duckdb: typing the table (CREATE TABLE buildings AS ...)');
    const enums: [string, readonly string[]][] = [
      ['category_t', CATEGORY],
      ['roof_shape_t', ROOF_SHAPE],
      ['basis_t', BASIS],
      ['flood_zone_t', FLOOD_ZONE],
      ['seismic_t', SEISMIC_RISK_CLASS],
      ['solar_presence_t', SOLAR_PRESENCE],
      ['panels_t', PANELS_STATUS],
      ['solar_basis_t', SOLAR_BASIS],
    ];
    for (const [name, values] of enums) await conn.run(`CREATE TYPE ${name} AS ENUM (${values.map(sqlString).join(', ')})`);
    await conn.run(`
      CREATE TABLE buildings AS
      SELECT r.rid, r.building_id, r.latitude, r.longitude,
        ${enumOf('r.category', CATEGORY, 'category_t')} AS category,
        ${enumOf('r.roof_shape', ROOF_SHAPE, 'roof_shape_t')} AS roof_shape,
        ${enumOf('r.volume_basis', BASIS, 'basis_t')} AS volume_basis,
        ${enumOf('r.flood_zone', FLOOD_ZONE, 'flood_zone_t')} AS flood_zone,
        ${enumOf('r.seismic_risk_class', SEISMIC_RISK_CLASS, 'seismic_t')} AS seismic_risk_class,
        ${enumOf('r.solar_presence', SOLAR_PRESENCE, 'solar_presence_t')} AS solar_presence,
        ${enumOf('r.panels_status', PANELS_STATUS, 'panels_t')} AS panels_status,
        ${enumOf('r.solar_potential_basis', SOLAR_BASIS, 'solar_basis_t')} AS solar_potential_basis,
        r.has_3d_model,
        ${nullNaN('r.floors')}::INTEGER AS floors,
        ${nullNaN('r.dwellings')}::INTEGER AS dwellings,
        ${nullNaN('r.height_m')} AS height_m,
        ${nullNaN('r.volume_m3')} AS volume_m3,
        ${nullNaN('r.footprint_area_m2')} AS footprint_area_m2,
        ${nullNaN('r.recent_frost_days')} AS recent_frost_days,
        r.fp_min_lon, r.fp_min_lat, r.fp_max_lon, r.fp_max_lat,
        b.businesses
      FROM raw r LEFT JOIN (
        SELECT rid, list({'employees_min': ${nullNaN('employees_min')}::INTEGER, 'turnover': ${nullNaN('turnover')}, 'currency': currency}) AS businesses
        FROM biz_raw GROUP BY rid
      ) b USING (rid)
      ORDER BY r.rid`);
    await conn.run('DROP TABLE raw');
    await conn.run('DROP TABLE biz_raw');
    await conn.run('CHECKPOINT');
    const seconds = (performance.now() - t0) / 1000;
    return { engine: new DuckDbEngine(instance, conn), load: { seconds, edges, businesses: nb } };
  }

  /** The SQL of a GET /buildings query. */
  static buildingsSql(q: BuildingsQuery): string {
    checkSupported(q);
    const w = filterConditions(q, sqlDouble);
    let key: string;
    switch (q.sort) {
      case 'volume':
      case 'area':
      case 'height':
        key = SORT_COLUMNS[q.sort];
        break;
      case 'registered_business_employees':
        key = 'list_max(list_transform(businesses, x -> x.employees_min))';
        break;
      case 'registered_business_turnover':
        key = `list_max(list_transform(list_filter(businesses, x -> x.currency = ${sqlString(q.registeredBusinessTurnoverCurrency!)}), x -> x.turnover))`;
        break;
    }
    const where = w.join(' AND ');
    return `SELECT
  (SELECT count(*)::INTEGER FROM (SELECT 1 FROM buildings WHERE ${where} LIMIT ${MAX_WINDOW + 1})) AS n,
  (SELECT list(building_id ORDER BY k DESC NULLS LAST, building_id) FROM (
     SELECT building_id, ${key} AS k FROM buildings WHERE ${where}
     ORDER BY k DESC NULLS LAST, building_id LIMIT ${q.limit} OFFSET ${q.offset})) AS ids`;
  }

  /**
   * The SQL of a GET /buildings/at query: candidates by footprint box, then every edge of
   * their rings in the engine's frame, the plane tangent to the WGS84 ellipsoid at the point
   * (its expansion written operation for operation, so both give the same doubles): distance
   * to each edge, even-odd crossings per ring; 0 inside an outer ring and no hole.
   */
  static pointSql(q: PointQuery): string {
    const frame = new LocalFrame().centre(q.lon, q.lat);
    if (frame.exact) throw new RangeError(`bench: the DuckDB peer measures points up to latitude 75 only, got ${q.lat}`);
    const cos0 = Math.cos((q.lat * Math.PI) / 180);
    const mPerDegLat = (EARTH_RADIUS_M * Math.PI) / 180;
    // Candidate box in degrees, wider than the radius + 2 m on the sphere by 1%, which covers
    // the ellipsoid's difference (under 0.6%): the exact test follows.
    const dLat = ((q.radiusM + 2) / mPerDegLat) * 1.01;
    const dLon = dLat / cos0;
    const lon0 = sqlDouble(q.lon),
      lat0 = sqlDouble(q.lat);
    const [ax, bx, ay, by, cy] = [frame.ax, frame.bx, frame.ay, frame.by, frame.cy].map(sqlDouble);
    const X = (lon: string, lat: string) => `(${lon} - ${lon0}) * (${ax} + ${bx} * (${lat} - ${lat0}))`;
    const Y = (lon: string, lat: string) =>
      `(${lat} - ${lat0}) * (${ay} + ${by} * (${lat} - ${lat0})) + ${cy} * (${lon} - ${lon0}) * (${lon} - ${lon0})`;
    return `WITH c AS (
  SELECT rid, building_id FROM buildings
  WHERE fp_max_lon >= ${sqlDouble(q.lon - dLon)} AND fp_min_lon <= ${sqlDouble(q.lon + dLon)}
    AND fp_max_lat >= ${sqlDouble(q.lat - dLat)} AND fp_min_lat <= ${sqlDouble(q.lat + dLat)}
), e AS (
  SELECT rid, poly, ring, closing, ${X('x0', 'y0')} AS ax, ${Y('x0', 'y0')} AS ay, ${X('x1', 'y1')} AS bx, ${Y('x1', 'y1')} AS b_y
  FROM edges WHERE rid IN (SELECT rid FROM c)
), s AS (
  SELECT rid, poly, ring, closing,
    (ay > 0) <> (b_y > 0) AND bx + ((0 - b_y) * (ax - bx)) / (ay - b_y) > 0 AS crosses,
    bx - ax AS dx, b_y - ay AS dy, ax, ay
  FROM e
), d AS (
  SELECT rid, poly, ring, closing, crosses,
    CASE WHEN dx * dx + dy * dy = 0 THEN 0 ELSE greatest(0, least(1, ((0 - ax) * dx + (0 - ay) * dy) / (dx * dx + dy * dy))) END AS t,
    ax, ay, dx, dy
  FROM s
), r AS (
  SELECT rid, poly, ring,
    min(sqrt((ax + t * dx) * (ax + t * dx) + (ay + t * dy) * (ay + t * dy))) FILTER (WHERE NOT closing) AS dist,
    sum(crosses::INTEGER) % 2 = 1 AS inside
  FROM d GROUP BY rid, poly, ring
), p AS (
  SELECT rid, poly, min(dist) AS dist,
    bool_or(inside AND ring = 0) AND NOT bool_or(inside AND ring > 0) AS contains
  FROM r GROUP BY rid, poly
), b AS (
  SELECT rid, CASE WHEN bool_or(contains) THEN 0 ELSE min(dist) END AS dist FROM p GROUP BY rid
)
SELECT c.building_id, b.dist FROM b JOIN c USING (rid)
WHERE b.dist <= ${sqlDouble(q.radiusM)}
ORDER BY b.dist, c.building_id LIMIT ${q.limit}`;
  }

  async run(m: MixQuery): Promise<{ ids: string[]; total?: number; capped?: boolean }> {
    if (m.kind === 'buildings') {
      const reader = await this.conn.runAndReadAll(DuckDbEngine.buildingsSql(m.q));
      const [n, ids] = reader.getRowsJS()[0] as [number, string[] | null];
      return { ids: ids ?? [], total: Math.min(n, MAX_WINDOW), capped: n > MAX_WINDOW };
    }
    const reader = await this.conn.runAndReadAll(DuckDbEngine.pointSql(m.q));
    return { ids: reader.getRowsJS().map((row) => row[0] as string) };
  }

  answer(raw: { ids: string[]; total?: number; capped?: boolean }): Answer {
    return raw;
  }

  async close(): Promise<void> {
    this.conn.closeSync();
    this.instance.closeSync();
  }
}
