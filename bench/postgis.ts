/**
 * The peer most building-data services run on: PostgreSQL with PostGIS, in a cluster of its
 * own started from the installed binaries (Debian's `postgresql-15-postgis-3`).
 *
 * The same columns as DuckDB's table, in the file's row order (Hilbert order, so neighbours
 * share pages): ENUM types, NULLs, building_id as `uuid` (whose order is the order of the id
 * strings), the representative point as `geometry(Point, 4326)` under a GiST index, the
 * footprint as `geography(MultiPolygon, 4326)` under a GiST index, b-trees on the three column
 * sort keys (`key DESC NULLS LAST, building_id`, the page's order), and businesses in a table
 * of their own (b-tree on the building), whose sort keys are a `max()` per building at query
 * time, as DuckDB's `list_max` is. Loaded by COPY (text; footprints as hex EWKB, exact) through
 * `psql`, from the columns the bench decodes itself (`columns.ts`).
 *
 * GET /buildings: `pt && envelope` for the index plus exact bounds on longitude and latitude
 * (the index and `&&` compare float4 boxes rounded outwards, a superset), the capped count over
 * `LIMIT 10001`, and the page by `ORDER BY key DESC NULLS LAST, building_id`. GET
 * /buildings/at: `ST_DWithin` on geography for the candidates, nearest first by `ST_Distance`
 * on geography (the spheroid), ties by building_id. PostGIS measures on the spheroid where
 * Edifice measures in the plane tangent to the ellipsoid at the point, which falls short of the
 * geodesic by under 1e-6 of the distance (point.ts): only a building that close to the radius,
 * or two that close to each other at the limit, could be answered differently.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
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
import { NULL_CODE, formatId, type BenchColumns } from './columns.ts';
import type { Answer, Engine, MixQuery } from './engine.ts';
import { filterConditions, sqlString, SORT_COLUMNS } from './sql-filters.ts';
import { checkSupported } from './scan.ts';
import { freePort } from '../test/services/ports.ts';
import { postgresBin, postgresFolder } from '../test/services/postgres.ts';

export interface BenchCluster {
  url: string;
  /** The postmaster's process id (its children are the cluster's other processes). */
  pid: number;
  stop(): void;
}

/**
 * Starts the cluster kept in `folder` (`data/`, `log`, the socket), creating it on first use.
 * PostgreSQL refuses to run as root: as root, the folder belongs to the `postgres` user.
 * fsync off: a lost cluster is reloaded from the snapshot, and no figure depends on durability.
 */
export async function startCluster(folder: string, sharedBuffers: string, log: (msg: string) => void): Promise<BenchCluster> {
  const data = join(folder, 'data');
  mkdirSync(folder, { recursive: true });
  const run = postgresFolder(folder, 120_000);
  if (!existsSync(join(data, 'PG_VERSION'))) {
    rmSync(data, { recursive: true, force: true });
    log(`postgis: initdb ${data}`);
    run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
  }
  const port = await freePort();
  const settings = [
    `port=${port}`,
    `unix_socket_directories=${folder}`,
    'listen_addresses=127.0.0.1',
    `shared_buffers=${sharedBuffers}`,
    'effective_cache_size=4GB',
    'work_mem=64MB',
    'maintenance_work_mem=1GB',
    'fsync=off',
    'synchronous_commit=off',
    'full_page_writes=off',
    'wal_level=minimal',
    'max_wal_senders=0',
    'max_wal_size=4GB',
    // Data in memory: index pages cost what heap pages do. JIT compiles for tens of ms on
    // the expensive plans, longer than most of these queries.
    'random_page_cost=1.1',
    'jit=off',
  ];
  const options = settings.map((s) => `-c ${s}`).join(' ');
  log(`postgis: starting the cluster in ${folder} on port ${port} (shared_buffers ${sharedBuffers})`);
  run('pg_ctl', ['-D', data, '-o', options, '-l', join(folder, 'log'), '-w', '-t', '120', 'start']);
  const pid = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  let running = true;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    pid,
    stop: () => {
      if (!running) return;
      running = false;
      run('pg_ctl', ['-D', data, '-m', 'fast', '-w', '-t', '120', 'stop']);
    },
  };
}

