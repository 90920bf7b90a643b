/**
 * Writes a snapshot file as GeoParquet 1.1, for tools that read Parquet but not Arrow IPC files:
 *
 *   npm run export:geoparquet -- snapshots/LI/2013-08-03.arrow [--out LI.parquet]
 *
 * The snapshot is checked as the server checks it; the output (default: the snapshot's path
 * with `.parquet`) appears only once whole.
 */
import { writeGeoParquet } from '../src/snapshot/geoparquet.ts';
import { SnapshotError } from '../src/snapshot/reader.ts';
import { parseArgsOnce } from './args.ts';

const USAGE = 'usage: npm run export:geoparquet -- SNAPSHOT.arrow [--out FILE.parquet]';

function fail(message: string, code = 2): never {
  process.stderr.write(`export:geoparquet: ${message}\n${code === 2 ? `${USAGE}\n` : ''}`);
  process.exit(code);
}

let parsed;
try {
  parsed = parseArgsOnce({
    strict: true,
    allowPositionals: true,
    options: { out: { type: 'string' }, help: { type: 'boolean', short: 'h', default: false } },
  });
} catch (err) {
  fail((err as Error).message);
}
const { values, positionals } = parsed;
if (values.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
if (positionals.length !== 1) fail('give exactly one snapshot file.');
const [input] = positionals;
if (!input.endsWith('.arrow')) fail(`${input} is not a snapshot file (*.arrow).`);
const out = values.out ?? input.replace(/\.arrow$/, '.parquet');
try {
  const result = writeGeoParquet(input, out);
  process.stdout.write(`${result.path}: ${result.rows.toLocaleString('en')} buildings, ${result.bytes.toLocaleString('en')} bytes\n`);
} catch (err) {
  if (err instanceof SnapshotError || typeof (err as NodeJS.ErrnoException).syscall === 'string') fail((err as Error).message, 1);
  throw err;
}
