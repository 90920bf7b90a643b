/**
 * Which buildings each workspace opened, and when: the charging connection's memory of the
 * `openings` log (credits.ts keeps it in step with the file under the write lock).
 *
 * Why in memory: building ids are random UUIDs, so a primary key over them in the file would
 * make every new opening dirty its own B-tree page, written to the WAL at each commit, which
 * caps the ledger's single writer far below a log's appends.
 *
 * Layout: an open-addressing hash table (linear probing) over typed arrays, so millions of
 * openings are a few flat buffers the garbage collector never walks. A slot holds the workspace
 * number + 1 (0: empty) and the UUID's four 32-bit words, and the opening's time in ms. Only the
 * latest opening of a building counts (a building is free while now − latest < 365 days).
 * Catalog ids are lowercase UUIDs; any other string (tests, hand-written pages) goes to a Map.
 * Openings older than the 365 days are dropped as the table grows.
 *
 * Growing is spread out: the full table stays readable beside a new one twice its size, and its
 * slots move over a few at each opening added and a chunk after each transaction: rebuilt at
 * once, a table of millions of openings would hold the thread that charges (and so every paid
 * page of the server) for a large fraction of a second.
 */

import { uuidWords } from './uuid-words.ts';

const WORDS = 5; // workspace + 1, then the UUID's words
const MIN_CAPACITY = 1 << 12;
const MAX_LOAD = 0.7;
/** Slots of a table being left moved over at each opening added, and after each transaction. */
const MOVE_PER_ADD = 8;
const MOVE_PER_COMMIT = 4096;

const uuid = new Uint32Array(4);

/** Lowercase UUID into `uuid`'s four words; false for anything else. */
const parseUuid = (id: string): boolean => uuidWords(id, uuid, 0);

function hash(workspace: number): number {
  let h = Math.imul(workspace, 0x9e3779b1) ^ uuid[0];
  h = Math.imul(h ^ (h >>> 15), 0x85ebca6b) ^ uuid[1];
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) ^ uuid[2];
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) ^ uuid[3];
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** The slot of `keys` (capacity mask + 1 slots) holding `uuid` for workspace number + 1 `w1`, or −1. */
function findIn(keys: Uint32Array, mask: number, w1: number): number {
  for (let slot = hash(w1) & mask; ; slot = (slot + 1) & mask) {
    const k = slot * WORDS;
    if (keys[k] === 0) return -1;
    if (keys[k] === w1 && keys[k + 1] === uuid[0] && keys[k + 2] === uuid[1] && keys[k + 3] === uuid[2] && keys[k + 4] === uuid[3])
      return slot;
  }
}

export class OpenedIndex {
  /** The `openings` row id this index has read up to (rows are appended in commit order). */
  lastRowId = 0;
  private readonly workspaces = new Map<string, number>();
  private readonly others = new Map<string, number>();
  private keys = new Uint32Array(MIN_CAPACITY * WORDS);
  private at = new Float64Array(MIN_CAPACITY);
  private used = 0;
  /**
   * While growing: the table being left, read beside the new one until its slots [0, moved)
   * are all in it; openings at or before `leftSince` are dropped on the way.
   */
  private leftKeys: Uint32Array | null = null;
  private leftAt: Float64Array | null = null;
  private moved = 0;
  private leftUsed = 0;
  private leftSince = 0;
  /**
   * Between `begin` and `commit`/`rollback`: what each change replaced (table slot and its time
   * before; non-UUID ids in their own list), so that a transaction that fails leaves the table
   * as it was without reading the file again. Growing meanwhile moves every slot: then the
   * changes cannot be undone, and `rollback` says so.
   */
  private tracking = false;
  private grewMeanwhile = false;
  private undoSlots = new Int32Array(256);
  private undoAt = new Float64Array(256);
  private noted = 0;
  private readonly undoOthers: [string, number | undefined][] = [];
  private undoLastRowId = 0;

