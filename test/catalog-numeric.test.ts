import { describe, expect, it } from 'vitest';
import { numberAt, packIntegers, packNumbers, type NumColumn } from '../src/catalog/numeric.ts';
import { NULL_I32 } from '../src/catalog/arrow.ts';

/** Every value read back, -0 and null (NaN) told apart from 0. */
const shown = (v: number): string => (v !== v ? 'null' : Object.is(v, -0) ? '-0' : String(v));
const back = (col: NumColumn, n: number): string[] => Array.from({ length: n }, (_, r) => shown(numberAt(col, r)));

/** A column of n values made by f, with every seventh null. */
function column(n: number, f: (i: number) => number): Float64Array {
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = i % 7 === 3 ? NaN : f(i);
  return out;
}

describe('hot numeric columns', () => {
  const cases: [string, Float64Array, string, number | undefined][] = [
    ['whole metres under 32,767', column(1000, (i) => (i * 37) % 3000), 'i16', 1],
    ['tenths of a metre', column(1000, (i) => ((i * 13) % 900) / 10), 'i16', 10],
    ['hundredths beyond Int16', column(1000, (i) => ((i * 7919) % 500000) / 100), 'i32', 100],
    // Decimals found late: the first values need none, a later one four.
    ['four decimals late in the column', column(1000, (i) => (i === 998 ? 1.2345 : i)), 'i32', 10000],
    ['five decimals', column(1000, (i) => (i === 501 ? 1.23456 : i)), 'f64', undefined],
    ['a negative zero', column(1000, (i) => (i === 11 ? -0 : i)), 'f64', undefined],
    ['beyond Int32', column(1000, (i) => (i === 20 ? 2 ** 31 : i)), 'f64', undefined],
    ['beyond Int32 once scaled', column(1000, (i) => (i === 20 ? 300000.5 : i / 10000)), 'f64', undefined],
    ['all null', column(10, () => NaN), 'i16', 1],
  ];
  for (const [name, values, kind, scale] of cases) {
    it(`keep ${name} exactly, in the narrowest form (${kind})`, () => {
      const col = packNumbers(values);
      expect(col.kind).toBe(kind);
      if (col.kind !== 'f64') expect(col.scale).toBe(scale);
      expect(col.values.buffer).toBeInstanceOf(SharedArrayBuffer);
      expect(back(col, values.length)).toEqual([...values].map(shown));
    });
  }

  it('keep integer columns with their null sentinel', () => {
    const ints = new Int32Array([5, NULL_I32, -7, 2 ** 31 - 1, 0]);
    const col = packIntegers(ints);
    expect(col.kind).toBe('i32');
    expect(back(col, 5)).toEqual(['5', 'null', '-7', String(2 ** 31 - 1), '0']);
  });
});
