/**
 * Opens a snapshot file and checks it: schema version, metadata, every column of the schema
 * with its type, and the checksum (of content and metadata from v2 on, of content alone in a v1
 * file). Any failure throws a `SnapshotError` naming the reason, so a loader can refuse the file
 * and keep serving the previous one. A v1 file is handed on as the current format (upgrade.ts).
 */
import { openSync, readSync, closeSync, fstatSync } from 'node:fs';
import { mapShared, mappingUnavailable } from './mapped-file.ts';
import { performance } from 'node:perf_hooks';
import { Table, tableFromIPC } from 'apache-arrow';
import { Footer } from 'apache-arrow/ipc/metadata/file';
import { METADATA_KEYS, READABLE_VERSIONS, columnsOf, type SnapshotMetadata, type SnapshotSource } from './schema.ts';
import { metadataText, snapshotChecksum } from './checksum.ts';
import { upgradeV1 } from './upgrade.ts';

export class SnapshotError extends Error {
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`Snapshot ${path} refused: ${reason}`);
    this.name = 'SnapshotError';
  }
}

export interface OpenedSnapshot {
  path: string;
  metadata: SnapshotMetadata;
  table: Table;
  bytes: number;
  /** The file's bytes when mapped (shared, so that another thread reads the same pages), else null. */
  mapped: SharedArrayBuffer | null;
  /** Milliseconds reading the file, then decoding and checking it (schema, columns, checksum). */
  readMs: number;
  verifyMs: number;
}

/** Reads a whole file into one ArrayBuffer (no 2 GiB cap as with fs.readFile). */
/**
 * The whole file: mapped from the page cache where the addon is built (mapped-file.ts), which
 * costs no fresh memory and leaves nothing to free but the mapping; else read.
 */
function readAll(path: string): Uint8Array {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    if (mappingUnavailable() === null) return new Uint8Array(mapShared(fd, 0, size));
    const buf = new Uint8Array(size);
    let at = 0;
    while (at < size) {
      const n = readSync(fd, buf, at, Math.min(1 << 28, size - at), at);
      if (n === 0) break;
      at += n;
    }
    if (at !== size) throw new Error(`short read: ${at} of ${size} bytes`);
    return buf;
  } finally {
    closeSync(fd);
  }
}

export function parseMetadata(path: string, meta: Map<string, string>): SnapshotMetadata {
  const get = (key: string): string => {
    const v = meta.get(key);
    if (v === undefined) throw new SnapshotError(path, `metadata key ${key} is missing`);
    return v;
  };
  const schemaVersion = Number(get(METADATA_KEYS.schemaVersion));
  if (!(READABLE_VERSIONS as readonly number[]).includes(schemaVersion)) {
    throw new SnapshotError(
      path,
      `schema version ${get(METADATA_KEYS.schemaVersion)} is not one this program reads (${READABLE_VERSIONS.join(', ')})`,
    );
  }
  let sources: SnapshotSource[];
  try {
    sources = JSON.parse(get(METADATA_KEYS.sources));
  } catch {
    throw new SnapshotError(path, `metadata ${METADATA_KEYS.sources} is not JSON`);
  }
  return {
    schemaVersion,
    country: get(METADATA_KEYS.country),
    snapshotDate: get(METADATA_KEYS.snapshotDate),
    sources,
    checksum: get(METADATA_KEYS.checksum),
    rowCount: Number(get(METADATA_KEYS.rowCount)),
  };
}

/** The Arrow file's footer, which holds its schema with the metadata: the tail of the file. */
const FOOTER_TAIL = 10;

/**
 * The metadata of a snapshot file, from its footer alone (a few kilobytes read, nothing
 * checked but what parseMetadata checks): what a prepared file is matched against.
 */
export function readSnapshotMetadata(path: string): SnapshotMetadata {
  let schema: Map<string, string>;
  try {
    const fd = openSync(path, 'r');
    try {
      const size = fstatSync(fd).size;
      const tail = Buffer.alloc(FOOTER_TAIL);
      if (size < 2 * FOOTER_TAIL || readSync(fd, tail, 0, FOOTER_TAIL, size - FOOTER_TAIL) !== FOOTER_TAIL) throw new Error('too short');
      if (tail.toString('latin1', 4) !== 'ARROW1') throw new Error('no ARROW1 magic at the end');
      const length = tail.readInt32LE(0);
      if (length <= 0 || length > size - 2 * FOOTER_TAIL) throw new Error(`footer length ${length} does not fit`);
      const footer = Buffer.alloc(length);
      if (readSync(fd, footer, 0, length, size - FOOTER_TAIL - length) !== length) throw new Error('short read of the footer');
      schema = Footer.decode(footer).schema.metadata;
    } finally {
      closeSync(fd);
    }
  } catch (err) {
    throw new SnapshotError(path, `not an Arrow IPC file (${(err as Error).message})`);
  }
  return parseMetadata(path, schema);
}

