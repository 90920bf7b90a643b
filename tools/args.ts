/** The command-line parsing the tools share. */
import { parseArgs, type ParseArgsConfig } from 'node:util';

/**
 * node:util's parseArgs, refusing an option with a value given twice: parseArgs keeps the last
 * one, so `--country RO --country BG` would build BG without a word. Options declared `multiple`
 * repeat as meant; a switch given twice says the same thing twice. Throws a TypeError, as
 * parseArgs does for the command lines it refuses.
 */
export function parseArgsOnce<T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T>> {
  const parsed = parseArgs<ParseArgsConfig & { tokens: true }>({ ...config, tokens: true });
  const seen = new Map<string, string>();
  for (const token of parsed.tokens) {
    if (token.kind !== 'option' || token.value === undefined || config.options?.[token.name]?.multiple) continue;
    const first = seen.get(token.name);
    if (first !== undefined) throw new TypeError(`--${token.name} given twice ("${first}", then "${token.value}"): give it once`);
    seen.set(token.name, token.value);
  }
  return parsed as ReturnType<typeof parseArgs<T>>;
}
