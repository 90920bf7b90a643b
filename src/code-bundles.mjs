// The server's code as esbuild bundles: the main thread's (main.ts, loaded by bin/start.mjs) and
// the threads' (worker.ts, ledger-thread.ts, by worker-pool.ts; cold-thread.ts, by the catalog),
// each one file of plain JavaScript, packages left as imports but for apache-arrow, whose two
// hundred modules are bundled too. A bundle loads in less than half the time tsx's loader takes to
// resolve and compile the same hundred modules one at a time, and a start runs on few cores.
//
// Each module keeps its own `import.meta.url` (its path under src), so a file it finds beside
// itself is found as before. Bundles are kept in node_modules/.cache/edifice (from there the
// packages they import resolve), named by a hash of the sources: a start after a change builds
// them again, and removes the folders past the KEEP_BUNDLES newest that no running server uses.
// Plain JavaScript itself, so that bin/start.mjs loads it without tsx.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import process from 'node:process';
import { URL, fileURLToPath, pathToFileURL } from 'node:url';
import { threadId } from 'node:worker_threads';

const SRC = fileURLToPath(new URL('.', import.meta.url));
const NODE_MODULES = join(SRC, '..', 'node_modules');
const CACHE = join(NODE_MODULES, '.cache', 'edifice');
const KEYS = Symbol.for('edifice.sourcesKeys');
const MARKED = Symbol.for('edifice.bundlesInUse');
/** A folder's marks of the processes using it: one empty file per process id. */
const IN_USE = '.in-use';

/**
 * Folders of bundles kept when new ones are built, the newest by their last build. Older ones go
 * unless a live process marked them in use: a server restarts its worker and ledger threads from
 * its own folder, so removing it would leave a crashed ledger thread unable to start again.
 */
export const KEEP_BUNDLES = 4;
/** Numbers this thread's temporary files. */
let writes = 0;

/** Packages bundled with the code (apache-arrow and what it imports); their versions are part of the key. */
const BUNDLED_PACKAGES = ['apache-arrow', 'flatbuffers', 'tslib', 'json-with-bigint'];

/** The package a bare import names: `@scope/name` or `name`. */
function packageOf(specifier) {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
}

/** The sources every bundle may hold, in a stable order. */
function sources() {
  return /** @type {string[]} */ (readdirSync(SRC, { recursive: true }))
    .filter((f) => f.endsWith('.ts') || f.endsWith('.mjs'))
    .sort()
    .map((f) => join(SRC, f));
}

/**
 * The hash of the sources, once per process: bin/start.mjs and the main thread's bundle (which holds
 * a copy of this file) share it through globalThis, rather than read and hash every source twice.
 * A running server keeps the bundles it started from.
 * @returns {string}
 */
function sourcesKey() {
  const keys = /** @type {Record<symbol, Map<string, string>>} */ (globalThis);
  const known = (keys[KEYS] ??= new Map());
  const cached = known.get(SRC);
  if (cached !== undefined) return cached;
  const esbuildVersion = JSON.parse(readFileSync(join(NODE_MODULES, 'esbuild', 'package.json'), 'utf8')).version;
  // The sources' folder too: every module's import.meta.url names it.
  const hash = createHash('sha256').update(String(esbuildVersion)).update(`${SRC}\0`);
  for (const name of BUNDLED_PACKAGES)
    hash.update(`${name}@${JSON.parse(readFileSync(join(NODE_MODULES, name, 'package.json'), 'utf8')).version}\0`);
  for (const f of sources()) hash.update(`${f.slice(SRC.length)}\0`).update(readFileSync(f));
  const key = hash.digest('hex').slice(0, 16);
  known.set(SRC, key);
  return key;
}

/**
 * One bundle per entry (absolute paths of .ts files under src), by entry; built now unless the
 * cache holds them for these sources. Throws what stops it (esbuild missing, a folder not writable).
 * @param {readonly string[]} entries
 * @returns {Promise<Map<string, URL>>}
 */
