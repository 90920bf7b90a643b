/** The keys of the shared-openings concurrency test (ledger-shared-openings.test.ts, openings-reader.ts). */
import { base62Fixed } from '../../src/ledger/base62.ts';

/** Key i is added at second T0 + i. */
export const T0 = 1_700_000_000;

const hex = (v: number, digits: number): string =>
  (v >>> 0)
    .toString(16)
    .padStart(8, '0')
    .slice(8 - digits);

/** Workspace i and building i, each distinct for every i (a lowercase UUID). */
export function openingKey(i: number): [string, string] {
  const x = Math.imul(i + 1, 0x9e3779b1) >>> 0;
  const y = Math.imul(i + 7, 0x85ebca6b) >>> 0;
  return [`ws_${base62Fixed(i + 1, 14)}`, `${hex(x, 8)}-${hex(y, 4)}-4${hex(x, 3)}-8${hex(y, 3)}-${hex(x ^ y, 4)}${hex(i + 1, 8)}`];
}
