/**
 * Checksum of a snapshot: SHA-256 over the column names, the metadata (schema format v2 on) and
 * every buffer of every record batch, in schema order, as Arrow hands them to a reader. The
 * writer computes it over what it is about to write and stores it in the schema metadata; the
 * reader recomputes it over what it decoded, so a flipped byte in any value, offset, validity
 * bitmap or metadata text (sources, licence, country, date) refuses the file.
 */
import { createHash, type Hash } from 'node:crypto';
import { Type, type Data } from 'apache-arrow';
import { METADATA_KEYS } from './schema.ts';

function bytes(view: ArrayBufferView, byteLength: number): Uint8Array {
  return new Uint8Array(view.buffer, view.byteOffset, byteLength);
}

function hashBitmap(hash: Hash, bitmap: Uint8Array, offset: number, length: number): void {
  // Bits past the end are undefined in Arrow; hash exactly `length` bits starting at `offset`.
  const out = new Uint8Array((length + 7) >> 3);
  if ((offset & 7) === 0) {
    out.set(bitmap.subarray(offset >> 3, (offset >> 3) + out.length));
    if (length & 7) out[out.length - 1] &= (1 << (length & 7)) - 1;
    hash.update(out);
    return;
  }
  for (let i = 0; i < length; i++) {
    const j = offset + i;
    if (bitmap[j >> 3] & (1 << (j & 7))) out[i >> 3] |= 1 << (i & 7);
  }
  hash.update(out);
}

function hashOffsets(hash: Hash, o: Int32Array): void {
  const rebased = new Int32Array(o.length);
  const base = o[0];
  for (let i = 0; i < o.length; i++) rebased[i] = o[i] - base;
  hash.update(bytes(rebased, 4 * rebased.length));
}

function hashData(hash: Hash, data: Data): void {
  const { length, offset, nullCount } = data;
  hash.update(`${data.typeId}:${length}:${nullCount};`);
  if (nullCount > 0 && data.nullBitmap) hashBitmap(hash, data.nullBitmap, offset, length);
  const values = data.values as ArrayBufferView | undefined;
  const offsets = data.valueOffsets as Int32Array | undefined;
  switch (data.typeId) {
    case Type.Bool:
      hashBitmap(hash, data.values as Uint8Array, offset, length);
      break;
    case Type.Utf8: {
      const o = offsets!.subarray(offset, offset + length + 1);
      hashOffsets(hash, o);
      hash.update((values as Uint8Array).subarray(o[0], o[length]));
      break;
    }
    case Type.List: {
      const o = offsets!.subarray(offset, offset + length + 1);
      hashOffsets(hash, o);
      hashData(hash, data.children[0].slice(o[0], o[length] - o[0]));
      break;
    }
    case Type.FixedSizeList: {
      const size = (data.type as unknown as { listSize: number }).listSize;
      hashData(hash, data.children[0].slice(offset * size, length * size));
      break;
    }
    case Type.Struct:
      for (const child of data.children) hashData(hash, child.slice(offset, length));
      break;
    default: {
      const v = values as Float64Array | Int32Array | Int8Array;
      const per = v.BYTES_PER_ELEMENT * (data.stride ?? 1);
      hash.update(new Uint8Array(v.buffer, v.byteOffset + offset * per, length * per));
      if (data.dictionary) for (const d of data.dictionary.data) hashData(hash, d);
    }
  }
}

type Entries = ReadonlyMap<string, string>;
const sorted = (m: Entries): [string, string][] =>
  [...m].filter(([k]) => k !== METADATA_KEYS.checksum).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

/**
 * The metadata a v2 checksum covers, as one text with a single reading: every schema metadata
 * entry but the checksum itself, then each field's metadata (the footprint's CRS), by field.
 */
export function metadataText(schema: Entries, fields: readonly { name: string; metadata: Entries }[]): string {
  return JSON.stringify({ schema: sorted(schema), fields: fields.map((f) => [f.name, sorted(f.metadata)]) });
}

/**
 * Checksum of record batches given as one struct `Data` per batch, and of the metadata text
 * (`metadataText`) when given; a v1 file's checksum covers no metadata.
 */
export function snapshotChecksum(columnNames: readonly string[], batches: Iterable<Data>, metadata: string | null = null): string {
  const hash = createHash('sha256');
  hash.update(columnNames.join(','));
  if (metadata !== null) hash.update(`;metadata:${Buffer.byteLength(metadata)}:${metadata}`);
  for (const batch of batches) hashData(hash, batch);
  return `sha256:${hash.digest('hex')}`;
}
