/**
 * Writes a synthetic country as a snapshot file.
 *
 *   npm run synth -- --seed 42 --buildings 1000000 --country XA --date 2026-11-21 --out snapshots/
 *
 * Options: --seed (integer, 0 to 4294967295; default 1), --buildings (1 to 10,000,000;
 * default 20,000), --country (two letters; default XA), --date (YYYY-MM-DD; default
 * 2026-11-21), --out (folder; default snapshots/), --bounds minLon,minLat,maxLon,maxLat
 * (default 20,44,26,48), --geoparquet (also write `<date>.parquet`, GeoParquet 1.1, beside the
 * file). Progress goes to stderr, the summary to stdout. Millions of buildings
 * need a larger heap than Node's default: NODE_OPTIONS=--max-old-space-size=8192.
 */
import { getHeapStatistics } from 'node:v8';
import cliProgress from 'cli-progress';
import { writeSyntheticCountry } from '../src/synth/generate.ts';
import { writeGeoParquet } from '../src/snapshot/geoparquet.ts';
import { DEFAULT_COUNTRY, DEFAULT_DATE, resolveOptions } from '../src/synth/options.ts';
import type { Bounds } from '../src/synth/bounds.ts';
import { parseArgsOnce } from './args.ts';

const USAGE =
  'usage: npm run synth -- [--seed N] [--buildings N] [--country CC] [--date YYYY-MM-DD] [--out DIR] [--bounds minLon,minLat,maxLon,maxLat] [--geoparquet]';
/** V8 heap the snapshot writer holds per million buildings (~460 MB measured at 5M), with room to spare. */
const HEAP_MB_PER_MILLION = 600;

function fail(message: string): never {
  process.stderr.write(`synth: ${message}\n${USAGE}\n`);
  process.exit(2);
}

/** A whole number written with optional thousands separators (1000000, 1_000_000, 1,000,000). */
function integer(name: string, raw: string): number {
  const digits = raw.replace(/[_,]/g, '');
  if (!/^\d+$/.test(digits)) fail(`--${name} must be a whole number, got "${raw}".`);
  return Number(digits);
}

function bounds(raw: string): Bounds {
  const texts = raw.split(',').map((s) => s.trim());
  // Each a decimal: Number('') is 0, so ",44,26,48" would read as a minLon of 0.
  if (texts.length !== 4 || texts.some((t) => !/^-?\d+(\.\d+)?$/.test(t)))
    fail(`--bounds must be four numbers minLon,minLat,maxLon,maxLat, got "${raw}".`);
  return texts.map(Number) as unknown as Bounds;
}

let values;
try {
  ({ values } = parseArgsOnce({
    strict: true,
    allowPositionals: false,
    options: {
      seed: { type: 'string', default: '1' },
      buildings: { type: 'string', default: '20000' },
      country: { type: 'string', default: DEFAULT_COUNTRY },
      date: { type: 'string', default: DEFAULT_DATE },
      out: { type: 'string', default: 'snapshots' },
      bounds: { type: 'string' },
      geoparquet: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  }));
} catch (err) {
  fail((err as Error).message);
}
if (values.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
if (values.out.trim() === '') fail('--out must name a folder.');

let options: Parameters<typeof writeSyntheticCountry>[0];
try {
  options = {
    seed: integer('seed', values.seed),
    buildings: integer('buildings', values.buildings),
    country: values.country,
    date: values.date,
    outDir: values.out,
    ...(values.bounds === undefined ? {} : { bounds: bounds(values.bounds) }),
  };
  resolveOptions(options, ['outDir']);
} catch (err) {
  fail((err as Error).message);
}
const { buildings } = options;
const needMb = (buildings / 1e6) * HEAP_MB_PER_MILLION;
const heapMb = getHeapStatistics().heap_size_limit / 2 ** 20;
if (needMb > heapMb) {
  process.stderr.write(
    `synth: warning: ${buildings.toLocaleString('en')} buildings may need ~${Math.ceil(needMb / 1024)} GB of heap, ` +
      `more than this process may use (${Math.floor(heapMb)} MB): set NODE_OPTIONS=--max-old-space-size=${Math.ceil(needMb / 1024) * 1024 + 1024}.\n`,
  );
}

const bar = new cliProgress.SingleBar(
  {
    format: 'synth |{bar}| {percentage}% {value}/{total} buildings | {duration_formatted} elapsed, {eta_formatted} left',
    hideCursor: true,
  },
  cliProgress.Presets.shades_classic,
);
let barOpen = false;
let writing = false;

try {
  const result = await writeSyntheticCountry({
    ...options,
    onProgress(done) {
      if (writing) return;
      if (!barOpen) {
        bar.start(buildings, 0);
        barOpen = true;
      }
      bar.update(done);
      if (done === buildings) {
        bar.stop();
        writing = true;
        process.stderr.write('synth: ordering rows and writing the file...\n');
      }
    },
  });
  const maxRssMb = process.resourceUsage().maxRSS / 1024;
  const lines: [string, string][] = [
    ['path', result.path],
    ['rows', result.rows.toLocaleString('en')],
    ['bytes', `${result.bytes.toLocaleString('en')} (${(result.bytes / 1e9).toFixed(2)} GB)`],
    ['bytes/building', (result.bytes / Math.max(1, result.rows)).toFixed(1)],
    ['seconds', result.seconds.toFixed(1)],
    ['peak RSS', `${Math.round(maxRssMb).toLocaleString('en')} MB`],
    ['checksum', result.checksum],
  ];
  if (values.geoparquet) {
    const parquet = writeGeoParquet(result.path, result.path.replace(/\.arrow$/, '.parquet'));
    lines.push(['geoparquet', `${parquet.path} (${parquet.bytes.toLocaleString('en')} bytes)`]);
  }
  process.stdout.write(lines.map(([k, v]) => `${k.padEnd(15)} ${v}`).join('\n') + '\n');
} catch (err) {
  if (barOpen && !writing) bar.stop();
  // A system error (an --out that is a file, a full disk) names its path: one line, not a stack.
  if (typeof (err as NodeJS.ErrnoException).syscall !== 'string') throw err;
  process.stderr.write(`synth: ${(err as Error).message}\n`);
  process.exitCode = 1;
}
