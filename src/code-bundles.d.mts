/** One bundle per entry (absolute paths of .ts files under src), built unless cached (code-bundles.mjs). */
export function codeBundles(entries: readonly string[]): Promise<Map<string, URL>>;
