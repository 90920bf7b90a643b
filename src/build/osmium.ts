/**
 * OpenStreetMap input: `osmium export` of a PBF extract into a GeoJSON Sequence, and the
 * stable source id of each exported feature.
 */
import { spawn } from 'node:child_process';
import { access, open, symlink, writeFile } from 'node:fs/promises';
import { basename, join, resolve as absolute } from 'node:path';
import type { Feature } from './geojsonseq.ts';

/**
 * Export settings: OSM type and id on every feature (stable building ids need them), and
 * closed ways become areas only when tagged building, so a building is one polygon feature,
 * not also a line, while closed highways stay lines for nearest_road.
 */
export const OSMIUM_EXPORT_CONFIG = {
  attributes: { type: true, id: true },
  area_tags: ['building'],
};

/** osmium is missing, or its export failed. */
export class OsmiumError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OsmiumError';
  }
}

/** Whether `path` starts as a PBF file does: a 4-byte big-endian length, then a BlobHeader of type "OSMHeader". */
async function startsLikePbf(path: string): Promise<boolean> {
  const head = Buffer.alloc(15);
  let bytes: number;
  try {
    const file = await open(path, 'r');
    try {
      ({ bytesRead: bytes } = await file.read(head, 0, head.length, 0));
    } finally {
      await file.close();
    }
  } catch (err) {
    throw new OsmiumError(`${path}: cannot read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  // The BlobHeader's first field (tag 0x0a) is its type, a string of 9 bytes; the format caps its length at 64 KiB.
  return (
    bytes === head.length &&
    head.readUInt32BE(0) <= 64 * 1024 &&
    head[4] === 0x0a &&
    head[5] === 9 &&
    head.toString('latin1', 6) === 'OSMHeader'
  );
}

/** Runs `osmium export` on `pbf` into `dir` and returns the GeoJSON Sequence's path. */
export async function exportPbf(pbf: string, dir: string, signal?: AbortSignal): Promise<string> {
  try {
    await access(pbf);
  } catch {
    throw new OsmiumError(`${pbf}: no such file`);
  }
  // osmium tells the format by the name's suffix, and its export fails on another name even with
  // -F pbf ("Could not detect file format", osmium-tool 1.15): a PBF so named is given through a link.
  let input = pbf;
  if (!pbf.endsWith('.pbf')) {
    if (!(await startsLikePbf(pbf))) {
      throw new OsmiumError(
        `${pbf}: not an OSM PBF file: its name does not end in .pbf, and it does not start with a PBF header block (OSMHeader)`,
      );
    }
    input = join(dir, `${basename(pbf)}.osm.pbf`);
    await symlink(absolute(pbf), input);
  }
  const config = join(dir, 'osmium-export.json');
  // Named after the extract, so bad-row messages point at something the user recognises.
  const out = join(dir, `${basename(pbf).replace(/(\.osm)?\.pbf$/, '')}.geojsonseq`);
  await writeFile(config, JSON.stringify(OSMIUM_EXPORT_CONFIG));
  const args = ['export', input, '-c', config, '-f', 'geojsonseq', '-o', out, '--overwrite', '--no-progress'];
  await new Promise<void>((resolve, reject) => {
    // Aborted (the build interrupted), osmium is killed rather than left running alone.
    const child = spawn('osmium', args, { stdio: ['ignore', 'ignore', 'pipe'], signal });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (s: string) => {
      stderr += s;
    });
    child.on('error', (err: NodeJS.ErrnoException) => {
      if (err.name === 'AbortError') return reject(new OsmiumError(`osmium export ${pbf} interrupted`));
      reject(
        new OsmiumError(
          err.code === 'ENOENT' ? 'osmium is not installed (Debian: apt-get install osmium-tool)' : `cannot run osmium: ${err.message}`,
        ),
      );
    });
    child.on('close', (code) => {
      if (code === 0) resolve();
      else reject(new OsmiumError(`osmium export ${pbf} failed (exit ${code}): ${stderr.trim()}`));
    });
  });
  return out;
}

/**
 * `osm:way/123` from osmium's `@type`/`@id` attributes or from its unique ids: `n67`, `w123`,
 * `r45`, or `a<area id>` (closed way w → a 2w, relation r → a 2r+1). Null when the feature has none.
 */
export function osmSourceId(feature: Feature): string | null {
  const p = feature.properties ?? {};
  const type = p['@type'];
  const id = p['@id'];
  if (
    (type === 'node' || type === 'way' || type === 'relation') &&
    (typeof id === 'number' || typeof id === 'string') &&
    /^-?\d+$/.test(String(id))
  ) {
    return `osm:${type}/${id}`;
  }
  const m = typeof feature.id === 'string' ? /^([nwra])(\d+)$/.exec(feature.id) : null;
  if (!m) return null;
  if (m[1] === 'a') {
    const area = BigInt(m[2]);
    return area % 2n === 0n ? `osm:way/${area / 2n}` : `osm:relation/${(area - 1n) / 2n}`;
  }
  return `osm:${{ n: 'node', w: 'way', r: 'relation' }[m[1] as 'n' | 'w' | 'r']}/${m[2]}`;
}

/** A feature's OSM tags: its properties without osmium's `@` attributes, as strings. */
export function osmTags(feature: Feature): Record<string, string> {
  const tags: Record<string, string> = {};
  for (const [k, v] of Object.entries(feature.properties ?? {})) {
    if (k.startsWith('@') || v === null || v === undefined) continue;
    tags[k] = typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v);
  }
  return tags;
}

/** What `osmium fileinfo` says when it knows the extract's date, and where it found it. */
export interface ExtractTimestamp {
  /** ISO 8601 UTC, e.g. `2021-04-21T20:21:46Z`. */
  timestamp: string;
  /** `header`: the replication timestamp the extract was cut at; `newest object`: the latest edit it holds. */
  from: 'header' | 'newest object';
}

/** The parts of `osmium fileinfo -j` read here: the header's options, and with -e the data's time range. */
interface FileInfo {
  header?: { option?: Record<string, unknown> };
  data?: { timestamp?: { last?: unknown } };
}

function fileinfo(pbf: string, args: string[], signal?: AbortSignal): Promise<FileInfo> {
  return new Promise((resolve, reject) => {
    const child = spawn('osmium', ['fileinfo', ...args, '-j', '-F', 'pbf', pbf], { stdio: ['ignore', 'pipe', 'pipe'], signal });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => {
      stdout += s;
    });
    child.stderr.setEncoding('utf8').on('data', (s: string) => {
      stderr += s;
    });
    child.on('error', (err: NodeJS.ErrnoException) => {
      if (err.name === 'AbortError') return reject(new OsmiumError(`osmium fileinfo ${pbf} interrupted`));
      reject(
        new OsmiumError(
          err.code === 'ENOENT' ? 'osmium is not installed (Debian: apt-get install osmium-tool)' : `cannot run osmium: ${err.message}`,
        ),
      );
    });
    child.on('close', (code) => {
      if (code !== 0) return reject(new OsmiumError(`osmium fileinfo ${pbf} failed (exit ${code}): ${stderr.trim()}`));
      try {
        resolve(JSON.parse(stdout));
      } catch {
        reject(new OsmiumError(`osmium fileinfo ${pbf}: unreadable output`));
      }
    });
  });
}

const ISO_SECOND = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

/**
 * The date of an extract: the replication timestamp of its header (`osmosis_replication_timestamp`,
 * else the header's `timestamp`), which extract services set to the moment of the planet's
 * state they cut; without one, the newest object's timestamp, the last edit the file holds
 * (a full read of the file, and a date no later than the true one). Null when neither is known.
 */
export async function extractTimestamp(pbf: string, signal?: AbortSignal): Promise<ExtractTimestamp | null> {
  const header = (await fileinfo(pbf, [], signal)).header?.option ?? {};
  for (const key of ['osmosis_replication_timestamp', 'timestamp']) {
    const value = header[key];
    if (typeof value === 'string' && ISO_SECOND.test(value)) return { timestamp: value, from: 'header' };
  }
  const last = (await fileinfo(pbf, ['-e'], signal)).data?.timestamp?.last;
  return typeof last === 'string' && ISO_SECOND.test(last) ? { timestamp: last, from: 'newest object' } : null;
}