/** Proportional set size of the postmaster `pid` and its children, in bytes (Linux). */
export function clusterPss(pid: number): number {
  const pids = [pid];
  try {
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
    if (children) pids.push(...children.split(/\s+/).map(Number));
  } catch {
    return NaN;
  }
  let kb = 0;
  for (const p of pids) {
    try {
      const m = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${p}/smaps_rollup`, 'utf8'));
      if (m) kb += Number(m[1]);
    } catch {
      // A backend that exited between the two reads.
    }
  }
  return kb * 1024;
}

const ENUMS: [string, readonly string[]][] = [
  ['category_t', CATEGORY],
  ['roof_shape_t', ROOF_SHAPE],
  ['basis_t', BASIS],
  ['flood_zone_t', FLOOD_ZONE],
  ['seismic_t', SEISMIC_RISK_CLASS],
  ['solar_presence_t', SOLAR_PRESENCE],
  ['panels_t', PANELS_STATUS],
  ['solar_basis_t', SOLAR_BASIS],
];

/** A float8 literal that parses back to exactly `v` (PostgreSQL reads the shortest round-trip form exactly). */
const sqlDouble = (v: number): string => {
  if (!Number.isFinite(v)) throw new RangeError(`bench: not a finite number: ${v}`);
  return `float8 '${v}'`;
};

/** Bytes of COPY text written at a time. */
const BLOCK = 4 << 20;

/** Streams COPY text lines into `table` through psql, in blocks of about BLOCK bytes. */
async function copyIn(url: string, table: string, lines: Iterable<string>): Promise<void> {
  const child = spawn(join(postgresBin(), 'psql'), [url, '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-c', `COPY ${table} FROM STDIN`], {
    stdio: ['pipe', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  const write = async (block: string): Promise<void> => {
    if (!child.stdin.write(block)) await new Promise<void>((resolve) => child.stdin.once('drain', resolve));
  };
  let block: string[] = [];
  let size = 0;
  for (const line of lines) {
    block.push(line);
    size += line.length;
    if (size >= BLOCK) {
      await write(block.join(''));
      block = [];
      size = 0;
    }
  }
  if (block.length) await write(block.join(''));
  child.stdin.end();
  const code = await exited;
  if (code !== 0) throw new Error(`bench: COPY ${table} failed (psql exit ${code}): ${stderr.trim()}`);
}

/** Hex EWKB of building b's footprint as a MultiPolygon (SRID 4326), rings closed. */
class FootprintWriter {
  private buf = Buffer.alloc(1 << 16);
  private at = 0;

  constructor(private readonly c: BenchColumns) {}

  private room(n: number): void {
    if (this.at + n <= this.buf.length) return;
    const next = Buffer.alloc(Math.max(2 * this.buf.length, this.at + n));
    this.buf.copy(next, 0, 0, this.at);
    this.buf = next;
  }
  private u8(v: number): void {
    this.room(1);
    this.buf[this.at++] = v;
  }
  private u32(v: number): void {
    this.room(4);
    this.buf.writeUInt32LE(v, this.at);
    this.at += 4;
  }
  private f64(v: number): void {
    this.room(8);
    this.buf.writeDoubleLE(v, this.at);
    this.at += 8;
  }

  hex(b: number): string {
    const c = this.c;
    this.at = 0;
    this.u8(1);
    this.u32(0x20000006); // MultiPolygon with an SRID
    this.u32(4326);
    this.u32(c.polyStart[b + 1] - c.polyStart[b]);
    for (let p = c.polyStart[b]; p < c.polyStart[b + 1]; p++) {
      this.u8(1);
      this.u32(3);
      this.u32(c.ringStart[p + 1] - c.ringStart[p]);
      for (let r = c.ringStart[p]; r < c.ringStart[p + 1]; r++) {
        const v0 = c.vertexStart[r],
          v1 = c.vertexStart[r + 1];
        const closed = v1 - v0 > 0 && c.coords[2 * v0] === c.coords[2 * (v1 - 1)] && c.coords[2 * v0 + 1] === c.coords[2 * (v1 - 1) + 1];
        this.u32(v1 - v0 + (closed ? 0 : 1));
        for (let v = v0; v < v1; v++) {
          this.f64(c.coords[2 * v]);
          this.f64(c.coords[2 * v + 1]);
        }
        if (!closed) {
          this.f64(c.coords[2 * v0]);
          this.f64(c.coords[2 * v0 + 1]);
        }
      }
    }
    return this.buf.toString('hex', 0, this.at);
  }
}

function* buildingLines(c: BenchColumns, log: (msg: string) => void): Generator<string> {
  const num = (v: number): string => (v === v ? String(v) : '\\N');
  const label = (values: readonly string[], code: number): string => (code === NULL_CODE ? '\\N' : values[code]);
  const fp = new FootprintWriter(c);
  for (let i = 0; i < c.n; i++) {
    if (i % 500_000 === 0) log(`postgis: copying buildings ${i.toLocaleString('en')}/${c.n.toLocaleString('en')}`);
    yield (
      `${i}\t${formatId(c.idWords, i)}\t${num(c.lon[i])}\t${num(c.lat[i])}\t` +
      `${label(CATEGORY, c.category[i])}\t${label(ROOF_SHAPE, c.roofShape[i])}\t${label(BASIS, c.volumeBasis[i])}\t` +
      `${label(FLOOD_ZONE, c.floodZone[i])}\t${label(SEISMIC_RISK_CLASS, c.seismicRiskClass[i])}\t` +
      `${label(SOLAR_PRESENCE, c.solarPresence[i])}\t${label(PANELS_STATUS, c.panelsStatus[i])}\t` +
      `${label(SOLAR_BASIS, c.solarPotentialBasis[i])}\t${c.has3dModel[i] === 1 ? 't' : 'f'}\t` +
      `${num(c.floors[i])}\t${num(c.dwellings[i])}\t${num(c.heightM[i])}\t${num(c.volumeM3[i])}\t` +
      `${num(c.areaM2[i])}\t${num(c.recentFrostDays[i])}\t${fp.hex(i)}\n`
    );
  }
}

function* businessLines(c: BenchColumns): Generator<string> {
  const num = (v: number): string => (v === v ? String(v) : '\\N');
  for (let j = 0; j < c.bizRow.length; j++) {
    const cur = c.bizCurrency[j] === NULL_CODE ? '\\N' : c.currencies[c.bizCurrency[j]];
    yield `${c.bizRow[j]}\t${num(c.bizEmployeesMin[j])}\t${num(c.bizTurnover[j])}\t${cur}\n`;
  }
}

export interface PostgisLoad {
  /** Seconds the load took, 0 when the cluster already held this snapshot. */
  seconds: number;
  reused: boolean;
  businesses: number;
  /** Tables and indexes on disk, bytes. */
  bytes: number;
}

/**
 * Loads the columns into the database at `url` unless it already holds the snapshot named by
 * `fingerprint` (a finished load records it last, so an interrupted one is redone). The tables
 * are UNLOGGED: no WAL to write while loading, reads the same; a server that was not shut down
 * cleanly empties them all, the record of the load with them, so the next run loads again.
 */
export async function loadPostgis(url: string, c: BenchColumns, fingerprint: string, log: (msg: string) => void): Promise<PostgisLoad> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('CREATE EXTENSION IF NOT EXISTS postgis');
    await client.query('CREATE UNLOGGED TABLE IF NOT EXISTS bench_load (fingerprint text NOT NULL)');
    const had = await client.query<{ fingerprint: string }>('SELECT fingerprint FROM bench_load');
    const sizeOf = async () =>
      Number(
        (
          await client.query<{ n: string }>(
            `SELECT (pg_total_relation_size('buildings') + pg_total_relation_size('businesses'))::text AS n`,
          )
        ).rows[0].n,
      );
    if (had.rows.length === 1 && had.rows[0].fingerprint === fingerprint) {
      const businesses = Number((await client.query<{ n: string }>('SELECT count(*)::text AS n FROM businesses')).rows[0].n);
      return { seconds: 0, reused: true, businesses, bytes: await sizeOf() };
    }
    const t0 = performance.now();
    await client.query('DELETE FROM bench_load');
    await client.query('DROP TABLE IF EXISTS buildings, businesses');
    for (const [name] of ENUMS) await client.query(`DROP TYPE IF EXISTS ${name}`);
    for (const [name, values] of ENUMS) await client.query(`CREATE TYPE ${name} AS ENUM (${values.map(sqlString).join(', ')})`);
    await client.query(`
      CREATE UNLOGGED TABLE buildings (
        rid integer NOT NULL,
        building_id uuid NOT NULL,
        longitude float8,
        latitude float8,
        category category_t,
        roof_shape roof_shape_t,
        volume_basis basis_t,
        flood_zone flood_zone_t,
        seismic_risk_class seismic_t,
        solar_presence solar_presence_t,
        panels_status panels_t,
        solar_potential_basis solar_basis_t,
        has_3d_model boolean NOT NULL,
        floors integer,
        dwellings integer,
        height_m float8,
        volume_m3 float8,
        footprint_area_m2 float8,
        recent_frost_days float8,
        footprint geography(MultiPolygon, 4326),
        pt geometry(Point, 4326) GENERATED ALWAYS AS (ST_SetSRID(ST_MakePoint(longitude, latitude), 4326)) STORED
      )`);
    await client.query(`CREATE UNLOGGED TABLE businesses (rid integer NOT NULL, employees_min integer, turnover float8, currency text)`);
    await copyIn(url, 'buildings', buildingLines(c, log));
    log(`postgis: copying ${c.bizRow.length.toLocaleString('en')} businesses`);
    await copyIn(url, 'businesses', businessLines(c));
    const indexes: [string, string][] = [
      ['the point (GiST)', 'CREATE INDEX buildings_pt ON buildings USING gist (pt)'],
      ['the footprint (GiST, geography)', 'CREATE INDEX buildings_footprint ON buildings USING gist (footprint)'],
      ['volume (b-tree)', 'CREATE INDEX buildings_volume ON buildings (volume_m3 DESC NULLS LAST, building_id)'],
      ['area (b-tree)', 'CREATE INDEX buildings_area ON buildings (footprint_area_m2 DESC NULLS LAST, building_id)'],
      ['height (b-tree)', 'CREATE INDEX buildings_height ON buildings (height_m DESC NULLS LAST, building_id)'],
      ['businesses by building (b-tree)', 'CREATE INDEX businesses_rid ON businesses (rid)'],
    ];
    for (const [what, sql] of indexes) {
      const t = performance.now();
      await client.query(sql);
      log(`postgis: index on ${what} in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    }
    log('postgis: VACUUM ANALYZE');
    await client.query('VACUUM ANALYZE buildings');
    await client.query('VACUUM ANALYZE businesses');
    await client.query('INSERT INTO bench_load VALUES ($1)', [fingerprint]);
    await client.query('CHECKPOINT');
    return { seconds: (performance.now() - t0) / 1000, reused: false, businesses: c.bizRow.length, bytes: await sizeOf() };
  } finally {
    await client.end();
  }
}

