/**
 * The prepared file of a snapshot (`<CC>/<date>.edifice` beside `<CC>/<date>.arrow`): the store
 * as built from the Arrow file — columns, cold blob, id ranks, row tree, node summaries, point
 * index — written once, so that a later start maps it from the page cache (mapped-file.ts) or,
 * without the addon, reads it straight into the shared buffers, instead of building it again.
 *
 * Layout, little-endian:
 * - 24 bytes: "EDIFPREP", the format version (u32), the header's length (u32), its CRC-32 (u32), 0 (u32);
 * - the header, JSON: the format version, the store code's fingerprint, the snapshot it was made
 *   from (checksum, country, date, rows), the file's size, one entry per array (type, shared or
 *   not, bytes, CRC-32) and the skeleton: the snapshot's transfer (transfer.ts), each array
 *   replaced by its number;
 * - the arrays, each at a multiple of 8 bytes, in their order.
 *
 * A file is served only when all of it holds: magic, format version, store code, the snapshot's
 * checksum, the size, and every CRC (a CRC-32 catches every flipped byte). Anything else throws a
 * `PreparedRefusal` whose message is the reason; the caller builds the store from the Arrow file.
 *
 * Why a fingerprint of the code: the skeleton is the store's own fields (row tree, summaries,
 * footprints, places). A program whose store modules differ may lay them out otherwise, so a file
 * written by other code is refused as surely as one of another format version.
 */
import { createHash } from 'node:crypto';
import { closeSync, fstatSync, openSync, readFileSync, readSync, readdirSync, renameSync, unlinkSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { crc32 } from 'node:zlib';
import { performance } from 'node:perf_hooks';
import { mapShared, mappingUnavailable } from '../snapshot/mapped-file.ts';
import { SliceCrc, type Slice } from './slice-crc.ts';
import type { Snapshot } from './snapshot.ts';
import { fromTransfer, toTransfer, type SnapshotTransfer } from './transfer.ts';

/** Changes whenever the layout above changes. */
export const PREPARED_FORMAT = 1;
const MAGIC = 'EDIFPREP';
const PREFIX = 24;
/** Bytes read, CRC'd or written at a time. */
const CHUNK = 1 << 26;
/** Bytes read, then checked, at a time; the CRCs' unit of work (slice-crc.ts). */
const SLICE = 1 << 22;

export class PreparedRefusal extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'PreparedRefusal';
  }
}

/** `<CC>/<date>.edifice` beside `<CC>/<date>.arrow`. */
export function preparedBeside(arrowPath: string): string {
  return arrowPath.replace(/\.arrow$/, '') + '.edifice';
}

/** The snapshot a prepared file belongs to. */
export interface PreparedBinding {
  checksum: string;
  country: string;
  date: string;
  rows: number;
}

export interface PreparedTimings {
  /** Shared arrays mapped from the page cache (mapped-file.ts), not read. */
  mapped: boolean;
  readMs: number;
  verifyMs: number;
  mapMs: number;
  bytes: number;
}

const TYPES = {
  Float64Array,
  Float32Array,
  Int32Array,
  Uint32Array,
  Int16Array,
  Uint16Array,
  Int8Array,
  Uint8Array,
} as const;
type TypeName = keyof typeof TYPES | 'ArrayBuffer';

/** One array of the file: its type, whether it lives on shared memory, bytes, CRC-32. */
type Entry = [type: TypeName, shared: 0 | 1, bytes: number, crc: number];

interface Header {
  format: number;
  code: string;
  snapshot: PreparedBinding;
  size: number;
  arrays: Entry[];
  skeleton: unknown;
}

let fingerprint: string | null = null;
/** Numbers this process's temporary files: two writes of one path never share one. */
let writes = 0;

/**
 * The store code's fingerprint: SHA-256 of the catalog modules, the snapshot schema and the
 * Flatbush version (its buffer is stored as is).
 */
