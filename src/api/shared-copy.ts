/**
 * Byte copies in and out of shared memory, from the addon in `native/` (`shared-copy.cc`, built
 * by `npm install`): the encoded-building store the workers share is a SharedArrayBuffer, and
 * V8 copies to and from one with relaxed moves, byte by byte where the two sides' alignments
 * differ (1,500 bytes at random offsets: ~500 ns, against ~125 ns compiled). Where the addon
 * does not load, or with EDIFICE_KERNELS=js, Buffer's own copy serves.
 */
import { loadAddon } from '../native-addon.ts';

interface Addon {
  /** src[start, end), shared, to dst from at; the shared side is read with relaxed loads. */
  copyFromShared(src: Uint8Array, start: number, end: number, dst: Uint8Array, at: number): void;
  /** src[start, end) to dst from at, shared; the shared side is written with relaxed stores. */
  copyToShared(src: Uint8Array, start: number, end: number, dst: Uint8Array, at: number): void;
}

function load(): Addon | null {
  return process.env.EDIFICE_KERNELS === 'js' ? null : loadAddon<Addon>('shared_copy').addon;
}

const addon = load();

/** Whether the compiled copies serve (false: Buffer's). */
export const sharedCopyCompiled = addon !== null;

/** Copies src[start, end), a view of shared memory, into dst from at. */
export function copyFromShared(src: Buffer, start: number, end: number, dst: Buffer, at: number): void {
  if (addon !== null) addon.copyFromShared(src, start, end, dst, at);
  else src.copy(dst, at, start, end);
}

/** Copies src[start, end) into dst, a view of shared memory, from at. */
export function copyToShared(src: Buffer, start: number, end: number, dst: Buffer, at: number): void {
  if (addon !== null) addon.copyToShared(src, start, end, dst, at);
  else src.copy(dst, at, start, end);
}