/** What names a snapshot file's content for the cache: path, size and modification time. */
export function fingerprintOf(file: string, n: number): string {
  const s = statSync(file);
  return `${file} ${s.size} ${s.mtimeMs} ${n}`;
}

type Raw = { ids: string[]; total?: number; capped?: boolean };

export class PostgisEngine implements Engine<Raw> {
  readonly name = 'postgis';
  readonly async = true;

  private constructor(
    private readonly client: pg.Client,
    private readonly onClose: () => void,
  ) {}

  /** A connection to the loaded database at `url`; `onClose` runs after it ends (e.g. stops the cluster). */
  static async connect(url: string, onClose: () => void = () => {}): Promise<PostgisEngine> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    return new PostgisEngine(client, onClose);
  }

  /** The SQL of a GET /buildings query: one row, the capped count `n` and the page's `ids`. */
  static buildingsSql(q: BuildingsQuery): string {
    checkSupported(q);
    const { minLon, minLat, maxLon, maxLat } = q.bbox;
    const w = [
      `pt && ST_MakeEnvelope(${sqlDouble(minLon)}, ${sqlDouble(minLat)}, ${sqlDouble(maxLon)}, ${sqlDouble(maxLat)}, 4326)`,
      ...filterConditions(q, sqlDouble),
    ];
    let key: string;
    switch (q.sort) {
      case 'volume':
      case 'area':
      case 'height':
        key = SORT_COLUMNS[q.sort];
        break;
      case 'registered_business_employees':
        key = '(SELECT max(employees_min) FROM businesses z WHERE z.rid = buildings.rid)';
        break;
      case 'registered_business_turnover':
        key = `(SELECT max(turnover) FROM businesses z WHERE z.rid = buildings.rid AND z.currency = ${sqlString(q.registeredBusinessTurnoverCurrency!)})`;
        break;
    }
    const where = w.join(' AND ');
    // The page is ordered by the uuid column, as its b-trees are: a bare building_id in ORDER BY
    // would name the text output instead, and sort by the text after each key.
    return `SELECT
  (SELECT count(*) FROM (SELECT 1 FROM buildings WHERE ${where} LIMIT ${MAX_WINDOW + 1}) m)::int AS n,
  ARRAY(SELECT building_id::text AS id FROM buildings WHERE ${where}
        ORDER BY ${key} DESC NULLS LAST, buildings.building_id LIMIT ${q.limit} OFFSET ${q.offset}) AS ids`;
  }

  /** The SQL of a GET /buildings/at query: the ids, nearest first, ties by building_id. */
  static pointSql(q: PointQuery): string {
    const at = `ST_SetSRID(ST_MakePoint(${sqlDouble(q.lon)}, ${sqlDouble(q.lat)}), 4326)::geography`;
    return `SELECT building_id::text AS id FROM buildings
WHERE ST_DWithin(footprint, ${at}, ${sqlDouble(q.radiusM)})
ORDER BY ST_Distance(footprint, ${at}), building_id LIMIT ${q.limit}`;
  }

  async run(m: MixQuery): Promise<Raw> {
    if (m.kind === 'buildings') {
      const res = await this.client.query<{ n: number; ids: string[] }>(PostgisEngine.buildingsSql(m.q));
      const { n, ids } = res.rows[0];
      return { ids, total: Math.min(n, MAX_WINDOW), capped: n > MAX_WINDOW };
    }
    const res = await this.client.query<{ id: string }>(PostgisEngine.pointSql(m.q));
    return { ids: res.rows.map((r) => r.id) };
  }

  answer(raw: Raw): Answer {
    return raw;
  }

  async close(): Promise<void> {
    await this.client.end();
    this.onClose();
  }
}
