/**
 * "Did you mean …?" for a misspelled parameter name or enum value: the candidate nearest by
 * edit distance, ignoring case, when it is near enough to be a plausible slip.
 */

function distance(a: string, b: string): number {
  if (a === b) return 0;
  let prev = new Array<number>(b.length + 1);
  let cur = new Array<number>(b.length + 1);
  for (let j = 0; j <= b.length; j++) prev[j] = j;
  for (let i = 1; i <= a.length; i++) {
    cur[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
    }
    [prev, cur] = [cur, prev];
  }
  return prev[b.length];
}

/** The candidate nearest to `word`, or undefined when none is within a third of its length (at least 2 edits). */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  if (word.length > 200) return undefined;
  const w = word.toLowerCase();
  let best: string | undefined;
  let bestD = Math.max(2, Math.floor(w.length / 3)) + 1;
  for (const c of candidates) {
    // A name of one or two letters (f) is no slip for a longer word (foo).
    if (c.length < 3 && w.length > c.length + 1) continue;
    const d = distance(w, c.toLowerCase());
    if (d < bestD) {
      best = c;
      bestD = d;
    }
  }
  return best;
}

/** `; did you mean "x"?` or the empty string. */
export function didYouMean(word: string, candidates: readonly string[]): string {
  const c = closest(word, candidates);
  return c === undefined ? '' : `; did you mean ${c}?`;
}
