/**
 * The latest openings, in shared memory: written by the one connection of a server that charges
 * (the ledger thread, after each commit), read by every worker thread, so that a worker answers
 * a free page itself whoever's worker opened its buildings, with no round trip to the ledger
 * thread for a building opened through another worker.
 *
 * What a reader may get wrong, and what it may not: an answer of 0 (not known) only sends the page
 * to the ledger thread, which looks in the file; an opening that was never committed would make
 * a page free that should be charged. So a reader may miss an opening being written, but never
 * sees one that was not written.
 *
 * Layout: SEGMENTS open-addressing tables (linear probing) of `slots` slots each, over one
 * SharedArrayBuffer; a slot is nine 32-bit words: its generation's tag, the workspace id packed
 * (3 words: `ws_` and 14 base62 digits, newId's form), the building UUID (4 words) and the
 * opening's time in whole seconds, rounded down (an opening read as up to a second earlier
 * expires up to a second sooner: the page goes to the ledger thread, never free by mistake). Ids
 * of any other form are not kept here. New openings go into the current table; when it is 70%
 * full the oldest one becomes current and is emptied by raising its generation: slots of an
 * earlier generation read as empty, so nothing is cleared and no thread waits. Readers ask the
 * tables from the newest to the oldest. A turnover forgets the oldest table's openings only:
 * SEGMENTS-1 tables' worth stay, where with two tables half of them would go at once, for the
 * same memory.
 *
 * Concurrency: one writer at a time (callers hold the server's write lock), any number of
 * readers, no lock. Every access to the tables is an Atomics operation, so all of them fall in
 * one order (sequential consistency): a reader takes a table's generation, reads a slot tagged
 * with it, then reads the generation again; a slot being rewritten for a newer generation was
 * rewritten after the generation was raised, so a reader that saw any of the new words sees the
 * new generation too, and drops what it read.
 */

import { uuidWords } from './uuid-words.ts';

const WORDS = 9; // tag, workspace (3), building (4), seconds
const MAX_LOAD = 0.7;
/** Tables: each turnover forgets 1/SEGMENTS of the openings held; a missed opening costs SEGMENTS probes. */
export const SEGMENTS = 4;
/** Header words: the current table, then each table's generation, then each one's slots used. */
const CURRENT = 0;
const GENERATION = 1;
const USED = GENERATION + SEGMENTS;
const HEADER_WORDS = USED + SEGMENTS;

const key = new Uint32Array(7);

function base62Digit(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 65 && c <= 90) return c - 55;
  if (c >= 97 && c <= 122) return c - 61;
  return -1;
}

/** The workspace whose id key[0..2] hold (null for none): a page's ids are all of one workspace. */
let keyWorkspace: string | null = null;

/**
 * `ws_` and 14 base62 digits into key[0..2] (5, 5 and 4 digits: each below 62^5 < 2^32), and a
 * lowercase UUID into key[3..6]; false when either has another form.
 */
function parseKey(workspaceId: string, buildingId: string): boolean {
  if (workspaceId !== keyWorkspace) {
    keyWorkspace = null;
    if (
      workspaceId.length !== 17 ||
      workspaceId.charCodeAt(0) !== 119 ||
      workspaceId.charCodeAt(1) !== 115 ||
      workspaceId.charCodeAt(2) !== 95
    )
      return false;
    for (let w = 0, i = 3; w < 3; w++) {
      let value = 0;
      for (const end = w < 2 ? i + 5 : i + 4; i < end; i++) {
        const d = base62Digit(workspaceId.charCodeAt(i));
        if (d < 0) return false;
        value = value * 62 + d;
      }
      key[w] = value;
    }
    keyWorkspace = workspaceId;
  }
  return uuidWords(buildingId, key, 3);
}

