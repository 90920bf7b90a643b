/**
 * The project's compiled addons (`native/`, built by `npm install`), each loaded where it serves:
 * the file mapping and the store's huge pages (snapshot/mapped-file.ts), the scan's loops
 * (query/native-kernels.ts) and the shared store's copies (api/shared-copy.ts). Where one did not
 * build, its module says why and the JavaScript it replaces serves.
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/** The addon `native/build/Release/<name>.node`, or null with the reason it did not load. */
export function loadAddon<T>(name: string): { addon: T; why: null } | { addon: null; why: string } {
  const path = fileURLToPath(new URL(`../native/build/Release/${name}.node`, import.meta.url));
  try {
    return { addon: createRequire(import.meta.url)(path) as T, why: null };
  } catch (err) {
    return { addon: null, why: `the addon ${path} did not load: ${(err as Error).message.split('\n')[0]}` };
  }
}
