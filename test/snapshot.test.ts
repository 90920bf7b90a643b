import { mkdtempSync, readFileSync, writeFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tableFromIPC } from '@uwdata/flechette';
import { SnapshotWriter } from '../src/snapshot/writer.ts';
import { readSnapshot, SnapshotError } from '../src/snapshot/reader.ts';
import { blankRecord } from '../src/snapshot/record.ts';
import { COLUMNS, SCHEMA_VERSION, columnsOf } from '../src/snapshot/schema.ts';
import { buildingId, uuidv5 } from '../src/snapshot/building-id.ts';
import { hilbert } from '../src/snapshot/hilbert.ts';

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'edifice-snap-'));
  dirs.push(dir);
  return dir;
}
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const sources = [{ name: 'test', licence: 'CC0-1.0', attribution: 'Edifice tests', retrieved: '2026-11-21' }];

function sample(n: number) {
  const records = [];
  for (let i = 0; i < n; i++) {
    const lon = 9.5 + (i % 7) * 0.001;
    const lat = 47.1 + Math.floor(i / 7) * 0.001;
    records.push(
      blankRecord(`test:${i}`, lon, lat, {
        height_m: i % 3 === 0 ? null : 3 + i,
        height_basis: i % 3 === 0 ? null : 'stated',
        locality: i % 2 ? 'Vaduz' : 'Schaan',
        category: i % 4 === 0 ? 'apartment_block' : 'residential_house',
        construction_year: i % 5 === 0 ? null : 1900 + i,
        panels_photo_date: i === 2 ? '2025-06-01' : null,
        businesses:
          i === 3
            ? [
                {
                  business_id: 'b-1',
                  registration_number: 'FL-1',
                  name: 'Alpen Bäckerei',
                  active: true,
                  employees_min: 250,
                  employees_max: null,
                  turnover: 1_250_000,
                  turnover_currency: 'CHF',
                  turnover_financial_year: 2024,
                },
              ]
            : [],
        units:
          i === 4
            ? [
                { unit_id: 'u-1', label: 'Top 1', floor: 0, use: 'residential', area_m2: 71.5, rooms: 3 },
                { unit_id: 'u-2', label: null, floor: 1, use: null, area_m2: null, rooms: null },
              ]
            : [],
      }),
    );
  }
  return records;
}

async function write(records: ReturnType<typeof sample>, batchRows?: number) {
  const dir = tempDir();
  const w = new SnapshotWriter({ country: 'LI', snapshotDate: '2026-11-21', sources, batchRows });
  for (const r of records) w.add(r);
  return { dir, written: await w.finish(join(dir, 'LI', '2026-11-21.arrow')) };
}

