/**
 * The cold part of a snapshot: every field that no filter or sort reads, kept per row in one
 * byte blob so that `record(row)` can rebuild the whole building without keeping the Arrow table.
 *
 * A row's bytes are its cold columns in schema order, each by kind:
 * - f64: tag 0 null | 1 integer, zigzag varint | 2 float32 (exact) | 3 float64 |
 *   4..7 k / 10^(tag-3) for an integer k, zigzag varint (the shortest exact form is chosen);
 * - i32, date: varint of zigzag(v) + 1, 0 = null;
 * - enum: one byte, code + 1, 0 = null; dict: varint code + 1 into the column's string table;
 * - bool: one byte 0 false, 1 true, 2 null;
 * - utf8 (see `StringCoder`): varint mode 0 null | 1 same as an earlier string of the row |
 *   2 an earlier string's prefix plus a tail | 3 a shared template: prefix, decimal integer,
 *   suffix | 4 a shared whole string | n >= 5 the n - 5 UTF-8 bytes follow, as the file had them;
 * - list: varint count, then each item's fields by the same rules.
 */
import type { Data } from 'apache-arrow';
import type { ColumnSpec } from '../snapshot/schema.ts';
import { daysToDate } from '../snapshot/columns.ts';
import { Col, NULL_I32, StringTable, enumRemap } from './arrow.ts';
import { PackedStrings, type PackedStringsParts } from './packed-strings.ts';
import { ByteSink } from './shared.ts';

type Encode = (i: number, sink: ByteSink) => void;
type Decode = (r: ByteReader) => unknown;

const TWO_50 = 2 ** 50;

function varintLength(v: number): number {
  let n = 1;
  while (v >= 0x80) {
    v = Math.floor(v / 0x80);
    n++;
  }
  return n;
}

const zigzag = (k: number): number => (k >= 0 ? 2 * k : -2 * k - 1);

const SCALES = [1, 10, 100, 1000, 10000];

export function writeNumber(sink: ByteSink, v: number): void {
  if (v !== v) {
    sink.u8(0);
    return;
  }
  if (v === 0 && 1 / v < 0) {
    sink.u8(3);
    sink.float64(v);
    return;
  }
  if (Number.isInteger(v) && Math.abs(v) <= TWO_50) {
    sink.u8(1);
    sink.varint(zigzag(v));
    return;
  }
  let bestTag = Math.fround(v) === v ? 2 : 3;
  const bestCost = bestTag === 2 ? 4 : 8;
  let bestK = 0;
  for (let d = 1; d <= 4; d++) {
    const scale = SCALES[d];
    const k = Math.round(v * scale);
    if (Math.abs(k) > TWO_50 || k / scale !== v) continue;
    const cost = varintLength(zigzag(k));
    if (cost < bestCost) {
      bestTag = 3 + d;
      bestK = k;
    }
    break;
  }
  sink.u8(bestTag);
  if (bestTag === 2) sink.float32(v);
  else if (bestTag === 3) sink.float64(v);
  else sink.varint(zigzag(bestK));
}

export function writeInt(sink: ByteSink, v: number): void {
  sink.varint(v === NULL_I32 ? 0 : zigzag(v) + 1);
}

const HISTORY = 16;
const MIN_SHARED = 4;
const MAX_SHARED_STRINGS = 1 << 18;
const MAX_SEEN = 1 << 20;
const MAX_TEMPLATE_BYTES = 96;
const LITERAL = 5;

/** FNV-1a over bytes [a1, b1), a separator, then [a2, b2). */
function hashBytes(bytes: Uint8Array, a1: number, b1: number, a2: number, b2: number): number {
  let h = 0x811c9dc5;
  for (let k = a1; k < b1; k++) h = Math.imul(h ^ bytes[k], 0x01000193);
  h = Math.imul(h ^ 0xff, 0x01000193);
  for (let k = a2; k < b2; k++) h = Math.imul(h ^ bytes[k], 0x01000193);
  // Signed: a small integer key, where the unsigned value above 2^30 would be a heap number.
  return h | 0;
}

