/**
 * Typed arrays on `SharedArrayBuffer`s: every column of the store lives in one, so that worker
 * threads can serve the same snapshot without copies (DESIGN "The column store").
 */

import { hugeShared } from '../snapshot/mapped-file.ts';

export type CodeArray = Uint8Array | Uint16Array | Uint32Array;

/** From this size a buffer is asked for huge pages: a smaller one would round up a large share of it. */
export const HUGE_PAGES_FROM = 8 << 20;

/**
 * `bytes` zeroed shared bytes; from HUGE_PAGES_FROM on, fresh memory on huge pages where the
 * addon loaded (native/mapped.cc hugeShared: a large column read at random rows then misses the
 * TLB far less often). Without the addon, V8's own.
 */
export function sharedBuffer(bytes: number): SharedArrayBuffer {
  return (bytes >= HUGE_PAGES_FROM ? hugeShared(bytes) : null) ?? new SharedArrayBuffer(bytes);
}

export const sharedF64 = (n: number): Float64Array => new Float64Array(sharedBuffer(8 * n));
export const sharedI32 = (n: number): Int32Array => new Int32Array(sharedBuffer(4 * n));
export const sharedU32 = (n: number): Uint32Array => new Uint32Array(sharedBuffer(4 * n));
export const sharedU16 = (n: number): Uint16Array => new Uint16Array(sharedBuffer(2 * n));
export const sharedU8 = (n: number): Uint8Array => new Uint8Array(sharedBuffer(n));

/** Codes 0..maxCode in the narrowest unsigned array. */
export function sharedCodes(n: number, maxCode: number): CodeArray {
  return maxCode <= 0xff ? sharedU8(n) : maxCode <= 0xffff ? sharedU16(n) : sharedU32(n);
}

/** A growable byte buffer for the variable-length parts built at load, in one shared buffer at the end. */
export class ByteSink {
  buf: Uint8Array;
  pos = 0;
  /**
   * `expected`: the bytes to write, for a sink written straight into shared memory of that size
   * (doubled, with a copy, if it falls short), which `toShared` hands out without another copy.
   * Pages past the end are never touched, so they cost address space, not memory (on huge pages,
   * up to the rest of the last 2 MiB touched).
   */
  constructor(expected = 0) {
    this.buf = expected > 0 ? sharedU8(expected) : new Uint8Array(1 << 16);
  }
  private readonly f64 = new Float64Array(1);
  private readonly f64Bytes = new Uint8Array(this.f64.buffer);
  private readonly f32 = new Float32Array(1);
  private readonly f32Bytes = new Uint8Array(this.f32.buffer);

  reserve(extra: number): void {
    if (this.pos + extra <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + extra) size *= 2;
    const next = this.buf.buffer instanceof SharedArrayBuffer ? sharedU8(size) : new Uint8Array(size);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
  }

  u8(v: number): void {
    if (this.pos === this.buf.length) this.reserve(1);
    this.buf[this.pos++] = v;
  }

  /** Unsigned integer below 2^53, 7 bits a byte. */
  varint(v: number): void {
    this.reserve(8);
    const buf = this.buf;
    let pos = this.pos;
    if (v < 0x80000000) {
      // Integer arithmetic; the division below is floating point, for values up to 2^53.
      while (v >= 0x80) {
        buf[pos++] = (v & 0x7f) | 0x80;
        v >>>= 7;
      }
    } else {
      while (v >= 0x80) {
        buf[pos++] = (v % 0x80) | 0x80;
        v = Math.floor(v / 0x80);
      }
    }
    buf[pos++] = v;
    this.pos = pos;
  }

  float32(v: number): void {
    this.reserve(4);
    this.f32[0] = v;
    this.buf.set(this.f32Bytes, this.pos);
    this.pos += 4;
  }

  float64(v: number): void {
    this.reserve(8);
    this.f64[0] = v;
    this.buf.set(this.f64Bytes, this.pos);
    this.pos += 8;
  }

  bytes(src: Uint8Array, start: number, end: number): void {
    const n = end - start;
    this.reserve(n);
    const buf = this.buf;
    let pos = this.pos;
    if (n < 32) for (let i = start; i < end; i++) buf[pos++] = src[i];
    else {
      buf.set(src.subarray(start, end), pos);
      pos += n;
    }
    this.pos = pos;
  }

  /** The bytes written, in shared memory: the sink's own (`expected`), or a copy of exactly that size. */
  toShared(): Uint8Array {
    if (this.buf.buffer instanceof SharedArrayBuffer) return this.buf.subarray(0, this.pos);
    const out = sharedU8(this.pos);
    out.set(this.buf.subarray(0, this.pos));
    return out;
  }
}

/** Bytes held by a typed array or by nothing. */
export function bytesOf(...arrays: (ArrayBufferView | null | undefined)[]): number {
  let n = 0;
  for (const a of arrays) if (a) n += a.byteLength;
  return n;
}

/** Rough bytes held by JS strings (two bytes a character plus a header). */
export function stringBytes(strings: Iterable<string>): number {
  let n = 0;
  for (const s of strings) n += 16 + 2 * s.length;
  return n;
}
