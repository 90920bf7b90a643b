import { describe, expect, it } from 'vitest';
import { PackedStrings } from '../src/catalog/packed-strings.ts';

const STRINGS = ['', 'a', 'Strada Ștefan cel Mare 12', '東京都', 'emoji 😀 pair', 'nul\0inside', '', 'Zürich', 'x'.repeat(70_000)];

describe('packed strings', () => {
  it('give back every string as it was, in shared memory, from a structured clone too', () => {
    const packed = PackedStrings.pack(STRINGS);
    expect(packed.length).toBe(STRINGS.length);
    expect(packed.bytes.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(packed.ends.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(packed.bytes.byteLength).toBe(STRINGS.reduce((n, s) => n + Buffer.byteLength(s), 0));
    // Out of order, and each twice: the second read is the thread's kept string.
    for (const i of [8, 3, 0, 5, 3, 8, 1, 2, 4, 6, 7]) expect(packed.at(i)).toBe(STRINGS[i]);
    expect(packed.toArray()).toEqual(STRINGS);

    const cloned = structuredClone(packed);
    // Only the shared arrays travel: a worker decodes for itself.
    expect(Object.keys(cloned).sort()).toEqual(['bytes', 'ends']);
    expect(cloned.bytes.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(new PackedStrings(cloned).toArray()).toEqual(STRINGS);
  });

  it('holds an empty table, and refuses a string UTF-8 cannot keep and a number out of range', () => {
    const empty = PackedStrings.pack([]);
    expect(empty.length).toBe(0);
    expect(empty.toArray()).toEqual([]);
    expect(() => empty.at(0)).toThrow(RangeError);
    expect(() => PackedStrings.pack(['fine', 'half \ud800 a pair'])).toThrow(/string 1 holds a lone surrogate/);
    const packed = PackedStrings.pack(['a', 'b']);
    expect(() => packed.at(2)).toThrow(/no string 2 among 2/);
    expect(() => packed.at(-1)).toThrow(RangeError);
  });
});
