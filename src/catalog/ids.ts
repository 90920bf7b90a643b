/**
 * building_id in the store: a lowercase UUID kept as four big-endian 32-bit words, so that an id
 * costs 16 bytes and comparing two ids compares at most four integers. The word order equals the
 * order of the id strings (lowercase hex and dashes at fixed places), so "ties by building_id
 * ascending" can be decided on words, and within one snapshot on a precomputed rank.
 */
import { sharedU32 } from './shared.ts';

const HEX = new Int8Array(256).fill(-1);
for (let i = 0; i < 10; i++) HEX[48 + i] = i;
for (let i = 0; i < 6; i++) HEX[97 + i] = 10 + i;

/** Char offsets of the 32 hex digits in "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx". */
const DIGITS = (() => {
  const at: number[] = [];
  for (let i = 0; i < 36; i++) if (i !== 8 && i !== 13 && i !== 18 && i !== 23) at.push(i);
  return Int32Array.from(at);
})();

/** Parses 36 ASCII bytes of a lowercase UUID at `start` into out[4*at..4*at+3]; false if it is not one. */
export function parseUuidBytes(bytes: Uint8Array, start: number, length: number, out: Uint32Array, at: number): boolean {
  if (length !== 36) return false;
  if (bytes[start + 8] !== 45 || bytes[start + 13] !== 45 || bytes[start + 18] !== 45 || bytes[start + 23] !== 45) return false;
  for (let w = 0; w < 4; w++) {
    let word = 0;
    for (let d = 0; d < 8; d++) {
      const h = HEX[bytes[start + DIGITS[w * 8 + d]]];
      if (h < 0) return false;
      word = word * 16 + h;
    }
    out[4 * at + w] = word;
  }
  return true;
}

const scratchBytes = new Uint8Array(36);

/** Parses a lowercase UUID string into out[4*at..]; false if it is not one. */
export function parseUuid(id: string, out: Uint32Array, at: number): boolean {
  if (id.length !== 36) return false;
  for (let i = 0; i < 36; i++) {
    const c = id.charCodeAt(i);
    if (c > 127) return false;
    scratchBytes[i] = c;
  }
  return parseUuidBytes(scratchBytes, 0, 36, out, at);
}

const HEX_DIGITS = Buffer.from('0123456789abcdef', 'latin1');
const uuidScratch = Buffer.alloc(36, 0x2d);

/** Writes the low 4 x digits bits of v as lowercase hex into uuidScratch[at..]. */
function putHex(v: number, at: number, digits: number): void {
  for (let i = at + digits - 1; i >= at; i--) {
    uuidScratch[i] = HEX_DIGITS[v & 15];
    v >>>= 4;
  }
}

/**
 * The id string of words[4*at..4*at+3]. Spelled into a scratch buffer and read out as one flat
 * string: built from pieces, it would leave about ten times the garbage an id (a page's ids are
 * made for every charge).
 */
export function formatUuid(words: Uint32Array, at: number): string {
  const second = words[4 * at + 1];
  const third = words[4 * at + 2];
  putHex(words[4 * at], 0, 8);
  putHex(second >>> 16, 9, 4);
  putHex(second & 0xffff, 14, 4);
  putHex(third >>> 16, 19, 4);
  putHex(third & 0xffff, 24, 4);
  putHex(words[4 * at + 3], 28, 8);
  return uuidScratch.toString('latin1', 0, 36);
}

/** Sign of id(a) - id(b) in string order. */
export function compareIds(wa: Uint32Array, a: number, wb: Uint32Array, b: number): number {
  for (let k = 0; k < 4; k++) {
    const x = wa[4 * a + k];
    const y = wb[4 * b + k];
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

/**
 * Ranks of the ids of rows 0..n-1 (equal ids ranked by row) and its inverse. Sorts packed doubles
 * (a prefix of the id, then the row) with the engine's native sort, then fixes the rare runs
 * whose prefixes tie with a full comparison.
 */
export function rankIds(words: Uint32Array, n: number): { rank: Uint32Array; byRank: Uint32Array } {
  const rank = sharedU32(n);
  const byRank = sharedU32(n);
  const indexBits = Math.max(1, Math.ceil(Math.log2(n + 1)));
  const prefixBits = 53 - indexBits; // at least 21 for any n a Uint32Array can index
  const indexScale = 2 ** indexBits;
  const keys = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const w0 = words[4 * i];
    const w1 = words[4 * i + 1];
    const prefix =
      prefixBits <= 32 ? Math.floor(w0 / 2 ** (32 - prefixBits)) : w0 * 2 ** (prefixBits - 32) + Math.floor(w1 / 2 ** (64 - prefixBits));
    keys[i] = prefix * indexScale + i;
  }
  keys.sort();
  for (let i = 0; i < n; i++) byRank[i] = keys[i] % indexScale;
  // Runs of equal prefixes: order them by the whole id, then by row.
  let start = 0;
  for (let i = 1; i <= n; i++) {
    if (i < n && Math.floor(keys[i] / indexScale) === Math.floor(keys[start] / indexScale)) continue;
    if (i - start > 1) {
      const run = Array.from(byRank.subarray(start, i));
      run.sort((a, b) => compareIds(words, a, words, b) || a - b);
      for (let k = 0; k < run.length; k++) byRank[start + k] = run[k];
    }
    start = i;
  }
  for (let i = 0; i < n; i++) rank[byRank[i]] = i;
  return { rank, byRank };
}
