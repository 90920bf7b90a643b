/**
 * Column accumulators of the snapshot writer: each keeps one schema column in growable typed
 * arrays while records arrive, then reorders itself by the final row order (`gather`) and cuts
 * Arrow `Data` for one record batch at a time (`data`).
 */
import {
  Bool,
  DateDay,
  Dictionary,
  Field,
  FixedSizeList,
  Float64,
  Int32,
  Int8,
  List,
  Struct,
  Utf8,
  makeData,
  makeVector,
  type Data,
  DataType,
} from 'apache-arrow';
import type { ColumnSpec } from './schema.ts';

export const NULL_I32 = -2147483648;
const MS_PER_DAY = 86_400_000;

/** GeoArrow extension metadata carried on the footprint field. */
export const GEOARROW_METADATA = new Map([
  ['ARROW:extension:name', 'geoarrow.multipolygon'],
  ['ARROW:extension:metadata', '{"crs":"OGC:CRS84"}'],
]);

/** Parses YYYY-MM-DD into days since 1970-01-01, or throws. */
export function dateToDays(value: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!m) throw new TypeError(`Expected a date YYYY-MM-DD, got "${value}".`);
  const ms = Date.UTC(+m[1], +m[2] - 1, +m[3]);
  const days = ms / MS_PER_DAY;
  if (new Date(ms).toISOString().slice(0, 10) !== value) throw new TypeError(`Not a calendar date: "${value}".`);
  return days;
}

export function daysToDate(days: number): string {
  let text = dateTexts.get(days);
  if (text === undefined) {
    text = new Date(days * MS_PER_DAY).toISOString().slice(0, 10);
    if (dateTexts.size >= 100_000) dateTexts.clear();
    dateTexts.set(days, text);
  }
  return text;
}

/** Snapshots hold few distinct dates and serialisers write them for every building: each is formatted once. */
const dateTexts = new Map<number, string>();

class Grow<T extends Float64Array | Int32Array | Int8Array | Uint8Array> {
  length = 0;
  constructor(public array: T) {}
  push(v: number): void {
    if (this.length === this.array.length) {
      const next = new (this.array.constructor as new (n: number) => T)(Math.max(1024, this.array.length * 2));
      next.set(this.array);
      this.array = next;
    }
    this.array[this.length++] = v;
  }
  view(): T {
    return this.array.subarray(0, this.length) as T;
  }
  truncate(n: number): void {
    this.length = Math.min(this.length, n);
  }
}

function validityBitmap(isValid: (i: number) => boolean, start: number, end: number): { bitmap: Uint8Array; nulls: number } {
  const n = end - start;
  const bitmap = new Uint8Array((n + 7) >> 3);
  let nulls = 0;
  for (let i = 0; i < n; i++) {
    if (isValid(start + i)) bitmap[i >> 3] |= 1 << (i & 7);
    else nulls++;
  }
  return { bitmap, nulls };
}

/** One column while records arrive. */
export interface Accumulator {
  readonly length: number;
  push(value: unknown): void;
  /** Drops rows from `rows` on: undoes a record that failed half-way. */
  truncate(rows: number): void;
  /** The same column reordered: row i of the result is row order[i] of this one. */
  gather(order: ArrayLike<number>): Frozen;
  /** Lets go of the rows (after the last gather): a large country needs the memory for writing. */
  release(): void;
}

/** One column in its final row order. */
export interface Frozen {
  readonly type: DataType;
  data(start: number, end: number): Data;
}

type NullTest = (i: number) => boolean;

function frozenFixed(
  type: DataType,
  values: Float64Array | Int32Array | Int8Array,
  valid: NullTest,
  nullable: boolean,
  dictionary?: ReturnType<typeof makeVector>,
): Frozen {
  return {
    type,
    data(start, end) {
      const { bitmap, nulls } = nullable ? validityBitmap(valid, start, end) : { bitmap: undefined, nulls: 0 };
      const props = { length: end - start, nullCount: nulls, nullBitmap: nulls > 0 ? bitmap : undefined };
      if (DataType.isDictionary(type)) return makeData({ ...props, type, data: values.subarray(start, end), dictionary });
      if (DataType.isFloat(type)) return makeData({ ...props, type, data: values.subarray(start, end) });
      if (DataType.isInt(type)) return makeData({ ...props, type, data: values.subarray(start, end) });
      if (DataType.isDate(type)) return makeData({ ...props, type, data: values.subarray(start, end) });
      throw new TypeError(`a fixed-width column cannot be of type ${type}`);
    },
  };
}

