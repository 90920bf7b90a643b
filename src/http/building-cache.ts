/**
 * Pre-serialised buildings: the JSON and the MessagePack bytes of a building, kept per snapshot
 * row, so that a page of buildings a caller has seen recently costs a copy, not a read of the
 * store and an encoding. A building's JSON (`writeBuildingJson`) or MessagePack costs
 * microseconds to write from the store; a 100-building page from the cache costs its lookups and
 * one copy. Its size is EDIFICE_FRAGMENT_CACHE_MB per serving thread (default 256 MiB:
 * bench/README.md, What the operating defaults rest on).
 *
 * Two levels. Each thread has a ring of its own (half the size), where its pages copy from at
 * memcpy's speed. Behind it, the threads of a pool share one store (`SharedBuildings`, the other
 * half of each thread's size, in shared memory): a building one worker encoded is found there by
 * the others, and copied into their rings, rather than encoded again. Reads from shared memory
 * are not all hits because V8 copies out of a SharedArrayBuffer with a relaxed word-by-word move,
 * ~3x slower than memcpy (bench/README.md, bench:http), yet far cheaper than an encoding.
 *
 * A ring is written in turn and overwritten a lap later, and is found through a table of typed
 * arrays: no object per building, so nothing for the garbage collector. A building asked for
 * again in the oldest quarter of its lap is copied to the head, so that what is asked for often
 * stays, as in an LRU. An LRU of one Buffer per building would turn its memory over every few
 * seconds under load, each evicted Buffer garbage of the old generation, and the workers would
 * run full collections often. A building is copied into the page being written (ByteWriter) as
 * soon as it is found or encoded, so no later write to a ring can reach bytes a page still needs.
 *
 * Keys are numbers: the snapshot's serial (a new one for every store, hot-swapped or with other
 * removals applied), the row, the turnover the request's currency shows (`turnoverView`) and the
 * encoding, so stale bytes are never served.
 */
import { pack } from 'msgpackr';
import { BUILDING_FIELDS, serializeBuilding, writeBuildingJson, type ByteWriter, type Encoding } from '../api/index.ts';
import type { Snapshot } from '../catalog/catalog.ts';
import { turnoverView } from '../catalog/largest-business.ts';

/** Rows per snapshot the keys leave room for (the generator's maximum is 10,000,000). */
const ROW_SPACE = 2 ** 24;
/** Turnover views a key leaves room for (a building in a rarer one is encoded for each page); keys stay exact for 2^20 serials. */
const VIEWS = 2 ** 8;
/** Slots a key may sit in (one bucket); the oldest entry of a full bucket gives way. */
const WAYS = 4;
/** A building found after this share of a lap is copied to the head (the oldest quarter of the ring). */
const RENEW_AFTER = 0.75;
/** One slot per this many bytes of ring: a building's JSON is ~1-2 KB, so ~2-4 slots per building held. */
const BYTES_PER_SLOT = 512;
/** BigInt64s between two regions' counters: each on its own cache line, so writers do not contend. */
const COUNTER_STRIDE = 8;

function bucketOf(key: number, mask: number): number {
  const lo = key >>> 0;
  const hi = (key / 0x100000000) >>> 0;
  let h = Math.imul(lo ^ Math.imul(hi, 0x9e3779b1), 0x85ebca6b);
  h ^= h >>> 15;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 13;
  return (h & mask) * WAYS;
}

/**
 * The memory of the store the threads of a pool share: one region per thread, `regionBytes`
 * long, and one table. Made once by the pool and given to every worker.
 */
export interface SharedBuildingsMemory {
  regions: number;
  regionBytes: number;
  ring: SharedArrayBuffer;
  /** Per slot: sequence number (Int32), key and position (Float64), length and region (Int32). */
  seq: SharedArrayBuffer;
  keys: SharedArrayBuffer;
  at: SharedArrayBuffer;
  len: SharedArrayBuffer;
  region: SharedArrayBuffer;
  /** Per region (every COUNTER_STRIDE-th BigInt64): bytes written into it since the start, lap gaps included. */
  written: SharedArrayBuffer;
}

export function sharedBuildingsMemory(regionBytes: number, regions: number): SharedBuildingsMemory {
  const slots = 2 ** Math.max(2, Math.ceil(Math.log2((regionBytes * regions) / BYTES_PER_SLOT / WAYS))) * WAYS;
  const memory: SharedBuildingsMemory = {
    regions,
    regionBytes,
    ring: new SharedArrayBuffer(regionBytes * regions),
    seq: new SharedArrayBuffer(slots * 4),
    keys: new SharedArrayBuffer(slots * 8),
    at: new SharedArrayBuffer(slots * 8),
    len: new SharedArrayBuffer(slots * 4),
    region: new SharedArrayBuffer(slots * 4),
    written: new SharedArrayBuffer(regions * COUNTER_STRIDE * 8),
  };
  new Float64Array(memory.keys).fill(-1);
  return memory;
}

