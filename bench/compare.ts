/**
 * Holds the engines' answers against each other, query by query: the same ids in the same
 * order, the same total and the same capped flag. A mismatch is a bug in one of them; it is
 * counted and shown, never smoothed over.
 */
import type { Answer, MixQuery } from './engine.ts';

export interface Mismatch {
  index: number;
  cls: string;
  a: string;
  b: string;
  what: string;
}

/** What differs between two answers, or null when they agree. */
export function difference(x: Answer | Error, y: Answer | Error): string | null {
  if (x instanceof Error || y instanceof Error) {
    if (x instanceof Error && y instanceof Error) return null;
    return `one refused the query: ${(x instanceof Error ? x : (y as Error)).message}`;
  }
  const parts: string[] = [];
  if (x.total !== y.total || x.capped !== y.capped)
    parts.push(`total ${x.total}${x.capped ? '+' : ''} vs ${y.total}${y.capped ? '+' : ''}`);
  if (x.ids.length !== y.ids.length) parts.push(`page length ${x.ids.length} vs ${y.ids.length}`);
  const n = Math.min(x.ids.length, y.ids.length);
  for (let i = 0; i < n; i++) {
    if (x.ids[i] !== y.ids[i]) {
      const inY = y.ids.indexOf(x.ids[i]);
      parts.push(`first differing position ${i}: ${x.ids[i]} vs ${y.ids[i]}${inY >= 0 ? ` (found at ${inY})` : ' (absent)'}`);
      break;
    }
  }
  return parts.length ? parts.join('; ') : null;
}

/** Every pair of engines on every query. */
export function compareAll(
  queries: readonly MixQuery[],
  answers: Map<string, (Answer | Error)[]>,
): { mismatches: Mismatch[]; pairs: Map<string, number> } {
  const names = [...answers.keys()];
  const mismatches: Mismatch[] = [];
  const pairs = new Map<string, number>();
  for (let i = 0; i < names.length; i++) {
    for (let j = i + 1; j < names.length; j++) {
      const a = names[i],
        b = names[j];
      const key = `${a} vs ${b}`;
      pairs.set(key, 0);
      const xa = answers.get(a)!,
        xb = answers.get(b)!;
      for (let k = 0; k < queries.length; k++) {
        const what = difference(xa[k], xb[k]);
        if (what === null) continue;
        pairs.set(key, pairs.get(key)! + 1);
        mismatches.push({ index: k, cls: queries[k].cls, a, b, what });
      }
    }
  }
  return { mismatches, pairs };
}