/**
 * Byte strings shared by many rows (a template: the bytes before and after a number; or a whole
 * string), looked up by a hash of their bytes without making JS strings. A key gets a code when
 * a second row uses it; the table is bounded. Keys are kept as bytes only while loading.
 */
class SharedTable {
  private readonly codes = new Map<number, number>();
  private keys: Uint8Array[] = [];
  private readonly seen = new Map<number, number>();

  /** Code of bytes [a1, b1) + [a2, b2), or -1 (first use, a hash collision, or the table is full). */
  code(bytes: Uint8Array, a1: number, b1: number, a2: number, b2: number, row: number): number {
    const h = hashBytes(bytes, a1, b1, a2, b2);
    const known = this.codes.get(h);
    if (known !== undefined) return this.equal(this.keys[known], bytes, a1, b1, a2, b2) ? known : -1;
    if (this.keys.length >= MAX_SHARED_STRINGS) return -1;
    const first = this.seen.get(h);
    if (first === undefined) {
      if (this.seen.size >= MAX_SEEN) this.seen.clear();
      this.seen.set(h, row);
      return -1;
    }
    if (first === row) return -1;
    this.seen.delete(h);
    const key = new Uint8Array(b1 - a1 + 1 + b2 - a2);
    key.set(bytes.subarray(a1, b1), 0);
    key[b1 - a1] = 0xff;
    key.set(bytes.subarray(a2, b2), b1 - a1 + 1);
    this.codes.set(h, this.keys.length);
    this.keys.push(key);
    return this.keys.length - 1;
  }

  private equal(key: Uint8Array, bytes: Uint8Array, a1: number, b1: number, a2: number, b2: number): boolean {
    const n1 = b1 - a1;
    if (key.length !== n1 + 1 + b2 - a2 || key[n1] !== 0xff) return false;
    for (let k = 0; k < n1; k++) if (key[k] !== bytes[a1 + k]) return false;
    for (let k = 0; k < b2 - a2; k++) if (key[n1 + 1 + k] !== bytes[a2 + k]) return false;
    return true;
  }

  release(): void {
    this.seen.clear();
    this.codes.clear();
    this.keys = [];
  }
}

/** The tables a `ByteReader` needs to rebuild strings. */
export interface StringTables {
  /** Template code -> prefix and suffix around the number. */
  prefixes: PackedStrings;
  suffixes: PackedStrings;
  wholes: PackedStrings;
}

/** Tables of a received or prepared store (their shared arrays, from a structured clone or a file). */
export function stringTablesFrom(parts: Record<keyof StringTables, PackedStringsParts>): StringTables {
  return {
    prefixes: new PackedStrings(parts.prefixes),
    suffixes: new PackedStrings(parts.suffixes),
    wholes: new PackedStrings(parts.wholes),
  };
}

/**
 * Strings of the cold parts. Within a row, a string equal to an earlier one (an entrance's
 * address and the building's) is a back-reference, and one starting like an earlier one (unit
 * ids after the building's source id) keeps only its tail. Across rows, a string made of text,
 * a canonical decimal number and text (`osm:way/123`, `Strada X 12, Town`) is a code into a
 * table of templates and the number, and a digit-free string many rows share (a street name)
 * is a code into a table of strings. Both tables are bounded.
 */
export class StringCoder {
  private readonly templates = new SharedTable();
  private readonly wholeTable = new SharedTable();
  readonly prefixes: string[] = [];
  readonly suffixes: string[] = [];
  readonly wholes: string[] = [];
  // Encoder state: the row's strings so far, as byte ranges of the file's buffers.
  private readonly histBuf: (Uint8Array | null)[] = new Array(HISTORY).fill(null);
  private readonly histStart = new Int32Array(HISTORY);
  private readonly histEnd = new Int32Array(HISTORY);
  private histCount = 0;
  private row = 0;

  /** The tables as they stand, packed for every thread to read. */
  pack(): StringTables {
    return {
      prefixes: PackedStrings.pack(this.prefixes),
      suffixes: PackedStrings.pack(this.suffixes),
      wholes: PackedStrings.pack(this.wholes),
    };
  }

