/** One bundle per entry (absolute paths of .ts files under src), built unless cached (code-bundles.mjs). */
export function codeBundles(entries: readonly string[]): Promise<Map<string, URL>>;
/** Folders of bundles kept when new ones are built, besides those a live process uses (code-bundles.mjs). */
export const KEEP_BUNDLES: number;
/** Removes the folders past the KEEP_BUNDLES newest that no live process uses, never `current`'s; the names removed. */
export function pruneBundles(current: string): string[];