  /** Openings held (the latest per workspace and building, expired ones until the table next grows). */
  get size(): number {
    return this.used + this.leftUsed + this.others.size;
  }

  /** Bytes of the table's buffers, and of the one it is growing out of (the Map of non-UUID ids not counted). */
  get bytes(): number {
    return this.keys.byteLength + this.at.byteLength + (this.leftKeys?.byteLength ?? 0) + (this.leftAt?.byteLength ?? 0);
  }

  /** When this workspace last opened this building, or 0 if never (as far as this index knows). */
  openedAt(workspaceId: string, buildingId: string): number {
    const w = this.workspaces.get(workspaceId);
    if (w === undefined) return 0;
    if (!parseUuid(buildingId)) return this.others.get(`${w}\n${buildingId}`) ?? 0;
    const slot = this.find(w + 1);
    const at = slot < 0 ? 0 : this.at[slot];
    if (this.leftKeys === null) return at;
    // Not moved yet, the table being left may hold an earlier or a later time of it.
    const left = findIn(this.leftKeys, this.leftAt!.length - 1, w + 1);
    return left >= this.moved && this.leftAt![left] > at ? this.leftAt![left] : at;
  }

  /**
   * Records an opening at `at` (kept if later than the one known). `since`: openings at or before
   * it are no longer needed (now − 365 days), so growing may drop them.
   */
  add(workspaceId: string, buildingId: string, at: number, since: number): void {
    let w = this.workspaces.get(workspaceId);
    if (w === undefined) {
      w = this.workspaces.size;
      this.workspaces.set(workspaceId, w);
    }
    if (!parseUuid(buildingId)) {
      const key = `${w}\n${buildingId}`;
      const before = this.others.get(key);
      if (!(at <= (before ?? 0))) {
        if (this.tracking) this.undoOthers.push([key, before]);
        this.others.set(key, at);
      }
      return;
    }
    // The openings still to move count too: they all land in this table.
    const growing = this.used + this.leftUsed + 1 > this.at.length * MAX_LOAD;
    if (growing) this.grow(since);
    // Not while a transaction runs: its undo notes the slots it changed, and a move could merge into one.
    const moving = this.leftKeys !== null && !this.tracking;
    if (moving) this.move(MOVE_PER_ADD);
    if (growing || moving) parseUuid(buildingId); // moves used the scratch words
    this.put(w + 1, at);
  }

  /** From here, every change is noted until `commit` (kept) or `rollback` (undone). */
  begin(): void {
    this.tracking = true;
    this.grewMeanwhile = false;
    this.noted = 0;
    this.undoOthers.length = 0;
    this.undoLastRowId = this.lastRowId;
  }

  commit(): void {
    this.tracking = false;
    this.undoOthers.length = 0;
    if (this.leftKeys !== null) this.move(MOVE_PER_COMMIT);
  }

  /** Undoes every change since `begin`; false when the table grew meanwhile (it must be dropped). */
  rollback(): boolean {
    if (!this.tracking) return true;
    this.tracking = false;
    if (this.grewMeanwhile) return false;
    for (let i = this.noted - 1; i >= 0; i--) this.at[this.undoSlots[i]] = this.undoAt[i];
    for (let i = this.undoOthers.length - 1; i >= 0; i--) {
      const [key, at] = this.undoOthers[i];
      if (at === undefined) this.others.delete(key);
      else this.others.set(key, at);
    }
    this.undoOthers.length = 0;
    this.lastRowId = this.undoLastRowId;
    return true;
  }

  /** Room for `n` openings without growing (before reading a file's worth of them). */
  reserve(n: number): void {
    if (n > this.at.length * MAX_LOAD) {
      this.grow(Number.NEGATIVE_INFINITY, n);
      this.move(Infinity);
    }
  }

  /** The slot holding `uuid` for workspace number + 1 `w1`, or −1. */
  private find(w1: number): number {
    return findIn(this.keys, this.at.length - 1, w1);
  }

