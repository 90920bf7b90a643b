/**
 * Turns an opened snapshot file (an apache-arrow Table) into a `Snapshot`: hot columns copied
 * from the Arrow buffers into shared typed arrays, facts derived from child lists (flags,
 * registered power, entrances), the row tree and its node summaries built, with the file parts
 * (hot numbers in their narrowest exact form, ids ranked, footprints, point index: file-parts.ts) and
 * every other column encoded into the cold blob (cold-blob.ts), on a second thread for a large
 * file. The Table is not kept, nor anything that points into the file's buffer, but by a store
 * loaded early (`loadSnapshotEarly`), which reads its cold columns from the file until its blob is
 * encoded.
 */
import { performance } from 'node:perf_hooks';
import type { Data, Table } from 'apache-arrow';
import type { OpenedSnapshot, UnverifiedSnapshot } from '../snapshot/reader.ts';
import { COLUMNS, columnSpec } from '../snapshot/schema.ts';
import { Col, NULL_CODE_U8, StringTable, batchColumns, checkOffsets, enumRemap, fillF64, fillI32, typeProblem } from './arrow.ts';
import { StringCoder, bufferOf } from './cold.ts';
import { ColdBlobThread, encodeColdBlob, type ColdBlob, type ColdThreadCode } from './cold-blob.ts';
import { FileRows } from './cold-rows.ts';
import { FLAG_BOOLS, FLAG_NULLABLE_BOOLS, HOT_ENUM, type HotEnum } from './columns.ts';
import { F } from './flags.ts';
import { buildFileParts } from './file-parts.ts';
import { buildEmployeesOrder } from './key-order.ts';
import { shownFlags } from './largest-business.ts';
import { PackedStrings } from './packed-strings.ts';
import { buildPlaces } from './places.ts';
import { RowTree } from './rowtree.ts';
import { NodeSummaries } from './summaries.ts';
import { ByteSink, sharedCodes, sharedF64, sharedI32, sharedU16, sharedU32, sharedU8 } from './shared.ts';
import { ENTRANCES_OVERFLOW, NULL_CURRENCY, Snapshot, type BusinessColumns, type ColdParts, type SnapshotParts } from './snapshot.ts';

/** A field of a list column's struct, and the offset its rows are indexed from. */
function field(list: Data, name: string): { col: Col; base: number } {
  const struct = list.children[0];
  const idx = struct.type.children.findIndex((f) => f.name === name);
  if (idx < 0) throw new Error(`list has no field ${name}`);
  return { col: new Col(struct.children[idx]), base: struct.offset };
}

function checkTypes(table: Table): void {
  if (table.batches.length === 0) return;
  const col = batchColumns(table, 0);
  for (const spec of COLUMNS) {
    const data = col(spec.name);
    const problem = typeProblem(spec.kind, data);
    if (problem) throw new Error(`column ${spec.name} ${problem}`);
    if (spec.kind === 'list') {
      for (const child of spec.children!) {
        const p = typeProblem(child.kind, field(data, child.name).col.data);
        if (p) throw new Error(`column ${spec.name}.${child.name} ${p}`);
      }
    }
  }
}

/** Writes a cold string (or null) of a Utf8 field at k. */
function writeString(coder: StringCoder, sink: ByteSink, c: Col, text: Buffer, k: number): void {
  if (!c.valid(k)) sink.u8(0);
  else coder.encode(sink, text, c.start(k), c.end(k));
}

/** What a caller learns of a load while it runs and once done. */
export interface LoadWatch {
  /** Called after each record batch with the rows done so far and the whole: of the build, then of the cold blob's encoding. */
  progress?: (rows: number, of: number, phase: 'build' | 'cold blob') => void;
  /** Set on return: milliseconds checking the file's checksum (by `verify`, here or before, or by the cold blob's thread). */
  verifyMs?: number;
  verifiedBy?: 'thread' | 'here';
  /**
   * Set on return: milliseconds building the columns and facts, then the indexes (row tree, the
   * file parts: hot numbers, ids ranked, footprints, point index; then summaries); then waiting for the
   * cold blob (or encoding it here), set once it is encoded (with `loadSnapshotEarly`, when
   * `encoded` settles).
   */
  buildMs?: number;
  indexMs?: number;
  coldMs?: number;
  /** Set on return: where the cold blob was encoded, and that thread's nice value (Linux). */
  coldBy?: 'thread' | 'here';
  /** Set on return: where the file parts (file-parts.ts) were built. */
  partsBy?: 'thread' | 'here';
  coldNice?: number;
}