class F64Acc implements Accumulator {
  private values = new Grow(new Float64Array(1024));
  constructor(private spec: ColumnSpec) {}
  get length() {
    return this.values.length;
  }
  truncate(rows: number): void {
    this.values.truncate(rows);
  }
  push(v: unknown): void {
    if (v === null || v === undefined) {
      if (!this.spec.nullable) throw new TypeError(`Column "${this.spec.name}" is not nullable.`);
      this.values.push(NaN);
      return;
    }
    if (typeof v !== 'number' || !Number.isFinite(v))
      throw new TypeError(`Column "${this.spec.name}" expects a finite number, got ${String(v)}.`);
    this.values.push(v);
  }
  release(): void {
    this.values = new Grow(new Float64Array(0));
  }
  gather(order: ArrayLike<number>): Frozen {
    const src = this.values.view();
    const out = new Float64Array(order.length);
    for (let i = 0; i < order.length; i++) out[i] = src[order[i]];
    return frozenFixed(new Float64(), out, (i) => out[i] === out[i], this.spec.nullable);
  }
}

class I32Acc implements Accumulator {
  private values = new Grow(new Int32Array(1024));
  constructor(
    private spec: ColumnSpec,
    private type: DataType = new Int32(),
  ) {}
  get length() {
    return this.values.length;
  }
  truncate(rows: number): void {
    this.values.truncate(rows);
  }
  push(v: unknown): void {
    if (v === null || v === undefined) {
      if (!this.spec.nullable) throw new TypeError(`Column "${this.spec.name}" is not nullable.`);
      this.values.push(NULL_I32);
      return;
    }
    const n = this.type instanceof DateDay ? dateToDays(v as string) : v;
    if (typeof n !== 'number' || !Number.isInteger(n) || n <= NULL_I32 || n > 2147483647) {
      throw new TypeError(`Column "${this.spec.name}" expects a 32-bit integer, got ${String(v)}.`);
    }
    this.values.push(n);
  }
  release(): void {
    this.values = new Grow(new Int32Array(0));
  }
  gather(order: ArrayLike<number>): Frozen {
    const src = this.values.view();
    const out = new Int32Array(order.length);
    for (let i = 0; i < order.length; i++) out[i] = src[order[i]];
    return frozenFixed(this.type, out, (i) => out[i] !== NULL_I32, this.spec.nullable);
  }
}

class BoolAcc implements Accumulator {
  private values = new Grow(new Uint8Array(1024)); // 0 false, 1 true, 2 null
  constructor(private spec: ColumnSpec) {}
  get length() {
    return this.values.length;
  }
  truncate(rows: number): void {
    this.values.truncate(rows);
  }
  push(v: unknown): void {
    if (v === null || v === undefined) {
      if (!this.spec.nullable) throw new TypeError(`Column "${this.spec.name}" is not nullable.`);
      this.values.push(2);
      return;
    }
    if (typeof v !== 'boolean') throw new TypeError(`Column "${this.spec.name}" expects a boolean, got ${String(v)}.`);
    this.values.push(v ? 1 : 0);
  }
  release(): void {
    this.values = new Grow(new Uint8Array(0));
  }
  gather(order: ArrayLike<number>): Frozen {
    const src = this.values.view();
    const out = new Uint8Array(order.length);
    for (let i = 0; i < order.length; i++) out[i] = src[order[i]];
    const nullable = this.spec.nullable;
    return {
      type: new Bool(),
      data(start, end) {
        const n = end - start;
        const bits = new Uint8Array((n + 7) >> 3);
        for (let i = 0; i < n; i++) if (out[start + i] === 1) bits[i >> 3] |= 1 << (i & 7);
        const { bitmap, nulls } = nullable ? validityBitmap((i) => out[i] !== 2, start, end) : { bitmap: undefined, nulls: 0 };
        return makeData({ type: new Bool(), length: n, nullCount: nulls, nullBitmap: nulls > 0 ? bitmap : undefined, data: bits });
      },
    };
  }
}

