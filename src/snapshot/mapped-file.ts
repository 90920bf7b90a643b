/**
 * Byte ranges of a file mapped from the page cache as SharedArrayBuffers, by the addon in `native/`
 * (built by `npm install`): a snapshot's Arrow file while its store is built (reader.ts), a
 * prepared file's arrays while they are served (prepared.ts). They cost no read and no fresh
 * memory, and the workers share a mapping like any shared buffer. Private and copy-on-write: a
 * write to an array never reaches the file.
 *
 * A mapping sees the file as it is on disk, so the file must never be rewritten in place: snapshots
 * (writer.ts) and prepared files are written beside and renamed over, which leaves a mapped one
 * untouched.
 */
import { loadAddon } from '../native-addon.ts';

interface Addon {
  mapShared(fd: number, offset: number, length: number): SharedArrayBuffer;
  dropPages(buffer: SharedArrayBuffer): boolean;
  hugeShared(length: number): SharedArrayBuffer;
}

let loaded: ReturnType<typeof loadAddon<Addon>> | undefined;

function load(): Addon | null {
  loaded ??= loadAddon<Addon>('mapped');
  return loaded.addon;
}

/** Why arrays cannot be mapped here (the addon did not build or load), or null when they can. */
export function mappingUnavailable(): string | null {
  loaded ??= loadAddon<Addon>('mapped');
  return loaded.why;
}

/** `length` bytes of the open file `fd` from `offset`, as a SharedArrayBuffer over its pages. */
export function mapShared(fd: number, offset: number, length: number): SharedArrayBuffer {
  const a = load();
  if (a === null) throw new Error(mappingUnavailable()!);
  return a.mapShared(fd, offset, length);
}

/**
 * Lets go of the pages of a buffer `mapShared` made, which the process keeps resident until the
 * last thread holding the buffer collects it: for a file read no more, such as an Arrow file once
 * its store is built. The mapping stays, so a late reader still reads the file (its pages fault
 * back in). False, doing nothing, for any other buffer, or without the addon.
 */
export function dropPages(buffer: SharedArrayBuffer): boolean {
  const a = load();
  return a === null ? false : a.dropPages(buffer);
}

/**
 * `length` zeroed bytes of fresh anonymous memory the kernel is asked to back with huge pages
 * (the same addon: native/mapped.cc hugeShared), for the store's large arrays (catalog/shared.ts);
 * null without the addon, or with one built before it had this.
 */
export function hugeShared(length: number): SharedArrayBuffer | null {
  const a = load();
  return typeof a?.hugeShared === 'function' ? a.hugeShared(length) : null;
}
