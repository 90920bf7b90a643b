/**
 * Builds one country's snapshot from OpenStreetMap and official lists.
 *
 *   npm run build:snapshot -- --country LI --date 2013-08-03 \
 *     --pbf test/fixtures/osm/liechtenstein-2013-08-03.osm.pbf --out snapshots/
 *
 *   npm run build:snapshot -- --country RO --date 2026-11-21 --buildings ro.geojsonseq \
 *     --seismic expertiza-bucuresti.csv --seismic expertiza-iasi.csv --out snapshots/
 *
 * Exit status: 0 built; 1 input unreadable or without a building, or a bad row under --strict; 2 wrong
 * options or an unusable --out; 130 / 143 interrupted (SIGINT / SIGTERM), temporary files removed.
 * Progress goes to stderr, the summary to stdout.
 */
import { existsSync, rmdirSync, rmSync, statSync } from 'node:fs';
import { access, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import cliProgress from 'cli-progress';
import type { BuildResult, Progress } from '../src/build/builder.ts';
import { BadRowError } from '../src/build/bad-rows.ts';
import { makeFolder } from '../src/folders.ts';
import { parseUtcDay } from '../src/ledger/clock.ts';
import { GeoJsonInputError } from '../src/build/geojsonseq.ts';
import { exportPbf, OsmiumError } from '../src/build/osmium.ts';
import { parseSeismicColumns, SEISMIC_PRESETS, SeismicInputError, type SeismicColumns } from '../src/build/seismic.ts';
import { parseArgsOnce } from './args.ts';

const USAGE = `Usage: npm run build:snapshot -- --country CC --date YYYY-MM-DD (--pbf FILE | --buildings FILE) [options]

  --country CC             ISO 3166-1 alpha-2 code of the snapshot, e.g. LI
  --date YYYY-MM-DD        snapshot date
  --pbf FILE               OSM extract; runs osmium export itself (osmium-tool must be installed)
  --buildings FILE         OSM features as GeoJSON or GeoJSON Sequence, e.g. from
                           osmium export -f geojsonseq -a type,id (or --add-unique-id=type_id)
  --addresses FILE         address points from FILE instead of the buildings input
  --pois FILE              points of interest from FILE instead of the buildings input
  --seismic FILE           a Romanian seismic-risk list (CSV); repeatable
  --seismic-columns SPEC   column mapping of the lists: auto (default), a preset
                           (${Object.keys(SEISMIC_PRESETS).join(', ')}), inline JSON or a .json file;
                           once for all lists, or once per --seismic in the same order
  --strict                 stop at the first bad row (default: count bad rows and go on)
  --out PATH               directory (writes PATH/CC/DATE.arrow) or a .arrow file; default snapshots/
  --help                   this text`;

class UsageError extends Error {}

interface Cli {
  country: string;
  date: string;
  pbf?: string;
  buildings?: string;
  addresses?: string;
  pois?: string;
  seismic: { path: string; columns: SeismicColumns | 'auto' }[];
  strict: boolean;
  out: string;
}

function parseCli(argv: string[]): Cli | null {
  let values;
  try {
    ({ values } = parseArgsOnce({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        country: { type: 'string' },
        date: { type: 'string' },
        pbf: { type: 'string' },
        buildings: { type: 'string' },
        addresses: { type: 'string' },
        pois: { type: 'string' },
        seismic: { type: 'string', multiple: true },
        'seismic-columns': { type: 'string', multiple: true },
        strict: { type: 'boolean', default: false },
        out: { type: 'string', default: 'snapshots' },
        help: { type: 'boolean', default: false },
      },
    }));
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (values.help) return null;
  if (!values.country || !/^[A-Z]{2}$/.test(values.country)) throw new UsageError('--country needs a two-letter uppercase code, e.g. --country LI');
  if (!values.date || !/^\d{4}-\d{2}-\d{2}$/.test(values.date)) throw new UsageError('--date needs a date YYYY-MM-DD, e.g. --date 2013-08-03');
  checkDate(values.date);
  if (!values.pbf === !values.buildings) throw new UsageError('give exactly one of --pbf and --buildings');
  const lists = values.seismic ?? [];
  const specs = values['seismic-columns'] ?? [];
  if (specs.length > 0 && lists.length === 0) throw new UsageError('--seismic-columns without --seismic');
  if (specs.length > 1 && specs.length !== lists.length) {
    throw new UsageError(`${specs.length} --seismic-columns for ${lists.length} --seismic lists: give one for all or one per list`);
  }
  let columns: (SeismicColumns | 'auto')[];
  try {
    columns = specs.map(parseSeismicColumns);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  // The server reads the country and the date from a snapshot's path too, and refuses a file whose metadata disagrees.
  if (values.out.endsWith('.arrow')) {
    const day = /^(\d{4}-\d{2}-\d{2})\.arrow$/.exec(basename(values.out))?.[1];
    const country = /^[A-Z]{2}$/.exec(basename(dirname(resolve(values.out))))?.[0];
    if ((day !== undefined && day !== values.date) || (country !== undefined && country !== values.country)) {
      throw new UsageError(`--out ${values.out} names another snapshot than --country ${values.country} --date ${values.date} (the server would refuse it): give <folder>/${values.country}/${values.date}.arrow, or the folder alone`);
    }
  }
  const out = values.out.endsWith('.arrow') ? values.out : join(values.out, values.country, `${values.date}.arrow`);
  return {
    country: values.country,
    date: values.date,
    pbf: values.pbf,
    buildings: values.buildings,
    addresses: values.addresses,
    pois: values.pois,
    seismic: lists.map((path, i) => ({ path, columns: columns[specs.length === 1 ? 0 : i] ?? 'auto' })),
    strict: values.strict,
    out,
  };
}

/**
 * A real calendar day from 2000 to tomorrow (UTC). The server serves a country's latest date:
 * a typo such as 2062 for 2026 would shadow every later build, and Date.parse rolls 02-31 over
 * to March.
 */
function checkDate(date: string): void {
  try {
    parseUtcDay(date);
  } catch {
    throw new UsageError(`--date ${date} is not a day of the calendar`);
  }
  const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
  if (date < '2000-01-01' || date > tomorrow) {
    throw new UsageError(`--date ${date}: a snapshot's date is from 2000-01-01 to tomorrow (${tomorrow}); the server serves each country's latest`);
  }
}

/** Creates the folder of `file` (src/folders.ts: not Node's recursive mkdir, which hangs on some paths); returns what it created. */
function makeOutFolder(file: string): string[] {
  let created: string[];
  try {
    created = makeFolder(dirname(resolve(file)));
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'ENOTDIR') throw new UsageError(`--out: ${e.path} cannot be a folder: part of that path is a file`);
    throw new UsageError(`--out: cannot create the folder ${e.path ?? dirname(resolve(file))} (${e.code ?? e.message})`);
  }
  if (existsSync(file) && statSync(file).isDirectory()) {
    removeEmptyFolders(created);
    throw new UsageError(`--out: ${file} is a folder; the snapshot file would go there`);
  }
  return created;
}

/** Removes the folders makeOutFolder created, deepest first, where a failed build left them empty. */
function removeEmptyFolders(created: readonly string[]): void {
  for (const d of [...created].reverse()) {
    try {
      rmdirSync(d);
    } catch {
      return; // not empty: something else was put there
    }
  }
}

/** The first input that cannot be opened, or null: a typo fails in the first second, not after a long read. */
async function missingInput(cli: Cli): Promise<string | null> {
  const paths = [cli.pbf, cli.buildings, cli.addresses, cli.pois, ...cli.seismic.map((s) => s.path)].filter((p): p is string => !!p);
  for (const p of paths) {
    try {
      await access(p);
    } catch {
      return p;
    }
  }
  return null;
}

function progressBar(): { update: (p: Progress) => void; stop: () => void } {
  const bar = new cliProgress.SingleBar({
    format: '{phase} |{bar}| {percentage}% {value}/{total}',
    stream: process.stderr,
    hideCursor: true,
  }, cliProgress.Presets.shades_classic);
  let started = false;
  let phase = '';
  return {
    update(p) {
      if (!started) {
        bar.start(p.total, p.done, { phase: p.phase });
        started = true;
      } else if (p.phase !== phase) {
        bar.setTotal(p.total);
      }
      phase = p.phase;
      bar.update(p.done, { phase: p.phase });
    },
    stop() {
      if (started) bar.stop();
    },
  };
}

function summary(cli: Cli, r: BuildResult): string {
  const c = r.counts;
  const lines = [
    `Snapshot ${cli.country} ${cli.date} -> ${r.path}`,
    `  rows      ${r.rows} buildings`,
    `  bytes     ${r.bytes} (${r.rows > 0 ? Math.round(r.bytes / r.rows) : 0} per building)`,
    `  seconds   ${r.seconds.toFixed(2)}`,
    `  features  ${c.features} read; ${c.roads} named roads`,
    `  joined    address points ${c.address_points_joined}/${c.address_points}, points of interest ${c.pois_joined}/${c.pois}, ` +
      `seismic rows ${c.seismic_joined}/${c.seismic_rows}`,
    `  address   ${c.with_address} buildings with an address, ${c.with_nearest_road} with only a nearest road`,
    `  bad rows  ${r.bad.reduce((n, b) => n + b.count, 0)}`,
  ];
  for (const b of r.bad) lines.push(`    ${b.reason}: ${b.count}`, ...b.examples.map((e) => `      e.g. ${e}`));
  if (r.notes.length > 0) lines.push('  notes (not errors)');
  for (const n of r.notes) lines.push(`    ${n.reason}: ${n.count}`, ...n.examples.map((e) => `      e.g. ${e}`));
  return lines.join('\n');
}

async function main(): Promise<number> {
  let cli: Cli | null;
  try {
    cli = parseCli(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`build-snapshot: ${(err as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  if (!cli) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const missing = await missingInput(cli);
  if (missing) {
    process.stderr.write(`build-snapshot: ${missing}: no such file\n`);
    return 1;
  }
  let created: string[];
  try {
    created = makeOutFolder(cli.out);
  } catch (err) {
    process.stderr.write(`build-snapshot: ${(err as Error).message}\n`);
    return 2;
  }
  const status = await build(cli, created);
  if (status !== 0) removeEmptyFolders(created);
  return status;
}

async function build(cli: Cli, created: readonly string[]): Promise<number> {
  const bar = progressBar();
  let tmp: string | null = null;
  // Interrupted, nothing is left behind: osmium killed, its export and the half-written file removed.
  const abort = new AbortController();
  const out = cli.out;
  const interrupted = (signal: NodeJS.Signals): void => {
    abort.abort();
    bar.stop();
    rmSync(join(dirname(out), `.${basename(out)}.${process.pid}.tmp`), { force: true }); // the writer's temporary file
    if (tmp) rmSync(tmp, { recursive: true, force: true });
    removeEmptyFolders(created);
    process.stderr.write(`build-snapshot: interrupted (${signal}); its temporary files are removed\n`);
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  try {
    let buildings = cli.buildings!;
    if (cli.pbf) {
      tmp = await mkdtemp(join(tmpdir(), 'edifice-build-'));
      bar.update({ phase: 'osmium export', done: 0, total: 1 });
      buildings = await exportPbf(cli.pbf, tmp, abort.signal);
    }
    // Loaded after the options are checked: the writer pulls in apache-arrow, a second of startup.
    const { buildSnapshot } = await import('../src/build/builder.ts');
    const result = await buildSnapshot({
      country: cli.country,
      snapshotDate: cli.date,
      buildings,
      addresses: cli.addresses,
      pois: cli.pois,
      seismic: cli.seismic,
      strict: cli.strict,
      out: cli.out,
      onProgress: bar.update,
    });
    bar.stop();
    process.stdout.write(`${summary(cli, result)}\n`);
    return 0;
  } catch (err) {
    bar.stop();
    if (err instanceof BadRowError) {
      process.stderr.write(`build-snapshot: stopped at the first bad row (--strict): ${err.message}\n`);
    } else if (err instanceof GeoJsonInputError || err instanceof SeismicInputError || err instanceof OsmiumError || err instanceof RangeError) {
      process.stderr.write(`build-snapshot: ${err.message}\n`);
    } else if (typeof (err as NodeJS.ErrnoException).code === 'string' && (err as NodeJS.ErrnoException).syscall !== undefined) {
      // A system error (a full disk, a folder removed meanwhile): its message names the file.
      process.stderr.write(`build-snapshot: ${(err as Error).message}\n`);
    } else {
      process.stderr.write(`build-snapshot: failed: ${(err as Error).stack ?? err}\n`);
    }
    return 1;
  } finally {
    if (tmp) await rm(tmp, { recursive: true, force: true });
  }
}

process.exitCode = await main();
