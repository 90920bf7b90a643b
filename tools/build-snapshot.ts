/**
 * Builds one country's snapshot from OpenStreetMap and official lists.
 *
 *   npm run build:snapshot -- --country LI --date 2013-08-03 \
 *     --pbf ../shared/data/osm/liechtenstein-2013-08-03.osm.pbf --out snapshots/
 *
 *   npm run build:snapshot -- --country RO --date 2026-11-21 --buildings ro.geojsonseq \
 *     --seismic expertiza-bucuresti.csv --seismic expertiza-iasi.csv --out snapshots/
 *
 * Exit status: 0 built; 1 input unreadable, or a bad row under --strict; 2 wrong options.
 * Progress goes to stderr, the summary to stdout.
 */
import { access, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import cliProgress from 'cli-progress';
import type { BuildResult, Progress } from '../src/build/builder.ts';
import { BadRowError } from '../src/build/bad-rows.ts';
import { GeoJsonInputError } from '../src/build/geojsonseq.ts';
import { exportPbf, OsmiumError } from '../src/build/osmium.ts';
import { parseSeismicColumns, SEISMIC_PRESETS, SeismicInputError, type SeismicColumns } from '../src/build/seismic.ts';

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
    ({ values } = parseArgs({
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
  if (!values.date || !/^\d{4}-\d{2}-\d{2}$/.test(values.date) || Number.isNaN(Date.parse(values.date))) {
    throw new UsageError('--date needs a date YYYY-MM-DD, e.g. --date 2013-08-03');
  }
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
  const bar = progressBar();
  let tmp: string | null = null;
  try {
    let buildings = cli.buildings!;
    if (cli.pbf) {
      tmp = await mkdtemp(join(tmpdir(), 'edifice-build-'));
      bar.update({ phase: 'osmium export', done: 0, total: 1 });
      buildings = await exportPbf(cli.pbf, tmp);
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
    } else {
      process.stderr.write(`build-snapshot: failed: ${(err as Error).stack ?? err}\n`);
    }
    return 1;
  } finally {
    if (tmp) await rm(tmp, { recursive: true, force: true });
  }
}

process.exitCode = await main();