export function storeCode(): string {
  if (fingerprint !== null) return fingerprint;
  const hash = createHash('sha256');
  const here = dirname(fileURLToPath(import.meta.url));
  const files = readdirSync(here)
    .filter((f) => f.endsWith('.ts'))
    .sort()
    .map((f) => join(here, f));
  files.push(join(here, '..', 'snapshot', 'schema.ts'));
  for (const f of files) hash.update(`${f.slice(here.length)}\0`).update(readFileSync(f));
  const flatbush = join(here, '..', '..', 'node_modules', 'flatbush', 'package.json');
  try {
    hash.update((JSON.parse(readFileSync(flatbush, 'utf8')) as { version: string }).version);
  } catch {
    hash.update('flatbush ?');
  }
  fingerprint = hash.digest('hex').slice(0, 32);
  return fingerprint;
}

// The skeleton: JSON, with arrays, buffers, maps and numbers JSON cannot hold tagged.

function encode(v: unknown, arrays: (ArrayBufferView | ArrayBufferLike)[], seen: Map<object, number>): unknown {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'number') {
    if (Number.isFinite(v) && !Object.is(v, -0)) return v;
    return { $n: Object.is(v, -0) ? '-0' : String(v) };
  }
  if (v === undefined) return { $u: 1 };
  if (typeof v !== 'object') throw new Error(`a ${typeof v} has no place in a prepared file`);
  if (ArrayBuffer.isView(v) || v instanceof ArrayBuffer || v instanceof SharedArrayBuffer) {
    let at = seen.get(v);
    if (at === undefined) {
      at = arrays.length;
      arrays.push(v);
      seen.set(v, at);
    }
    return ArrayBuffer.isView(v) ? { $a: at } : { $b: at };
  }
  if (v instanceof Map) return { $m: [...v].map(([k, x]) => [encode(k, arrays, seen), encode(x, arrays, seen)]) };
  if (Array.isArray(v)) return v.map((x) => encode(x, arrays, seen));
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    if (k.startsWith('$')) throw new Error(`field ${k} has no place in a prepared file`);
    if (typeof x === 'function') throw new Error(`field ${k} is a function`);
    out[k] = encode(x, arrays, seen);
  }
  return out;
}

function decode(v: unknown, arrays: readonly unknown[]): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) {
    const out = new Array<unknown>(v.length);
    for (let i = 0; i < v.length; i++) out[i] = decode(v[i], arrays);
    return out;
  }
  const o = v as Record<string, unknown>;
  if ('$a' in o) return arrays[o.$a as number];
  if ('$b' in o) return arrays[o.$b as number];
  if ('$n' in o) return o.$n === '-0' ? -0 : Number(o.$n);
  if ('$u' in o) return undefined;
  if ('$m' in o) return new Map((o.$m as [unknown, unknown][]).map(([k, x]) => [decode(k, arrays), decode(x, arrays)]));
  const out: Record<string, unknown> = {};
  for (const k in o) out[k] = decode(o[k], arrays);
  return out;
}

function typeOf(a: ArrayBufferView | ArrayBufferLike): TypeName {
  if (!ArrayBuffer.isView(a)) return 'ArrayBuffer';
  const name = a.constructor.name;
  if (!(name in TYPES)) throw new Error(`a ${name} has no place in a prepared file`);
  return name as TypeName;
}

function bytesOf(a: ArrayBufferView | ArrayBufferLike): Uint8Array {
  return ArrayBuffer.isView(a) ? new Uint8Array(a.buffer, a.byteOffset, a.byteLength) : new Uint8Array(a);
}

const align8 = (n: number): number => Math.ceil(n / 8) * 8;

/**
 * Writes the prepared file of `snapshot` at `path`: beside it first, renamed into place once
 * whole, so a reader never sees half a file. Yields to the event loop between chunks.
 */
