/**
 * The catalog: the snapshot each country serves, and hot swap.
 *
 * Snapshots live at `<dir>/<CC>/<YYYY-MM-DD>.arrow`. `Catalog.open` loads the newest valid file
 * of each country. `rescan()` (also on SIGHUP once `watchSignal()` is called) loads any file
 * newer than what a country serves beside the old store, then publishes a new view by
 * replacing one object: a query holds the view it captured and finishes on it, whatever is
 * published meanwhile; the old store is freed when the last such query lets go of it.
 *
 * Approved business removals (`setRemovals`) are applied to every snapshot served and to every
 * snapshot loaded later, and published the same way: at once, without a reload.
 *
 * A store built from an Arrow file is published as soon as all but its cold blob is built and the
 * file's checksum matched (load.ts `loadSnapshotEarly`), reading its cold fields from the file;
 * the same store with its blob is published in its place once encoded, unless a newer snapshot
 * replaced it meanwhile.
 *
 * A file is refused, with a log entry naming the reason, when the reader refuses it (schema
 * version, columns, checksum), when its metadata's country or date differ from its path, or
 * when the store cannot be built from it. The country keeps serving what it had, and the file is
 * not tried again until its modification time or size change.
 *
 * With `prepared` set, a store is read from the snapshot's prepared file (prepared.ts) when one
 * matches it, and one built from the Arrow file is written as a prepared file afterwards, in the
 * background: beside the snapshot, or under `prepared.cacheDir` when its folder is not writable.
 * A prepared file that does not match is logged with the reason and never served. Once a
 * snapshot is served, prepared files no start will read are removed: beside the snapshots those
 * whose Arrow file is gone, in the cache folder those too and those of older snapshots.
 */
