/**
 * Builds one country's snapshot from OpenStreetMap and official lists.
 *
 *   npm run build:snapshot -- --country LI --date 2013-08-03 \
 *     --pbf test/fixtures/osm/liechtenstein-2013-08-03.osm.pbf --out snapshots/
 *
 *   npm run build:snapshot -- --country RO --date 2026-11-21 --buildings ro.geojsonseq \
 *     --seismic expertiza-bucuresti.csv --seismic expertiza-iasi.csv --out snapshots/
 *
 * Exit status: 0 built (with its prepared file unless --no-prepared); 1 input unreadable or without a
 * building, a bad row under --strict, or the snapshot written but not its prepared file; 2 wrong
 * options or an unusable --out; 130 / 143 interrupted (SIGINT / SIGTERM), temporary files removed.
 * Progress goes to stderr (a bar on a terminal, else a line every few seconds) with a closing
 * line, the summary to stdout.
 */
import { existsSync, readdirSync, rmdirSync, rmSync, statSync } from 'node:fs';
import { access, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import cliProgress from 'cli-progress';
import type { BuildResult, Progress } from '../src/build/builder.ts';
import { BadRowError } from '../src/build/bad-rows.ts';
import { makeFolder } from '../src/folders.ts';
import { parseUtcDay } from '../src/ledger/clock.ts';
import { GeoJsonInputError } from '../src/build/geojsonseq.ts';
import { BusinessInputError } from '../src/build/business-register.ts';
import { exportPbf, extractTimestamp, OsmiumError } from '../src/build/osmium.ts';
import { parseSeismicColumns, SEISMIC_PRESETS, SeismicInputError, type SeismicColumns } from '../src/build/seismic.ts';
import { parseArgsOnce } from './args.ts';

const USAGE = `Usage: npm run build:snapshot -- --country CC [--date YYYY-MM-DD] (--pbf FILE | --buildings FILE) [options]

  --country CC             ISO 3166-1 alpha-2 code of the snapshot, e.g. LI
  --date YYYY-MM-DD        snapshot date: the day (UTC) of the OpenStreetMap data, also the
                           sources' retrieval date. Default with --pbf: the extract's own date,
                           its header's replication timestamp, else its newest object's
                           timestamp; with --buildings it is required
  --pbf FILE               OSM extract; runs osmium export itself (osmium-tool must be installed)
  --buildings FILE         OSM features as GeoJSON or GeoJSON Sequence, e.g. from
                           osmium export -f geojsonseq -a type,id (or --add-unique-id=type_id)
  --addresses FILE         address points from FILE instead of the buildings input
  --pois FILE              points of interest from FILE instead of the buildings input; they are
                           business listings (an address source), never registered businesses
  --businesses FILE        a business register (CSV, comma-separated, header row), the only source
                           of registered businesses. Columns: registration_id, name, active
                           (true/false) required; financial_year, turnover and currency (ISO 4217),
                           employees (12, 10-19 or 250+); and the place: building (osm:way/123 or a
                           building_id), or lat and lon, or street and house_number (with
                           postal_code, city to narrow the match)
  --seismic FILE           a Romanian seismic-risk list (CSV); repeatable
  --seismic-columns SPEC   column mapping of the lists: auto (default), a preset
                           (${Object.keys(SEISMIC_PRESETS).join(', ')}), inline JSON or a .json file;
                           once for all lists, or once per --seismic in the same order
  --strict                 stop at the first bad row (default: count bad rows and go on)
  --progress-seconds N     when stderr is no terminal, a progress line every N seconds (default 5;
                           0: every step)
  --out PATH               directory (writes PATH/CC/DATE.arrow) or a .arrow file; default snapshots/
  --no-prepared            write no prepared file (CC/DATE.edifice beside the snapshot, the store a
                           server reads in seconds instead of building it from the Arrow file)
  --help                   this text

The builder's rules (nested outlines, localities, the register's columns): docs/operating.md`;

class UsageError extends Error {}

/** The options with the date settled and the snapshot file named. */
type Resolved = Cli & { date: string; out: string };

interface Cli {
  country: string;
  /** Absent: the PBF extract's own date, read before the build. */
  date?: string;
  pbf?: string;
  buildings?: string;
  addresses?: string;
  pois?: string;
  businesses?: string;
  seismic: { path: string; columns: SeismicColumns | 'auto' }[];
  /** Write the prepared file beside the snapshot (not --no-prepared). */
  prepared: boolean;
  strict: boolean;
  progressSeconds: number;
  /** --out as given: a folder, or a .arrow file. */
  outArg: string;
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
        businesses: { type: 'string' },
        'progress-seconds': { type: 'string' },
        seismic: { type: 'string', multiple: true },
        'seismic-columns': { type: 'string', multiple: true },
        strict: { type: 'boolean', default: false },
        'no-prepared': { type: 'boolean', default: false },
        out: { type: 'string', default: 'snapshots' },
        help: { type: 'boolean', default: false },
      },
    }));
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (values.help) return null;
  if (!values.country || !/^[A-Z]{2}$/.test(values.country))
    throw new UsageError('--country needs a two-letter uppercase code, e.g. --country LI');
  if (values.date !== undefined) {
    if (!/^\d{4}-\d{2}-\d{2}$/.test(values.date)) throw new UsageError('--date needs a date YYYY-MM-DD, e.g. --date 2013-08-03');
    checkDate(values.date);
  }
  if (!values.pbf === !values.buildings) throw new UsageError('give exactly one of --pbf and --buildings');
  if (values.date === undefined && !values.pbf)
    throw new UsageError("--date is required with --buildings (a GeoJSON file states no date); with --pbf it defaults to the extract's");
  const progressText = values['progress-seconds'] ?? '5';
  if (!/^\d+(\.\d+)?$/.test(progressText) || Number(progressText) > 3600)
    throw new UsageError('--progress-seconds needs a number of seconds from 0 to 3600');
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
  const cli: Cli = {
    country: values.country,
    date: values.date,
    pbf: values.pbf,
    buildings: values.buildings,
    addresses: values.addresses,
    pois: values.pois,
    businesses: values.businesses,
    seismic: lists.map((path, i) => ({ path, columns: columns[specs.length === 1 ? 0 : i] ?? 'auto' })),
    strict: values.strict,
    prepared: !values['no-prepared'],
    progressSeconds: Number(progressText),
    outArg: values.out,
  };
  if (cli.date !== undefined) outPath(cli, cli.date);
  return cli;
}