export async function writePrepared(path: string, snapshot: Snapshot): Promise<{ bytes: number; ms: number }> {
  const started = performance.now();
  // A prepared file holds the encoded blob, never the file it stands in for.
  if (!snapshot.coldEncoded) throw new Error('its cold blob is not encoded yet');
  const { serial, ...transfer } = toTransfer(snapshot);
  void serial;
  const arrays: (ArrayBufferView | ArrayBufferLike)[] = [];
  const skeleton = encode(transfer, arrays, new Map());
  const entries: Entry[] = [];
  for (const a of arrays) {
    const bytes = bytesOf(a);
    let crc = 0;
    for (let at = 0; at < bytes.length; at += CHUNK) {
      crc = crc32(bytes.subarray(at, Math.min(bytes.length, at + CHUNK)), crc);
      await yieldToLoop();
    }
    const shared = (ArrayBuffer.isView(a) ? a.buffer : a) instanceof SharedArrayBuffer ? 1 : 0;
    entries.push([typeOf(a), shared, bytes.byteLength, crc]);
  }
  const binding: PreparedBinding = { checksum: snapshot.checksum, country: snapshot.country, date: snapshot.date, rows: snapshot.rows };
  // The size is in the header, which it counts: settle it by trying widths.
  let size = 0;
  let header: Buffer;
  for (;;) {
    header = Buffer.from(
      JSON.stringify({ format: PREPARED_FORMAT, code: storeCode(), snapshot: binding, size, arrays: entries, skeleton }),
    );
    let total = align8(PREFIX + header.length);
    for (const [, , bytes] of entries) total += align8(bytes);
    if (total === size) break;
    size = total;
  }
  const prefix = Buffer.alloc(PREFIX);
  prefix.write(MAGIC, 0, 'latin1');
  prefix.writeUInt32LE(PREPARED_FORMAT, 8);
  prefix.writeUInt32LE(header.length, 12);
  prefix.writeUInt32LE(crc32(header), 16);

  const tmp = `${path}.tmp-${process.pid}-${++writes}`;
  const file = await open(tmp, 'w');
  try {
    const pad = new Uint8Array(8);
    let at = 0;
    const put = async (bytes: Uint8Array): Promise<void> => {
      for (let from = 0; from < bytes.length;) {
        const { bytesWritten } = await file.write(bytes, from, Math.min(CHUNK, bytes.length - from), at);
        from += bytesWritten;
        at += bytesWritten;
      }
    };
    await put(prefix);
    await put(header);
    await put(pad.subarray(0, align8(at) - at));
    for (const a of arrays) {
      const bytes = bytesOf(a);
      await put(bytes);
      await put(pad.subarray(0, align8(at) - at));
    }
    if (at !== size) throw new Error(`wrote ${at} bytes, the header says ${size}`);
    await file.datasync();
    await file.close();
    renameSync(tmp, path);
  } catch (err) {
    await file.close().catch(() => undefined);
    try {
      unlinkSync(tmp);
    } catch {
      // already gone
    }
    throw err;
  }
  return { bytes: size, ms: Math.round(performance.now() - started) };
}

/** Shared bytes from which a second thread helps with the CRCs. */
const PARALLEL_CRC_FROM = 1 << 26;

/** Reads length bytes at `position` into `into`; false when the file ends first. */
function readInto(fd: number, into: Uint8Array, position: number): boolean {
  for (let at = 0; at < into.length;) {
    const n = readSync(fd, into, at, Math.min(CHUNK, into.length - at), position + at);
    if (n === 0) return false;
    at += n;
  }
  return true;
}

/**
 * The snapshot a prepared file holds, when it is the one of `expected` and whole; else throws a
 * PreparedRefusal naming the reason. Each array is read once, into its own (shared) buffer.
 */