export interface LoadOptions {
  /** The code of a thread that encodes the cold blob meanwhile (cold-blob.ts); absent: this thread encodes it. */
  coldThread?: ColdThreadCode;
  /** The fewest rows worth starting that thread for (default COLD_THREAD_MIN_ROWS). */
  coldThreadMinRows?: number;
  /** How long that thread may go without encoding a batch before this one encodes the blob instead. */
  coldThreadPatienceMs?: number;
  /** Nice steps below the process that thread runs at (Linux): for a build beside threads that serve. */
  coldThreadNice?: number;
  /**
   * With `loadSnapshotEarly`: check the checksum here before building anything, rather than on the
   * thread meanwhile. For a swap, where a store serves meanwhile, so that the memory of a second
   * store matters more than the time: a damaged file is refused before any of its store is built.
   */
  checkFirst?: boolean;
}

/**
 * The columns whose offsets size what the build allocates or loops over (the cold columns are read
 * only once the checksum matched; buildFileParts checks its own): a damaged file is refused for its
 * checksum, never by its damage.
 */
const SIZED_BY_OFFSETS = ['solar_installations', 'entrances', 'businesses'];

/** Below this, starting a thread costs about as much as the encoding it would take over. */
const COLD_THREAD_MIN_ROWS = 100_000;

/** A store that serves before its cold blob is encoded, and the same store once it is. */
export interface EarlyLoad {
  /** Ready to serve; its cold columns are read from the file until `encoded` settles. */
  snapshot: Snapshot;
  /**
   * The same store with its cold blob; null when `snapshot` holds it already. Rejects when the
   * blob cannot be encoded (the store from the file serves on), or with EncodingStopped.
   */
  encoded: Promise<Snapshot> | null;
  /** Stops encoding the blob (a newer store replaced this one): `encoded` rejects with EncodingStopped. */
  stopEncoding(): void;
}

/** Why `encoded` rejects after `stopEncoding`. */
export class EncodingStopped extends Error {
  constructor() {
    super('stopped before the cold blob was encoded: a newer store replaced this one');
  }
}

/**
 * Builds the store of an opened file. Throws an Error whose message is the reason to refuse it (a
 * SnapshotError when the checksum is wrong). A file not yet verified is verified here, while the
 * cold blob's thread, if any, already encodes: the thread's work is dropped if it is refused.
 */
export function loadSnapshot(opened: OpenedSnapshot | UnverifiedSnapshot, watch: LoadWatch = {}, options: LoadOptions = {}): Snapshot {
  return load(opened, watch, options, false).snapshot;
}

/**
 * `loadSnapshot` that returns as soon as everything but the cold blob is built and the checksum
 * checked: with a cold thread, the store reads its cold columns from the file (cold-rows.ts),
 * which it keeps meanwhile, and the thread builds the file parts and checks the checksum while
 * this one builds the rest (a swap, `checkFirst`: the checksum is checked here, before the build).
 */
export function loadSnapshotEarly(
  opened: OpenedSnapshot | UnverifiedSnapshot,
  watch: LoadWatch = {},
  options: LoadOptions = {},
): EarlyLoad {
  return load(opened, watch, options, true);
}

