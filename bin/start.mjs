// `npm start` and bin/edifice: the server's main thread (src/main.ts) from its esbuild bundle
// (src/code-bundles.mjs), built on the first start after a change and kept; where it cannot be
// built or kept, from the TypeScript through tsx's loader, with a warning. A server with workers on
// a SQLite ledger gets its ledger thread and workers started here, before the main thread loads
// its own code (src/http/early-threads.mjs).
import process from 'node:process';
import { URL, fileURLToPath } from 'node:url';
import { codeBundles } from '../src/code-bundles.mjs';
import { startEarlyThreads } from '../src/http/early-threads.mjs';

const source = (path) => fileURLToPath(new URL(path, import.meta.url));
const main = source('../src/main.ts');
const worker = source('../src/http/worker.ts');
const ledger = source('../src/http/ledger-thread.ts');
// Built with the others, for the main thread to find when a snapshot is built from its Arrow file.
const coldThread = source('../src/catalog/cold-thread.ts');
let entry;
try {
  const bundles = await codeBundles([main, worker, ledger, coldThread]);
  entry = bundles.get(main).href;
  startEarlyThreads({ worker: bundles.get(worker), ledger: bundles.get(ledger) });
} catch (err) {
  process.stderr.write(`edifice: the server's code could not be bundled (${err.message}): loading the TypeScript, which starts slower\n`);
  const { register } = await import('tsx/esm/api');
  register();
  entry = main;
}
await import(entry);