export function readPrepared(
  path: string,
  expected: PreparedBinding,
  arrowPath: string,
  { parallelCrcFrom = PARALLEL_CRC_FROM, map = true }: { parallelCrcFrom?: number; map?: boolean } = {},
): { snapshot: Snapshot; timings: PreparedTimings } {
  let readMs = 0;
  let verifyMs = 0;
  let t = performance.now();
  const lap = (): number => {
    const now = performance.now();
    const ms = now - t;
    t = now;
    return ms;
  };
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    const prefix = Buffer.alloc(PREFIX);
    if (!readInto(fd, prefix, 0)) throw new PreparedRefusal(`truncated: ${size} bytes, not even the ${PREFIX}-byte prefix`);
    if (prefix.toString('latin1', 0, 8) !== MAGIC) throw new PreparedRefusal('not a prepared file (no EDIFPREP magic)');
    const format = prefix.readUInt32LE(8);
    if (format !== PREPARED_FORMAT) throw new PreparedRefusal(`format version ${format}, this program reads ${PREPARED_FORMAT}`);
    const headerBytes = Buffer.alloc(prefix.readUInt32LE(12));
    if (!readInto(fd, headerBytes, PREFIX)) throw new PreparedRefusal(`truncated: ${size} bytes, the header alone needs more`);
    readMs += lap();
    if (crc32(headerBytes) !== prefix.readUInt32LE(16)) throw new PreparedRefusal('header CRC mismatch (a changed byte in the header)');
    const header = JSON.parse(headerBytes.toString('utf8')) as Header;
    if (header.code !== storeCode())
      throw new PreparedRefusal(`written by other store code (${header.code}, this program's is ${storeCode()})`);
    const s = header.snapshot;
    if (s.checksum !== expected.checksum)
      throw new PreparedRefusal(`prepared from snapshot checksum ${s.checksum}, the snapshot's is ${expected.checksum}`);
    if (s.country !== expected.country || s.date !== expected.date || s.rows !== expected.rows)
      throw new PreparedRefusal(
        `prepared for ${s.country} ${s.date} (${s.rows} rows), not ${expected.country} ${expected.date} (${expected.rows} rows)`,
      );
    if (size !== header.size)
      throw new PreparedRefusal(`${size < header.size ? 'truncated' : 'too long'}: ${size} bytes, the header says ${header.size}`);
    verifyMs += lap();

    const offsets: number[] = [];
    let at = align8(PREFIX + headerBytes.length);
    for (const [, , bytes] of header.arrays) {
      offsets.push(at);
      at += align8(bytes);
    }
    // Shared arrays are mapped from the page cache when the addon is there, else read; either
    // way their CRCs are taken by two threads (slice-crc.ts). The others, small, are read and
    // checked here.
    const mapped = map && mappingUnavailable() === null;
    const buffers = header.arrays.map(([, shared, bytes], k) =>
      shared ? (mapped ? mapShared(fd, offsets[k], bytes) : new SharedArrayBuffer(bytes)) : new ArrayBuffer(bytes),
    );
    const slices: Slice[] = [];
    let sharedBytes = 0;
    header.arrays.forEach(([, shared, bytes], k) => {
      if (!shared) return;
      sharedBytes += bytes;
      for (let from = 0; from < bytes; from += SLICE) slices.push([k, from, Math.min(SLICE, bytes - from)]);
    });
    readMs += lap();
    const checks = new SliceCrc(
      buffers.map((b) => (b instanceof SharedArrayBuffer ? b : null)),
      slices,
      sharedBytes >= parallelCrcFrom,
    );
    const sums = new Uint32Array(buffers.length);
    try {
      let available = 0;
      header.arrays.forEach(([type, shared, bytes], k) => {
        if (shared && mapped) return;
        const view = new Uint8Array(buffers[k]);
        for (let from = 0; from < bytes; from += SLICE) {
          const slice = view.subarray(from, Math.min(bytes, from + SLICE));
          if (!readInto(fd, slice, offsets[k] + from))
            throw new PreparedRefusal(`truncated inside array ${k} (${type}, ${bytes} bytes at offset ${offsets[k]})`);
          readMs += lap();
          if (shared) checks.available(++available);
          else sums[k] = crc32(slice, sums[k]);
          verifyMs += lap();
        }
      });
    } catch (err) {
      checks.stop();
      throw err;
    }
    const checked = checks.finish(buffers.length);
    header.arrays.forEach(([, shared], k) => {
      if (shared) sums[k] = checked[k];
    });
    verifyMs += lap();
    const arrays: unknown[] = [];
    header.arrays.forEach(([type, , bytes, crc], k) => {
      if (sums[k] !== crc)
        throw new PreparedRefusal(`CRC mismatch in array ${k} (${type}, ${bytes} bytes at offset ${offsets[k]}): a changed byte`);
      arrays.push(type === 'ArrayBuffer' ? buffers[k] : new TYPES[type](buffers[k] as ArrayBuffer));
    });
    const transfer = decode(header.skeleton, arrays) as Omit<SnapshotTransfer, 'serial'>;
    const snapshot = fromTransfer({ ...transfer, parts: { ...transfer.parts, path: arrowPath }, serial: 0 });
    const mapMs = lap();
    return {
      snapshot,
      timings: { mapped, readMs: Math.round(readMs), verifyMs: Math.round(verifyMs), mapMs: Math.round(mapMs), bytes: size },
    };
  } finally {
    closeSync(fd);
  }
}
