/** Building ids as numbers: the in-memory openings (opened-index.ts, shared-openings.ts) key on them. */

/**
 * A lowercase UUID (8-4-4-4-12 hex) into four big-endian 32-bit words, `into[at]` to
 * `into[at + 3]`; false for anything else (some of those words may then have been written).
 */
export function uuidWords(id: string, into: Uint32Array, at: number): boolean {
  if (id.length !== 36) return false;
  let word = at;
  let value = 0;
  let digits = 0;
  for (let i = 0; i < 36; i++) {
    const c = id.charCodeAt(i);
    if (i === 8 || i === 13 || i === 18 || i === 23) {
      if (c !== 45) return false; // '-'
      continue;
    }
    let d: number;
    if (c >= 48 && c <= 57) d = c - 48;
    else if (c >= 97 && c <= 102) d = c - 87;
    else return false;
    value = (value << 4) | d;
    if (++digits === 8) {
      into[word++] = value;
      value = 0;
      digits = 0;
    }
  }
  return true;
}