  /**
   * Starts moving to a table where the openings held (expired ones too: counting the live ones
   * would read the whole table), or `room`, fill 40%; one still being left is finished first.
   */
  private grow(since: number, room = 0): void {
    if (this.tracking) this.grewMeanwhile = true;
    // A table still being left is moved straight into the new one, which is sized for both: moved
    // into the current table instead, a large transaction (no moves while it runs) could fill it.
    const pendingKeys = this.leftKeys;
    const pendingAt = this.leftAt;
    const pendingFrom = this.moved;
    const pendingSince = this.leftSince;
    let capacity = this.at.length;
    while (capacity * 0.4 < Math.max(this.used + this.leftUsed + 1, room)) capacity *= 2;
    this.leftKeys = this.keys;
    this.leftAt = this.at;
    this.leftUsed = this.used;
    this.leftSince = since;
    this.moved = 0;
    this.keys = new Uint32Array(capacity * WORDS);
    this.at = new Float64Array(capacity);
    this.used = 0;
    if (pendingKeys !== null) this.moveSlots(pendingKeys, pendingAt!, pendingFrom, pendingAt!.length, Math.max(pendingSince, since));
  }

  /** Puts the live openings of slots [from, to) of another table into this one; returns how many slots held one. */
  private moveSlots(keys: Uint32Array, at: Float64Array, from: number, to: number, since: number): number {
    const tracking = this.tracking;
    this.tracking = false; // moves are not changes
    let held = 0;
    for (let slot = from; slot < to; slot++) {
      const k = slot * WORDS;
      if (keys[k] === 0) continue;
      held++;
      if (!(at[slot] > since)) continue;
      uuid[0] = keys[k + 1];
      uuid[1] = keys[k + 2];
      uuid[2] = keys[k + 3];
      uuid[3] = keys[k + 4];
      this.put(keys[k], at[slot]);
    }
    this.tracking = tracking;
    return held;
  }

  /** Moves up to n more slots of the table being left into the new one (the later time where both hold one). */
  private move(n: number): void {
    const at = this.leftAt!;
    const end = Math.min(at.length, this.moved + n);
    this.leftUsed -= this.moveSlots(this.leftKeys!, at, this.moved, end, this.leftSince);
    this.moved = end;
    if (end === at.length) {
      this.leftKeys = null;
      this.leftAt = null;
      this.leftUsed = 0;
    }
  }

  private put(w1: number, at: number): void {
    const keys = this.keys;
    const mask = this.at.length - 1;
    for (let slot = hash(w1) & mask; ; slot = (slot + 1) & mask) {
      const k = slot * WORDS;
      if (keys[k] === 0) {
        keys[k] = w1;
        keys[k + 1] = uuid[0];
        keys[k + 2] = uuid[1];
        keys[k + 3] = uuid[2];
        keys[k + 4] = uuid[3];
        // Undone, the key stays with time 0: never opened, as before.
        if (this.tracking) this.noteUndo(slot, 0);
        this.at[slot] = at;
        this.used++;
        return;
      }
      if (keys[k] === w1 && keys[k + 1] === uuid[0] && keys[k + 2] === uuid[1] && keys[k + 3] === uuid[2] && keys[k + 4] === uuid[3]) {
        if (at > this.at[slot]) {
          if (this.tracking) this.noteUndo(slot, this.at[slot]);
          this.at[slot] = at;
        }
        return;
      }
    }
  }

  private noteUndo(slot: number, before: number): void {
    if (this.noted === this.undoSlots.length) {
      const slots = new Int32Array(this.noted * 2);
      slots.set(this.undoSlots);
      this.undoSlots = slots;
      const times = new Float64Array(this.noted * 2);
      times.set(this.undoAt);
      this.undoAt = times;
    }
    this.undoSlots[this.noted] = slot;
    this.undoAt[this.noted++] = before;
  }
}
