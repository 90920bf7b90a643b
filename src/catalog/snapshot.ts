/**
 * The column store of one country's snapshot (DESIGN "The column store"): typed arrays on
 * shared memory, one per filtered or sorted column, in the file's row order (Hilbert order of
 * the representative point); a row-range tree for bbox scans, with per-node summaries; a Flatbush over outline boxes for
 * point lookups; building ids as words with a rank for integer tie-breaks; businesses as child
 * columns; everything else in a compact per-row blob that `record(row)` decodes (or, until that
 * blob is encoded, read from the snapshot's Arrow file: cold-rows.ts).
 *
 * Build one with `loadSnapshot` (load.ts). A Snapshot never changes once built.
 */
import type Flatbush from 'flatbush';
import {
  COLUMNS,
  columnSpec,
  type BuildingRecord,
  type BusinessRecord,
  type ColumnSpec,
  type SnapshotSource,
  type UnitRecord,
} from '../snapshot/schema.ts';
import type { BBox } from '../geo/bbox.ts';
import { NULL_CODE_U8, NULL_I32 } from './arrow.ts';
import { ByteReader, stringTablesBytes, type ColdCodec, type StringTables } from './cold.ts';
import { BlobRows, FileRows, type ColdRows } from './cold-rows.ts';
import type { PackedStrings } from './packed-strings.ts';
import { COLD_COLUMNS, FLAG_BOOLS, FLAG_NULLABLE_BOOLS, type HotEnum, type HotNum } from './columns.ts';
import type { Footprints } from './geometry.ts';
import { compareIds, formatUuid, parseUuid } from './ids.ts';
import { numberAt, sparseAt, type NumColumn, type SparseColumn } from './numeric.ts';
import type { Places } from './places.ts';
import type { RowTree } from './rowtree.ts';
import { buildEmployeesOrder, type KeyOrders } from './key-order.ts';
import { NodeSummaries } from './summaries.ts';
import { type CodeArray, bytesOf, stringBytes } from './shared.ts';

export const NULL_CURRENCY = 0xffff;
/** `entrances` counts at or above this are in `entrancesOverflow`. */
export const ENTRANCES_OVERFLOW = 0xff;

/** Registered businesses of every row: offsets plus one typed array per field. */
export interface BusinessColumns {
  /** Row r has businesses [offsets[r], offsets[r+1]). */
  offsets: Uint32Array;
  /** The row of each business: walks the rows that have one without visiting the others. */
  row: Uint32Array;
  active: Uint8Array;
  /** NULL_I32 = null. employees_min null = no stated size; employees_max null with a min = open top band. */
  employeesMin: Int32Array;
  employeesMax: Int32Array;
  /** NaN = null. */
  turnover: Float64Array;
  /** Code into `currencies`, NULL_CURRENCY = null. */
  currency: Uint16Array;
  currencies: string[];
  /** NULL_I32 = null. */
  year: Int32Array;
  /** Code into `names`. */
  name: Uint32Array;
  names: PackedStrings;
  /**
   * One string: every name lowercased (String.prototype.toLowerCase), joined by '\0', which
   * substring filters search at once. Packed, it is no part of a prepared file's header nor of a
   * message to a worker; a thread decodes it the first time it filters by name.
   */
  namesLower: PackedStrings;
  /** Where each name starts in namesLower (one more entry at the end). */
  nameStarts: Uint32Array;
  /** Per business: SHOWN_SIZE, SHOWN_TURNOVER on the one whose figure its row shows (largest-business.ts). */
  shown: Uint8Array;
  /** Per business: business_id then registration_number, as cold strings. */
  strings: Uint8Array;
  stringOffsets: Uint32Array;
  stringTables: StringTables;
}

export interface SnapshotParts {
  country: string;
  date: string;
  path: string;
  sources: SnapshotSource[];
  checksum: string;
  rows: number;
  lon: Float64Array;
  lat: Float64Array;
  num: Record<HotNum, NumColumn>;
  enums: Record<HotEnum, Uint8Array>;
  buildingType: CodeArray;
  buildingTypes: string[];
  flags: Uint32Array;
  /** Sum of power_kw of the installations that state it, for rows where one does. */
  registeredKw: SparseColumn;
  /** Number of `entrances` records, ENTRANCES_OVERFLOW and above in entrancesOverflow. */
  entrances: Uint8Array;
  entrancesOverflow: Map<number, number>;
  ids: Uint32Array;
  rank: Uint32Array;
  byRank: Uint32Array;
  keyOrders: KeyOrders;
  business: BusinessColumns;
  footprints: Footprints;
  tree: RowTree;
  summaries: NodeSummaries;
  index: Flatbush | null;
  cold: ColdParts;
  places: Places;
  /**
   * Names the businesses removed from `business` and `flags` (removals.ts): the same removed
   * businesses give the same tag in every process and after a restart; none removed, no tag.
   */
  removalTag?: string;
}

