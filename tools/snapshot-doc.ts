// Writes snapshots/README.md from the schema table (npm run docs:snapshot). It takes no argument,
// and refuses any it is given rather than ignore it and write the file over all the same.
import { mkdirSync, writeFileSync } from 'node:fs';
import { renderSnapshotReadme } from '../src/snapshot/doc.ts';

const USAGE = 'usage: npm run docs:snapshot   (writes snapshots/README.md from the snapshot schema; no options)';
const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--help' || args[0] === '-h')) {
  console.log(USAGE);
} else if (args.length > 0) {
  process.stderr.write(
    `docs:snapshot: takes no arguments, got ${args.map((a) => JSON.stringify(a)).join(' ')}; nothing written.\n${USAGE}\n`,
  );
  process.exitCode = 2;
} else {
  const path = new URL('../snapshots/README.md', import.meta.url);
  mkdirSync(new URL('../snapshots/', import.meta.url), { recursive: true });
  writeFileSync(path, renderSnapshotReadme());
  console.log(`wrote ${path.pathname}`);
}
