/**
 * The parts of a store built from a few columns of the file alone: the hot numbers, each in its
 * narrowest exact form (numeric.ts); the ids as words with their ranks; the sort keys' orders
 * (key-order.ts); the footprints and the point index over them. The load's second thread builds
 * them (cold-thread.ts) while the main thread builds the rest of the store, and hands them over
 * in shared memory; without that thread, the main thread builds them itself.
 */
import Flatbush from 'flatbush';
import type { Table } from 'apache-arrow';
import { columnSpec } from '../snapshot/schema.ts';
import { Col, batchColumns, checkOffsets, fillF64, fillI32 } from './arrow.ts';
import { HOT_NUM, type HotNum } from './columns.ts';
import { Footprints } from './geometry.ts';
import { parseUuidBytes, rankIds } from './ids.ts';
import { buildNumberOrders, type NumberOrders } from './key-order.ts';
import { packIntegers, packNumbers, type NumColumn } from './numeric.ts';
import { sharedU32 } from './shared.ts';

export interface FileParts {
  num: Record<HotNum, NumColumn>;
  /** Four words per row (ids.ts). */
  ids: Uint32Array;
  rank: Uint32Array;
  byRank: Uint32Array;
  numberOrders: NumberOrders;
  footprints: Footprints;
  /** Null for an empty store. */
  index: Flatbush | null;
}

/** FileParts as a structured clone carries them to another thread: every array shared. */
export interface FilePartsTransfer {
  num: Record<HotNum, NumColumn>;
  ids: Uint32Array;
  rank: Uint32Array;
  byRank: Uint32Array;
  numberOrders: NumberOrders;
  footprints: object;
  index: ArrayBuffer | SharedArrayBuffer | null;
}

/**
 * Builds the parts of a table (the current format). Throws an Error naming what is wrong with
 * the file: its offsets are checked first, so that a file whose checksum is not yet known is read
 * in bounds of its own buffers.
 */
export function buildFileParts(table: Table): FileParts {
  const n = table.numRows;
  for (let b = 0; b < table.batches.length; b++) {
    const col = batchColumns(table, b);
    for (const name of ['building_id', 'footprint']) checkOffsets(col(name), name);
  }
  const ids = sharedU32(4 * n);
  let row = 0;
  for (let b = 0; b < table.batches.length; b++) {
    const c = new Col(batchColumns(table, b)('building_id'));
    for (let i = 0; i < c.length; i++, row++) {
      const start = c.start(i);
      if (!c.valid(i) || !parseUuidBytes(c.bytes, start, c.end(i) - start, ids, row)) {
        throw new Error(`building_id at row ${row} is not a lowercase UUID (${JSON.stringify(c.utf8(i))})`);
      }
    }
  }
  const { rank, byRank } = rankIds(ids, n);
  const footprints = Footprints.build(
    table.batches.map((_, b) => batchColumns(table, b)('footprint')),
    n,
  );
  const num = hotNumbers(table);
  const numberOrders = buildNumberOrders(num, byRank, n);
  return { num, ids, rank, byRank, numberOrders, footprints, index: n > 0 ? buildPointIndex(footprints, n) : null };
}

/** Each hot number column of a table in its narrowest exact form. */
function hotNumbers(table: Table): Record<HotNum, NumColumn> {
  const n = table.numRows;
  const num = {} as Record<HotNum, NumColumn>;
  for (const name of HOT_NUM) {
    const wide = columnSpec(name).kind === 'f64' ? new Float64Array(n) : new Int32Array(n);
    let row = 0;
    for (let b = 0; b < table.batches.length; b++) {
      const c = new Col(batchColumns(table, b)(name));
      if (wide instanceof Float64Array) fillF64(c, wide, row);
      else fillI32(c, wide, row);
      row += c.length;
    }
    num[name] = wide instanceof Float64Array ? packNumbers(wide) : packIntegers(wide);
  }
  return num;
}

export function filePartsToTransfer(p: FileParts): FilePartsTransfer {
  return {
    num: p.num,
    ids: p.ids,
    rank: p.rank,
    byRank: p.byRank,
    numberOrders: p.numberOrders,
    footprints: { ...p.footprints },
    index: p.index ? p.index.data : null,
  };
}

export function filePartsFromTransfer(t: FilePartsTransfer): FileParts {
  return {
    num: t.num,
    ids: t.ids,
    rank: t.rank,
    byRank: t.byRank,
    numberOrders: t.numberOrders,
    // Data-only: its fields, around the prototype a structured clone drops.
    footprints: Object.assign(Object.create(Footprints.prototype) as Footprints, t.footprints),
    index: t.index ? Flatbush.from(t.index as ArrayBuffer) : null,
  };
}

/**
 * Flatbush over outline boxes, ids = rows. Boxes are stored as Float32 (half the memory); a
 * Float32 is within 2^-24 relative of the double, so point lookups pad their search box by
 * POINT_INDEX_PAD_DEG and measure every candidate exactly.
 */
function buildPointIndex(footprints: Footprints, n: number): Flatbush {
  const index = new Flatbush(n, 16, Float32Array, SharedArrayBuffer);
  const box = new Float64Array(4);
  for (let r = 0; r < n; r++) {
    footprints.bbox(r, box);
    index.add(box[0], box[1], box[2], box[3]);
  }
  packInRowOrder(index);
  return index;
}

/** The fields of a Flatbush that `finish` fills (flatbush 4). */
interface FlatbushFill {
  numItems: number;
  nodeSize: number;
  minX: number;
  minY: number;
  maxX: number;
  maxY: number;
  _boxes: Float32Array;
  _indices: Uint32Array | Uint16Array;
  _levelBounds: number[];
  _pos: number;
}

/**
 * Flatbush's `finish` without its sort: rows are already in Hilbert order of their representative
 * points (rowtree.ts), so nodes of consecutive rows are as compact as its own sort by box centres
 * would make them, and a search finds the same items, without a sort of 2.4 s on 5M rows.
 */
function packInRowOrder(flatbush: Flatbush): void {
  const index = flatbush as unknown as FlatbushFill;
  if (index._pos >> 2 !== index.numItems) throw new Error(`Added ${index._pos >> 2} items when expected ${index.numItems}.`);
  const { _boxes: boxes, _indices: indices, _levelBounds: levelBounds, nodeSize } = index;
  if (index.numItems <= nodeSize) {
    boxes[index._pos++] = index.minX;
    boxes[index._pos++] = index.minY;
    boxes[index._pos++] = index.maxX;
    boxes[index._pos++] = index.maxY;
    return;
  }
  // Each level's nodes: one per run of nodeSize nodes of the level below, bottom-up.
  let pos = index.numItems * 4;
  for (let i = 0, read = 0; i < levelBounds.length - 1; i++) {
    const end = levelBounds[i];
    while (read < end) {
      const node = read;
      let minX = boxes[read++];
      let minY = boxes[read++];
      let maxX = boxes[read++];
      let maxY = boxes[read++];
      for (let j = 1; j < nodeSize && read < end; j++) {
        minX = Math.min(minX, boxes[read++]);
        minY = Math.min(minY, boxes[read++]);
        maxX = Math.max(maxX, boxes[read++]);
        maxY = Math.max(maxY, boxes[read++]);
      }
      indices[pos >> 2] = node;
      boxes[pos++] = minX;
      boxes[pos++] = minY;
      boxes[pos++] = maxX;
      boxes[pos++] = maxY;
    }
  }
  index._pos = pos;
}

/** Search-box padding that covers Float32 rounding of any coordinate within ±180 degrees. */
export const POINT_INDEX_PAD_DEG = 1e-4;