/**
 * One thread's view of the shared store: it writes only into its own region, and reads every
 * region. Without locks: a table slot is written under its own sequence number (odd while
 * written; a writer that finds it odd leaves it), which a reader checks around its reads of the
 * slot; and a region's writer moves its counter past bytes before it overwrites them, so a
 * reader that copied an entry and then finds the counter within a lap of it copied it whole.
 */
export class SharedBuildings {
  private readonly ring: Buffer;
  private readonly capacity: number;
  private readonly own: number;
  private readonly written: BigInt64Array;
  private readonly seq: Int32Array;
  private readonly keys: Float64Array;
  private readonly at: Float64Array;
  private readonly len: Int32Array;
  private readonly region: Int32Array;
  private readonly bucketMask: number;

  constructor(memory: SharedBuildingsMemory, region: number) {
    if (!(Number.isInteger(region) && region >= 0 && region < memory.regions))
      throw new RangeError(`no region ${region} in a store of ${memory.regions}`);
    this.capacity = memory.regionBytes;
    this.own = region;
    this.ring = Buffer.from(memory.ring);
    this.written = new BigInt64Array(memory.written);
    this.seq = new Int32Array(memory.seq);
    this.keys = new Float64Array(memory.keys);
    this.at = new Float64Array(memory.at);
    this.len = new Int32Array(memory.len);
    this.region = new Int32Array(memory.region);
    this.bucketMask = this.seq.length / WAYS - 1;
  }

  /** Appends the bytes kept for `key` to out; false (out as it was) when none are kept whole. */
  copy(out: ByteWriter, key: number): boolean {
    const { seq, keys, capacity } = this;
    const first = bucketOf(key, this.bucketMask);
    for (let j = first; j < first + WAYS; j++) {
      const s = Atomics.load(seq, j);
      if (keys[j] !== key) continue;
      const r = this.region[j];
      const pos = this.at[j];
      const n = this.len[j];
      // Odd: being written; changed: rewritten while read. Either way the slot's fields may not belong together.
      if (s & 1 || Atomics.load(seq, j) !== s) return false;
      if (this.writtenOf(r) > pos + capacity) return false;
      const from = r * capacity + (pos % capacity);
      const start = out.length;
      out.bytes(this.ring, from, from + n);
      // Its region's writer moves the counter before it overwrites: within a lap now, the copy is whole.
      if (this.writtenOf(r) > pos + capacity) {
        out.length = start;
        return false;
      }
      return true;
    }
    return false;
  }

  /** Keeps out's bytes [start, start + n) as those of `key`, in this thread's region. */
  put(out: ByteWriter, start: number, n: number, key: number): void {
    if (n > this.capacity / 16) return;
    const { keys, at, capacity } = this;
    const first = bucketOf(key, this.bucketMask);
    // A free or stale slot, else the one furthest into its lap.
    let j = first;
    let age = -1;
    for (let k = first; k < first + WAYS; k++) {
      if (keys[k] === -1 || keys[k] === key) {
        j = k;
        break;
      }
      const a = this.writtenOf(this.region[k]) - at[k];
      if (a > capacity) {
        j = k;
        break;
      }
      if (a > age) {
        age = a;
        j = k;
      }
    }
    const s = Atomics.load(this.seq, j);
    if (s & 1 || Atomics.compareExchange(this.seq, j, s, s + 1) !== s) return; // another thread is writing it
    let pos = this.writtenOf(this.own);
    const off = pos % capacity;
    if (off + n > capacity) pos += capacity - off;
    Atomics.store(this.written, this.own * COUNTER_STRIDE, BigInt(pos + n));
    out.copyTo(this.ring, this.own * capacity + (pos % capacity), start, start + n);
    keys[j] = key;
    at[j] = pos;
    this.len[j] = n;
    this.region[j] = this.own;
    Atomics.store(this.seq, j, s + 2);
  }

  /** Forgets what this thread wrote: its counter moves two laps on, lap-aligned, so readers take every entry of its region for stale. */
  clear(): void {
    const cleared = (Math.floor(this.writtenOf(this.own) / this.capacity) + 2) * this.capacity;
    Atomics.store(this.written, this.own * COUNTER_STRIDE, BigInt(cleared));
  }

  private writtenOf(region: number): number {
    return Number(Atomics.load(this.written, region * COUNTER_STRIDE));
  }
}

