/**
 * A reusable, growing byte buffer that response bodies are assembled in: pieces are copied in
 * as they come (a cached building's bytes, text written as UTF-8 in place), and the body is
 * either copied out once at the end (`take`) or sent from where it is (`view`).
 */
import { copyFromShared, copyToShared } from './shared-copy.ts';

export class ByteWriter {
  private buf: Buffer;
  length = 0;

  constructor(initialBytes = 64 * 1024) {
    this.buf = Buffer.allocUnsafeSlow(initialBytes);
  }

  reset(): void {
    this.length = 0;
  }

  private room(n: number): void {
    const need = this.length + n;
    if (need <= this.buf.length) return;
    const grown = Buffer.allocUnsafeSlow(Math.max(need, 2 * this.buf.length));
    this.buf.copy(grown, 0, 0, this.length);
    this.buf = grown;
  }

  byte(b: number): void {
    this.room(1);
    this.buf[this.length++] = b;
  }

  /** Copies src[start, end). */
  bytes(src: Uint8Array, start = 0, end = src.length): void {
    this.room(end - start);
    if (Buffer.isBuffer(src)) src.copy(this.buf, this.length, start, end);
    else this.buf.set(start === 0 && end === src.length ? src : src.subarray(start, end), this.length);
    this.length += end - start;
  }

  /** Writes s, whose characters are all below U+0080 (keys, numbers, enum values), a byte each: no native call, no copy of s. */
  ascii(s: string): void {
    const n = s.length;
    this.room(n);
    const buf = this.buf;
    let at = this.length;
    for (let i = 0; i < n; i++) buf[at++] = s.charCodeAt(i);
    this.length = at;
  }

  /** Copies the whole of b, a constant piece: one TypedArray `set`, no call into C++ as Buffer#copy makes. */
  raw(b: Uint8Array): void {
    const n = b.length;
    this.room(n);
    this.buf.set(b, this.length);
    this.length += n;
  }

  /**
   * Writes the integer v (|v| < 2^53) in decimal, as String(v) and JSON.stringify write it
   * (-0 as 0), without making the string.
   */
  integer(v: number): void {
    this.room(17);
    const buf = this.buf;
    if (v < 0) {
      buf[this.length++] = 0x2d;
      v = -v;
    }
    let digits = 1;
    for (let p = 10; p <= v; p *= 10) digits++;
    let at = this.length + digits;
    this.length = at;
    do {
      const q = Math.floor(v / 10);
      buf[--at] = 0x30 + (v - 10 * q);
      v = q;
    } while (v > 0);
  }

  /**
   * Writes k / scale as String(k / scale) writes that double, for k an integer of Int32 range and
   * scale 10^d, d ≤ 4 (numeric.ts's scaled columns), from k's digits, not the double's: k·10^-d has at
   * most 10 significant digits, so it is the shortest that reads back as that double (any
   * decimal of 15 digits or fewer does), and at least 10^-4 needs no exponent.
   */
  decimal(k: number, scale: number): void {
    if (k < 0) {
      this.byte(0x2d);
      k = -k;
    }
    const whole = Math.floor(k / scale);
    let frac = k - whole * scale;
    this.integer(whole);
    if (frac === 0) return;
    let width = 0;
    for (let p = scale; p > 1; p /= 10) width++;
    while (frac % 10 === 0) {
      frac /= 10;
      width--;
    }
    this.room(width + 1);
    const buf = this.buf;
    buf[this.length] = 0x2e;
    let at = this.length + width + 1;
    this.length = at;
    for (let i = 0; i < width; i++) {
      const q = Math.floor(frac / 10);
      buf[--at] = 0x30 + (frac - 10 * q);
      frac = q;
    }
  }

  /** Writes s as UTF-8 (a UTF-16 code unit takes at most 3 bytes). */
  text(s: string): void {
    this.room(3 * s.length);
    this.length += this.buf.write(s, this.length);
  }

  /** Copies src[start, end), a view of shared memory (copyFromShared). */
  bytesFromShared(src: Buffer, start: number, end: number): void {
    this.room(end - start);
    copyFromShared(src, start, end, this.buf, this.length);
    this.length += end - start;
  }

  /** Copies bytes [start, end) of what was written to target, a view of shared memory, at targetStart (copyToShared). */
  copyToShared(target: Buffer, targetStart: number, start: number, end: number): void {
    copyToShared(this.buf, start, end, target, targetStart);
  }

  /** What was written since the last reset, in place: valid until the next write or reset. */
  view(): Buffer {
    return this.buf.subarray(0, this.length);
  }

  /** Bytes it holds room for. */
  get capacity(): number {
    return this.buf.length;
  }

  /** What was written since the last reset, as a buffer of its own. */
  take(): Buffer {
    const out = Buffer.allocUnsafe(this.length);
    this.buf.copy(out, 0, 0, this.length);
    return out;
  }
}