describe('building ids', () => {
  it('are RFC 9562 UUIDv5: the RFC example and a stable Edifice id', () => {
    // RFC 9562 appendix A.4: UUIDv5 of "www.example.com" in the DNS namespace.
    expect(uuidv5('www.example.com', '6ba7b810-9dad-11d1-80b4-00c04fd430c8')).toBe('2ed6657d-e927-568b-95e1-2665a8aea6a2');
    expect(buildingId('osm:way/12345')).toBe(buildingId('osm:way/12345'));
    expect(buildingId('osm:way/12345')).not.toBe(buildingId('osm:way/12346'));
    expect(buildingId('osm:way/12345')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});

describe('snapshot writer and reader', () => {
  it('round-trips every record and orders rows by Hilbert value', async () => {
    const records = sample(40);
    const { written } = await write(records, 16);
    expect(written.rows).toBe(40);
    const { metadata, table } = readSnapshot(written.path);
    expect(metadata).toMatchObject({ schemaVersion: SCHEMA_VERSION, country: 'LI', snapshotDate: '2026-11-21', rowCount: 40, sources });
    expect(table.batches.length).toBe(3);
    expect(table.schema.fields.map((f) => f.name)).toEqual(COLUMNS.map((c) => c.name));

    const bySource = new Map(records.map((r) => [r.source_id, r]));
    const seen = new Set<string>();
    for (let i = 0; i < table.numRows; i++) {
      const row = table.get(i)!.toJSON() as Record<string, any>;
      const want = bySource.get(row.source_id)!;
      seen.add(row.source_id);
      expect(row.building_id).toBe(want.building_id);
      expect(row.height_m).toBe(want.height_m);
      expect(row.construction_year).toBe(want.construction_year);
      expect(row.locality).toBe(want.locality);
      expect(row.category).toBe(want.category);
      expect(row.businesses.toArray().map((b: any) => b.toJSON())).toEqual(want.businesses);
      expect(row.units.toArray().map((u: any) => u.toJSON())).toEqual(want.units);
      const ring = row.footprint.get(0).get(0);
      expect(Array.from(ring.get(0))).toEqual([want.footprint[0][0][0], want.footprint[0][0][1]]);
    }
    expect(seen.size).toBe(40);

    // Hilbert order over the same extent the writer uses, computed here independently.
    const lon = table.getChild('longitude')!.toArray() as Float64Array;
    const lat = table.getChild('latitude')!.toArray() as Float64Array;
    const minX = Math.min(...lon),
      maxX = Math.max(...lon),
      minY = Math.min(...lat),
      maxY = Math.max(...lat);
    const h = Array.from(lon, (x, i) =>
      hilbert(Math.floor(((x - minX) / (maxX - minX)) * 0xffff), Math.floor(((lat[i] - minY) / (maxY - minY)) * 0xffff)),
    );
    for (let i = 1; i < h.length; i++) expect(h[i]).toBeGreaterThanOrEqual(h[i - 1]);
  });

  it('writes a file that flechette, an independent Arrow reader, decodes', async () => {
    const { written } = await write(sample(25), 10);
    const t = tableFromIPC(readFileSync(written.path), { useDate: false });
    expect(t.numRows).toBe(25);
    expect(t.schema.fields.map((f) => f.name)).toEqual(COLUMNS.map((c) => c.name));
    expect(t.schema.metadata?.get('edifice.country')).toBe('LI');
    const footprint = t.schema.fields.find((f) => f.name === 'footprint')!;
    expect(footprint.metadata?.get('ARROW:extension:name')).toBe('geoarrow.multipolygon');
    const src = t.getChild('source_id').toArray() as string[];
    const i3 = src.indexOf('test:3');
    const business = (t.getChild('businesses').at(i3) as any[])[0];
    expect(business).toMatchObject({
      name: 'Alpen Bäckerei',
      employees_min: 250,
      employees_max: null,
      turnover: 1_250_000,
      turnover_currency: 'CHF',
    });
    const i2 = src.indexOf('test:2');
    expect(t.getChild('panels_photo_date').at(i2)).toBe(Date.UTC(2025, 5, 1));
    const heights = t.getChild('height_m').toArray() as (number | null)[];
    expect(heights[src.indexOf('test:0')]).toBeNull();
    expect(heights[src.indexOf('test:7')]).toBe(10);
    expect(t.getChild('category').at(src.indexOf('test:8'))).toBe('apartment_block');
  });

  it('refuses a file whose content changed after writing', async () => {
    const { written } = await write(sample(30));
    const bytes = readFileSync(written.path);
    // Flip one byte inside the first value of latitude: the footer and metadata stay intact.
    const lat0 = readSnapshot(written.path).table.getChild('latitude')!.data[0].values as Float64Array;
    const at = lat0.byteOffset + 3;
    const copy = Buffer.from(bytes);
    copy[at] ^= 0xff;
    const bad = join(written.path + '.corrupt');
    writeFileSync(bad, copy);
    expect(() => readSnapshot(bad)).toThrow(/checksum mismatch/);
  });

  it('refuses a truncated file and a missing one with the reason', async () => {
    const { written } = await write(sample(10));
    const bytes = readFileSync(written.path);
    const cut = written.path + '.cut';
    writeFileSync(cut, bytes.subarray(0, bytes.length >> 1));
    expect(() => readSnapshot(cut)).toThrow(SnapshotError);
    expect(() => readSnapshot(cut)).toThrow(/not an Arrow IPC file/);
    expect(() => readSnapshot(written.path + '.nope')).toThrow(/cannot read file/);
  });

  it('leaves no temporary file behind and writes identical bytes for identical input', async () => {
    const a = await write(sample(12));
    const b = await write(sample(12));
    expect(readFileSync(a.written.path).equals(readFileSync(b.written.path))).toBe(true);
    expect(readdirSync(join(a.dir, 'LI'))).toEqual(['2026-11-21.arrow']);
  });

  it('refuses records that break the schema, naming the column', () => {
    const w = new SnapshotWriter({ country: 'LI', snapshotDate: '2026-11-21', sources });
    expect(() => w.add(blankRecord('x:1', 9.5, 47.1, { category: 'castle' as any }))).toThrow(/category.*castle/);
    expect(() => w.add(blankRecord('x:2', 9.5, 47.1, { height_m: Number.NaN }))).toThrow(/height_m/);
    expect(() => w.add(blankRecord('x:3', 9.5, 47.1, { footprint: [[[0, 0, 1, 0, 1, 1]]] }))).toThrow(/closed/);
    expect(() => w.add(blankRecord('x:4', 9.5, 47.1, { panels_photo_date: '2025-02-30' }))).toThrow(/calendar date/);
    expect(() => new SnapshotWriter({ country: 'li', snapshotDate: '2026-11-21', sources })).toThrow(/country/);
  });
});

describe('a bad record half-way', () => {
  it('is rolled back: the writer goes on and the file holds only the good records', async () => {
    const dir = tempDir();
    const w = new SnapshotWriter({ country: 'LI', snapshotDate: '2026-11-21', sources });
    w.add(blankRecord('ok:1', 9.5, 47.1, { units: [{ unit_id: 'u1', label: null, floor: 1, use: 'office', area_m2: 50, rooms: 2 }] }));
    // Fails inside the units list, after footprint, strings and the first unit were pushed.
    expect(() =>
      w.add(
        blankRecord('bad:1', 9.6, 47.2, {
          units: [
            { unit_id: 'u2', label: null, floor: 1, use: 'office', area_m2: 50, rooms: 2 },
            { unit_id: 'u3', label: null, floor: 1, use: 'spa' as any, area_m2: 1, rooms: 1 },
          ],
        }),
      ),
    ).toThrow(/use.*spa/);
    w.add(blankRecord('ok:2', 9.7, 47.3));
    const { path, rows } = await w.finish(join(dir, 'LI', '2026-11-21.arrow'));
    expect(rows).toBe(2);
    const { table } = readSnapshot(path);
    expect(table.getChild('source_id')!.toArray().sort()).toEqual(['ok:1', 'ok:2']);
    const units = table.getChild('units')!;
    expect([0, 1].map((i) => units.get(i)!.length).sort()).toEqual([0, 1]);
  });

  it('an empty country writes a readable file with zero rows', async () => {
    const dir = tempDir();
    const w = new SnapshotWriter({ country: 'LI', snapshotDate: '2026-11-21', sources });
    const { path, rows } = await w.finish(join(dir, 'LI', '2026-11-21.arrow'));
    expect(rows).toBe(0);
    expect(readSnapshot(path).table.numRows).toBe(0);
  });
});

/** Offsets of every occurrence of `text` in `bytes`. */
function occurrences(bytes: Buffer, text: string): number[] {
  const out: number[] = [];
  for (let at = bytes.indexOf(text); at >= 0; at = bytes.indexOf(text, at + 1)) out.push(at);
  return out;
}

describe('schema v2', () => {
  it('keeps the seismic-listed flag and the locality basis; a class or year implies the flag; a basis needs a locality', async () => {
    const records = [
      blankRecord('v2:na', 9.5, 47.1, { locality: 'Vaduz', locality_basis: 'stated', seismic_listed: true }),
      blankRecord('v2:class', 9.51, 47.1, { locality: 'Vaduz', locality_basis: 'inferred', seismic_risk_class: 'RsII' }),
      blankRecord('v2:year', 9.52, 47.1, { locality: 'Schaan', seismic_risk_assessment_year: 1996 }),
      blankRecord('v2:none', 9.53, 47.1, { locality: '' }),
    ];
    const { written } = await write(records);
    const { table } = readSnapshot(written.path);
    const rows = new Map(table.toArray().map((r) => [r.source_id as string, r.toJSON() as Record<string, unknown>]));
    expect(['v2:na', 'v2:class', 'v2:year', 'v2:none'].map((id) => [rows.get(id)!.seismic_listed, rows.get(id)!.locality_basis])).toEqual([
      [true, 'stated'],
      [true, 'inferred'],
      [true, null],
      [false, null],
    ]);
    // flechette reads the same from the file.
    const t = tableFromIPC(readFileSync(written.path), { useDate: false });
    const src = t.getChild('source_id').toArray() as string[];
    expect(t.getChild('locality_basis').at(src.indexOf('v2:class'))).toBe('inferred');
    expect(t.getChild('seismic_listed').at(src.indexOf('v2:na'))).toBe(true);

    const w = new SnapshotWriter({ country: 'LI', snapshotDate: '2026-11-21', sources });
    expect(() => w.add(blankRecord('x:1', 9.5, 47.1, { locality: '', locality_basis: 'inferred' }))).toThrow(
      /locality_basis must be null when locality is empty/,
    );
    expect(() => w.add(blankRecord('x:2', 9.5, 47.1, { locality: 'Vaduz', locality_basis: 'guessed' as any }))).toThrow(
      /locality_basis.*guessed/,
    );
    expect(() => w.add(blankRecord('x:3', 9.5, 47.1, { seismic_listed: null as any }))).toThrow(/seismic_listed/);
  });

  it('reads a v1 file (written by the v1 writer) as v2: listed where a class or year is set, basis unknown', () => {
    const path = new URL('./fixtures/snapshot-v1/XA/2026-01-01.arrow', import.meta.url).pathname;
    const { metadata, table } = readSnapshot(path);
    expect(metadata.schemaVersion).toBe(1);
    expect(table.schema.fields.map((f) => f.name)).toEqual(COLUMNS.map((c) => c.name));
    const rows = table
      .toArray()
      .map((r) => r.toJSON() as Record<string, unknown>)
      .sort((a, b) => String(a.source_id).localeCompare(String(b.source_id)));
    expect(
      rows.map((r) => [r.source_id, r.seismic_risk_class, r.seismic_risk_assessment_year, r.seismic_listed, r.locality_basis]),
    ).toEqual([
      ['v1:0', 'RsI', 2007, true, null],
      ['v1:1', null, 1996, true, null],
      ['v1:2', null, null, false, null],
      ['v1:3', null, null, false, null],
      ['v1:4', 'U2', null, true, null],
      ['v1:5', null, null, false, null],
      ['v1:6', null, null, false, null],
    ]);
  });

  it('refuses a v1 file with a v2 column too many, and a version it does not read', async () => {
    const { written } = await write(sample(3));
    const bytes = readFileSync(written.path);
    // Same length, another version: "2" -> "1" in the metadata value, "2" -> "3" next.
    const key = occurrences(bytes, 'edifice.schema_version');
    expect(key.length).toBe(1);
    // The value "2" is a flatbuffer string (length 1, then the byte) laid out before its key.
    const value = bytes.lastIndexOf(Buffer.from([1, 0, 0, 0, 0x32]), key[0]) + 4;
    expect(value).toBeGreaterThan(4);
    for (const [digit, reason] of [
      ['1', /has 70 columns, schema v1 has 68/],
      ['3', /schema version 3 is not one this program reads \(1, 2\)/],
    ] as const) {
      const copy = Buffer.from(bytes);
      copy.write(digit, value, 'latin1');
      const bad = `${written.path}.v${digit}`;
      writeFileSync(bad, copy);
      expect(() => readSnapshot(bad)).toThrow(reason);
    }
    expect(columnsOf(1).length).toBe(68);
  });
});

describe('the checksum covers the metadata', () => {
  it('refuses a file with one byte of the licence text flipped on disk, and one with the footprint CRS changed', async () => {
    const records = sample(12);
    const dir = tempDir();
    const licensed = [
      {
        name: 'OpenStreetMap',
        licence: 'Open Database Licence (ODbL) 1.0',
        attribution: '© OpenStreetMap contributors',
        retrieved: '2026-11-21',
      },
    ];
    const w = new SnapshotWriter({ country: 'LI', snapshotDate: '2026-11-21', sources: licensed });
    for (const r of records) w.add(r);
    const { path } = await w.finish(join(dir, 'LI', '2026-11-21.arrow'));
    expect(readSnapshot(path).metadata.sources).toEqual(licensed);
    const bytes = readFileSync(path);
    for (const [text, at] of [
      ['Open Database Licence', 5],
      ['OGC:CRS84', 8],
    ] as const) {
      const hits = occurrences(bytes, text);
      expect(hits.length).toBeGreaterThan(0);
      for (const hit of hits) {
        const copy = Buffer.from(bytes);
        copy[hit + at] ^= 0x01; // "Database" -> "Eatabase", "CRS84" -> "CRS85"
        writeFileSync(path, copy);
        expect(() => readSnapshot(path), `${text} at ${hit}`).toThrow(
          /checksum mismatch: the file says sha256:[0-9a-f]{64}, its content and metadata give sha256:[0-9a-f]{64}/,
        );
      }
    }
    writeFileSync(path, bytes);
    expect(readSnapshot(path).metadata.sources).toEqual(licensed);
  });
});