function utf8Data(strings: ArrayLike<string | null>, start: number, end: number, nullable: boolean): Data<Utf8> {
  const n = end - start;
  const offsets = new Int32Array(n + 1);
  let bytes = 0;
  for (let i = 0; i < n; i++) {
    const s = strings[start + i];
    if (s !== null) bytes += Buffer.byteLength(s, 'utf8');
    offsets[i + 1] = bytes;
  }
  const data = Buffer.alloc(bytes);
  for (let i = 0; i < n; i++) {
    const s = strings[start + i];
    if (s !== null && s.length > 0) data.write(s, offsets[i], 'utf8');
  }
  const { bitmap, nulls } = nullable ? validityBitmap((i) => strings[i] !== null, start, end) : { bitmap: undefined, nulls: 0 };
  return makeData({
    type: new Utf8(),
    length: n,
    nullCount: nulls,
    nullBitmap: nulls > 0 ? bitmap : undefined,
    valueOffsets: offsets,
    data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
  });
}

class Utf8Acc implements Accumulator {
  private values: (string | null)[] = [];
  constructor(private spec: ColumnSpec) {}
  get length() {
    return this.values.length;
  }
  truncate(rows: number): void {
    this.values.length = Math.min(this.values.length, rows);
  }
  push(v: unknown): void {
    if (v === null || v === undefined) {
      if (!this.spec.nullable) throw new TypeError(`Column "${this.spec.name}" is not nullable.`);
      this.values.push(null);
      return;
    }
    if (typeof v !== 'string') throw new TypeError(`Column "${this.spec.name}" expects a string, got ${String(v)}.`);
    this.values.push(v);
  }
  release(): void {
    this.values = [];
  }
  gather(order: ArrayLike<number>): Frozen {
    const src = this.values;
    const out = new Array<string | null>(order.length);
    for (let i = 0; i < order.length; i++) out[i] = src[order[i]];
    const nullable = this.spec.nullable;
    return { type: new Utf8(), data: (start, end) => utf8Data(out, start, end, nullable) };
  }
}

/** Dictionary-encoded strings. Enum columns use a fixed dictionary, dict columns the sorted set seen. */
class DictAcc implements Accumulator {
  private codes = new Grow(new Int32Array(1024));
  private index = new Map<string, number>();
  private seen: string[] = [];
  constructor(
    private spec: ColumnSpec,
    private dictionaryId: number,
  ) {
    if (spec.values) spec.values.forEach((v, i) => this.index.set(v, i));
  }
  get length() {
    return this.codes.length;
  }
  truncate(rows: number): void {
    this.codes.truncate(rows);
  }
  push(v: unknown): void {
    if (v === null || v === undefined) {
      if (!this.spec.nullable) throw new TypeError(`Column "${this.spec.name}" is not nullable.`);
      this.codes.push(-1);
      return;
    }
    if (typeof v !== 'string') throw new TypeError(`Column "${this.spec.name}" expects a string, got ${String(v)}.`);
    let code = this.index.get(v);
    if (code === undefined) {
      if (this.spec.values) {
        throw new TypeError(`Column "${this.spec.name}" does not allow "${v}" (allowed: ${this.spec.values.join(', ')}).`);
      }
      code = this.seen.length;
      this.seen.push(v);
      this.index.set(v, code);
    }
    this.codes.push(code);
  }
  release(): void {
    this.codes = new Grow(new Int32Array(0));
    this.index.clear();
    this.seen = [];
  }
  gather(order: ArrayLike<number>): Frozen {
    const src = this.codes.view();
    const isEnum = this.spec.values !== undefined;
    // A data dictionary is written sorted so that the same content gives the same file.
    let values: readonly string[] = this.spec.values ?? [];
    let remap: Int32Array | null = null;
    if (!isEnum) {
      const sorted = this.seen.map((s, i) => [s, i] as const).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
      remap = new Int32Array(sorted.length);
      sorted.forEach(([, old], i) => {
        remap![old] = i;
      });
      values = sorted.map(([s]) => s);
    }
    const out = isEnum ? new Int8Array(order.length) : new Int32Array(order.length);
    for (let i = 0; i < order.length; i++) {
      const c = src[order[i]];
      out[i] = c < 0 ? -1 : remap ? remap[c] : c;
    }
    const dictionary = makeVector(utf8Data(values, 0, values.length, false));
    const type = new Dictionary(new Utf8(), isEnum ? new Int8() : new Int32(), this.dictionaryId);
    return frozenFixed(type, out, (i) => out[i] >= 0, this.spec.nullable, dictionary);
  }
}

