/**
 * The quick start's demo: `npm start` on a fresh clone generates a synthetic country into the
 * default, empty snapshots folder and serves it with a demo key (ledger/demo.ts keeps the key).
 * The server writes a marker beside the country it generated, so that a later start knows the
 * folder holds its demo and nothing else. A demo is never made beside real snapshots: a folder
 * with any other snapshot file, or one named by EDIFICE_SNAPSHOTS, is served without one unless
 * EDIFICE_DEMO=1 asks for it (and even then not beside files the server did not generate).
 */
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, type Config } from './config.ts';
import type { Catalog } from './catalog/catalog.ts';
import { queryBuildings } from './query/buildings.ts';
import { writeSyntheticCountry, type WrittenCountry } from './synth/generate.ts';

export const DEMO_SEED = 20261121;
/** In the snapshots folder: the files of the demo country the server generated there, with their sizes. */
export const DEMO_MARKER = '.edifice-demo.json';

/** Snapshot files under `dir` (`CC/YYYY-MM-DD.arrow`) with their sizes; none when the folder is missing. */
function snapshotFiles(dir: string): Map<string, number> {
  const files = new Map<string, number>();
  if (!existsSync(dir)) return files;
  for (const d of readdirSync(dir, { withFileTypes: true })) {
    if (!d.isDirectory() || !/^[A-Z]{2}$/.test(d.name)) continue;
    for (const f of readdirSync(join(dir, d.name))) {
      if (/^\d{4}-\d{2}-\d{2}\.arrow$/.test(f)) files.set(`${d.name}/${f}`, statSync(join(dir, d.name, f)).size);
    }
  }
  return files;
}

/** The files the marker lists; an empty map when there is no marker or it cannot be read. */
function markedFiles(dir: string): Map<string, number> {
  try {
    const marked = JSON.parse(readFileSync(join(dir, DEMO_MARKER), 'utf8')) as { files?: Record<string, number> };
    return new Map(Object.entries(marked.files ?? {}));
  } catch {
    return new Map();
  }
}

export interface DemoPlan {
  /** This start is the demo: it keeps (or makes) the demo workspace and prints its key. */
  demo: boolean;
  /** The demo country is to be generated first (the folder holds no snapshot). */
  generate: boolean;
}

/**
 * Whether this start is a demo. EDIFICE_DEMO `auto` (the default): when EDIFICE_SNAPSHOTS is not
 * set and ./snapshots holds no snapshot, or only the demo country the server generated there.
 * `1`: in EDIFICE_SNAPSHOTS, on the same condition but for the folder's name, else refused.
 * `0`: never.
 */
export function planDemo(config: Config): DemoPlan {
  if (config.demo === 'off') return { demo: false, generate: false };
  const files = snapshotFiles(config.snapshotsDir);
  const eligible = files.size === 0 || onlyDemoFiles(config.snapshotsDir, files);
  if (config.demo === 'on' && !eligible) {
    throw new ConfigError(
      `EDIFICE_DEMO=1, but ${config.snapshotsDir} holds snapshots the server did not generate for the demo: ` +
        'a demo key is never made beside real snapshots (EDIFICE_DEMO accepts 0, 1 or auto; point EDIFICE_SNAPSHOTS at an empty folder for a demo).',
    );
  }
  const demo = eligible && (config.demo === 'on' || !config.snapshotsDirSet);
  return { demo, generate: demo && files.size === 0 };
}

/**
 * The snapshots folder of a running demo holds snapshots the server did not generate (a SIGHUP's
 * rescan may serve them): the demo is over, as at a start, and its key must not open them.
 */
export function demoFolderTaken(config: Config): boolean {
  const marked = markedFiles(config.snapshotsDir);
  return [...snapshotFiles(config.snapshotsDir)].some(([path, bytes]) => marked.get(path) !== bytes);
}

/** The folder holds snapshots, each one the demo's marker lists with the same size. */
function onlyDemoFiles(dir: string, files: ReadonlyMap<string, number>): boolean {
  const marked = markedFiles(dir);
  return files.size > 0 && [...files].every(([path, bytes]) => marked.get(path) === bytes);
}

/** Generates the demo country into the snapshots folder and marks it as the demo's. */
export async function writeDemoCountry(config: Config): Promise<WrittenCountry> {
  const written = await writeSyntheticCountry({ seed: DEMO_SEED, buildings: config.demoBuildings, outDir: config.snapshotsDir });
  const files = Object.fromEntries(snapshotFiles(config.snapshotsDir));
  writeFileSync(join(config.snapshotsDir, DEMO_MARKER), `${JSON.stringify({ generatedBy: 'edifice npm start (demo)', files }, null, 2)}\n`);
  return written;
}

/** A bbox of about 2 km around a dense spot of the first country: it holds demo buildings. */
export function demoBbox(catalog: Catalog): string {
  const view = catalog.view();
  const s = view.snapshots[0];
  if (!s || s.rows === 0) return '9.50,47.10,9.55,47.15';
  const row = s.rows >> 1;
  const lon = s.lon[row];
  const lat = s.lat[row];
  for (const half of [0.01, 0.05, 0.25, 1.4]) {
    const bbox = { minLon: lon - half, minLat: lat - half, maxLon: lon + half, maxLat: lat + half };
    if (queryBuildings(view, { bbox, sort: 'volume', limit: 1, offset: 0 }).total >= 10 || half === 1.4) {
      return [bbox.minLon, bbox.minLat, bbox.maxLon, bbox.maxLat].map((v) => v.toFixed(4)).join(',');
    }
  }
  return '';
}
