/**
 * The compiled copies in and out of shared memory (native/shared-copy.cc through
 * src/api/shared-copy.ts) against Buffer's own copy, at every alignment of both sides, and
 * their refusals of copies that would reach outside either array.
 */
import { describe, expect, it } from 'vitest';
import { copyFromShared, copyToShared, sharedCopyCompiled } from '../src/api/shared-copy.ts';
import { ByteWriter } from '../src/api/byte-writer.ts';
import { Rng } from './reference/random.ts';

describe('copies in and out of shared memory', () => {
  const rng = new Rng(1129);
  const shared = Buffer.from(new SharedArrayBuffer(1 << 16));
  for (let i = 0; i < shared.length; i++) shared[i] = Math.floor(rng.next() * 256);
  const plain = Buffer.alloc(1 << 16);

  it('are the addon compiled ones here', () => {
    expect(sharedCopyCompiled).toBe(true);
  });

  it('copy the same bytes as Buffer.copy, at every alignment and length, and nothing beside them', () => {
    for (let t = 0; t < 3000; t++) {
      const n = t < 200 ? t % 40 : Math.floor(rng.next() * 4000);
      const start = Math.floor(rng.next() * (shared.length - n));
      const at = Math.floor(rng.next() * (plain.length - n));
      // Out of shared memory.
      plain.fill(0xa5);
      copyFromShared(shared, start, start + n, plain, at);
      expect(plain.subarray(at, at + n).equals(shared.subarray(start, start + n)), `from ${start}, ${n} bytes, to ${at}`).toBe(true);
      expect(at === 0 || plain[at - 1] === 0xa5).toBe(true);
      expect(at + n === plain.length || plain[at + n] === 0xa5).toBe(true);
      // Into it.
      const source = Buffer.from(Array.from({ length: n }, () => Math.floor(rng.next() * 256)));
      const before = Buffer.from(shared);
      copyToShared(source, 0, n, shared, start);
      const want = Buffer.from(before);
      source.copy(want, start);
      expect(shared.equals(want), `to ${start}, ${n} bytes`).toBe(true);
    }
  });

  it('refuse a copy that would reach outside either array', () => {
    expect(() => copyFromShared(shared, 10, shared.length + 1, plain, 0)).toThrow(RangeError);
    expect(() => copyFromShared(shared, 20, 10, plain, 0)).toThrow(RangeError);
    expect(() => copyFromShared(shared, 0, 100, plain, plain.length - 99)).toThrow(RangeError);
    expect(() => copyToShared(plain, 0, 100, shared, shared.length - 50)).toThrow(RangeError);
    expect(() => copyToShared(plain, -1, 100, shared, 0)).toThrow(TypeError);
  });

  it('serve the byte writer both ways', () => {
    const out = new ByteWriter(16);
    out.ascii('head:');
    out.bytesFromShared(shared, 100, 1300);
    expect(out.view().subarray(5).equals(shared.subarray(100, 1300))).toBe(true);
    out.copyToShared(shared, 5000, 5, 1205);
    expect(shared.subarray(5000, 6200).equals(shared.subarray(100, 1300))).toBe(true);
  });
});
