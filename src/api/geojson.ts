/**
 * GeoJSON (RFC 7946) of buildings: a Feature per building, `id` its building_id, `properties`
 * the Building object (or the fields a caller kept), `geometry` the representative point or the
 * outline. The outline is a MultiPolygon of the snapshot's coordinates as stored, each ring
 * closed and turned the way RFC 7946 asks (exterior counter-clockwise, holes clockwise):
 * builders keep rings as their sources drew them.
 */
import { buildingRows } from '../catalog/building-row.ts';
import type { Footprints } from '../catalog/geometry.ts';
import type { Snapshot } from '../catalog/snapshot.ts';
import type { ByteWriter } from './byte-writer.ts';

export const GEOJSON_CONTENT_TYPE = 'application/geo+json';

export type GeometryChoice = 'point' | 'footprint';
export const GEOMETRY_CHOICES: readonly GeometryChoice[] = ['point', 'footprint'];

/** A coordinate as JSON.stringify writes the double: the snapshot's value, exactly. */
function coordinate(w: ByteWriter, v: number): void {
  if (Number.isSafeInteger(v)) w.integer(v);
  else w.ascii(String(v));
}

function position(w: ByteWriter, c: Float64Array, v: number): void {
  w.byte(0x5b);
  coordinate(w, c[2 * v]);
  w.byte(0x2c);
  coordinate(w, c[2 * v + 1]);
  w.byte(0x5d);
}

/** Twice the signed area of the ring of vertices [a, b) in (lon, lat): positive when counter-clockwise. */
export function ringArea2(c: Float64Array, a: number, b: number): number {
  let sum = 0;
  let px = c[2 * (b - 1)];
  let py = c[2 * (b - 1) + 1];
  for (let v = a; v < b; v++) {
    const x = c[2 * v];
    const y = c[2 * v + 1];
    sum += px * y - x * py;
    px = x;
    py = y;
  }
  return sum;
}

/** The ring [a, b), closed, forwards or (to turn it) from its first vertex backwards. */
function ring(w: ByteWriter, c: Float64Array, a: number, b: number, backwards: boolean): void {
  w.byte(0x5b);
  position(w, c, a);
  if (backwards)
    for (let v = b - 1; v > a; v--) {
      w.byte(0x2c);
      position(w, c, v);
    }
  else
    for (let v = a + 1; v < b; v++) {
      w.byte(0x2c);
      position(w, c, v);
    }
  w.byte(0x2c);
  position(w, c, a);
  w.byte(0x5d);
}

/** The outline of `row` as a GeoJSON MultiPolygon. */
export function writeMultiPolygon(w: ByteWriter, f: Footprints, row: number): void {
  const c = f.coords;
  const p0 = f.rowStart ? f.rowStart[row] : row;
  const p1 = f.rowStart ? f.rowStart[row + 1] : row + 1;
  w.ascii('{"type":"MultiPolygon","coordinates":[');
  for (let p = p0; p < p1; p++) {
    if (p > p0) w.byte(0x2c);
    const r0 = f.polyStart ? f.polyStart[p] : p;
    const r1 = f.polyStart ? f.polyStart[p + 1] : p + 1;
    w.byte(0x5b);
    for (let r = r0; r < r1; r++) {
      if (r > r0) w.byte(0x2c);
      const a = f.ringStart[r];
      const b = f.ringStart[r + 1];
      const area = ringArea2(c, a, b);
      ring(w, c, a, b, r === r0 ? area < 0 : area > 0);
    }
    w.byte(0x5d);
  }
  w.ascii(']}');
}

export function writePoint(w: ByteWriter, lon: number, lat: number): void {
  w.ascii('{"type":"Point","coordinates":[');
  coordinate(w, lon);
  w.byte(0x2c);
  coordinate(w, lat);
  w.ascii(']}');
}

const FEATURE_ID = Buffer.from('{"type":"Feature","id":"');
const GEOMETRY = Buffer.from('","geometry":');
const PROPERTIES = Buffer.from(',"properties":');

/** A Feature of the building at `row`; `properties` writes its Building object. */
export function writeFeature(w: ByteWriter, s: Snapshot, row: number, geometry: GeometryChoice, properties: (w: ByteWriter) => void): void {
  const store = buildingRows(s);
  w.raw(FEATURE_ID);
  w.ascii(store.id(row)); // a lowercase UUID: nothing to escape
  w.raw(GEOMETRY);
  if (geometry === 'footprint') writeMultiPolygon(w, store.footprints, row);
  else writePoint(w, store.longitude(row), store.latitude(row));
  w.raw(PROPERTIES);
  properties(w);
  w.byte(0x7d);
}
