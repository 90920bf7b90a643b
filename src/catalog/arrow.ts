/**
 * Reading the buffers of one Arrow record batch column directly (no `Vector.get` per value):
 * `Col` resolves a column's buffers and validity bitmap once per batch, so that reading a value
 * costs an array access, not a chain of Arrow getters. Every accessor honours the data's offset.
 */
import { DataType, Type, type Data, type Table } from 'apache-arrow';
import { NULL_I32 } from '../snapshot/columns.ts';

export { NULL_I32 };

/** Null code of enum columns in the store. */
export const NULL_CODE_U8 = 0xff;

// A leading byte order mark is kept, as Buffer's decoding (the cold blob's) keeps it: a string is served as the file holds it.
const decoder = new TextDecoder('utf-8', { ignoreBOM: true });

/** The columns of one record batch, by name. */
export function batchColumns(table: Table, batch: number): (name: string) => Data {
  const data = table.batches[batch].data;
  const index = new Map(table.schema.fields.map((f, i) => [f.name, i]));
  return (name) => data.children[index.get(name)!];
}

/** One column of one batch. */
export class Col {
  readonly off: number;
  readonly length: number;
  /** Validity bits, or null when the column has no null. */
  readonly bits: Uint8Array | null;
  /** The value buffer: numbers, or the bytes of strings and validity bits. */
  readonly values: Float64Array | Int32Array | Int16Array | Int8Array | Uint32Array | Uint16Array | Uint8Array;
  readonly offsets: Int32Array;

  constructor(readonly data: Data) {
    this.off = data.offset;
    this.length = data.length;
    const bitmap = data.nullBitmap;
    this.bits = data.nullCount > 0 && bitmap && bitmap.length > 0 ? bitmap : null;
    this.values = data.values;
    this.offsets = (data.valueOffsets as Int32Array | undefined) ?? new Int32Array(0);
  }

  valid(i: number): boolean {
    const bits = this.bits;
    if (bits === null) return true;
    const j = this.off + i;
    return ((bits[j >> 3] >> (j & 7)) & 1) === 1;
  }

  /** Float64 value, NaN when null. */
  f64(i: number): number {
    return this.valid(i) ? this.values[this.off + i] : NaN;
  }

  /** Int32 (or Date32 days) value, NULL_I32 when null. */
  i32(i: number): number {
    return this.valid(i) ? this.values[this.off + i] : NULL_I32;
  }

  /** Bool value: 1, 0, or 2 when null. */
  bool(i: number): number {
    if (!this.valid(i)) return 2;
    const j = this.off + i;
    return (this.values[j >> 3] >> (j & 7)) & 1;
  }

  /** Raw dictionary index (meaningful when valid). */
  code(i: number): number {
    return this.values[this.off + i];
  }

  /** [start, end) of list row i's children, or of string i's bytes. */
  start(i: number): number {
    return this.offsets[this.off + i];
  }

  end(i: number): number {
    return this.offsets[this.off + i + 1];
  }

  /** The UTF-8 bytes of a string column, which `start` and `end` index. */
  get bytes(): Uint8Array {
    return this.values as Uint8Array;
  }

  utf8(i: number): string | null {
    if (!this.valid(i)) return null;
    return decoder.decode(this.bytes.subarray(this.start(i), this.end(i)));
  }
}

/** Copies a Float64 column into out[base..], NaN where null. */
export function fillF64(c: Col, out: Float64Array, base: number): void {
  out.set((c.values as Float64Array).subarray(c.off, c.off + c.length), base);
  forEachNull(c, (i) => (out[base + i] = NaN));
}

/** Copies an Int32 (or Date32) column into out[base..], NULL_I32 where null. */
export function fillI32(c: Col, out: Int32Array, base: number): void {
  out.set((c.values as Int32Array).subarray(c.off, c.off + c.length), base);
  forEachNull(c, (i) => (out[base + i] = NULL_I32));
}

/** Calls `null_` with each null row of the column, passing over validity bytes with all eight set. */
function forEachNull(c: Col, null_: (i: number) => void): void {
  const bits = c.bits;
  if (bits === null) return;
  const n = c.length;
  let i = 0;
  while (i < n) {
    const j = c.off + i;
    if ((j & 7) === 0 && i + 8 <= n && bits[j >> 3] === 0xff) {
      i += 8;
      continue;
    }
    if (((bits[j >> 3] >> (j & 7)) & 1) === 0) null_(i);
    i++;
  }
}

/**
 * Throws when offsets of a column (or of its children, or of its dictionary) could send a reader
 * past the values they index: a start below zero, an end before its start, a last end past the
 * values. Offsets that hold sizes every loop and allocation of a load in bounds of the file's own
 * buffers, so a file may be built from before its checksum is known: a corrupt one is then
 * refused by the checksum, never by an allocation or a loop that its damage made huge.
 */
