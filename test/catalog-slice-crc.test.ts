import { randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { SliceCrc, crc32Combine, type Slice } from '../src/catalog/slice-crc.ts';

describe('crc32Combine', () => {
  it('joins the CRC-32s of two pieces into that of the whole, at every split of random bytes', () => {
    const data = randomBytes(3_000);
    for (const split of [0, 1, 2, 3, 7, 8, 255, 256, 1_024, 1_499, 2_999, 3_000]) {
      const a = data.subarray(0, split);
      const b = data.subarray(split);
      expect(crc32Combine(crc32(a), crc32(b), b.length), `split at ${split}`).toBe(crc32(data));
    }
  });

  it('holds for pieces of several MiB, as the slices of a prepared file are', () => {
    const data = randomBytes(9 << 20);
    let crc = 0;
    for (let from = 0; from < data.length; from += 4 << 20) {
      const piece = data.subarray(from, Math.min(data.length, from + (4 << 20)));
      crc = crc32Combine(crc, crc32(piece), piece.length);
    }
    expect(crc).toBe(crc32(data));
  });
});

describe('SliceCrc', () => {
  const buffers = [7 << 20, 0, 12_345, 3 << 20].map((n) => {
    const b = new SharedArrayBuffer(n);
    new Uint8Array(b).set(randomBytes(n));
    return b;
  });
  const slices: Slice[] = [];
  buffers.forEach((b, k) => {
    for (let from = 0; from < b.byteLength; from += 1 << 20) slices.push([k, from, Math.min(1 << 20, b.byteLength - from)]);
  });
  const expected = buffers.map((b) => crc32(new Uint8Array(b)));

  for (const helper of [false, true]) {
    it(`gives each array's CRC-32 ${helper ? 'with a second thread' : 'alone'}, slices available at once`, () => {
      expect(Array.from(new SliceCrc(buffers, slices, helper).finish(buffers.length))).toEqual(expected);
    });

    it(`gives each array's CRC-32 ${helper ? 'with a second thread' : 'alone'}, slices available one by one`, async () => {
      const checks = new SliceCrc(buffers, slices, helper);
      for (let n = 1; n <= slices.length; n++) {
        checks.available(n);
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
      expect(Array.from(checks.finish(buffers.length))).toEqual(expected);
    });
  }
});