/** Reorders list rows: new offsets plus, for the children, which old child row each new one is. */
function gatherOffsets(offsets: Int32Array, order: ArrayLike<number>): { offsets: Int32Array; childOrder: Int32Array } {
  const out = new Int32Array(order.length + 1);
  for (let i = 0; i < order.length; i++) out[i + 1] = out[i] + offsets[order[i] + 1] - offsets[order[i]];
  const childOrder = new Int32Array(out[order.length]);
  let at = 0;
  for (let i = 0; i < order.length; i++) {
    for (let j = offsets[order[i]], e = offsets[order[i] + 1]; j < e; j++) childOrder[at++] = j;
  }
  return { offsets: out, childOrder };
}

function frozenList(type: List, offsets: Int32Array, child: Frozen): Frozen {
  return {
    type,
    data(start, end) {
      const base = offsets[start];
      const rebased = new Int32Array(end - start + 1);
      for (let i = 0; i <= end - start; i++) rebased[i] = offsets[start + i] - base;
      return makeData({
        type,
        length: end - start,
        nullCount: 0,
        valueOffsets: rebased,
        child: child.data(base, offsets[end]),
      });
    },
  };
}

/** List<Struct<children>>: one list of child records per building. */
class ListAcc implements Accumulator {
  private offsets = new Grow(new Int32Array(1024));
  private children: Accumulator[];
  private count = 0;
  constructor(
    private spec: ColumnSpec,
    nextDictionaryId: () => number,
  ) {
    this.offsets.push(0);
    this.children = spec.children!.map((c) => makeAccumulator(c, nextDictionaryId));
  }
  get length() {
    return this.offsets.length - 1;
  }
  truncate(rows: number): void {
    // Children may hold part of a record whose own offset was never pushed: always cut them.
    this.offsets.truncate(rows + 1);
    this.count = this.offsets.array[rows];
    for (const c of this.children) c.truncate(this.count);
  }
  push(v: unknown): void {
    if (!Array.isArray(v)) throw new TypeError(`Column "${this.spec.name}" expects an array of records, got ${String(v)}.`);
    const fields = this.spec.children!;
    for (const item of v) {
      for (let f = 0; f < fields.length; f++) this.children[f].push((item as Record<string, unknown>)[fields[f].name]);
      this.count++;
    }
    this.offsets.push(this.count);
  }
  release(): void {
    this.offsets = new Grow(new Int32Array(0));
    for (const c of this.children) c.release();
  }
  gather(order: ArrayLike<number>): Frozen {
    const { offsets, childOrder } = gatherOffsets(this.offsets.view(), order);
    const frozen = this.children.map((c) => c.gather(childOrder));
    const fields = this.spec.children!.map((c, i) => new Field(c.name, frozen[i].type, c.nullable));
    const struct = new Struct(fields);
    const structFrozen: Frozen = {
      type: struct,
      data: (start, end) => makeData({ type: struct, length: end - start, nullCount: 0, children: frozen.map((f) => f.data(start, end)) }),
    };
    return frozenList(new List(new Field('item', struct, false)), offsets, structFrozen);
  }
}

