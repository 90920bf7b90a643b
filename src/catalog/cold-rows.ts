/**
 * A row's cold columns (cold.ts), read either from the cold blob or, while a snapshot built from
 * its Arrow file waits for its blob (cold-blob.ts), from the file itself: the same values either
 * way, so a store can serve as soon as everything but its blob is built.
 */
import type { Table } from 'apache-arrow';
import type { ColumnSpec } from '../snapshot/schema.ts';
import { daysToDate } from '../snapshot/columns.ts';
import { fileTable } from '../snapshot/reader.ts';
import { Col, NULL_I32, batchColumns, dictionaryStrings, enumRemap } from './arrow.ts';
import { bufferOf, type ByteReader, type ColdCodec } from './cold.ts';
import { COLD_COLUMNS } from './columns.ts';

export interface ColdRows {
  /** Every cold column of `row` into out[name]. */
  decodeInto(row: number, out: Record<string, unknown>): void;
  /** A reader of the cold columns `names` of a row into out[name]; a RangeError for a column that is not cold. */
  picker(names: readonly string[]): (row: number, out: Record<string, unknown>) => void;
  /** The cold column `name` of `row`. */
  decodeOne(row: number, name: string): unknown;
}

/** Rows read from a cold blob: row r's bytes start at offsets[r]. */
export class BlobRows implements ColdRows {
  private readonly reader: ByteReader;

  constructor(
    private readonly codec: ColdCodec,
    blob: Uint8Array,
    private readonly offsets: Uint32Array | Float64Array,
  ) {
    this.reader = codec.reader(blob);
  }

  decodeInto(row: number, out: Record<string, unknown>): void {
    this.codec.decodeInto(this.reader, this.offsets[row], out);
  }

  picker(names: readonly string[]): (row: number, out: Record<string, unknown>) => void {
    const pick = this.codec.picker(names);
    const { reader, offsets } = this;
    return (row, out) => pick(reader, offsets[row], out);
  }

  decodeOne(row: number, name: string): unknown {
    return this.codec.decodeOne(this.reader, this.offsets[row], name);
  }
}

type Read = (i: number) => unknown;

const opened = new WeakMap<SharedArrayBuffer, FileRows>();

/** A reader of one column of one batch giving what the blob's decoder gives; `base` offsets the index (struct children). */
function readerOf(spec: ColumnSpec, c: Col, base: number): Read {
  switch (spec.kind) {
    case 'f64':
      return (i) => {
        const v = c.f64(base + i);
        return v === v ? v : null;
      };
    case 'i32':
      return (i) => {
        const v = c.i32(base + i);
        return v === NULL_I32 ? null : v;
      };
    case 'date':
      return (i) => {
        const v = c.i32(base + i);
        return v === NULL_I32 ? null : daysToDate(v);
      };
    case 'bool':
      return (i) => {
        const b = c.bool(base + i);
        return b === 2 ? null : b === 1;
      };
    case 'enum': {
      const values = spec.values!;
      const remap = enumRemap(c.data, values, spec.name);
      return (i) => (c.valid(base + i) ? values[remap[c.code(base + i)]] : null);
    }
    case 'dict': {
      const strings = dictionaryStrings(c.data);
      return (i) => (c.valid(base + i) ? strings[c.code(base + i)] : null);
    }
    case 'utf8': {
      // As the blob's decoder makes strings (Buffer's), which keeps a leading byte order mark where TextDecoder drops it.
      const text = bufferOf(c.bytes);
      return (i) => (c.valid(base + i) ? text.toString('utf8', c.start(base + i), c.end(base + i)) : null);
    }
    case 'list': {
      const struct = c.data.children[0];
      const names = spec.children!.map((child) => child.name);
      const children = spec.children!.map((child) => {
        const idx = struct.type.children.findIndex((f) => f.name === child.name);
        if (idx < 0) throw new Error(`column ${spec.name} has no field ${child.name}`);
        return readerOf(child, new Col(struct.children[idx]), struct.offset);
      });
      return (i) => {
        const start = c.start(base + i);
        const items: Record<string, unknown>[] = new Array(c.end(base + i) - start);
        for (let k = 0; k < items.length; k++) {
          const item: Record<string, unknown> = {};
          for (let f = 0; f < children.length; f++) item[names[f]] = children[f](start + k);
          items[k] = item;
        }
        return items;
      };
    }
    case 'geometry':
      throw new Error(`column ${spec.name}: geometry is not a cold column`);
  }
}

