/** Random identifiers and secrets in base62 (letters and digits: safe in URLs, headers and shells). */
import { randomBytes } from 'node:crypto';

export const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `length` base62 characters, uniform (rejection sampling: bytes of 248 and above are dropped). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    const bytes = randomBytes(Math.ceil((length - out.length) * 1.1) + 4);
    for (let i = 0; i < bytes.length && out.length < length; i++) {
      if (bytes[i] < 248) out += BASE62[bytes[i] % 62];
    }
  }
  return out;
}

/** Fixed-width base62 of an unsigned integer below 62 ** width. */
export function base62Fixed(value: number, width: number): string {
  let out = '';
  let n = value;
  for (let i = 0; i < width; i++) {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  }
  if (n !== 0) throw new RangeError(`${value} does not fit in ${width} base62 digits.`);
  return out;
}

/** A new record id such as `ws_4fQ9...`: the prefix says what it names. */
export function newId(prefix: 'ws' | 'mem' | 'rm' | 'ord'): string {
  return `${prefix}_${randomBase62(14)}`;
}