export class BuildingCache {
  private readonly ring: Buffer;
  private readonly capacity: number;
  /**
   * Bytes written since the start, with the gap left at the end of each lap: the entry written
   * at position p lies at ring[p % capacity] and is intact while written <= p + capacity.
   */
  private written = 0;
  /** Per slot: the key (-1: empty), the entry's position and length. */
  private readonly keys: Float64Array;
  private readonly at: Float64Array;
  private readonly len: Uint32Array;
  private readonly bucketMask: number;
  /** Larger buildings are encoded for each page and not kept: each would push out many others. */
  private readonly largest: number;
  /** Lookups answered from a ring (this thread's or the shared store), and those that encoded the building (for /metrics). */
  hits = 0;
  misses = 0;
  /** Of the hits, those answered from the shared store. */
  sharedHits = 0;

  /** A ring of `maxBytes`; with `shared`, the store the other threads of the pool also write. */
  constructor(
    private readonly appUrl: string,
    maxBytes: number,
    private readonly shared: SharedBuildings | null = null,
  ) {
    this.capacity = maxBytes;
    this.ring = Buffer.allocUnsafeSlow(maxBytes);
    const buckets = 2 ** Math.max(2, Math.ceil(Math.log2(maxBytes / BYTES_PER_SLOT / WAYS)));
    this.keys = new Float64Array(buckets * WAYS).fill(-1);
    this.at = new Float64Array(buckets * WAYS);
    this.len = new Uint32Array(buckets * WAYS);
    this.bucketMask = buckets - 1;
    this.largest = Math.floor(maxBytes / 16);
  }

  /** Appends the building's bytes in `encoding` to out, its turnover in `turnoverCurrency` when one is given. */
  write(out: ByteWriter, snapshot: Snapshot, row: number, encoding: Encoding, turnoverCurrency?: string): void {
    const view = turnoverView(snapshot.business, row, turnoverCurrency);
    if (view >= VIEWS) {
      this.misses++;
      const context = { country: snapshot.country, appUrl: this.appUrl, turnoverCurrency };
      if (encoding === 'json') writeBuildingJson(out, snapshot, row, context);
      else out.bytes(pack(serializeBuilding(snapshot.fields(row, BUILDING_FIELDS), context)));
      return;
    }
    const key = ((snapshot.serial * ROW_SPACE + row) * VIEWS + view) * 2 + (encoding === 'json' ? 0 : 1);
    const first = bucketOf(key, this.bucketMask);
    const { keys, at, len, capacity } = this;
    for (let j = first; j < first + WAYS; j++) {
      if (keys[j] !== key) continue;
      if (this.written <= at[j] + capacity) {
        this.hits++;
        let from = at[j] % capacity;
        if (this.written - at[j] > capacity * RENEW_AFTER) {
          // Asked for again late in its lap: copied to the head for another lap, as an LRU would keep it.
          const n = len[j];
          const to = this.place(n);
          this.ring.copy(this.ring, to, from, from + n); // regions may overlap: copy moves as memmove does
          at[j] = this.written;
          this.written += n;
          from = to;
        }
        out.bytes(this.ring, from, from + len[j]);
        return;
      }
      break;
    }
    const start = out.length;
    if (this.shared?.copy(out, key)) {
      this.hits++;
      this.sharedHits++;
    } else {
      this.misses++;
      const context = { country: snapshot.country, appUrl: this.appUrl, turnoverCurrency };
      if (encoding === 'json') writeBuildingJson(out, snapshot, row, context);
      else out.bytes(pack(serializeBuilding(snapshot.fields(row, BUILDING_FIELDS), context)));
      this.shared?.put(out, start, out.length - start, key);
    }
    // Copied from the page into the ring: the page needs the bytes anyway.
    const n = out.length - start;
    if (n > this.largest) return;
    out.copyTo(this.ring, this.place(n), start, start + n);
    this.keep(first, key, n);
  }

  /** Forgets every building this thread holds or wrote to the shared store (the bytes are left, unreachable) and the counts of lookups. */
  clear(): void {
    this.shared?.clear();
    this.keys.fill(-1);
    this.written = 0;
    this.hits = 0;
    this.sharedHits = 0;
    this.misses = 0;
  }

  /** Bytes the cache holds: the ring once it has gone round (each building's bytes, and the gaps at the ends of laps). */
  get size(): number {
    return Math.min(this.written, this.capacity);
  }

  /** The ring offset where up to n bytes go next: after the last entry, or at the start of the next lap. */
  private place(n: number): number {
    const off = this.written % this.capacity;
    if (off + n <= this.capacity) return off;
    this.written += this.capacity - off;
    return 0;
  }

  /** Records the n bytes just written where `place` said, in the bucket from `first`: a free or stale slot, else the oldest. */
  private keep(first: number, key: number, n: number): void {
    const { keys, at, capacity } = this;
    let slot = first;
    for (let j = first; j < first + WAYS; j++) {
      if (keys[j] === -1 || keys[j] === key || this.written > at[j] + capacity) {
        slot = j;
        break;
      }
      if (at[j] < at[slot]) slot = j;
    }
    keys[slot] = key;
    at[slot] = this.written;
    this.len[slot] = n;
    this.written += n;
  }
}
