/**
 * Flat copies of ASCII identifiers. Template literals and slices make V8 "cons" and "sliced"
 * strings, trees of pieces that take several times the memory of their characters. The
 * snapshot writer keeps every identifier of a country until `finish()`, so the generator hands
 * it flat copies: a building id then holds ~64 bytes of heap instead of ~370, which at five
 * million buildings is gigabytes of heap and the garbage collector's time spent walking it.
 */
export function flatAscii(s: string): string {
  return Buffer.from(s, 'latin1').toString('latin1');
}