/** The snapshot file --out names for this date. */
function outPath(cli: Cli, date: string): string {
  // The server reads the country and the date from a snapshot's path too, and refuses a file whose metadata disagrees.
  const out = cli.outArg;
  if (out.endsWith('.arrow')) {
    const day = /^(\d{4}-\d{2}-\d{2})\.arrow$/.exec(basename(out))?.[1];
    const country = /^[A-Z]{2}$/.exec(basename(dirname(resolve(out))))?.[0];
    if ((day !== undefined && day !== date) || (country !== undefined && country !== cli.country)) {
      throw new UsageError(
        `--out ${out} names another snapshot than --country ${cli.country} --date ${date} (the server would refuse it): give <folder>/${cli.country}/${date}.arrow, or the folder alone`,
      );
    }
    return out;
  }
  return join(out, cli.country, `${date}.arrow`);
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
    throw new UsageError(
      `--date ${date}: a snapshot's date is from 2000-01-01 to tomorrow (${tomorrow}); the server serves each country's latest`,
    );
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
  const paths = [cli.pbf, cli.buildings, cli.addresses, cli.pois, cli.businesses, ...cli.seismic.map((s) => s.path)].filter(
    (p): p is string => !!p,
  );
  for (const p of paths) {
    try {
      await access(p);
    } catch {
      return p;
    }
  }
  return null;
}

