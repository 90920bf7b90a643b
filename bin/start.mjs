// `npm start` and bin/edifice: the server's main thread (src/main.ts) from its esbuild bundle
// (src/code-bundles.mjs), built on the first start after a change and kept; where it cannot be
// built or kept, from the TypeScript through tsx's loader, with a warning.
import process from 'node:process';
import { URL, fileURLToPath } from 'node:url';
import { codeBundles } from '../src/code-bundles.mjs';

const main = fileURLToPath(new URL('../src/main.ts', import.meta.url));
let entry;
try {
  entry = (await codeBundles([main])).get(main).href;
} catch (err) {
  process.stderr.write(`edifice: the server's code could not be bundled (${err.message}): loading the TypeScript, which starts slower\n`);
  const { register } = await import('tsx/esm/api');
  register();
  entry = main;
}
await import(entry);