/**
 * The cold columns: encoded, row r's bytes at blob[offsets[r]...] (cold-blob.ts); or, until they
 * are, the snapshot's Arrow file (its schema version as written), which rows are read from.
 */
export type ColdParts =
  { codec: ColdCodec; blob: Uint8Array; offsets: Uint32Array | Float64Array } | { file: SharedArrayBuffer; schemaVersion: number };

const idScratch = new Uint32Array(4);
let serials = 0;

export class Snapshot {
  readonly country: string;
  readonly date: string;
  readonly path: string;
  readonly rows: number;
  readonly sources: readonly SnapshotSource[];
  readonly checksum: string;
  /** Bounding box of the representative points; null when the snapshot is empty. */
  readonly extent: BBox | null;
  /**
   * The least box area of a full node of 4,096 rows (row tree level 2), Infinity where none is
   * full: the planner's first measure of a bbox (query/estimate.ts fitsInOneNode), kept here
   * beside `extent`, which every query reads first, so that it costs no cache line more.
   */
  readonly leastNodeArea: number;

  // Hot columns, read by the query kernels.
  readonly lon: Float64Array;
  readonly lat: Float64Array;
  readonly num: Readonly<Record<HotNum, NumColumn>>;
  readonly enums: Readonly<Record<HotEnum, Uint8Array>>;
  readonly buildingType: CodeArray;
  readonly buildingTypes: readonly string[];
  readonly flags: Uint32Array;
  readonly registeredKw: SparseColumn;
  readonly entrances: Uint8Array;
  readonly entrancesOverflow: ReadonlyMap<number, number>;
  readonly ids: Uint32Array;
  readonly rank: Uint32Array;
  /** Rows by each sort key that has a whole order, as GET /buildings ranks them (key-order.ts). */
  readonly keyOrders: KeyOrders;
  readonly business: Readonly<BusinessColumns>;
  readonly footprints: Footprints;
  readonly tree: RowTree;
  /** What each node of `tree` holds: proofs about filters and bounds of sort keys without reading rows. */
  readonly summaries: NodeSummaries;
  readonly index: Flatbush | null;
  readonly places: Places;
  /**
   * Changes whenever what the snapshot serves changes: the file's checksum, and the removals
   * applied. Caches and ETags key on it.
   */
  readonly revision: string;
  /** Unique to this object within the process: caches key on it. */
  readonly serial = ++serials;

  /** What the snapshot was built from (transfer.ts hands it to other threads). */
  readonly parts: SnapshotParts;
  private readonly byRank: Uint32Array;
  private readonly coldRows: ColdRows;
  private readonly businessReader: ByteReader;
  private readonly buildingTypeIndex = new Map<string, number>();

  constructor(p: SnapshotParts) {
    this.parts = p;
    this.country = p.country;
    this.date = p.date;
    this.path = p.path;
    this.rows = p.rows;
    this.sources = p.sources;
    this.checksum = p.checksum;
    this.lon = p.lon;
    this.lat = p.lat;
    this.num = p.num;
    this.enums = p.enums;
    this.buildingType = p.buildingType;
    this.buildingTypes = p.buildingTypes;
    p.buildingTypes.forEach((t, i) => this.buildingTypeIndex.set(t, i));
    this.flags = p.flags;
    this.registeredKw = p.registeredKw;
    this.entrances = p.entrances;
    this.entrancesOverflow = p.entrancesOverflow;
    this.ids = p.ids;
    this.rank = p.rank;
    this.byRank = p.byRank;
    this.keyOrders = p.keyOrders;
    this.business = p.business;
    this.footprints = p.footprints;
    this.tree = p.tree;
    this.summaries = p.summaries;
    this.index = p.index;
    this.extent = p.tree.extent;
    this.leastNodeArea = p.tree.leastArea(2);
    this.coldRows =
      'file' in p.cold ? FileRows.of(p.cold.file, p.cold.schemaVersion) : new BlobRows(p.cold.codec, p.cold.blob, p.cold.offsets);
    this.businessReader = new ByteReader(p.business.strings, p.business.stringTables);
    this.places = p.places;
    this.revision = p.removalTag ? `${p.checksum.slice(-16)}.${p.removalTag}` : p.checksum.slice(-16);
  }