import { existsSync, readdirSync, statSync, unlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { makeFolder } from '../folders.ts';
import { SnapshotError, openSnapshot, readSnapshotMetadata } from '../snapshot/reader.ts';
import type { SnapshotMetadata } from '../snapshot/schema.ts';
import { EncodingStopped, loadSnapshotEarly, type LoadOptions, type LoadWatch } from './load.ts';
import { dropPages, mappingUnavailable } from '../snapshot/mapped-file.ts';
import { PreparedRefusal, preparedBeside, readPrepared, writePrepared } from './prepared.ts';
import { applyRemovals, type RemovalSet } from './removals.ts';
import type { Snapshot } from './snapshot.ts';

export type { Snapshot } from './snapshot.ts';
export type { RemovalSet } from './removals.ts';

/** One event of the catalog, at its own level (the server's logger writes it at that level). */
export interface LogEntry {
  level: 'info' | 'warn' | 'error';
  event: string;
  [field: string]: unknown;
}

export interface CatalogOptions {
  /** Receives one entry per loaded or refused file. Default: a JSON line on stderr. */
  log?: (entry: LogEntry) => void;
  /** Businesses hidden from the first load on (see setRemovals). */
  removals?: RemovalSet;
  /** Read and write prepared files (absent: every store is built from its Arrow file, nothing written). */
  prepared?: PreparedOptions;
  /**
   * How a large snapshot's cold blob is encoded beside the rest of its build (load.ts): by a
   * thread from `coldThread` (its bundle, or 'typescript' through tsx's loader, the default), or,
   * with no `coldThread`, on the loading thread itself.
   */
  build?: LoadOptions;
}

export interface PreparedOptions {
  /** Where prepared files go when a snapshot's folder is not writable: `<cacheDir>/<CC>/<date>.edifice`. */
  cacheDir?: string;
}

/**
 * How far below the process a cold blob's thread runs (nice steps) once the checksum is checked:
 * the store serves meanwhile, so the workers answering come first.
 */
const COLD_THREAD_NICE = 10;

/** How often a long build logs its progress. */
const PROGRESS_EVERY_MS = 5_000;

/** The set of snapshots served at one moment, one per country, by country code. Immutable. */
export interface CatalogView {
  readonly snapshots: readonly Snapshot[];
}

/**
 * What the server reads of a catalog: the current view, the per-country report and the removals
 * applied. A `Catalog` loads and owns the snapshots; a worker thread serves a replica of one.
 */
export interface CatalogSource {
  view(): CatalogView;
  report(): CountryReport[];
  removals(): RemovalSet;
}

/** What one load attempt of rescan() did. */
export interface ReloadReport {
  country: string;
  date: string;
  path: string;
  status: 'loaded' | 'refused';
  /** Why the file was refused. */
  reason?: string;
  /** Date the country served before (null: none). */
  previous: string | null;
  buildings?: number;
  loadMs?: number;
}

export interface CountryReport {
  country: string;
  date: string;
  buildings: number;
  bytesHeld: number;
  loadMs: number;
}

interface FileInfo {
  path: string;
  date: string;
  mtimeMs: number;
  size: number;
}

interface Serving extends FileInfo {
  /** As loaded from the file. */
  base: Snapshot;
  /** As served: base with the removals applied. */
  snapshot: Snapshot;
  loadMs: number;
  bytesHeld: number;
  /** Stops the encoding of base's cold blob, if one is still running (load.ts EarlyLoad). */
  stopEncoding(): void;
}

const COUNTRY_DIR = /^[A-Z]{2}$/;
const SNAPSHOT_FILE = /^(\d{4}-\d{2}-\d{2})\.arrow$/;
const PREPARED_FILE = /^(\d{4}-\d{2}-\d{2})\.edifice$/;
/** A prepared file being written (prepared.ts): `<date>.edifice.tmp-<pid>-<n>`, renamed once whole. */
const PREPARED_TEMPORARY = /^\d{4}-\d{2}-\d{2}\.edifice\.tmp-\d+-\d+$/;
/**
 * A temporary prepared file untouched this long was left by a writer that died: a write takes
 * seconds, and another server on the same folder may be writing one now.
 */
const ABANDONED_AFTER_MS = 60 * 60 * 1000;

/**
 * Lets go of the pages of a mapped Arrow file read no more (mapped-file.ts dropPages): resident
 * until every thread that held it collects it, they would count in the process's memory for as
 * long. A reader still holding it reads the file again.
 */
function letGo(mapped: SharedArrayBuffer | null): void {
  if (mapped !== null) dropPages(mapped);
}

function defaultLog(entry: LogEntry): void {
  process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), ...entry })}\n`);
}

export class Catalog implements CatalogSource {
  private current: CatalogView = Object.freeze({ snapshots: Object.freeze([]) });
  private readonly serving = new Map<string, Serving>();
  private readonly refused = new Map<string, { mtimeMs: number; size: number; reason: string }>();
  /** The warning that prepared files are read, not mapped, is given once. */
  private toldNotMapped = false;
  private readonly log: (entry: LogEntry) => void;
  private removalSet: RemovalSet = { businessIds: new Set(), registrationNumbers: new Set() };
  private readonly listeners: ((view: CatalogView) => void)[] = [];
  private readonly prepared: PreparedOptions | null;
  private readonly build: LoadOptions;
  private readonly writes = new Set<Promise<void>>();
  private readonly encodings = new Set<Promise<void>>();

  private constructor(
    readonly dir: string,
    options: CatalogOptions,
  ) {
    this.log = options.log ?? defaultLog;
    this.prepared = options.prepared ?? null;
    this.build = options.build ?? { coldThread: 'typescript' };
    if (options.removals) this.setRemovalSet(options.removals);
  }

  /** Settles once every store served has its cold blob (or failed to encode it), and is published. */
  async whenEncoded(): Promise<void> {
    while (this.encodings.size > 0) await Promise.allSettled([...this.encodings]);
  }

  /** Settles once the prepared files being written, and those of blobs being encoded, have been written (or failed to be). */
  async whenPrepared(): Promise<void> {
    await this.whenEncoded();
    while (this.writes.size > 0) await Promise.allSettled([...this.writes]);
  }

  /** Loads the newest valid snapshot of each country under dir. */
  static open(dir: string, options: CatalogOptions = {}): Catalog {
    const catalog = new Catalog(dir, options);
    catalog.scan();
    return catalog;
  }

  /** The current view. A query captures it once and uses only it. */
  view(): CatalogView {
    return this.current;
  }

  /** Loads the files newer than what each country serves and publishes them at once. */
  rescan(): ReloadReport[] {
    const reports = this.scan();
    const loaded = reports.filter((r) => r.status === 'loaded').length;
    // Said even when nothing changed: an operator who sent SIGHUP learns it was heard.
    this.log({ level: 'info', event: 'snapshot_rescan', loaded, refused: reports.length - loaded, nothingNew: reports.length === 0 });
    return reports;
  }

  /** Rescans on `signal` (SIGHUP by default); returns the function that stops it. */
  watchSignal(signal: NodeJS.Signals = 'SIGHUP'): () => void {
    const handler = (): void => {
      try {
        this.rescan();
      } catch (err) {
        this.log({ level: 'error', event: 'snapshot_rescan_failed', message: (err as Error).message });
      }
    };
    process.on(signal, handler);
    return () => {
      process.off(signal, handler);
    };
  }

  /**
   * Hides every business of `removals` (the whole set approved so far) from every snapshot, now
   * and in every snapshot loaded later, and publishes the result at once.
   */
  setRemovals(removals: RemovalSet): void {
    this.setRemovalSet(removals);
    for (const s of this.serving.values()) s.snapshot = applyRemovals(s.base, this.removalSet);
    this.publish();
    this.log({
      level: 'info',
      event: 'removals_applied',
      businessIds: this.removalSet.businessIds.size,
      registrationNumbers: this.removalSet.registrationNumbers.size,
    });
  }

  /** The removals applied (the last set given). */
  removals(): RemovalSet {
    return this.removalSet;
  }

  private setRemovalSet(removals: RemovalSet): void {
    this.removalSet = { businessIds: new Set(removals.businessIds), registrationNumbers: new Set(removals.registrationNumbers) };
  }

  /** Calls `listener` with every view published from now on (a load, a swap, new removals). */
  onPublish(listener: (view: CatalogView) => void): void {
    this.listeners.push(listener);
  }

  private publish(): void {
    const snapshots = [...this.serving.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, s]) => s.snapshot);
    this.current = Object.freeze({ snapshots: Object.freeze(snapshots) });
    for (const listener of this.listeners) listener(this.current);
  }

  /** Per country: the date served, buildings, bytes the store holds, and how long it took to load. */
  report(): CountryReport[] {
    return [...this.serving.entries()]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([country, s]) => ({
        country,
        date: s.date,
        buildings: s.snapshot.rows,
        bytesHeld: s.bytesHeld,
        loadMs: s.loadMs,
      }));
  }

  private scan(): ReloadReport[] {
    const reports: ReloadReport[] = [];
    let changed = false;
    for (const [country, files] of this.list()) {
      const serving = this.serving.get(country);
      for (const file of files) {
        if (serving && file.date < serving.date) break;
        if (serving && file.date === serving.date && file.mtimeMs === serving.mtimeMs && file.size === serving.size) break;
        const refusal = this.refused.get(file.path);
        if (refusal && refusal.mtimeMs === file.mtimeMs && refusal.size === file.size) continue;
        const report = this.load(country, file, serving);
        reports.push(report);
        if (report.status === 'loaded') {
          changed = true;
          break;
        }
      }
    }
    if (changed) this.publish();
    return reports;
  }

  private load(country: string, file: FileInfo, serving: Serving | undefined): ReloadReport {
    const previous = serving?.date ?? null;
    const started = performance.now();
    let base: Snapshot;
    let schemaVersion: number;
    let from: 'prepared' | 'arrow';
    let phases: Record<string, number | string | undefined>;
    let mapped: boolean | undefined;
    let stopEncoding = (): void => {};
    try {
      const metadata = readSnapshotMetadata(file.path);
      schemaVersion = metadata.schemaVersion;
      this.checkPath(country, file, metadata);
      const prepared = this.prepared ? this.readPrepared(country, file, metadata) : null;
      if (prepared) {
        base = prepared.snapshot;
        from = 'prepared';
        phases = { readMs: prepared.timings.readMs, verifyMs: prepared.timings.verifyMs, mapMs: prepared.timings.mapMs };
        mapped = prepared.timings.mapped;
        if (!mapped && !this.toldNotMapped) {
          this.toldNotMapped = true;
          this.log({ level: 'warn', event: 'prepared_not_mapped', reason: mappingUnavailable(), then: 'reading prepared files instead' });
        }
      } else {
        from = 'arrow';
        this.log({ level: 'info', event: 'snapshot_loading', country, date: file.date, path: file.path, bytes: file.size, from });
        const opened = openSnapshot(file.path);
        this.checkPath(country, file, opened.metadata);
        const watch: LoadWatch = { progress: this.progressLog(country, file.date, started) };
        let encoded: Promise<Snapshot> | null;
        try {
          const options = { coldThreadNice: COLD_THREAD_NICE, checkFirst: serving !== undefined, ...this.build };
          ({ snapshot: base, encoded, stopEncoding } = loadSnapshotEarly(opened, watch, options));
        } catch (err) {
          letGo(opened.mapped);
          if (err instanceof SnapshotError) throw err;
          throw new SnapshotError(file.path, `cannot build the store (${(err as Error).message})`);
        }
        // A store built whole reads the file no more; one that serves early, once its blob is encoded.
        if (!encoded) letGo(opened.mapped);
        phases = {
          readMs: opened.readMs,
          verifyMs: watch.verifyMs,
          verifiedBy: watch.verifiedBy,
          buildMs: watch.buildMs,
          indexMs: watch.indexMs,
          partsBy: watch.partsBy,
          coldMs: watch.coldMs ?? 'encoding: read from the file meanwhile',
          coldBy: watch.coldBy,
          coldNice: watch.coldNice,
        };
        if (encoded) this.encodeLater(country, file, base, encoded, watch);
        else if (this.prepared) this.writePrepared(country, file, base);
      }
    } catch (err) {
      const reason = err instanceof SnapshotError ? err.reason : (err as Error).message;
      this.refused.set(file.path, { mtimeMs: file.mtimeMs, size: file.size, reason });
      this.log({ level: 'warn', event: 'snapshot_refused', country, date: file.date, path: file.path, reason, serving: previous });
      return { country, date: file.date, path: file.path, status: 'refused', reason, previous };
    }
    const snapshot = applyRemovals(base, this.removalSet);
    const loadMs = Math.round(performance.now() - started);
    const bytesHeld = snapshot.bytesHeld;
    // The store replaced no longer needs its cold blob: its encoding would only hold memory and a core.
    serving?.stopEncoding();
    this.serving.set(country, { ...file, base, snapshot, loadMs, bytesHeld, stopEncoding });
    this.refused.delete(file.path);
    if (this.prepared) this.removeStalePrepared(country, file);
    this.log({
      level: 'info',
      event: 'snapshot_loaded',
      country,
      date: file.date,
      path: file.path,
      buildings: snapshot.rows,
      bytesHeld,
      loadMs,
      from,
      mapped,
      phases,
      replaced: previous,
      schemaVersion,
    });
    return { country, date: file.date, path: file.path, status: 'loaded', previous, buildings: snapshot.rows, loadMs };
  }

  private checkPath(country: string, file: FileInfo, metadata: SnapshotMetadata): void {
    if (metadata.country !== country) {
      throw new SnapshotError(file.path, `metadata country ${metadata.country} does not match the path's ${country}`);
    }
    if (metadata.snapshotDate !== file.date) {
      throw new SnapshotError(file.path, `metadata snapshot date ${metadata.snapshotDate} does not match the path's ${file.date}`);
    }
  }

  /** A progress callback for a build that logs at most every PROGRESS_EVERY_MS. */
  private progressLog(country: string, date: string, started: number): NonNullable<LoadWatch['progress']> {
    let last = started;
    return (rows, of, phase) => {
      const now = performance.now();
      if (now - last < PROGRESS_EVERY_MS || rows === of) return;
      last = now;
      const percent = Math.round((100 * rows) / of);
      this.log({
        level: 'info',
        event: 'snapshot_progress',
        country,
        date,
        phase,
        rows,
        of,
        percent,
        elapsedMs: Math.round(now - started),
      });
    };
  }

  /** Where a snapshot's prepared file is looked for and written, in that order. */
  private preparedPaths(country: string, file: FileInfo): string[] {
    const paths = [preparedBeside(file.path)];
    if (this.prepared?.cacheDir) paths.push(join(this.prepared.cacheDir, country, `${file.date}.edifice`));
    return paths;
  }

  /** The store from the first prepared file that matches the snapshot; each one that does not is logged. */
  private readPrepared(country: string, file: FileInfo, metadata: SnapshotMetadata): ReturnType<typeof readPrepared> | null {
    const expected = { checksum: metadata.checksum, country, date: file.date, rows: metadata.rowCount };
    for (const path of this.preparedPaths(country, file)) {
      if (!existsSync(path)) continue;
      try {
        return readPrepared(path, expected, file.path);
      } catch (err) {
        const reason = err instanceof PreparedRefusal ? err.message : `cannot read it (${(err as Error).message})`;
        this.log({
          level: 'warn',
          event: 'prepared_refused',
          country,
          date: file.date,
          path,
          reason,
          then: 'building the store from the Arrow file',
        });
      }
    }
    return null;
  }

  /**
   * Removes the prepared files of `country` that no start will read, each the size of its store:
   * beside the snapshots, those whose Arrow file is gone; in the cache folder, those too and those
   * older than the snapshot now served (`served`); in both, temporary ones abandoned by a writer
   * that died. Mapped ones stay readable until unmapped.
   */
  private removeStalePrepared(country: string, served: FileInfo): void {
    const folder = dirname(served.path);
    const abandoned = (path: string): boolean => {
      try {
        return Date.now() - statSync(path).mtimeMs > ABANDONED_AFTER_MS;
      } catch {
        return false;
      }
    };
    const stale = (dir: string, olderToo: boolean): [path: string, reason: string][] => {
      let names: string[];
      try {
        names = readdirSync(dir);
      } catch {
        return [];
      }
      const out: [string, string][] = [];
      for (const name of names) {
        if (PREPARED_TEMPORARY.test(name)) {
          if (abandoned(join(dir, name))) out.push([join(dir, name), 'a write abandoned over an hour ago']);
          continue;
        }
        const date = PREPARED_FILE.exec(name)?.[1];
        if (date === undefined || date === served.date) continue;
        if (!existsSync(join(folder, `${date}.arrow`))) out.push([join(dir, name), 'its snapshot is gone']);
        else if (olderToo && date < served.date) out.push([join(dir, name), `older than the snapshot served (${served.date})`]);
      }
      return out;
    };
    const cacheDir = this.prepared?.cacheDir;
    const paths = [...stale(folder, false), ...(cacheDir ? stale(join(cacheDir, country), true) : [])];
    for (const [path, reason] of paths) {
      try {
        unlinkSync(path);
        this.log({ level: 'info', event: 'prepared_removed', country, path, reason });
      } catch (err) {
        this.log({ level: 'warn', event: 'prepared_not_removed', country, path, reason: (err as Error).message });
      }
    }
  }

  /**
   * Serves the store with its cold blob once encoded, in place of `served` (the same store reading
   * its cold columns from the file) unless a newer one replaced it meanwhile; then writes its
   * prepared file. Should the blob fail, `served` serves on.
   */
  private encodeLater(country: string, file: FileInfo, served: Snapshot, encoded: Promise<Snapshot>, watch: LoadWatch): void {
    const job = encoded.then(
      (base) => {
        if ('file' in served.parts.cold) letGo(served.parts.cold.file);
        const s = this.serving.get(country);
        if (s?.base !== served) return;
        s.base = base;
        s.snapshot = applyRemovals(base, this.removalSet);
        s.bytesHeld = s.snapshot.bytesHeld;
        this.publish();
        this.log({
          level: 'info',
          event: 'snapshot_cold_encoded',
          country,
          date: file.date,
          coldMs: watch.coldMs,
          coldBy: watch.coldBy,
          coldNice: watch.coldNice,
          bytesHeld: s.bytesHeld,
        });
        if (this.prepared) this.writePrepared(country, file, base);
      },
      (err: Error) => {
        if (err instanceof EncodingStopped) {
          if ('file' in served.parts.cold) letGo(served.parts.cold.file);
          this.log({ level: 'info', event: 'snapshot_cold_dropped', country, date: file.date, reason: err.message });
          return;
        }
        this.log({
          level: 'error',
          event: 'snapshot_cold_failed',
          country,
          date: file.date,
          reason: err.message,
          then: 'its cold columns are read from the Arrow file; no prepared file is written',
        });
      },
    );
    this.encodings.add(job);
    void job.finally(() => this.encodings.delete(job));
  }

  /** Writes the prepared file of a store built from its Arrow file, in the background; never fails the load. */
  private writePrepared(country: string, file: FileInfo, snapshot: Snapshot): void {
    const paths = this.preparedPaths(country, file);
    const job = (async () => {
      for (let k = 0; k < paths.length; k++) {
        const path = paths[k];
        try {
          if (k > 0) makeFolder(dirname(path));
          const { bytes, ms } = await writePrepared(path, snapshot);
          this.log({ level: 'info', event: 'prepared_written', country, date: file.date, path, bytes, writeMs: ms });
          return;
        } catch (err) {
          const then =
            k + 1 < paths.length
              ? `writing it to ${paths[k + 1]}`
              : 'none written: the next start builds the store from the Arrow file again';
          this.log({ level: 'warn', event: 'prepared_not_written', country, date: file.date, path, reason: (err as Error).message, then });
        }
      }
    })();
    this.writes.add(job);
    void job.finally(() => this.writes.delete(job));
  }

  /** Snapshot files by country, newest first. A missing directory is an empty catalog. */
  private list(): Map<string, FileInfo[]> {
    const out = new Map<string, FileInfo[]>();
    let countries: string[];
    try {
      countries = readdirSync(this.dir)
        .filter((d) => COUNTRY_DIR.test(d))
        .sort();
    } catch (err) {
      this.log({ level: 'warn', event: 'snapshot_dir_unreadable', path: this.dir, message: (err as Error).message });
      return out;
    }
    for (const country of countries) {
      const cdir = join(this.dir, country);
      let names: string[];
      try {
        if (!statSync(cdir).isDirectory()) continue;
        names = readdirSync(cdir);
      } catch {
        continue;
      }
      const files: FileInfo[] = [];
      for (const name of names) {
        const m = SNAPSHOT_FILE.exec(name);
        if (!m) continue;
        const path = join(cdir, name);
        try {
          const st = statSync(path);
          if (st.isFile()) files.push({ path, date: m[1], mtimeMs: st.mtimeMs, size: st.size });
        } catch {
          // vanished between readdir and stat
        }
      }
      files.sort((a, b) => (a.date < b.date ? 1 : a.date > b.date ? -1 : 0));
      if (files.length > 0) out.set(country, files);
    }
    return out;
  }
}