function load(opened: OpenedSnapshot | UnverifiedSnapshot, watch: LoadWatch, options: LoadOptions, early: boolean): EarlyLoad {
  const n = opened.table.numRows;
  const unverified = 'verify' in opened ? opened : null;
  const thread =
    options.coldThread !== undefined && opened.mapped !== null && n >= (options.coldThreadMinRows ?? COLD_THREAD_MIN_ROWS)
      ? ColdBlobThread.start(
          opened.mapped,
          opened.metadata.schemaVersion,
          options.coldThread,
          options.coldThreadPatienceMs,
          options.coldThreadNice,
          early && unverified && !options.checkFirst ? opened.path : null,
          early && opened.metadata.schemaVersion >= 2,
        )
      : null;
  // The thread checks the checksum while this one builds: any store built is dropped unless it matched.
  const checking = early && unverified !== null && thread !== null && !options.checkFirst;
  const verified = (): void => {
    if (!checking) return;
    watch.verifiedBy = 'thread';
    const ms = thread.checked();
    if (ms === null) watch.verifiedBy = 'here';
    watch.verifyMs = ms ?? unverified.verify().verifyMs;
  };
  let handedOver = false;
  try {
    let file: OpenedSnapshot;
    if (checking) file = unverified.unchecked();
    else {
      file = unverified ? unverified.verify() : (opened as OpenedSnapshot);
      watch.verifyMs = file.verifyMs;
      watch.verifiedBy = 'here';
    }
    let parts: StoreParts;
    try {
      checkTypes(file.table);
      if (checking)
        for (let b = 0; b < file.table.batches.length; b++) {
          const col = batchColumns(file.table, b);
          for (const name of SIZED_BY_OFFSETS) checkOffsets(col(name), name);
        }
      parts = build(file, watch, thread);
    } catch (err) {
      verified();
      throw err;
    }
    verified();
    const indexed = performance.now();
    const coldProgress = (rows: number): void => watch.progress?.(rows, n, 'cold blob');
    const encodedBy = (cold: ColdBlob): ColdParts => {
      watch.coldMs = Math.round(performance.now() - indexed);
      watch.coldBy = cold.by;
      watch.coldNice = cold.nice;
      return { codec: cold.codec, blob: cold.blob, offsets: cold.offsets };
    };
    if (early && thread !== null) {
      const fromFile = { file: opened.mapped!, schemaVersion: opened.metadata.schemaVersion };
      FileRows.of(fromFile.file, fromFile.schemaVersion, file.table).check();
      const snapshot = new Snapshot({ ...parts, cold: fromFile });
      let stopped = false;
      const encoded = thread.encoded(coldProgress).then((cold) => {
        if (stopped) throw new EncodingStopped();
        return snapshot.withCold(encodedBy(cold ?? encodeColdBlob(file.table, file.bytes, coldProgress)!));
      });
      handedOver = true;
      const stopEncoding = (): void => {
        stopped = true;
        thread.stop();
      };
      return { snapshot, encoded, stopEncoding };
    }
    const cold = thread?.finish(coldProgress) ?? encodeColdBlob(file.table, file.bytes, coldProgress)!;
    return { snapshot: new Snapshot({ ...parts, cold: encodedBy(cold) }), encoded: null, stopEncoding: () => {} };
  } finally {
    if (!handedOver) thread?.stop();
  }
}

/** Everything of a store but its cold columns. */
type StoreParts = Omit<SnapshotParts, 'cold'>;