  /**
   * The same snapshot with other business columns and flags (removals.ts); shares everything else
   * but the node summaries of flags and business sort keys, and the employees sort's order, rebuilt.
   */
  withBusinesses(business: BusinessColumns, flags: Uint32Array, removalTag: string): Snapshot {
    const summaries = new NodeSummaries(this.tree, { rows: this.rows, num: this.num, enums: this.enums, flags, business }, this.summaries);
    const keyOrders = { ...this.keyOrders, employees: buildEmployeesOrder(business, this.byRank, this.rows) };
    return new Snapshot({ ...this.parts, business, flags, summaries, keyOrders, removalTag });
  }

  /** Whether the cold columns are encoded, or still read from the snapshot's file (`withCold` encodes them). */
  get coldEncoded(): boolean {
    return !('file' in this.parts.cold);
  }

  /** The same snapshot with other cold parts: its blob, once encoded (cold-blob.ts). */
  withCold(cold: ColdParts): Snapshot {
    return new Snapshot({ ...this.parts, cold });
  }

  /** business_id and registration_number of business j (an index into the business columns). */
  businessKeys(j: number): { businessId: string; registrationNumber: string | null } {
    const reader = this.businessReader;
    reader.seek(this.business.stringOffsets[j]);
    const businessId = reader.string()!;
    return { businessId, registrationNumber: reader.string() };
  }

  /** Code of a building_type in this snapshot, or -1 when no building has it. */
  buildingTypeCode(type: string): number {
    return this.buildingTypeIndex.get(type) ?? -1;
  }

  buildingId(row: number): string {
    return formatUuid(this.ids, row);
  }