/** GeoArrow multipolygon, interleaved xy: polygons → rings → vertices. */
class GeometryAcc implements Accumulator {
  private polygonOffsets = new Grow(new Int32Array(1024));
  private ringOffsets = new Grow(new Int32Array(1024));
  private vertexOffsets = new Grow(new Int32Array(1024));
  private coords = new Grow(new Float64Array(8192));
  constructor(private spec: ColumnSpec) {
    this.polygonOffsets.push(0);
    this.ringOffsets.push(0);
    this.vertexOffsets.push(0);
  }
  get length() {
    return this.polygonOffsets.length - 1;
  }
  truncate(rows: number): void {
    this.polygonOffsets.truncate(rows + 1);
    const polygons = this.polygonOffsets.array[rows];
    this.ringOffsets.truncate(polygons + 1);
    const rings = this.ringOffsets.array[polygons];
    this.vertexOffsets.truncate(rings + 1);
    this.coords.truncate(2 * this.vertexOffsets.array[rings]);
  }
  push(v: unknown): void {
    if (!Array.isArray(v) || v.length === 0) throw new TypeError(`Column "${this.spec.name}" expects at least one polygon.`);
    for (const polygon of v as ArrayLike<number>[][]) {
      if (!Array.isArray(polygon) || polygon.length === 0)
        throw new TypeError(`Column "${this.spec.name}": a polygon needs an outer ring.`);
      for (const ring of polygon) {
        const n = ring.length;
        if (n < 8 || n % 2 !== 0 || ring[0] !== ring[n - 2] || ring[1] !== ring[n - 1]) {
          throw new TypeError(`Column "${this.spec.name}": a ring must be closed with at least 4 points as interleaved x,y.`);
        }
        for (let i = 0; i < n; i++) {
          if (!Number.isFinite(ring[i])) throw new TypeError(`Column "${this.spec.name}": non-finite coordinate.`);
          this.coords.push(ring[i]);
        }
        this.vertexOffsets.push(this.coords.length / 2);
      }
      this.ringOffsets.push(this.vertexOffsets.length - 1);
    }
    this.polygonOffsets.push(this.ringOffsets.length - 1);
  }
  release(): void {
    this.polygonOffsets = new Grow(new Int32Array(0));
    this.ringOffsets = new Grow(new Int32Array(0));
    this.vertexOffsets = new Grow(new Int32Array(0));
    this.coords = new Grow(new Float64Array(0));
  }
  gather(order: ArrayLike<number>): Frozen {
    const polygons = gatherOffsets(this.polygonOffsets.view(), order);
    const rings = gatherOffsets(this.ringOffsets.view(), polygons.childOrder);
    const vertices = gatherOffsets(this.vertexOffsets.view(), rings.childOrder);
    const src = this.coords.view();
    const xy = new Float64Array(vertices.childOrder.length * 2);
    for (let i = 0; i < vertices.childOrder.length; i++) {
      xy[2 * i] = src[2 * vertices.childOrder[i]];
      xy[2 * i + 1] = src[2 * vertices.childOrder[i] + 1];
    }
    const pointType = new FixedSizeList(2, new Field('xy', new Float64(), false));
    const points: Frozen = {
      type: pointType,
      data: (start, end) =>
        makeData({
          type: pointType,
          length: end - start,
          nullCount: 0,
          child: makeData({ type: new Float64(), length: 2 * (end - start), nullCount: 0, data: xy.subarray(2 * start, 2 * end) }),
        }),
    };
    const ringList = frozenList(new List(new Field('vertices', pointType, false)), vertices.offsets, points);
    const polygonList = frozenList(new List(new Field('rings', ringList.type, false)), rings.offsets, ringList);
    return frozenList(new List(new Field('polygons', polygonList.type, false)), polygons.offsets, polygonList);
  }
}

export function makeAccumulator(spec: ColumnSpec, nextDictionaryId: () => number): Accumulator {
  switch (spec.kind) {
    case 'f64':
      return new F64Acc(spec);
    case 'i32':
      return new I32Acc(spec);
    case 'date':
      return new I32Acc(spec, new DateDay());
    case 'bool':
      return new BoolAcc(spec);
    case 'utf8':
      return new Utf8Acc(spec);
    case 'dict':
    case 'enum':
      return new DictAcc(spec, nextDictionaryId());
    case 'list':
      return new ListAcc(spec, nextDictionaryId);
    case 'geometry':
      return new GeometryAcc(spec);
  }
}
