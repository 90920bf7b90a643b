/**
 * The code the server's threads run (worker.ts, ledger-thread.ts), each bundled by esbuild into
 * one file of plain JavaScript, packages left as imports. A thread loads its bundle in less than
 * half the time tsx's loader takes to resolve and compile the same hundred modules one at a
 * time, and those loads run beside the start's snapshot loading on the same cores.
 *
 * Each module keeps its own `import.meta.url` (its path under src), so a file it finds beside
 * itself is found as before. Bundles are kept in node_modules/.cache/edifice (from there the
 * packages they import resolve), named by a hash of the sources: a start after a change builds
 * them again. When they cannot be built or written, the threads load the TypeScript through tsx.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { threadId } from 'node:worker_threads';

const SRC = fileURLToPath(new URL('..', import.meta.url));
const CACHE = join(SRC, '..', 'node_modules', '.cache', 'edifice');
/** Numbers this thread's temporary files. */
let writes = 0;

/** The sources every bundle may hold, in a stable order. */
function sources(): string[] {
  return (readdirSync(SRC, { recursive: true }) as string[])
    .filter((f) => f.endsWith('.ts') || f.endsWith('.mjs'))
    .sort()
    .map((f) => join(SRC, f));
}

/**
 * One bundle per entry (absolute paths of .ts files under src), by entry; built now unless the
 * cache holds them for these sources. Throws what stops it (esbuild missing, a folder not writable).
 */
export async function threadBundles(entries: readonly string[]): Promise<Map<string, URL>> {
  const { build, version } = await import('esbuild');
  // The sources' folder too: every module's import.meta.url names it.
  const hash = createHash('sha256').update(version).update(`${SRC}\0`);
  for (const f of sources()) hash.update(`${f.slice(SRC.length)}\0`).update(readFileSync(f));
  const key = hash.digest('hex').slice(0, 16);
  const out = new Map<string, URL>();
  const missing: string[] = [];
  for (const entry of entries) {
    const path = join(CACHE, key, `${entry.slice(SRC.length).replace(/[\\/]/g, '-').replace(/\.ts$/, '')}.mjs`);
    out.set(entry, pathToFileURL(path));
    if (!existsSync(path)) missing.push(entry);
  }
  for (const entry of missing) await buildOne(build, entry, fileURLToPath(out.get(entry)!));
  return out;
}

async function buildOne(build: typeof import('esbuild').build, entry: string, path: string): Promise<void> {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    keepNames: true,
    write: false,
    logLevel: 'silent',
    plugins: [
      {
        name: 'own-import-meta-url',
        setup(b) {
          b.onLoad({ filter: /\.ts$/ }, (args) => ({
            contents: readFileSync(args.path, 'utf8').replace(/\bimport\.meta\.url\b/g, JSON.stringify(pathToFileURL(args.path).href)),
            loader: 'ts',
          }));
        },
      },
    ],
  });
  mkdirSync(dirname(path), { recursive: true });
  // Whole or not at all: another server starting from the same folder may be writing it too.
  const tmp = `${path}.${process.pid}-${threadId}-${++writes}.tmp`;
  writeFileSync(tmp, result.outputFiles[0].contents);
  renameSync(tmp, path);
}
