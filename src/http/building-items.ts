/**
 * The buildings of a page as the envelope writes them: each building's cached bytes as they are
 * (the common case, unchanged), cut to the fields a caller kept, or wrapped in a GeoJSON Feature.
 */
import { pack } from 'msgpackr';
import { BUILDING_FIELDS, ByteWriter, serializeBuilding, writeFeature, type Encoding, type Output, type PageItems } from '../api/index.ts';
import type { RowRef } from '../query/buildings.ts';
import type { FragmentCache } from './fragment-cache.ts';

export class BuildingItems {
  /** Where a building's full JSON is put before its kept fields are cut from it. */
  private readonly whole = new ByteWriter(16 * 1024);

  constructor(
    private readonly cache: FragmentCache,
    private readonly appUrl: string,
  ) {}

  /**
   * The page's items in `encoding` (JSON for GeoJSON features) as `output` says; `turnoverCurrency`:
   * the currency whose turnover each building shows (registered_business_turnover_currency).
   */
  of(rows: readonly RowRef[], encoding: Encoding, output: Output, turnoverCurrency?: string): PageItems {
    const { cache, whole } = this;
    const fields = output.fields;
    const format = output.format ?? encoding;
    if (format === 'msgpack') {
      if (fields === null)
        return { count: rows.length, write: (i, w) => cache.write(w, rows[i].snapshot, rows[i].row, 'msgpack', turnoverCurrency) };
      return {
        count: rows.length,
        write: (i, w) => {
          const { snapshot, row } = rows[i];
          w.bytes(
            pack(
              fields.pick(
                serializeBuilding(snapshot.fields(row, BUILDING_FIELDS), {
                  country: snapshot.country,
                  appUrl: this.appUrl,
                  turnoverCurrency,
                }),
              ),
            ),
          );
        },
      };
    }
    let properties: (i: number, w: ByteWriter) => void;
    if (fields === null) properties = (i, w) => cache.write(w, rows[i].snapshot, rows[i].row, 'json', turnoverCurrency);
    else {
      properties = (i, w) => {
        whole.reset();
        cache.write(whole, rows[i].snapshot, rows[i].row, 'json', turnoverCurrency);
        fields.writeJson(whole.view(), 0, whole.length, w);
      };
    }
    if (format === 'json') return { count: rows.length, write: properties };
    const geometry = output.geometry;
    let current = 0;
    const write = (w: ByteWriter) => properties(current, w);
    return {
      count: rows.length,
      write: (i, w) => {
        current = i;
        writeFeature(w, rows[i].snapshot, rows[i].row, geometry, write);
      },
    };
  }
}
