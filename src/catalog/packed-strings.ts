/**
 * A large table of strings (cold string templates, business names, place names) as two shared
 * arrays: the strings' UTF-8 bytes end to end, and where each ends. Every thread reads the same
 * memory: a worker receives the table by reference, a prepared file maps it, and neither parses
 * hundreds of thousands of strings before it can serve. A thread decodes a string the first time
 * it asks for it and keeps it.
 *
 * The strings come from UTF-8 (Arrow columns), so they are well-formed and round-trip exactly.
 */
import { sharedU32, sharedU8 } from './shared.ts';

declare global {
  interface String {
    /** ES2024, in Node since 20. */
    isWellFormed(): boolean;
  }
}

/** The fields a structured clone or a prepared file carries; the decoded strings stay in their thread. */
export interface PackedStringsParts {
  bytes: Uint8Array;
  /** String i is bytes [ends[i - 1] (0 for i = 0), ends[i]). */
  ends: Uint32Array;
}

export class PackedStrings implements PackedStringsParts {
  readonly bytes: Uint8Array;
  readonly ends: Uint32Array;
  // Private fields are neither cloned nor listed by Object.entries: each thread keeps its own.
  #text: Buffer;
  #decoded: (string | undefined)[];

  constructor({ bytes, ends }: PackedStringsParts) {
    this.bytes = bytes;
    this.ends = ends;
    this.#text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.#decoded = new Array<string | undefined>(ends.length);
  }

  static pack(strings: readonly string[]): PackedStrings {
    const ends = sharedU32(strings.length);
    let total = 0;
    for (let i = 0; i < strings.length; i++) {
      const s = strings[i];
      if (!s.isWellFormed()) throw new RangeError(`string ${i} holds a lone surrogate: UTF-8 cannot keep it`);
      total += Buffer.byteLength(s, 'utf8');
      ends[i] = total;
    }
    const bytes = sharedU8(total);
    const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (let i = 0, at = 0; i < strings.length; i++) at += text.write(strings[i], at, 'utf8');
    return new PackedStrings({ bytes, ends });
  }

  get length(): number {
    return this.ends.length;
  }

  /** String i (0 <= i < length). */
  at(i: number): string {
    let s = this.#decoded[i];
    if (s === undefined) {
      if (!(i >= 0 && i < this.ends.length)) throw new RangeError(`no string ${i} among ${this.ends.length}`);
      s = this.#text.toString('utf8', i === 0 ? 0 : this.ends[i - 1], this.ends[i]);
      this.#decoded[i] = s;
    }
    return s;
  }

  /** Every string, in order. */
  toArray(): string[] {
    const out = new Array<string>(this.ends.length);
    for (let i = 0; i < out.length; i++) out[i] = this.at(i);
    return out;
  }

  /** Bytes of the two arrays; decoded strings are a thread's cache, not counted. */
  get byteLength(): number {
    return this.bytes.byteLength + this.ends.byteLength;
  }
}