/** A file opened and its structure checked (schema version, metadata, columns, rows), its checksum not yet. */
export interface UnverifiedSnapshot extends Omit<OpenedSnapshot, 'verifyMs'> {
  /** Checks the checksum (throws a SnapshotError naming the mismatch) and gives the file as the current format. */
  verify(): OpenedSnapshot;
  /**
   * The file as `verify` gives it, without the checksum, for a build that starts while another
   * thread checks it (`checkChecksum` over the same bytes): nothing built may be served until that check has passed.
   */
  unchecked(): OpenedSnapshot;
}

/** Throws a SnapshotError naming the mismatch when a file's table (as read, any version) does not give its checksum. */
export function checkChecksum(path: string, table: Table, metadata: SnapshotMetadata): void {
  const covered = metadata.schemaVersion >= 2 ? metadataText(table.schema.metadata, table.schema.fields) : null;
  let checksum: string;
  try {
    checksum = snapshotChecksum(
      columnsOf(metadata.schemaVersion).map((c) => c.name),
      table.batches.map((b) => b.data),
      covered,
    );
  } catch (err) {
    throw new SnapshotError(path, `cannot checksum content (${(err as Error).message})`);
  }
  if (checksum !== metadata.checksum) {
    const what = covered === null ? 'content' : 'content and metadata';
    throw new SnapshotError(path, `checksum mismatch: the file says ${metadata.checksum}, its ${what} give ${checksum}`);
  }
}

/** A file's table as read, in the current format: a v1 file's upgraded. */
export function currentFormat(table: Table, schemaVersion: number): Table {
  return schemaVersion === 1 ? upgradeV1(table) : table;
}

/** The table of a file's bytes in the current format, unchecked: for a file already verified. */
export function fileTable(bytes: Uint8Array, schemaVersion: number): Table {
  return currentFormat(tableFromIPC(bytes), schemaVersion);
}

/** Opens and checks a file: what `openSnapshot` checks, then the checksum. */
export function readSnapshot(path: string): OpenedSnapshot {
  return openSnapshot(path).verify();
}

/**
 * Opens a file and checks its structure. Work that reads the file may start before `verify`
 * (a thread encoding it meanwhile: catalog/cold-blob.ts), but nothing may be served from it until
 * `verify` has returned.
 */
export function openSnapshot(path: string): UnverifiedSnapshot {
  let bytes: Uint8Array;
  const started = performance.now();
  try {
    bytes = readAll(path);
  } catch (err) {
    throw new SnapshotError(path, `cannot read file (${(err as Error).message})`);
  }
  const read = performance.now();
  let table: Table;
  try {
    table = tableFromIPC(bytes);
  } catch (err) {
    throw new SnapshotError(path, `not an Arrow IPC file (${(err as Error).message})`);
  }
  const metadata = parseMetadata(path, table.schema.metadata);
  const columns = columnsOf(metadata.schemaVersion);
  for (const spec of columns) {
    const field = table.schema.fields.find((f) => f.name === spec.name);
    if (!field) throw new SnapshotError(path, `column ${spec.name} is missing`);
  }
  if (table.schema.fields.length !== columns.length) {
    throw new SnapshotError(path, `has ${table.schema.fields.length} columns, schema v${metadata.schemaVersion} has ${columns.length}`);
  }
  if (table.numRows !== metadata.rowCount) {
    throw new SnapshotError(path, `holds ${table.numRows} rows, metadata says ${metadata.rowCount}`);
  }
  const readMs = Math.round(read - started);
  const checkedMs = performance.now() - read;
  const mapped = bytes.buffer instanceof SharedArrayBuffer ? bytes.buffer : null;
  const file = { path, metadata, table, bytes: bytes.byteLength, mapped, readMs };
  return {
    ...file,
    verify: () => {
      const verifying = performance.now();
      checkChecksum(path, table, metadata);
      return {
        ...file,
        table: currentFormat(table, metadata.schemaVersion),
        verifyMs: Math.round(checkedMs + performance.now() - verifying),
      };
    },
    unchecked: () => ({ ...file, table: currentFormat(table, metadata.schemaVersion), verifyMs: 0 }),
  };
}
