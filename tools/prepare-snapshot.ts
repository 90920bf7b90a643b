// Writes a snapshot's prepared file beside it (npm run build:prepared -- CC/YYYY-MM-DD.arrow), as a
// server's first start from the Arrow file would: a build pipeline runs it so that the first start
// and the swap to the new snapshot read the prepared file (docs/operating.md, Prepared files).
import { loadSnapshot } from '../src/catalog/load.ts';
import { preparedBeside, writePrepared } from '../src/catalog/prepared.ts';
import { openSnapshot } from '../src/snapshot/reader.ts';

const USAGE = 'usage: npm run build:prepared -- CC/YYYY-MM-DD.arrow   (writes CC/YYYY-MM-DD.edifice beside it)';
const args = process.argv.slice(2);
const help = args[0] === '--help' || args[0] === '-h';
if (args.length !== 1 || help) {
  (help ? process.stdout : process.stderr).write(`${USAGE}\n`);
  process.exitCode = help ? 0 : 2;
} else {
  try {
    const started = performance.now();
    // Opened, not yet verified: the cold blob's thread starts while the checksum is checked.
    const snapshot = loadSnapshot(
      openSnapshot(args[0]),
      {
        progress: (rows, of, phase) =>
          process.stderr.write(`build:prepared: ${phase} ${rows.toLocaleString('en')}/${of.toLocaleString('en')} buildings\n`),
      },
      { coldThread: 'typescript' },
    );
    const path = preparedBeside(args[0]);
    const { bytes } = await writePrepared(path, snapshot);
    process.stdout.write(`${path}: ${bytes} bytes, ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
  } catch (err) {
    process.stderr.write(`build:prepared: ${(err as Error).message}\n`);
    process.exitCode = 1;
  }
}