  /** Starts a new row (or a business): earlier strings are no longer referenced. */
  reset(): void {
    this.histCount = 0;
    this.row++;
  }

  /** Encodes bytes [a, b) of text (a Buffer over the column's bytes). */
  encode(sink: ByteSink, text: Buffer, a: number, b: number): void {
    const len = b - a;
    // A shared prefix is cut at the first non-ASCII byte (a tail never starts inside a character):
    // bytes below `checked` are known, and `ascii` is the first non-ASCII one found (len: none yet).
    let ascii = len;
    let checked = 0;
    // Earlier strings of the row: an equal one, else the longest shared ASCII prefix.
    let bestDist = 0;
    let bestShared = 0;
    const count = Math.min(this.histCount, HISTORY);
    for (let d = 1; d <= count; d++) {
      const slot = (this.histCount - d) % HISTORY;
      const hb = this.histBuf[slot]!;
      const hs = this.histStart[slot];
      const hl = this.histEnd[slot] - hs;
      const max = Math.min(len, hl);
      // Skip, without comparing, a string that can neither be equal nor share more than the best so far.
      if (bestShared < max) {
        if (hb[hs + bestShared] !== text[a + bestShared]) continue;
        if (hl !== len && bestShared >= ascii) continue;
      } else if (hl !== len) continue;
      let p = 0;
      while (p < max && hb[hs + p] === text[a + p]) p++;
      if (p === len && hl === len) {
        sink.u8(1);
        sink.varint(d);
        this.remember(text, a, b);
        return;
      }
      while (checked < p && checked < ascii) {
        if (text[a + checked] >= 0x80) ascii = checked;
        else checked++;
      }
      if (p > ascii) p = ascii;
      if (p > bestShared) {
        bestShared = p;
        bestDist = d;
      }
    }
    let cost = varintLength(len + LITERAL) + len;
    let mode = LITERAL;
    if (bestShared >= MIN_SHARED) {
      const c = 1 + varintLength(bestDist) + varintLength(bestShared) + varintLength(len - bestShared) + len - bestShared;
      if (c < cost) {
        cost = c;
        mode = 2;
      }
    }
    // Shared strings: a template around the last run of digits, or the whole string.
    let code = -1;
    let number = 0;
    if (len >= 2 && len <= MAX_TEMPLATE_BYTES) {
      let de = b;
      while (de > a && !(text[de - 1] >= 48 && text[de - 1] <= 57)) de--;
      if (de === a) {
        code = this.wholeTable.code(text, a, b, b, b, this.row);
        if (code === this.wholes.length) this.wholes.push(text.toString('utf8', a, b));
        if (code >= 0 && 1 + varintLength(code) < cost) mode = 4;
      } else {
        let ds = de;
        while (ds > a && text[ds - 1] >= 48 && text[ds - 1] <= 57) ds--;
        const nd = de - ds;
        if (nd <= 15 && (nd === 1 || text[ds] !== 48)) {
          code = this.templates.code(text, a, ds, de, b, this.row);
          if (code === this.prefixes.length) {
            this.prefixes.push(text.toString('utf8', a, ds));
            this.suffixes.push(text.toString('utf8', de, b));
          }
          for (let k = ds; k < de; k++) number = number * 10 + (text[k] - 48);
          if (code >= 0 && 1 + varintLength(code) + varintLength(number) < cost) mode = 3;
        }
      }
    }
    if (mode === 2) {
      sink.u8(2);
      sink.varint(bestDist);
      sink.varint(bestShared);
      sink.varint(len - bestShared);
      sink.bytes(text, a + bestShared, b);
    } else if (mode === 3) {
      sink.u8(3);
      sink.varint(code);
      sink.varint(number);
    } else if (mode === 4) {
      sink.u8(4);
      sink.varint(code);
    } else {
      sink.varint(len + LITERAL);
      sink.bytes(text, a, b);
    }
    this.remember(text, a, b);
  }

  private remember(bytes: Uint8Array, a: number, b: number): void {
    const slot = this.histCount % HISTORY;
    this.histBuf[slot] = bytes;
    this.histStart[slot] = a;
    this.histEnd[slot] = b;
    this.histCount++;
  }