function build(opened: OpenedSnapshot, watch: LoadWatch, thread: ColdBlobThread | null): StoreParts {
  const started = performance.now();
  const { table, metadata } = opened;
  const n = table.numRows;
  const batches = table.batches.length;

  const lon = sharedF64(n);
  const lat = sharedF64(n);
  // Only for the place facts, then dropped (the hot numbers themselves are file parts).
  const heightM = new Float64Array(n);
  const floors = new Int32Array(n);
  const solarCapacityKwp = new Float64Array(n);
  const enums = Object.fromEntries(HOT_ENUM.map((name) => [name, sharedU8(n)])) as Record<HotEnum, Uint8Array>;
  const flags = sharedU32(n);
  const kwRows: number[] = [];
  const kwValues: number[] = [];
  const entrances = sharedU8(n);
  const entrancesOverflow = new Map<number, number>();
  const typeCodes = new Int32Array(n);
  const types = new StringTable();
  // Only for the place facts, then dropped.
  const localityCodes = new Int32Array(n);
  const localities = new StringTable();
  const constructionYear = new Int32Array(n);
  const seismicListed = new Uint8Array(n);
  const heightEstimated = new Uint8Array(n);
  const heightBasisEstimated = columnSpec('height_basis').values!.indexOf('estimated');

  // Businesses: count first, then one typed array per field.
  let businessTotal = 0;
  for (let b = 0; b < batches; b++) {
    const list = new Col(batchColumns(table, b)('businesses'));
    if (list.length > 0) businessTotal += list.end(list.length - 1) - list.start(0);
  }
  const bizOffsets = sharedU32(n + 1);
  const bizRow = sharedU32(businessTotal);
  const bizActive = sharedU8(businessTotal);
  const bizEmpMin = sharedI32(businessTotal);
  const bizEmpMax = sharedI32(businessTotal);
  const bizTurnover = sharedF64(businessTotal);
  const bizCurrency = sharedU16(businessTotal);
  const bizYear = sharedI32(businessTotal);
  const bizName = sharedU32(businessTotal);
  const bizStringOffsets = sharedU32(businessTotal + 1);
  const bizStrings = new ByteSink();
  const bizCoder = new StringCoder();
  const names = new StringTable();
  const currencies = new StringTable();

  const volumeBasisMeasured = columnSpec('volume_basis').values!.indexOf('measured');
  let row = 0;
  let biz = 0;
  for (let b = 0; b < batches; b++) {
    const col = batchColumns(table, b);
    const len = table.batches[b].numRows;
    fillF64(new Col(col('longitude')), lon, row);
    fillF64(new Col(col('latitude')), lat, row);
    fillF64(new Col(col('height_m')), heightM, row);
    fillI32(new Col(col('floors')), floors, row);
    fillF64(new Col(col('solar_capacity_kwp')), solarCapacityKwp, row);
    for (const name of HOT_ENUM) {
      const c = new Col(col(name));
      const remap = enumRemap(c.data, columnSpec(name).values!, name);
      const out = enums[name];
      for (let i = 0; i < len; i++) out[row + i] = c.valid(i) ? remap[c.code(i)] : NULL_CODE_U8;
    }
    {
      const c = new Col(col('building_type'));
      const remap = types.remap(c.data);
      for (let i = 0; i < len; i++) {
        if (!c.valid(i)) throw new Error(`building_type is null at row ${row + i}`);
        typeCodes[row + i] = remap[c.code(i)];
      }
    }
    {
      const c = new Col(col('locality'));
      const remap = localities.remap(c.data);
      for (let i = 0; i < len; i++) localityCodes[row + i] = c.valid(i) ? remap[c.code(i)] : localities.code('');
      fillI32(new Col(col('construction_year')), constructionYear, row);
      const listed = new Col(col('seismic_listed'));
      for (let i = 0; i < len; i++) seismicListed[row + i] = listed.bool(i) === 1 ? 1 : 0;
      const basis = new Col(col('height_basis'));
      const basisRemap = enumRemap(basis.data, columnSpec('height_basis').values!, 'height_basis');
      for (let i = 0; i < len; i++) heightEstimated[row + i] = basis.valid(i) && basisRemap[basis.code(i)] === heightBasisEstimated ? 1 : 0;
    }

    // Flags: booleans, then facts derived from nulls and child lists.
    // Parallel arrays read by index: a for-of over [column, bits] pairs in every row costs a tenth of the build.
    const boolCols = Object.keys(FLAG_BOOLS).map((name) => new Col(col(name)));
    const boolBits = Object.values(FLAG_BOOLS);
    const nullableCols = Object.keys(FLAG_NULLABLE_BOOLS).map((name) => new Col(col(name)));
    const nullableKnown = Object.values(FLAG_NULLABLE_BOOLS).map(([known]) => known);
    const nullableValue = Object.values(FLAG_NULLABLE_BOOLS).map(([, value]) => value);
    const volumeBasis = new Col(col('volume_basis'));
    const volumeBasisRemap = enumRemap(volumeBasis.data, columnSpec('volume_basis').values!, 'volume_basis');
    const present = (name: string): Col => new Col(col(name));
    const solarBasis = present('solar_potential_basis');
    const heating = present('annual_heating_demand_kwh');
    const thermal = present('thermal_assessment');
    const indoor = present('design_indoor_temperature_c');
    const outdoor = present('design_outdoor_temperature_c');
    const mean = present('recent_mean_temperature_c');
    const trend = present('recent_temperature_trend_c_per_decade');
    const frost = present('recent_frost_days');
    const hot = present('recent_hot_days');
    const minDaily = present('recent_minimum_daily_temperature_c');
    const maxDaily = present('recent_maximum_daily_temperature_c');
    const annual = present('recent_annual_precipitation_mm');
    const maxOneDay = present('recent_max_one_day_precipitation_mm');
    const installationsData = col('solar_installations');
    const installations = new Col(installationsData);
    const power = field(installationsData, 'power_kw');
    const storage = field(installationsData, 'storage');
    const entranceList = new Col(col('entrances'));
    const businessesData = col('businesses');
    const businesses = new Col(businessesData);
    const field2 = (name: string) => field(businessesData, name);
    const bizId = field2('business_id');
    const bizIdText = bufferOf(bizId.col.bytes);
    const bizReg = field2('registration_number');
    const bizRegText = bufferOf(bizReg.col.bytes);
    const bizNameCol = field2('name');
    const bizActiveCol = field2('active');
    const bizMinCol = field2('employees_min');
    const bizMaxCol = field2('employees_max');
    const bizTurnoverCol = field2('turnover');
    const bizCurrencyCol = field2('turnover_currency');
    const bizYearCol = field2('turnover_financial_year');

    for (let i = 0; i < len; i++) {
      const r = row + i;
      let f = 0;
      for (let k = 0; k < boolCols.length; k++) if (boolCols[k].bool(i) === 1) f |= boolBits[k];
      for (let k = 0; k < nullableCols.length; k++) {
        const v = nullableCols[k].bool(i);
        if (v !== 2) f |= nullableKnown[k] | (v === 1 ? nullableValue[k] : 0);
      }
      if (volumeBasis.valid(i) && volumeBasisRemap[volumeBasis.code(i)] === volumeBasisMeasured) f |= F.VOLUME_MEASURED;
      if (solarBasis.valid(i)) f |= F.SOLAR_POTENTIAL;
      if (heating.valid(i)) f |= F.HEATING_ESTIMATE;
      if (thermal.valid(i)) {
        f |= F.THERMAL_ASSESSMENT;
        if (indoor.valid(i) && outdoor.valid(i)) f |= F.PEAK_HEAT_LOAD;
      }
      if (mean.valid(i) && trend.valid(i)) f |= F.CLIMATE_TREND;
      if (frost.valid(i) && hot.valid(i) && minDaily.valid(i) && maxDaily.valid(i)) f |= F.TEMPERATURE_EXTREMES;
      if (annual.valid(i) && maxOneDay.valid(i)) f |= F.PRECIPITATION;

      // Registered solar installations.
      const s0 = installations.start(i);
      const s1 = installations.end(i);
      let kw = 0;
      let stated = 0;
      if (s1 > s0) f |= F.REGISTERED_SOLAR;
      for (let j = s0; j < s1; j++) {
        const p = power.col.f64(power.base + j);
        if (p === p) {
          kw += p;
          stated++;
        }
        const st = storage.col.bool(storage.base + j);
        if (st === 1) f |= F.STORAGE_TRUE;
        else if (st === 0) f |= F.STORAGE_FALSE;
      }
      if (stated > 0) {
        kwRows.push(r);
        kwValues.push(kw);
      }

      const count = entranceList.end(i) - entranceList.start(i);
      entrances[r] = Math.min(count, ENTRANCES_OVERFLOW);
      if (count >= ENTRANCES_OVERFLOW) entrancesOverflow.set(r, count);

      // Businesses.
      bizOffsets[r] = biz;
      for (let j = businesses.start(i), e = businesses.end(i); j < e; j++, biz++) {
        const active = bizActiveCol.col.bool(bizActiveCol.base + j) === 1;
        if (active) f |= F.ACTIVE_BUSINESS;
        bizRow[biz] = r;
        bizActive[biz] = active ? 1 : 0;
        bizEmpMin[biz] = bizMinCol.col.i32(bizMinCol.base + j);
        bizEmpMax[biz] = bizMaxCol.col.i32(bizMaxCol.base + j);
        bizTurnover[biz] = bizTurnoverCol.col.f64(bizTurnoverCol.base + j);
        const currency = bizCurrencyCol.col.utf8(bizCurrencyCol.base + j);
        bizCurrency[biz] = currency === null ? NULL_CURRENCY : currencies.code(currency);
        if (currencies.values.length >= NULL_CURRENCY) throw new Error(`more than ${NULL_CURRENCY - 1} distinct turnover currencies`);
        bizYear[biz] = bizYearCol.col.i32(bizYearCol.base + j);
        const name = bizNameCol.col.utf8(bizNameCol.base + j);
        if (name === null) throw new Error(`a business name is null at row ${r}`);
        bizName[biz] = names.code(name);
        bizStringOffsets[biz] = bizStrings.pos;
        bizCoder.reset();
        writeString(bizCoder, bizStrings, bizId.col, bizIdText, bizId.base + j);
        writeString(bizCoder, bizStrings, bizReg.col, bizRegText, bizReg.base + j);
      }
      flags[r] = f;
    }
    row += len;
    watch.progress?.(row, n, 'build');
  }
  if (row !== n) throw new Error(`batches hold ${row} rows, table says ${n}`);
  for (const t of [types, names, currencies]) t.release();
  const bizTables = bizCoder.pack();
  bizCoder.release();
  bizOffsets[n] = biz;
  bizStringOffsets[biz] = bizStrings.pos;

  const places = buildPlaces({
    rows: n,
    names: localities.values,
    locality: localityCodes,
    category: enums.category,
    solarPresence: enums.solar_presence,
    floodZone: enums.flood_zone,
    seismicRiskClass: enums.seismic_risk_class,
    seismicListed,
    flags,
    constructionYear,
    heightM,
    heightEstimated,
    floors,
    solarCapacityKwp,
  });
  localities.release();

  const buildingType = sharedCodes(n, Math.max(0, types.values.length - 1));
  buildingType.set(typeCodes);

  const namesLower = names.values.map((s) => s.toLowerCase());
  const nameStarts = sharedU32(namesLower.length + 1);
  let at = 0;
  namesLower.forEach((s, k) => {
    nameStarts[k] = at;
    at += s.length + 1;
  });
  nameStarts[namesLower.length] = at;

  const figures = {
    offsets: bizOffsets,
    employeesMin: bizEmpMin,
    employeesMax: bizEmpMax,
    turnover: bizTurnover,
    currency: bizCurrency,
    currencies: currencies.values,
    year: bizYear,
  };
  const business: BusinessColumns = {
    ...figures,
    row: bizRow,
    active: bizActive,
    name: bizName,
    names: PackedStrings.pack(names.values),
    namesLower: PackedStrings.pack([namesLower.join('\0')]),
    nameStarts,
    shown: shownFlags(figures, n),
    strings: bizStrings.toShared(),
    stringOffsets: bizStringOffsets,
    stringTables: bizTables,
  };

  const registeredKw = { rows: sharedU32(kwRows.length), values: sharedF64(kwValues.length) };
  registeredKw.rows.set(kwRows);
  registeredKw.values.set(kwValues);

  const built = performance.now();
  watch.buildMs = Math.round(built - started);
  const tree = new RowTree(n, lon, lat);
  const fromThread = thread?.fileParts() ?? null;
  const { num, ids, rank, byRank, numberOrders, footprints, index } = fromThread ?? buildFileParts(table);
  const keyOrders = { ...numberOrders, employees: buildEmployeesOrder(business, byRank, n) };
  watch.partsBy = fromThread ? 'thread' : 'here';
  const summaries = new NodeSummaries(tree, { rows: n, num, enums, flags, business });
  watch.indexMs = Math.round(performance.now() - built);

  return {
    country: metadata.country,
    date: metadata.snapshotDate,
    path: opened.path,
    sources: metadata.sources,
    checksum: metadata.checksum,
    rows: n,
    lon,
    lat,
    num,
    enums,
    buildingType,
    buildingTypes: types.values,
    flags,
    registeredKw,
    entrances,
    entrancesOverflow,
    ids,
    rank,
    byRank,
    keyOrders,
    business,
    footprints,
    tree,
    summaries,
    index,
    places,
  };
}
