/**
 * Writes one country's snapshot: `BuildingRecord`s in, an Arrow IPC file out, rows in Hilbert
 * order of their representative point, with metadata and a checksum over content and metadata.
 * The file is written beside its destination and renamed into place, so a crash never leaves
 * half a snapshot.
 */
import { createWriteStream } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import { dirname, join, basename } from 'node:path';
import { once } from 'node:events';
import { Field, RecordBatch, RecordBatchFileWriter, Schema, Struct, makeData, type Data } from 'apache-arrow';
import { COLUMNS, METADATA_KEYS, SCHEMA_VERSION, type BuildingRecord, type SnapshotSource } from './schema.ts';
import { GEOARROW_METADATA, makeAccumulator, type Accumulator } from './columns.ts';
import { makeFolder } from '../folders.ts';
import { metadataText, snapshotChecksum } from './checksum.ts';
import { hilbertOrder } from './hilbert.ts';

export interface SnapshotWriterOptions {
  /** ISO 3166-1 alpha-2 code, uppercase. */
  country: string;
  /** YYYY-MM-DD. */
  snapshotDate: string;
  sources: SnapshotSource[];
  /** Rows per record batch (default 131,072): readers can stream a file batch by batch. */
  batchRows?: number;
}

export interface WrittenSnapshot {
  path: string;
  rows: number;
  bytes: number;
  checksum: string;
}

const COUNTRY = /^[A-Z]{2}$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

export class SnapshotWriter {
  private readonly columns: Accumulator[];
  private readonly options: Required<SnapshotWriterOptions>;
  private rows = 0;
  private finished = false;

  constructor(options: SnapshotWriterOptions) {
    if (!COUNTRY.test(options.country)) throw new RangeError(`country must be two uppercase letters, got "${options.country}".`);
    if (!DATE.test(options.snapshotDate)) throw new RangeError(`snapshotDate must be YYYY-MM-DD, got "${options.snapshotDate}".`);
    if (!Array.isArray(options.sources) || options.sources.length === 0) throw new RangeError('sources must name at least one source.');
    const batchRows = options.batchRows ?? 131_072;
    if (!Number.isInteger(batchRows) || batchRows < 1) throw new RangeError(`batchRows must be a positive integer, got ${batchRows}.`);
    this.options = { ...options, batchRows };
    let dictionaryId = 0;
    this.columns = COLUMNS.map((spec) => makeAccumulator(spec, () => dictionaryId++));
  }

  get count(): number {
    return this.rows;
  }

  /** Adds a building. A record that breaks the schema throws before any column changes. */
  add(record: BuildingRecord): void {
    if (this.finished) throw new Error('SnapshotWriter.add() after finish().');
    if (record.locality === '' && record.locality_basis != null) {
      throw new RangeError(`locality_basis must be null when locality is empty, got "${record.locality_basis}" (${record.source_id}).`);
    }
    const values = record as unknown as Record<string, unknown>;
    try {
      for (let i = 0; i < COLUMNS.length; i++) {
        const name = COLUMNS[i].name;
        this.columns[i].push(name === 'seismic_listed' ? seismicListed(record) : values[name]);
      }
    } catch (err) {
      // Every column held `rows` rows before this record: roll back the ones it already reached.
      if (this.columns.some((c) => c.length !== this.rows)) {
        this.columns.forEach((c) => c.truncate(this.rows));
      }
      throw err;
    }
    this.rows++;
  }

  /** Orders rows, writes `path` (through a temporary file) and returns what it wrote. */
  async finish(path: string): Promise<WrittenSnapshot> {
    if (this.finished) throw new Error('SnapshotWriter.finish() called twice.');
    this.finished = true;
    const n = this.rows;
    const lon = new Float64Array(n);
    const lat = new Float64Array(n);
    const lonFrozen = this.columns[COLUMNS.findIndex((c) => c.name === 'longitude')].gather(identity(n)).data(0, n);
    const latFrozen = this.columns[COLUMNS.findIndex((c) => c.name === 'latitude')].gather(identity(n)).data(0, n);
    lon.set(lonFrozen.values as Float64Array);
    lat.set(latFrozen.values as Float64Array);
    const order = hilbertOrder(lon, lat);

    // Each column is reordered and its unordered rows let go at once, and batches are made one at
    // a time, twice (hashed, then written): memory holds about one copy of the data, not three.
    const frozen = this.columns.map((c) => {
      const f = c.gather(order);
      c.release();
      return f;
    });
    const fields = COLUMNS.map(
      (spec, i) => new Field(spec.name, frozen[i].type, spec.nullable, spec.kind === 'geometry' ? GEOARROW_METADATA : undefined),
    );
    const struct = new Struct(fields);
    const step = this.options.batchRows;
    function* batches(): Generator<Data<Struct>> {
      // An empty country still gets one (empty) batch so readers see the schema's types.
      for (let start = 0; start === 0 || start < n; start += step) {
        const end = Math.min(n, start + step);
        yield makeData({ type: struct, length: end - start, nullCount: 0, children: frozen.map((f) => f.data(start, end)) });
      }
    }
    const metadata = new Map<string, string>([
      [METADATA_KEYS.schemaVersion, String(SCHEMA_VERSION)],
      [METADATA_KEYS.country, this.options.country],
      [METADATA_KEYS.snapshotDate, this.options.snapshotDate],
      [METADATA_KEYS.sources, JSON.stringify(this.options.sources)],
      [METADATA_KEYS.rowCount, String(n)],
    ]);
    const checksum = snapshotChecksum(
      COLUMNS.map((c) => c.name),
      batches(),
      metadataText(metadata, fields),
    );
    metadata.set(METADATA_KEYS.checksum, checksum);
    const schema = new Schema(fields, metadata);

    makeFolder(dirname(path));
    const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
    try {
      const out = createWriteStream(tmp);
      const writer = new RecordBatchFileWriter();
      const piped = writer.toNodeStream().pipe(out);
      for (const data of batches()) {
        writer.write(new RecordBatch(schema, data));
        // Let the batch reach the file before making the next one.
        await new Promise((resolve) => setImmediate(resolve));
        while (out.writableNeedDrain) await once(out, 'drain');
      }
      writer.finish();
      await once(piped, 'finish');
      await rename(tmp, path);
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
    const { size } = await stat(path);
    return { path, rows: n, bytes: size, checksum };
  }
}

/** A risk class or an assessment year comes from a list, so it implies the flag whatever the producer set. */
function seismicListed(r: BuildingRecord): unknown {
  if (typeof r.seismic_listed !== 'boolean') return r.seismic_listed; // the column refuses it
  return r.seismic_listed || r.seismic_risk_class !== null || r.seismic_risk_assessment_year !== null;
}

function identity(n: number): Uint32Array {
  const a = new Uint32Array(n);
  for (let i = 0; i < n; i++) a[i] = i;
  return a;
}