  /** Drops the references to the file's buffers and the tables once loading is done (`pack` first). */
  release(): void {
    this.prefixes.length = 0;
    this.suffixes.length = 0;
    this.wholes.length = 0;
    this.histBuf.fill(null);
    this.histCount = 0;
    this.templates.release();
    this.wholeTable.release();
  }
}

/** Bytes the tables hold. */
export function stringTablesBytes(t: StringTables): number {
  return t.prefixes.byteLength + t.suffixes.byteLength + t.wholes.byteLength;
}

/** Sequential reader over a blob. */
export class ByteReader {
  pos = 0;
  private readonly view: DataView;
  private readonly text: Buffer;
  /** The row's strings so far; null for one passed over by `skipString`. */
  private readonly history: (string | null)[] = new Array(HISTORY).fill('');
  private historyCount = 0;

  constructor(
    readonly buf: Uint8Array,
    private readonly tables: StringTables,
  ) {
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    this.text = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  }

  /** Positions the reader at the start of a row (or a business). */
  seek(pos: number): void {
    this.pos = pos;
    this.historyCount = 0;
  }

  u8(): number {
    return this.buf[this.pos++];
  }

  varint(): number {
    const buf = this.buf;
    let v = 0;
    let scale = 1;
    let b: number;
    do {
      b = buf[this.pos++];
      v += (b & 0x7f) * scale;
      scale *= 0x80;
    } while (b & 0x80);
    return v;
  }

  number(): number | null {
    const tag = this.u8();
    switch (tag) {
      case 0:
        return null;
      case 1:
        return unzigzag(this.varint());
      case 2: {
        const v = this.view.getFloat32(this.pos, true);
        this.pos += 4;
        return v;
      }
      case 3: {
        const v = this.view.getFloat64(this.pos, true);
        this.pos += 8;
        return v;
      }
      default:
        return unzigzag(this.varint()) / 10 ** (tag - 3);
    }
  }

  int(): number | null {
    const z = this.varint();
    return z === 0 ? null : unzigzag(z - 1);
  }

  string(): string | null {
    const mode = this.varint();
    let s: string;
    switch (mode) {
      case 0:
        return null;
      case 1:
        s = this.earlier(this.varint());
        break;
      case 2: {
        const from = this.earlier(this.varint());
        const shared = this.varint();
        const tail = this.varint();
        s = from.slice(0, shared) + this.text.toString('utf8', this.pos, this.pos + tail);
        this.pos += tail;
        break;
      }
      case 3: {
        const code = this.varint();
        s = this.tables.prefixes.at(code) + String(this.varint()) + this.tables.suffixes.at(code);
        break;
      }
      case 4:
        s = this.tables.wholes.at(this.varint());
        break;
      default:
        s = this.text.toString('utf8', this.pos, this.pos + mode - LITERAL);
        this.pos += mode - LITERAL;
    }
    this.history[this.historyCount % HISTORY] = s;
    this.historyCount++;
    return s;
  }

  /** Passes over a string without making it; a later string of the row may not refer back to it. */
  skipString(): void {
    const mode = this.varint();
    switch (mode) {
      case 0:
        return;
      case 1:
        this.varint();
        break;
      case 2: {
        this.varint();
        this.varint();
        const tail = this.varint();
        this.pos += tail;
        break;
      }
      case 3:
        this.varint();
        this.varint();
        break;
      case 4:
        this.varint();
        break;
      default:
        this.pos += mode - LITERAL;
    }
    this.history[this.historyCount % HISTORY] = null;
    this.historyCount++;
  }

  skipNumber(): void {
    const tag = this.buf[this.pos++];
    if (tag === 2) this.pos += 4;
    else if (tag === 3) this.pos += 8;
    else if (tag !== 0) this.varint();
  }

  private earlier(distance: number): string {
    const s = this.history[(this.historyCount - distance) % HISTORY];
    if (s === null) throw new Error('A cold string refers back to one that was skipped (ColdCodec.picker reads it).');
    return s;
  }
}

const unzigzag = (z: number): number => (z % 2 === 0 ? z / 2 : -(z + 1) / 2);

