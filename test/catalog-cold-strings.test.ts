import { describe, expect, it } from 'vitest';
import { ByteReader, StringCoder, writeNumber } from '../src/catalog/cold.ts';
import { ByteSink } from '../src/catalog/shared.ts';

/** Encodes rows of strings with one coder (a row's strings may refer to each other), then reads them back. */
function roundTrip(rows: string[][]): { sink: ByteSink; starts: number[]; decoded: string[][] } {
  const coder = new StringCoder();
  const sink = new ByteSink();
  const starts: number[] = [];
  for (const row of rows) {
    starts.push(sink.pos);
    coder.reset();
    for (const s of row) {
      const bytes = Buffer.from(s, 'utf8');
      coder.encode(sink, bytes, 0, bytes.length);
    }
  }
  const reader = new ByteReader(sink.buf.subarray(0, sink.pos), coder.pack());
  const decoded = rows.map((row, r) => {
    reader.seek(starts[r]);
    return row.map(() => reader.string()!);
  });
  return { sink, starts, decoded };
}

/** A deterministic generator of rows like a building's strings: ids, addresses, unit labels. */
function rows(count: number, seed: number): string[][] {
  let x = seed;
  const next = (n: number): number => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    return x % n;
  };
  const streets = ['Strada Mare', 'Strada Ștefan cel Mare', 'Aleea Zürich', 'Calea Victoriei', '東京通り', 'Rue des Écoles'];
  const out: string[][] = [];
  for (let r = 0; r < count; r++) {
    const id = `osm:way/${100000 + next(900000)}`;
    const street = streets[next(streets.length)];
    const address = `${street} ${1 + next(120)}, Oraș`;
    const row = [id, address];
    const units = next(12);
    for (let u = 0; u < units; u++) row.push(`${id}/unit/${u}`, next(3) === 0 ? address : `Ap. ${u + 1} ${street}`);
    if (next(4) === 0) row.push(street, `${street}`.slice(0, 1 + next(street.length)), '', 'é');
    out.push(row);
  }
  return out;
}

describe('cold strings', () => {
  it('read back as written: equal strings, shared prefixes (cut before any non-ASCII byte), templates and shared wholes', () => {
    const data = rows(3000, 7);
    expect(roundTrip(data).decoded).toEqual(data);
  });

  it('take the forms the format names, chosen by the bytes', () => {
    const { sink, starts } = roundTrip([['Zürich Nord', 'Zürich Süd', 'Calea Victoriei 12', 'Calea Victoriei 12', 'Calea Victoriei 12A']]);
    const b = sink.buf;
    let at = starts[0];
    // A literal: varint(len + 5), then the bytes.
    expect(b[at]).toBe(Buffer.byteLength('Zürich Nord') + 5);
    at += 1 + Buffer.byteLength('Zürich Nord');
    // Shares only "Z" before the first non-ASCII byte, under the 4-byte minimum: a literal again.
    expect(b[at]).toBe(Buffer.byteLength('Zürich Süd') + 5);
    at += 1 + Buffer.byteLength('Zürich Süd');
    expect(b[at]).toBe('Calea Victoriei 12'.length + 5);
    at += 1 + 'Calea Victoriei 12'.length;
    // Equal to the string just before it: mode 1, distance 1.
    expect([b[at], b[at + 1]]).toEqual([1, 1]);
    at += 2;
    // Both earlier copies share 18 bytes with "Calea Victoriei 12A"; the nearer wins: mode 2,
    // distance 1, 18 shared, tail "A".
    expect([...b.subarray(at, at + 5)]).toEqual([2, 1, 18, 1, 'A'.charCodeAt(0)]);
  });
});

describe('cold numbers', () => {
  it('write varints across the 2^31 and 2^32 boundaries, and numbers in their shortest exact form', () => {
    const values = [0, 1, 127, 128, 300, 2 ** 31 - 1, 2 ** 31, 2 ** 31 + 5, 2 ** 32 - 1, 2 ** 32, 2 ** 40 + 3, 2 ** 53 - 1];
    const sink = new ByteSink();
    for (const v of values) sink.varint(v);
    const reader = new ByteReader(sink.buf.subarray(0, sink.pos), new StringCoder().pack());
    expect(values.map(() => reader.varint())).toEqual(values);
    // 7 bits a byte: 2^31 takes five bytes, 2^53 - 1 eight.
    const lengths = values.map((v) => {
      const s = new ByteSink();
      s.varint(v);
      return s.pos;
    });
    expect(lengths).toEqual([1, 1, 1, 2, 2, 5, 5, 5, 5, 5, 6, 8]);

    const numbers = [NaN, 0, -0, 1.5, -2.25, 12.34, 0.1, 1e-7, 123456.7891, -(2 ** 50), 2 ** 50 + 2, Math.PI];
    const out = new ByteSink();
    for (const v of numbers) writeNumber(out, v);
    const r = new ByteReader(out.buf.subarray(0, out.pos), new StringCoder().pack());
    const back = numbers.map(() => r.number());
    expect(back.map((v) => (v === null ? 'null' : Object.is(v, -0) ? '-0' : v))).toEqual(
      numbers.map((v) => (v !== v ? 'null' : Object.is(v, -0) ? '-0' : v)),
    );
    // 12.34 is 1234 / 10^2: tag 5, then zigzag(1234) = 2468 in two bytes.
    const one = new ByteSink();
    writeNumber(one, 12.34);
    expect([...one.buf.subarray(0, one.pos)]).toEqual([5, (2468 & 0x7f) | 0x80, 2468 >> 7]);
  });
});

describe('byte sinks', () => {
  it('write into shared memory of the expected size, double it when it falls short, and hand it out uncopied', () => {
    const bytes = Array.from({ length: 5000 }, (_, i) => (i * 31) & 0xff);
    for (const expected of [0, 16, 100_000]) {
      const sink = new ByteSink(expected);
      for (const b of bytes) sink.u8(b);
      sink.varint(2 ** 40);
      const out = sink.toShared();
      expect(out.buffer).toBeInstanceOf(SharedArrayBuffer);
      expect(out.byteLength).toBe(bytes.length + 6);
      expect([...out.subarray(0, bytes.length)]).toEqual(bytes);
      // A sink in shared memory from the start is handed out as it is; one that grew in plain memory is copied.
      if (expected > 0) expect(out.buffer).toBe(sink.buf.buffer);
      else expect(out.buffer).not.toBe(sink.buf.buffer);
    }
  });
});