export async function codeBundles(entries) {
  const key = sourcesKey();
  const out = new Map();
  const missing = [];
  for (const entry of entries) {
    const path = join(CACHE, key, `${entry.slice(SRC.length).replace(/[\\/]/g, '-').replace(/\.ts$/, '')}.mjs`);
    out.set(entry, pathToFileURL(path));
    if (!existsSync(path)) missing.push(entry);
  }
  if (missing.length > 0) {
    const { build } = await import('esbuild');
    for (const entry of missing) await buildOne(build, entry, fileURLToPath(out.get(entry)));
  }
  markInUse(key);
  if (missing.length > 0) pruneBundles(key);
  return out;
}

/** Marks the folder `key` in use by this process until it exits (once per process: the copies of this module share it). */
function markInUse(key) {
  // A thread's exit is not its process's: the main thread marks for them all.
  if (threadId !== 0) return;
  const marks = /** @type {Record<symbol, Set<string>>} */ (/** @type {unknown} */ (globalThis));
  const marked = (marks[MARKED] ??= new Set());
  if (marked.has(key)) return;
  marked.add(key);
  const path = join(CACHE, key, IN_USE, String(process.pid));
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, '');
  process.once('exit', () => rmSync(path, { force: true }));
}

/** Whether process `pid` is running (a process of another user counts). */
function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return /** @type {NodeJS.ErrnoException} */ (err).code === 'EPERM';
  }
}

/**
 * Removes the folders of bundles past the KEEP_BUNDLES newest (by modification time) that no
 * live process marked in use, never `current`; returns the names removed. Another start may be
 * removing them too: a folder already gone is not an error, and one that cannot be removed is
 * left for the next build.
 * @param {string} current
 * @returns {string[]}
 */
export function pruneBundles(current) {
  /** @type {{ name: string, mtimeMs: number }[]} */
  const folders = [];
  let names;
  try {
    names = readdirSync(CACHE);
  } catch {
    return [];
  }
  for (const name of names) {
    if (name === current) continue;
    try {
      const s = statSync(join(CACHE, name));
      if (s.isDirectory()) folders.push({ name, mtimeMs: s.mtimeMs });
    } catch {
      // Removed meanwhile.
    }
  }
  folders.sort((a, b) => b.mtimeMs - a.mtimeMs);
  const removed = [];
  for (const { name } of folders.slice(KEEP_BUNDLES - 1)) {
    let users = [];
    try {
      users = readdirSync(join(CACHE, name, IN_USE));
    } catch {
      // No marks: nobody uses it.
    }
    if (users.some((pid) => /^[0-9]+$/.test(pid) && alive(Number(pid)))) continue;
    try {
      rmSync(join(CACHE, name), { recursive: true, force: true });
      removed.push(name);
    } catch {
      // Left for the next build.
    }
  }
  return removed;
}

/**
 * @param {typeof import('esbuild').build} build
 * @param {string} entry
 * @param {string} path
 */
async function buildOne(build, entry, path) {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    keepNames: true,
    // apache-arrow says its modules have no side effects, but its Node entry registers the Node
    // stream adapters (toNodeStream) by one: kept, rather than dropped from the bundle.
    ignoreAnnotations: true,
    write: false,
    logLevel: 'silent',
    plugins: [
      {
        // Packages stay imports, but for those whose hundreds of small modules took a thread longer
        // to resolve and load than one bundled copy takes to compile.
        name: 'packages-imported',
        setup(b) {
          b.onResolve({ filter: /^[^./]/ }, (args) =>
            BUNDLED_PACKAGES.includes(packageOf(args.path)) ? undefined : { path: args.path, external: true },
          );
        },
      },
      {
        name: 'own-import-meta-url',
        setup(b) {
          b.onLoad({ filter: /\.(ts|mjs)$/ }, (args) => ({
            contents: readFileSync(args.path, 'utf8').replace(/\bimport\.meta\.url\b/g, JSON.stringify(pathToFileURL(args.path).href)),
            loader: args.path.endsWith('.mjs') ? 'js' : 'ts',
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