interface Reporter {
  update: (p: Progress) => void;
  stop: () => void;
}

/** On a terminal, a bar redrawn in place; otherwise (a log, a pipe) a line every `seconds` and at each new phase. */
function progressReporter(seconds: number): Reporter {
  return process.stderr.isTTY ? progressBar() : progressLines(seconds * 1000);
}

function progressBar(): Reporter {
  const bar = new cliProgress.SingleBar(
    {
      format: '{phase} |{bar}| {percentage}% {value}/{total}',
      stream: process.stderr,
      hideCursor: true,
    },
    cliProgress.Presets.shades_classic,
  );
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

function progressLines(everyMs: number): Reporter {
  const started = performance.now();
  let last = -Infinity;
  let phase = '';
  return {
    update(p) {
      const now = performance.now();
      if (p.phase === phase && now - last < everyMs) return;
      last = now;
      phase = p.phase;
      const share = p.total > 0 ? ` (${Math.min(100, Math.round((p.done / p.total) * 100))}%)` : '';
      process.stderr.write(`build-snapshot: ${((now - started) / 1000).toFixed(1)} s ${p.phase}: ${p.done}/${p.total}${share}\n`);
    },
    stop() {},
  };
}

/** The closing stderr line: what was built, what was refused or merged and why, and how long it took. */
function closingLine(r: BuildResult): string {
  const tally = (list: { reason: string; count: number }[]) =>
    list.length === 0 ? 'none' : `${list.reduce((n, b) => n + b.count, 0)} (${list.map((b) => `${b.reason} ${b.count}`).join(', ')})`;
  return `build-snapshot: built ${r.rows} buildings in ${r.seconds.toFixed(1)} s; refused rows ${tally(r.bad)}; merged rows ${tally(r.merged)}\n`;
}

function summary(cli: Resolved, r: BuildResult): string {
  const c = r.counts;
  const lines = [
    `Snapshot ${cli.country} ${cli.date} -> ${r.path}`,
    `  rows      ${r.rows} buildings`,
    `  bytes     ${r.bytes} (${r.rows > 0 ? Math.round(r.bytes / r.rows) : 0} per building)`,
    `  seconds   ${r.seconds.toFixed(2)}`,
    `  features  ${c.features} read; ${c.roads} named roads`,
    `  joined    address points ${c.address_points_joined}/${c.address_points}, business listings ${c.pois_joined}/${c.pois}, ` +
      `register rows ${c.register_joined}/${c.register_rows}, seismic rows ${c.seismic_joined}/${c.seismic_rows}`,
    `  address   ${c.with_address} buildings with an address, ${c.with_nearest_road} with only a nearest road`,
    `  locality  ${c.locality_stated} stated, ${c.locality_inferred} inferred from the nearest settlement; ${c.locality_spellings_merged} spellings written as another`,
    `  bad rows  ${r.bad.reduce((n, b) => n + b.count, 0)}`,
  ];
  for (const b of r.bad) lines.push(`    ${b.reason}: ${b.count}`, ...b.examples.map((e) => `      e.g. ${e}`));
  if (r.merged.length > 0)
    lines.push(`  merged rows ${r.merged.reduce((n, b) => n + b.count, 0)} (counted once, in the building they repeat)`);
  for (const m of r.merged) lines.push(`    ${m.reason}: ${m.count}`, ...m.examples.map((e) => `      e.g. ${e}`));
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
  let date = cli.date;
  if (date === undefined) {
    let found;
    try {
      found = await extractTimestamp(cli.pbf!);
    } catch (err) {
      process.stderr.write(`build-snapshot: ${(err as Error).message}\n`);
      return 1;
    }
    if (found === null) {
      process.stderr.write(
        `build-snapshot: ${cli.pbf} states no date (no replication timestamp in its header, no timestamp on its objects): give --date\n`,
      );
      return 1;
    }
    date = found.timestamp.slice(0, 10);
    process.stderr.write(
      `build-snapshot: --date ${date}, from the extract's ${found.from === 'header' ? 'header (replication timestamp' : 'newest object (timestamp'} ${found.timestamp})\n`,
    );
  }
  let resolved: Resolved;
  try {
    if (cli.date === undefined) checkDate(date);
    resolved = { ...cli, date, out: outPath(cli, date) };
  } catch (err) {
    process.stderr.write(`build-snapshot: ${(err as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  let created: string[];
  try {
    created = makeOutFolder(resolved.out);
  } catch (err) {
    process.stderr.write(`build-snapshot: ${(err as Error).message}\n`);
    return 2;
  }
  const status = await build(resolved, created);
  if (status !== 0) removeEmptyFolders(created);
  return status;
}

/**
 * The store a server builds from the snapshot, written beside it as its prepared file
 * (src/catalog/prepared.ts): servers of this code then read it instead of building the store.
 */
async function writePreparedFile(path: string, bar: Reporter): Promise<{ path: string; bytes: number; seconds: number }> {
  const started = performance.now();
  const [{ loadSnapshot }, { preparedBeside, writePrepared }, { openSnapshot }] = await Promise.all([
    import('../src/catalog/load.ts'),
    import('../src/catalog/prepared.ts'),
    import('../src/snapshot/reader.ts'),
  ]);
  // Opened, not yet verified: the cold blob's thread starts while the checksum is checked.
  const snapshot = loadSnapshot(
    openSnapshot(path),
    { progress: (done, total, phase) => bar.update({ phase: `prepared file, ${phase}`, done, total }) },
    { coldThread: 'typescript' },
  );
  const at = preparedBeside(path);
  const { bytes } = await writePrepared(at, snapshot);
  return { path: at, bytes, seconds: (performance.now() - started) / 1000 };
}

async function build(cli: Resolved, created: readonly string[]): Promise<number> {
  const bar = progressReporter(cli.progressSeconds);
  let tmp: string | null = null;
  // Interrupted, nothing is left behind: osmium killed, its export and the half-written file removed.
  const abort = new AbortController();
  const out = cli.out;
  const interrupted = (signal: NodeJS.Signals): void => {
    abort.abort();
    bar.stop();
    rmSync(join(dirname(out), `.${basename(out)}.${process.pid}.tmp`), { force: true }); // the writer's temporary file
    const preparedTmp = `${basename(out).replace(/\.arrow$/, '.edifice')}.tmp-${process.pid}-`; // the prepared file's (prepared.ts)
    for (const f of existsSync(dirname(out)) ? readdirSync(dirname(out)) : [])
      if (f.startsWith(preparedTmp)) rmSync(join(dirname(out), f), { force: true });
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
      businesses: cli.businesses,
      seismic: cli.seismic,
      strict: cli.strict,
      out: cli.out,
      onProgress: bar.update,
    });
    let prepared: Awaited<ReturnType<typeof writePreparedFile>> | null = null;
    if (cli.prepared) {
      try {
        prepared = await writePreparedFile(result.path, bar);
      } catch (err) {
        bar.stop();
        process.stderr.write(
          `build-snapshot: the snapshot is written (${result.path}), its prepared file is not: ${(err as Error).message}\n`,
        );
        return 1;
      }
    }
    bar.stop();
    process.stderr.write(closingLine(result));
    process.stdout.write(`${summary(cli, result)}\n`);
    if (prepared) process.stdout.write(`  prepared  ${prepared.path} (${prepared.bytes} bytes, ${prepared.seconds.toFixed(2)} s)\n`);
    return 0;
  } catch (err) {
    bar.stop();
    if (err instanceof BadRowError) {
      process.stderr.write(`build-snapshot: stopped at the first bad row (--strict): ${err.message}\n`);
    } else if (
      err instanceof GeoJsonInputError ||
      err instanceof SeismicInputError ||
      err instanceof BusinessInputError ||
      err instanceof OsmiumError ||
      err instanceof RangeError
    ) {
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