export function checkOffsets(data: Data, column: string): void {
  const offsets = data.valueOffsets as Int32Array | undefined;
  if (offsets !== undefined && data.length > 0) {
    const limit = data.children.length > 0 ? data.children[0].length : (data.values as Uint8Array).length;
    const first = data.offset;
    const last = first + data.length;
    if (offsets.length <= last) throw new Error(`column ${column} has ${offsets.length} offsets for ${data.length} values`);
    let prev = offsets[first];
    if (prev < 0) throw new Error(`column ${column} has an offset below zero`);
    for (let i = first + 1; i <= last; i++) {
      const v = offsets[i];
      if (v < prev) throw new Error(`column ${column} has decreasing offsets`);
      prev = v;
    }
    if (prev > limit) throw new Error(`column ${column} has offsets past its ${limit} values`);
  }
  for (const child of data.children) checkOffsets(child, column);
  if (data.dictionary) for (const chunk of data.dictionary.data) checkOffsets(chunk, column);
}

/** The strings of a batch's dictionary. */
export function dictionaryStrings(data: Data): string[] {
  const dict = data.dictionary;
  if (!dict) throw new Error('dictionary column without a dictionary');
  const out: string[] = [];
  // Decoded here rather than by Vector.get, whose decoder drops a leading byte order mark.
  for (const chunk of dict.data) {
    const c = new Col(chunk);
    for (let i = 0; i < c.length; i++) out.push(String(c.utf8(i)));
  }
  return out;
}

/**
 * File code -> code in `values` (the schema's enum order) for one batch. Throws naming the
 * column when the file's dictionary holds a value the schema does not allow.
 */
export function enumRemap(data: Data, values: readonly string[], column: string): Int32Array {
  const strings = dictionaryStrings(data);
  const remap = new Int32Array(strings.length);
  strings.forEach((s, i) => {
    const code = values.indexOf(s);
    if (code < 0) throw new Error(`column ${column} holds "${s}", not one of its enum values`);
    remap[i] = code;
  });
  return remap;
}

/** A dictionary built while loading: strings in first-seen order, with their codes. */
export class StringTable {
  readonly values: string[] = [];
  private readonly codes = new Map<string, number>();
  private lastDictionary: unknown = null;
  private lastRemap = new Int32Array(0);

  code(s: string): number {
    let c = this.codes.get(s);
    if (c === undefined) {
      c = this.values.length;
      this.values.push(s);
      this.codes.set(s, c);
    }
    return c;
  }

  /** Code of s, or -1. */
  find(s: string): number {
    return this.codes.get(s) ?? -1;
  }

  /** Forgets the last batch dictionary: it is a view into the file's buffer, which must not be kept. */
  release(): void {
    this.lastDictionary = null;
    this.lastRemap = new Int32Array(0);
  }

  /** Batch dictionary code -> table code (cached while batches share one dictionary). */
  remap(data: Data): Int32Array {
    if (data.dictionary === this.lastDictionary) return this.lastRemap;
    const strings = dictionaryStrings(data);
    const remap = new Int32Array(strings.length);
    for (let i = 0; i < strings.length; i++) remap[i] = this.code(strings[i]);
    this.lastDictionary = data.dictionary;
    this.lastRemap = remap;
    return remap;
  }
}

/** Checks that an Arrow column has the type a schema kind needs; returns a reason or null. */
export function typeProblem(kind: string, data: Data): string | null {
  const t = data.type;
  switch (kind) {
    case 'f64':
      return DataType.isFloat(t) && t.precision === 2 ? null : `is ${t}, expected Float64`;
    case 'i32':
      return DataType.isInt(t) && t.bitWidth === 32 && t.isSigned ? null : `is ${t}, expected Int32`;
    case 'date':
      return DataType.isDate(t) && t.unit === 0 ? null : `is ${t}, expected Date32`;
    case 'bool':
      return t.typeId === Type.Bool ? null : `is ${t}, expected Bool`;
    case 'utf8':
      return t.typeId === Type.Utf8 ? null : `is ${t}, expected Utf8`;
    case 'dict':
      return DataType.isDictionary(t) && t.dictionary.typeId === Type.Utf8 ? null : `is ${t}, expected a dictionary of Utf8`;
    case 'enum':
      return DataType.isDictionary(t) && t.dictionary.typeId === Type.Utf8 ? null : `is ${t}, expected an enum dictionary of Utf8`;
    case 'list':
      return t.typeId === Type.List && data.children[0]?.type.typeId === Type.Struct ? null : `is ${t}, expected a list of structs`;
    case 'geometry':
      return t.typeId === Type.List ? null : `is ${t}, expected a GeoArrow multipolygon`;
  }
  return `has an unknown kind ${kind}`;
}
