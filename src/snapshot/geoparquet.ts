/**
 * Writes a snapshot as GeoParquet 1.1, for data tools that read Parquet but not Arrow IPC files
 * (DuckDB without extensions, GDAL's Parquet driver, pandas/GeoPandas, QGIS).
 *
 * The file holds every column of the snapshot in the same order, except that the GeoArrow
 * `footprint` column is replaced by `geometry`: the same outline as a WKB MultiPolygon
 * (little-endian, CRS84), described by the `geo` key of the file's metadata. The snapshot's own
 * metadata (`edifice.*`: country, date, sources and their licences) is carried along.
 * Parquet encoding and compression are parquet-wasm's (the Rust `parquet` crate).
 */
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { Binary, Field, RecordBatch, Schema, Struct, Table, makeData, tableToIPC, type Data } from 'apache-arrow';
import { Compression, Table as WasmTable, WriterPropertiesBuilder, writeParquet } from 'parquet-wasm/node';
import { METADATA_KEYS } from './schema.ts';
import { readSnapshot } from './reader.ts';

export const GEOPARQUET_VERSION = '1.1.0';
const WKB_MULTIPOLYGON = 6;
const WKB_POLYGON = 3;

export interface GeoParquetResult {
  path: string;
  rows: number;
  bytes: number;
  bbox: [number, number, number, number];
}

/** Running extent of every coordinate written. */
interface Extent {
  minX: number;
  minY: number;
  maxX: number;
  maxY: number;
}

/**
 * One record batch's footprints (list<list<list<fixed_size_list<float64,2>>>>: polygons, rings,
 * points) as WKB MultiPolygons in one Binary column.
 */
export function footprintsToWkb(footprint: Data, extent: Extent): Data<Binary> {
  const rows = footprint.length;
  const polygonOffsets = footprint.valueOffsets as Int32Array;
  const polygons = footprint.children[0];
  const ringOffsets = polygons.valueOffsets as Int32Array;
  const rings = polygons.children[0];
  const pointOffsets = rings.valueOffsets as Int32Array;
  const points = rings.children[0];
  const coords = points.children[0].values as Float64Array;
  const first = footprint.offset;

  let size = 0;
  for (let r = first; r < first + rows; r++) {
    size += 9;
    for (let p = polygonOffsets[r]; p < polygonOffsets[r + 1]; p++) {
      size += 9;
      for (let g = ringOffsets[p]; g < ringOffsets[p + 1]; g++) size += 4 + 16 * (pointOffsets[g + 1] - pointOffsets[g]);
    }
  }
  const bytes = new Uint8Array(size);
  const view = new DataView(bytes.buffer);
  const offsets = new Int32Array(rows + 1);
  let at = 0;
  for (let r = first; r < first + rows; r++) {
    view.setUint8(at, 1);
    view.setUint32(at + 1, WKB_MULTIPOLYGON, true);
    view.setUint32(at + 5, polygonOffsets[r + 1] - polygonOffsets[r], true);
    at += 9;
    for (let p = polygonOffsets[r]; p < polygonOffsets[r + 1]; p++) {
      view.setUint8(at, 1);
      view.setUint32(at + 1, WKB_POLYGON, true);
      view.setUint32(at + 5, ringOffsets[p + 1] - ringOffsets[p], true);
      at += 9;
      for (let g = ringOffsets[p]; g < ringOffsets[p + 1]; g++) {
        const start = pointOffsets[g] + points.offset;
        const end = pointOffsets[g + 1] + points.offset;
        view.setUint32(at, end - start, true);
        at += 4;
        for (let i = start; i < end; i++) {
          const x = coords[2 * i];
          const y = coords[2 * i + 1];
          view.setFloat64(at, x, true);
          view.setFloat64(at + 8, y, true);
          at += 16;
          if (x < extent.minX) extent.minX = x;
          if (x > extent.maxX) extent.maxX = x;
          if (y < extent.minY) extent.minY = y;
          if (y > extent.maxY) extent.maxY = y;
        }
      }
    }
    offsets[r - first + 1] = at;
  }
  return makeData({ type: new Binary(), length: rows, nullCount: 0, valueOffsets: offsets, data: bytes });
}

/** The `geo` metadata of GeoParquet 1.1 for one WKB MultiPolygon column in CRS84. */
export function geoMetadata(bbox: [number, number, number, number]): string {
  return JSON.stringify({
    version: GEOPARQUET_VERSION,
    primary_column: 'geometry',
    columns: {
      geometry: { encoding: 'WKB', geometry_types: ['MultiPolygon'], bbox },
    },
  });
}

/**
 * Converts a snapshot file (checked as the server checks it) into a GeoParquet file at `outPath`,
 * written under a temporary name and renamed once whole.
 */
export function writeGeoParquet(snapshotPath: string, outPath: string): GeoParquetResult {
  const { table, metadata } = readSnapshot(snapshotPath);
  const footprintAt = table.schema.fields.findIndex((f) => f.name === 'footprint');
  const fields = table.schema.fields.map((f, i) => (i === footprintAt ? new Field('geometry', new Binary(), false) : f));
  const extent: Extent = { minX: Infinity, minY: Infinity, maxX: -Infinity, maxY: -Infinity };
  const schema = new Schema(fields);
  const batches = table.batches.map((batch) => {
    const children = batch.data.children.map((child, i) => (i === footprintAt ? footprintsToWkb(child, extent) : child));
    return new RecordBatch(schema, makeData({ type: new Struct(fields), length: batch.numRows, nullCount: 0, children }));
  });
  const ipc = tableToIPC(new Table(schema, batches), 'stream');
  const bbox: [number, number, number, number] = table.numRows > 0 ? [extent.minX, extent.minY, extent.maxX, extent.maxY] : [0, 0, 0, 0];

  const keyValues = new Map<string, string>([['geo', geoMetadata(bbox)]]);
  for (const key of Object.values(METADATA_KEYS)) {
    const value = table.schema.metadata.get(key);
    if (value !== undefined) keyValues.set(key, value);
  }
  const props = new WriterPropertiesBuilder().setCompression(Compression.ZSTD).setKeyValueMetadata(keyValues).build();
  const wasmTable = WasmTable.fromIPCStream(ipc);
  const parquet = writeParquet(wasmTable, props);
  const tmp = `${outPath}.tmp-${process.pid}`;
  try {
    writeFileSync(tmp, parquet);
    renameSync(tmp, outPath);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
  return { path: outPath, rows: metadata.rowCount, bytes: parquet.byteLength, bbox };
}
