/**
 * A reusable, growing byte buffer that response bodies are assembled in: pieces are copied in
 * as they come (a cached building's bytes, text written as UTF-8 in place), and the body is
 * either copied out once at the end (`take`) or sent from where it is (`view`).
 */
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

  /** Writes s as UTF-8 (a UTF-16 code unit takes at most 3 bytes). */
  text(s: string): void {
    this.room(3 * s.length);
    this.length += this.buf.write(s, this.length);
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
