/**
 * The addon's mapped files (src/snapshot/mapped-file.ts): a mapping's pages let go of with
 * dropPages leave the process's resident memory, and a later read gives the file's bytes again;
 * any buffer it did not map is left alone. The catalog lets go of an Arrow file's pages once it
 * reads the file no more.
 */
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Catalog } from '../src/catalog/catalog.ts';
import { dropPages, mapShared, mappingUnavailable } from '../src/snapshot/mapped-file.ts';
import { writeSyntheticCountry } from '../src/synth/generate.ts';

let dir: string;
const MIB = 2 ** 20;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'edifice-mapped-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** This process's resident pages of mapped files, in bytes (Linux). */
function residentFileBytes(): number {
  return Number(/RssFile:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))![1]) * 1024;
}

const digest = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

describe.runIf(process.platform === 'linux')('a mapped file', () => {
  it('lets go of its pages on dropPages, and reads the same bytes after', () => {
    // The addon builds with npm install; without it, prepared files are read instead (and this fails).
    expect(mappingUnavailable()).toBeNull();
    const path = join(dir, 'pages.bin');
    const bytes = new Uint8Array(64 * MIB);
    for (let i = 0; i < bytes.length; i += 4096) bytes[i] = (i / 4096) % 251;
    writeFileSync(path, bytes);
    const fd = openSync(path, 'r');
    const mapped = mapShared(fd, 4096, bytes.length - 4096);
    closeSync(fd);
    const view = new Uint8Array(mapped);
    const before = residentFileBytes();
    expect(digest(view)).toBe(digest(bytes.subarray(4096)));
    const touched = residentFileBytes();
    expect(touched - before).toBeGreaterThan(48 * MIB);

    expect(dropPages(mapped)).toBe(true);
    expect(touched - residentFileBytes()).toBeGreaterThan(48 * MIB);
    // Read again from the file, as it is.
    expect(digest(view)).toBe(digest(bytes.subarray(4096)));
  });

  it('leaves alone a buffer it did not map', () => {
    const own = new SharedArrayBuffer(1 * MIB);
    new Uint8Array(own).fill(7);
    expect(dropPages(own)).toBe(false);
    expect(new Uint8Array(own).every((b) => b === 7)).toBe(true);
  });

  it('is let go of by the catalog once the store is built from it, or its blob encoded', async () => {
    const source = await writeSyntheticCountry({ seed: 3, buildings: 60_000, outDir: join(dir, 'source') });
    const folder = join(dir, 'snapshots');
    mkdirSync(join(folder, 'XA'), { recursive: true });
    copyFileSync(source.path, join(folder, 'XA', '2026-11-21.arrow'));
    const fileBytes = readFileSync(source.path).byteLength;
    for (const build of [{}, { coldThread: 'typescript' as const, coldThreadMinRows: 0 }]) {
      const before = residentFileBytes();
      const catalog = Catalog.open(folder, { log: () => {}, build });
      await catalog.whenEncoded();
      expect(catalog.view().snapshots[0].coldEncoded).toBe(true);
      // The file was read whole (checksum, build); what stays resident of it is well under its size.
      expect(residentFileBytes() - before, JSON.stringify(build)).toBeLessThan(fileBytes / 4);
    }
  });
});