/** A Buffer over the same bytes as a Uint8Array (no copy). */
export function bufferOf(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Encoder of one column of one batch, by the column's kind; `base` offsets the row index. */
function encoderOf(spec: ColumnSpec, c: Col, base: number, tables: Map<string, StringTable>, strings: StringCoder): Encode {
  switch (spec.kind) {
    case 'f64':
      return (i, sink) => writeNumber(sink, c.f64(base + i));
    case 'i32':
    case 'date':
      return (i, sink) => writeInt(sink, c.i32(base + i));
    case 'bool':
      return (i, sink) => sink.u8(c.bool(base + i));
    case 'enum': {
      const remap = enumRemap(c.data, spec.values!, spec.name);
      return (i, sink) => sink.u8(c.valid(base + i) ? remap[c.code(base + i)] + 1 : 0);
    }
    case 'dict': {
      const remap = tables.get(spec.name)!.remap(c.data);
      return (i, sink) => sink.varint(c.valid(base + i) ? remap[c.code(base + i)] + 1 : 0);
    }
    case 'utf8': {
      const text = bufferOf(c.values as Uint8Array);
      return (i, sink) => {
        if (!c.valid(base + i)) sink.u8(0);
        else strings.encode(sink, text, c.start(base + i), c.end(base + i));
      };
    }
    case 'list': {
      const struct = c.data.children[0];
      const children = spec.children!.map((child) => {
        const idx = struct.type.children.findIndex((f) => f.name === child.name);
        if (idx < 0) throw new Error(`column ${spec.name} has no field ${child.name}`);
        // Struct children are indexed by the struct's own offset.
        return encoderOf(child, new Col(struct.children[idx]), struct.offset, tables, strings);
      });
      return (i, sink) => {
        const start = c.start(base + i);
        const end = c.end(base + i);
        sink.varint(end - start);
        for (let j = start; j < end; j++) for (let k = 0; k < children.length; k++) children[k](j, sink);
      };
    }
    case 'geometry':
      throw new Error(`column ${spec.name}: geometry is not a cold column`);
  }
}

function decoderOf(spec: ColumnSpec, tables: Map<string, StringTable>): Decode {
  switch (spec.kind) {
    case 'f64':
      return (r) => r.number();
    case 'i32':
      return (r) => r.int();
    case 'date':
      return (r) => {
        const d = r.int();
        return d === null ? null : daysToDate(d);
      };
    case 'bool':
      return (r) => {
        const b = r.u8();
        return b === 2 ? null : b === 1;
      };
    case 'enum': {
      const values = spec.values!;
      return (r) => {
        const c = r.u8();
        return c === 0 ? null : values[c - 1];
      };
    }
    case 'dict': {
      const values = tables.get(spec.name)!.values;
      return (r) => {
        const c = r.varint();
        return c === 0 ? null : values[c - 1];
      };
    }
    case 'utf8':
      return (r) => r.string();
    case 'list': {
      const names = spec.children!.map((c) => c.name);
      const decoders = spec.children!.map((c) => decoderOf(c, tables));
      return (r) => {
        const n = r.varint();
        const items: Record<string, unknown>[] = new Array(n);
        for (let k = 0; k < n; k++) {
          const item: Record<string, unknown> = {};
          for (let c = 0; c < decoders.length; c++) item[names[c]] = decoders[c](r);
          items[k] = item;
        }
        return items;
      };
    }
    case 'geometry':
      throw new Error(`column ${spec.name}: geometry is not a cold column`);
  }
}

const holdsStrings = (spec: ColumnSpec): boolean => spec.kind === 'utf8' || (spec.kind === 'list' && spec.children!.some(holdsStrings));

/** Passes over a value without making it. */
function skipperOf(spec: ColumnSpec): (r: ByteReader) => void {
  switch (spec.kind) {
    case 'f64':
      return (r) => r.skipNumber();
    case 'i32':
    case 'date':
    case 'dict':
      return (r) => {
        r.varint();
      };
    case 'bool':
    case 'enum':
      return (r) => {
        r.pos++;
      };
    case 'utf8':
      return (r) => r.skipString();
    case 'list': {
      const children = spec.children!.map(skipperOf);
      return (r) => {
        const n = r.varint();
        for (let k = 0; k < n; k++) for (let c = 0; c < children.length; c++) children[c](r);
      };
    }
    case 'geometry':
      throw new Error(`column ${spec.name}: geometry is not a cold column`);
  }
}

/** The cold columns of a store: encodes rows while loading, decodes one row on demand. */
export class ColdCodec {
  readonly tables = new Map<string, StringTable>();
  /** Encodes strings while loading; its tables are packed into `strings` by `release`. */
  private readonly coder = new StringCoder();
  /** The shared string tables rows are decoded with. */
  strings: StringTables;
  private readonly decoders: Decode[];
  private readonly names: string[];

  /** `strings`: the tables of a store built elsewhere (transfer.ts); a codec that encodes starts empty. */
  constructor(
    readonly specs: readonly ColumnSpec[],
    strings?: StringTables,
  ) {
    this.strings = strings ?? new StringCoder().pack();
    for (const s of specs) if (s.kind === 'dict') this.tables.set(s.name, new StringTable());
    this.names = specs.map((s) => s.name);
    this.decoders = specs.map((s) => decoderOf(s, this.tables));
  }

  /** One function encoding every cold column of row i of a batch (`columns` by name). */
  batchEncoder(columns: (name: string) => Data): Encode {
    const strings = this.coder;
    const encoders = this.specs.map((s) => encoderOf(s, new Col(columns(s.name)), 0, this.tables, strings));
    return (i, sink) => {
      strings.reset();
      for (let c = 0; c < encoders.length; c++) encoders[c](i, sink);
    };
  }

  /** A reader over a blob this codec wrote. */
  reader(blob: Uint8Array, tables: StringTables = this.strings): ByteReader {
    return new ByteReader(blob, tables);
  }

  /** Decodes the cold columns of the row starting at `pos` into `out`. */
  decodeInto(reader: ByteReader, pos: number, out: Record<string, unknown>): void {
    reader.seek(pos);
    for (let c = 0; c < this.decoders.length; c++) out[this.names[c]] = this.decoders[c](reader);
  }

  /**
   * A reader of the cold columns `names` of a row into `out` (out[name] = value), for serialisers
   * that need a few fields of many rows: the columns between are passed over without making their
   * values, and reading stops after the last one named. A string column before a named string is
   * decoded all the same (a later string may refer back to it).
   */
  picker(names: readonly string[]): (reader: ByteReader, pos: number, out: Record<string, unknown>) => void {
    const wanted = new Set(names);
    for (const name of wanted) if (!this.names.includes(name)) throw new RangeError(`No cold column "${name}".`);
    let last = -1;
    let lastString = -1;
    this.specs.forEach((s, c) => {
      if (!wanted.has(s.name)) return;
      last = c;
      if (holdsStrings(s)) lastString = c;
    });
    const count = last + 1;
    const steps: ((r: ByteReader, out: Record<string, unknown>) => void)[] = [];
    for (let c = 0; c < count; c++) {
      const name = this.names[c];
      const decode = this.decoders[c];
      if (wanted.has(name))
        steps.push((r, out) => {
          out[name] = decode(r);
        });
      else if (c < lastString && holdsStrings(this.specs[c]))
        steps.push((r) => {
          decode(r);
        });
      else steps.push(skipperOf(this.specs[c]));
    }
    return (reader, pos, out) => {
      reader.seek(pos);
      for (let c = 0; c < count; c++) steps[c](reader, out);
    };
  }

  /** Decodes the column `name` of the row starting at `pos` (and the columns before it). */
  decodeOne(reader: ByteReader, pos: number, name: string): unknown {
    reader.seek(pos);
    for (let c = 0; c < this.decoders.length; c++) {
      const v = this.decoders[c](reader);
      if (this.names[c] === name) return v;
    }
    throw new RangeError(`No cold column "${name}".`);
  }

  /** Ends the encoding: the string tables are packed, the encoders' state dropped. */
  release(): void {
    this.strings = this.coder.pack();
    this.coder.release();
    for (const t of this.tables.values()) t.release();
  }
}