  /** Row of a building_id (the first in file order if repeated), or -1. */
  findRow(buildingId: string): number {
    if (!parseUuid(buildingId, idScratch, 0)) return -1;
    let lo = 0;
    let hi = this.rows;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareIds(this.ids, this.byRank[mid], idScratch, 0) < 0) lo = mid + 1;
      else hi = mid;
    }
    if (lo < this.rows && compareIds(this.ids, this.byRank[lo], idScratch, 0) === 0) return this.byRank[lo];
    return -1;
  }

  /** The whole building as the writer took it (null = unknown), for serializers and tests. */
  record(row: number): BuildingRecord {
    this.checkRow(row);
    const cold: Record<string, unknown> = {};
    this.coldRows.decodeInto(row, cold);
    const out: Record<string, unknown> = {};
    for (const spec of COLUMNS) out[spec.name] = spec.name in cold ? cold[spec.name] : this.hotValue(spec, row);
    return out as unknown as BuildingRecord;
  }

  /**
   * Some fields of the building, each as `record(row)` has it: what a serialiser that shows part
   * of a building reads, without the rest (footprint, units, entrances, roof planes) being
   * rebuilt. What `names` needs of the store is worked out once per array: pass the same one.
   */
  fields<K extends keyof BuildingRecord>(row: number, names: readonly K[]): Pick<BuildingRecord, K> {
    this.checkRow(row);
    let plan = this.fieldPlans.get(names);
    if (plan === undefined) {
      const cold = new Set(COLD_COLUMNS.map((c) => c.name));
      plan = {
        pick: this.coldPicker(names.filter((n) => cold.has(n))),
        hot: names.filter((n) => !cold.has(n)).map((n) => columnSpec(n)),
      };
      this.fieldPlans.set(names, plan);
    }
    const out: Record<string, unknown> = {};
    plan.pick(row, out);
    for (const spec of plan.hot) out[spec.name] = this.hotValue(spec, row);
    return out as Pick<BuildingRecord, K>;
  }

  private readonly fieldPlans = new WeakMap<
    readonly string[],
    { pick: (row: number, out: Record<string, unknown>) => void; hot: ColumnSpec[] }
  >();

  /**
   * A reader of a few cold columns of any row, `read(row, out)` setting out[name] for each of
   * `names`: what serialisers use instead of `record(row)` when they need part of a building
   * (ColdCodec.picker: the other columns are passed over, not decoded).
   */
  coldPicker(names: readonly string[]): (row: number, out: Record<string, unknown>) => void {
    const pick = this.coldRows.picker(names);
    return (row, out) => {
      this.checkRow(row);
      pick(row, out);
    };
  }

  /** The units of row, in file order. */
  units(row: number): UnitRecord[] {
    this.checkRow(row);
    return this.coldRows.decodeOne(row, 'units') as UnitRecord[];
  }

  /** Number of `entrances` records of row. */
  entranceCount(row: number): number {
    const c = this.entrances[row];
    return c < ENTRANCES_OVERFLOW ? c : this.entrancesOverflow.get(row)!;
  }

  businessCount(row: number): number {
    return this.business.offsets[row + 1] - this.business.offsets[row];
  }

  /** The registered businesses of row, in file order: [start, end) of that list. */
  businesses(row: number, start = 0, end = Infinity): BusinessRecord[] {
    this.checkRow(row);
    const b = this.business;
    const first = b.offsets[row];
    const last = b.offsets[row + 1];
    const out: BusinessRecord[] = [];
    for (let j = first + Math.max(0, start); j < last && j - first < end; j++) out.push(this.businessAt(j));
    return out;
  }

  private businessAt(j: number): BusinessRecord {
    const b = this.business;
    const { businessId: business_id, registrationNumber: registration_number } = this.businessKeys(j);
    const min = b.employeesMin[j];
    const max = b.employeesMax[j];
    const year = b.year[j];
    const turnover = b.turnover[j];
    const currency = b.currency[j];
    return {
      business_id,
      registration_number,
      name: b.names.at(b.name[j]),
      active: b.active[j] === 1,
      employees_min: min === NULL_I32 ? null : min,
      employees_max: max === NULL_I32 ? null : max,
      turnover: turnover !== turnover ? null : turnover,
      turnover_currency: currency === NULL_CURRENCY ? null : b.currencies[currency],
      turnover_financial_year: year === NULL_I32 ? null : year,
    };
  }

  private hotValue(spec: ColumnSpec, row: number): unknown {
    const name = spec.name;
    if (name in this.num) {
      const v = numberAt(this.num[name as HotNum], row);
      return v !== v ? null : v;
    }
    if (name in this.enums) {
      const c = this.enums[name as HotEnum][row];
      return c === NULL_CODE_U8 ? null : spec.values![c];
    }
    if (name in FLAG_BOOLS) return (this.flags[row] & FLAG_BOOLS[name]) !== 0;
    if (name in FLAG_NULLABLE_BOOLS) {
      const [known, value] = FLAG_NULLABLE_BOOLS[name];
      return (this.flags[row] & known) === 0 ? null : (this.flags[row] & value) !== 0;
    }
    switch (name) {
      case 'latitude':
        return this.lat[row];
      case 'longitude':
        return this.lon[row];
      case 'building_id':
        return this.buildingId(row);
      case 'building_type':
        return this.buildingTypes[this.buildingType[row]];
      case 'footprint':
        return this.footprints.polygons(row);
      case 'businesses':
        return this.businesses(row);
    }
    throw new Error(`column ${name} has no place in the store`);
  }

  private checkRow(row: number): void {
    if (!Number.isInteger(row) || row < 0 || row >= this.rows)
      throw new RangeError(`Row ${row} is not in ${this.country} ${this.date} (0..${this.rows - 1}).`);
  }

  /** Sum of stated power_kw of row's registered installations (NaN when none states it). */
  registeredKwAt(row: number): number {
    return sparseAt(this.registeredKw, row);
  }

  /** Bytes the store holds, by part (typed arrays, index, and an estimate of its strings). */
  memory(): Record<string, number> {
    const b = this.business;
    return {
      point: bytesOf(this.lon, this.lat),
      numbers: bytesOf(...Object.values(this.num).map((c) => c.values)),
      enums: bytesOf(...Object.values(this.enums), this.buildingType) + stringBytes(this.buildingTypes),
      flags: bytesOf(this.flags),
      derived: bytesOf(this.registeredKw.rows, this.registeredKw.values, this.entrances) + 16 * this.entrancesOverflow.size,
      ids: bytesOf(this.ids, this.rank, this.byRank),
      keyOrders: bytesOf(...Object.values(this.keyOrders)),
      businesses:
        bytesOf(
          b.offsets,
          b.row,
          b.active,
          b.employeesMin,
          b.employeesMax,
          b.turnover,
          b.currency,
          b.year,
          b.name,
          b.nameStarts,
          b.shown,
          b.strings,
          b.stringOffsets,
        ) +
        b.names.byteLength +
        stringBytes(b.currencies) +
        b.namesLower.byteLength +
        stringTablesBytes(b.stringTables),
      footprints: this.footprints.byteLength,
      tree: this.tree.byteLength,
      summaries: this.summaries.byteLength,
      pointIndex: this.index ? this.index.data.byteLength : 0,
      places: this.places.byteLength,
      cold: coldBytes(this.parts.cold),
    };
  }

  get bytesHeld(): number {
    return Object.values(this.memory()).reduce((a, b) => a + b, 0);
  }
}

/** The bytes a store's cold columns hold: its blob and tables, or the whole file they are read from. */
function coldBytes(cold: ColdParts): number {
  if ('file' in cold) return cold.file.byteLength;
  return (
    bytesOf(cold.blob, cold.offsets) +
    stringTablesBytes(cold.codec.strings) +
    [...cold.codec.tables.values()].reduce((n, t) => n + stringBytes(t.values), 0)
  );
}