function hash(): number {
  let h = 0x9e3779b1;
  for (let i = 0; i < 7; i++) {
    h = Math.imul(h ^ key[i], 0x85ebca6b);
    h ^= h >>> 13;
  }
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

export class SharedOpenings {
  readonly buffer: SharedArrayBuffer;
  private readonly header: Uint32Array;
  private readonly words: Uint32Array;
  private readonly slots: number;

  /** The slots of each table for all of them to fit in `bytes` (the header aside): a power of two, at least 16. */
  static slotsWithin(bytes: number): number {
    let slots = 16;
    while (SEGMENTS * (2 * slots) * WORDS * 4 <= bytes) slots *= 2;
    return slots;
  }

  /** New tables of `slots` slots each (a power of two), or another thread's view of those whose `buffer` is given. */
  constructor(slotsOrBuffer: number | SharedArrayBuffer) {
    const buffer = typeof slotsOrBuffer === 'number' ? undefined : slotsOrBuffer;
    const slots = buffer === undefined ? (slotsOrBuffer as number) : (buffer.byteLength / 4 - HEADER_WORDS) / (SEGMENTS * WORDS);
    if (!Number.isInteger(slots) || slots < 16 || (slots & (slots - 1)) !== 0) {
      throw new RangeError(
        buffer ? 'Not the buffer of a SharedOpenings.' : `A shared openings table has a power of two slots, at least 16; got ${slots}.`,
      );
    }
    this.slots = slots;
    this.buffer = buffer ?? new SharedArrayBuffer((HEADER_WORDS + SEGMENTS * slots * WORDS) * 4);
    this.header = new Uint32Array(this.buffer, 0, HEADER_WORDS);
    this.words = new Uint32Array(this.buffer, HEADER_WORDS * 4);
    if (buffer === undefined) {
      // Generation 0 would match the tag of a slot never written.
      for (let t = 0; t < SEGMENTS; t++) Atomics.store(this.header, GENERATION + t, 1);
    }
  }

  /** The most openings held: 70% of each table (after a turnover, all but one table's worth). */
  get capacity(): number {
    return SEGMENTS * Math.floor(this.slots * MAX_LOAD);
  }

  /**
   * When this workspace last opened this building (ms, rounded down to the second) as far as the
   * tables know, or 0. The newest table is asked first: the times added for a building only go
   * up (the ledger's latest), so one held there is the later; with a clock stepped back it may
   * not be, and an earlier opening only sends a page to the ledger thread sooner. A turnover
   * while the tables are asked may hide an opening (0), never show a wrong one.
   */
  openedAt(workspaceId: string, buildingId: string): number {
    if (!parseKey(workspaceId, buildingId)) return 0;
    const h = hash();
    const current = Atomics.load(this.header, CURRENT);
    for (let age = 0; age < SEGMENTS; age++) {
      const seconds = this.find((current + SEGMENTS - age) % SEGMENTS, h);
      if (seconds > 0) return seconds * 1000;
    }
    return 0;
  }

  /**
   * Records that this workspace opened this building at `at` (ms), if later than the time known.
   * One writer at a time: the caller holds the server's write lock.
   */
  add(workspaceId: string, buildingId: string, at: number): void {
    const seconds = Math.floor(at / 1000);
    if (!(seconds > 0 && seconds < 2 ** 32) || !parseKey(workspaceId, buildingId)) return;
    const h = hash();
    const words = this.words;
    const mask = this.slots - 1;
    for (;;) {
      const table = Atomics.load(this.header, CURRENT);
      const generation = Atomics.load(this.header, GENERATION + table);
      const base = table * this.slots * WORDS;
      for (let slot = h & mask; ; slot = (slot + 1) & mask) {
        const s = base + slot * WORDS;
        if (Atomics.load(words, s) === generation) {
          if (this.matches(s)) {
            if (seconds > Atomics.load(words, s + 8)) Atomics.store(words, s + 8, seconds);
            return;
          }
          continue;
        }
        const used = Atomics.load(this.header, USED + table);
        if (used + 1 > this.slots * MAX_LOAD) break; // full: the oldest table takes over
        for (let i = 0; i < 7; i++) Atomics.store(words, s + 1 + i, key[i]);
        Atomics.store(words, s + 8, seconds);
        Atomics.store(words, s, generation); // last: readers see the slot whole or not at all
        Atomics.store(this.header, USED + table, used + 1);
        return;
      }
      this.turnOver();
    }
  }

  /** The oldest table becomes current, empty: its generation goes up, so its slots read as free. */
  private turnOver(): void {
    const next = (Atomics.load(this.header, CURRENT) + 1) % SEGMENTS;
    Atomics.store(this.header, USED + next, 0);
    Atomics.add(this.header, GENERATION + next, 1);
    Atomics.store(this.header, CURRENT, next);
  }

  /** The seconds of `key` in `table`, or 0; 0 too when the table turned over while it was read. */
  private find(table: number, h: number): number {
    const words = this.words;
    const mask = this.slots - 1;
    const generation = Atomics.load(this.header, GENERATION + table);
    const base = table * this.slots * WORDS;
    // At most 70% of a table is of one generation, so a probe ends; the bound guards against a
    // table turned over (and refilled) while it was probed.
    for (let slot = h & mask, n = 0; n < this.slots; slot = (slot + 1) & mask, n++) {
      const s = base + slot * WORDS;
      if (Atomics.load(words, s) !== generation) return 0;
      if (!this.matches(s)) continue;
      const seconds = Atomics.load(words, s + 8);
      return Atomics.load(this.header, GENERATION + table) === generation ? seconds : 0;
    }
    return 0;
  }

  private matches(s: number): boolean {
    const words = this.words;
    for (let i = 0; i < 7; i++) if (Atomics.load(words, s + 1 + i) !== key[i]) return false;
    return true;
  }
}