/**
 * Rows read from the snapshot's Arrow table (in the current format), which it keeps: the file's
 * whole buffer stays in memory meanwhile. A batch's readers are made the first time it is read.
 */
export class FileRows implements ColdRows {
  private readonly names: string[];
  /** Row where each batch starts, then the row count. */
  private readonly starts: Float64Array;
  private readonly readers: (Read[] | undefined)[];
  private readonly batch = { index: 0, local: 0 };

  /**
   * The rows of a snapshot file's bytes (shared memory), opened once per thread: the snapshots
   * that read it share them. `table`: the file's table in the current format, when already opened.
   */
  static of(file: SharedArrayBuffer, schemaVersion: number, table?: Table): FileRows {
    let rows = opened.get(file);
    if (rows === undefined) {
      rows = new FileRows(table ?? fileTable(new Uint8Array(file), schemaVersion), COLD_COLUMNS);
      opened.set(file, rows);
    }
    return rows;
  }

  constructor(
    private readonly table: Table,
    private readonly specs: readonly ColumnSpec[],
  ) {
    this.names = specs.map((s) => s.name);
    this.starts = new Float64Array(table.batches.length + 1);
    table.batches.forEach((b, k) => (this.starts[k + 1] = this.starts[k] + b.numRows));
    this.readers = new Array(table.batches.length);
  }

  /**
   * Checks what reading may throw on, every batch's enum dictionaries against the schema, so that
   * a store serving from its file never fails on a row: throws naming the column.
   */
  check(): void {
    for (let b = 0; b < this.table.batches.length; b++) this.batchReaders(b);
    this.readers.fill(undefined);
  }

  /** The readers of row's batch, and the row's index in it (in this.batch). */
  private locate(row: number): Read[] {
    const starts = this.starts;
    let lo = 0;
    let hi = starts.length - 2;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (starts[mid] <= row) lo = mid;
      else hi = mid - 1;
    }
    this.batch.index = lo;
    this.batch.local = row - starts[lo];
    return this.batchReaders(lo);
  }

  private batchReaders(b: number): Read[] {
    let readers = this.readers[b];
    if (readers === undefined) {
      const col = batchColumns(this.table, b);
      readers = this.specs.map((s) => readerOf(s, new Col(col(s.name)), 0));
      this.readers[b] = readers;
    }
    return readers;
  }

  decodeInto(row: number, out: Record<string, unknown>): void {
    const readers = this.locate(row);
    const i = this.batch.local;
    for (let c = 0; c < readers.length; c++) out[this.names[c]] = readers[c](i);
  }

  picker(names: readonly string[]): (row: number, out: Record<string, unknown>) => void {
    for (const name of names) if (!this.names.includes(name)) throw new RangeError(`No cold column "${name}".`);
    // In schema order, as the blob's picker sets them.
    const columns = this.names.flatMap((name, c) => (names.includes(name) ? [c] : []));
    const named = columns.map((c) => this.names[c]);
    return (row, out) => {
      const readers = this.locate(row);
      const i = this.batch.local;
      for (let k = 0; k < columns.length; k++) out[named[k]] = readers[columns[k]](i);
    };
  }

  decodeOne(row: number, name: string): unknown {
    const c = this.names.indexOf(name);
    if (c < 0) throw new RangeError(`No cold column "${name}".`);
    return this.locate(row)[c](this.batch.local);
  }
}
