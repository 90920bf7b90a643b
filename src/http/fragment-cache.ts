/**
 * The fragment cache: the JSON and the MessagePack bytes of a building (a fragment of a page),
 * kept per snapshot row, so that a page of buildings a caller has seen recently costs a copy, not a read of the
 * store and an encoding. A building's JSON (`writeBuildingJson`) or MessagePack costs
 * microseconds to write from the store; a 100-building page from the cache costs its lookups and
 * one copy. Its size is EDIFICE_FRAGMENT_CACHE_MB per serving thread (default 256 MiB:
 * bench/README.md, What the operating defaults rest on).
 *
 * One store serves every worker thread (`FragmentCacheMemory`, shared memory): a building encoded
 * by one worker is a hit for the others, and is held once. Each thread writes only into its own
 * region of the store, a ring written in turn and overwritten a lap later; every thread reads all
 * of them, through one table of typed arrays: no object per building, so nothing for the garbage
 * collector. A building asked for again in the oldest quarter of its region's lap is copied to
 * the head of the reader's region, so that what is asked for often stays, as in an LRU. An LRU of
 * one Buffer per building would turn its memory over every few seconds under load, each evicted
 * Buffer garbage of the old generation, and the workers would run full collections often.
 *
 * Without locks on the read path: a table slot is written under its own sequence number (odd while
 * written; a writer that finds it odd does not keep its entry), which a reader checks around its
 * reads of the slot; and a region's writer moves its counter past bytes before it overwrites them,
 * so a reader that copied an entry and then finds the counter within a lap of it copied it whole.
 * A building is copied into the page being written (ByteWriter) as soon as it is found or
 * encoded, so no later write to a ring can reach bytes a page still needs.
 *
 * Keys are numbers: the snapshot's serial (a new one for every store, hot-swapped or with other
 * removals applied), the row, the turnover the request's currency shows (`turnoverView`) and the
 * encoding, so stale bytes are never served.
 */
import { pack } from 'msgpackr';
import { BUILDING_FIELDS, copyToShared, serializeBuilding, writeBuildingJson, type ByteWriter, type Encoding } from '../api/index.ts';
import type { Snapshot } from '../catalog/catalog.ts';
import { buildingRows } from '../catalog/building-row.ts';

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

/** Table slots per region counter: each counter on its own cache line, so writers do not contend. */
const COUNTER_STRIDE = 8;

/**
 * The memory of one store of encoded buildings, shared by the threads that serve (one region
 * each, `regionBytes` long): made once by the pool and given to every worker.
 */
export interface FragmentCacheMemory {
  regions: number;
  regionBytes: number;
  ring: ArrayBufferLike;
  /** Per slot: sequence number (Int32), key and position (Float64), length and region (Int32). */
  seq: ArrayBufferLike;
  keys: ArrayBufferLike;
  at: ArrayBufferLike;
  len: ArrayBufferLike;
  region: ArrayBufferLike;
  /** Per region (every COUNTER_STRIDE-th BigInt64): bytes written into it since the start, lap gaps included. */
  written: ArrayBufferLike;
}

/**
 * A store of `regions` regions of `regionBytes` each, with a table sized for them; in plain memory
 * when not `shared` (one thread alone), which its hits copy from at memcpy's speed.
 */
export function fragmentCacheMemory(regionBytes: number, regions: number, shared = true): FragmentCacheMemory {
  const Memory = shared ? SharedArrayBuffer : ArrayBuffer;
  const buckets = 2 ** Math.max(2, Math.ceil(Math.log2((regionBytes * regions) / BYTES_PER_SLOT / WAYS)));
  const slots = buckets * WAYS;
  const memory: FragmentCacheMemory = {
    regions,
    regionBytes,
    ring: new Memory(regionBytes * regions),
    seq: new Memory(slots * 4),
    keys: new Memory(slots * 8),
    at: new Memory(slots * 8),
    len: new Memory(slots * 4),
    region: new Memory(slots * 4),
    written: new Memory(regions * COUNTER_STRIDE * 8),
  };
  new Float64Array(memory.keys).fill(-1);
  return memory;
}

export class FragmentCache {
  private readonly ring: Buffer;
  /** Bytes of one region. */
  private readonly capacity: number;
  /** This thread's region: the only one it writes into. */
  private readonly own: number;
  private readonly base: number;
  /**
   * Per region, bytes written since the start, with the gap left at the end of each lap: the
   * entry written at position p lies at p % capacity of its region and is intact while
   * written <= p + capacity.
   */
  private readonly written: BigInt64Array;
  /** Per slot: sequence number, the key (-1: empty), the entry's position, length and region. */
  private readonly seq: Int32Array;
  private readonly keys: Float64Array;
  private readonly at: Float64Array;
  private readonly len: Int32Array;
  private readonly region: Int32Array;
  private readonly bucketMask: number;
  /** Larger buildings are encoded for each page and not kept: each would push out many others. */
  private readonly largest: number;
  /** This thread's region's counter (it alone writes it), as last stored. */
  private ownWritten: number;
  /** Where this thread's region stood at the last clear (for `size`). */
  private clearedAt = 0;
  /** Lookups answered from the cache, and those that encoded the building (for /metrics: sizing the cache). */
  hits = 0;
  misses = 0;

  /** A store of its own of `memory` bytes (plain memory), or region `region` of a shared one. */
  constructor(
    private readonly appUrl: string,
    memory: number | FragmentCacheMemory,
    region = 0,
  ) {
    const m = typeof memory === 'number' ? fragmentCacheMemory(memory, 1, false) : memory;
    if (!(Number.isInteger(region) && region >= 0 && region < m.regions))
      throw new RangeError(`no region ${region} in a store of ${m.regions}`);
    this.capacity = m.regionBytes;
    this.own = region;
    this.base = region * m.regionBytes;
    this.ring = Buffer.from(m.ring as ArrayBuffer);
    this.written = new BigInt64Array(m.written);
    this.seq = new Int32Array(m.seq);
    this.keys = new Float64Array(m.keys);
    this.at = new Float64Array(m.at);
    this.len = new Int32Array(m.len);
    this.region = new Int32Array(m.region);
    this.bucketMask = this.seq.length / WAYS - 1;
    this.largest = Math.floor(m.regionBytes / 16);
    this.ownWritten = Number(Atomics.load(this.written, region * COUNTER_STRIDE));
    this.clearedAt = this.ownWritten;
  }

  /** Appends the building's bytes in `encoding` to out, its turnover in `turnoverCurrency` when one is given. */
  write(out: ByteWriter, snapshot: Snapshot, row: number, encoding: Encoding, turnoverCurrency?: string): void {
    const view = buildingRows(snapshot).turnoverView(row, turnoverCurrency);
    if (view >= VIEWS) {
      this.misses++;
      const context = { country: snapshot.country, appUrl: this.appUrl, turnoverCurrency };
      if (encoding === 'json') writeBuildingJson(out, snapshot, row, context);
      else out.bytes(pack(serializeBuilding(snapshot.fields(row, BUILDING_FIELDS), context)));
      return;
    }
    const key = ((snapshot.serial * ROW_SPACE + row) * VIEWS + view) * 2 + (encoding === 'json' ? 0 : 1);
    const first = this.bucketOf(key);
    if (this.copyKept(out, first, key)) {
      this.hits++;
      return;
    }
    this.misses++;
    const context = { country: snapshot.country, appUrl: this.appUrl, turnoverCurrency };
    if (encoding === 'json') {
      // Written into the page, then copied into the ring: the page needs the bytes anyway.
      const start = out.length;
      writeBuildingJson(out, snapshot, row, context);
      const n = out.length - start;
      if (n > this.largest) return;
      const pos = this.reserve(n);
      out.copyToShared(this.ring, this.base + (pos % this.capacity), start, start + n);
      this.keep(this.slotFor(first, key), key, pos, n);
      return;
    }
    const bytes = pack(serializeBuilding(snapshot.fields(row, BUILDING_FIELDS), context));
    out.bytes(bytes);
    if (bytes.length > this.largest) return;
    const pos = this.reserve(bytes.length);
    copyToShared(bytes, 0, bytes.length, this.ring, this.base + (pos % this.capacity));
    this.keep(this.slotFor(first, key), key, pos, bytes.length);
  }

  /**
   * Copies the entry of `key` into out, if the table holds it and its bytes are intact; renews it
   * (copied to the head of this thread's region) when found late in its lap.
   */
  private copyKept(out: ByteWriter, first: number, key: number): boolean {
    const { seq, keys, capacity } = this;
    for (let j = first; j < first + WAYS; j++) {
      const s = Atomics.load(seq, j);
      if (keys[j] !== key) continue;
      const r = this.region[j];
      const pos = this.at[j];
      const n = this.len[j];
      // Odd: being written; changed: rewritten while read. Either way the slot's fields may not belong together.
      if (s & 1 || Atomics.load(seq, j) !== s) return false;
      const written = this.writtenOf(r);
      if (written > pos + capacity) return false;
      const from = r * capacity + (pos % capacity);
      const start = out.length;
      out.bytesFromShared(this.ring, from, from + n);
      // Its region's writer moves the counter before it overwrites: within a lap now, the copy is whole.
      if (this.writtenOf(r) > pos + capacity) {
        out.length = start;
        return false;
      }
      if (written - pos > capacity * RENEW_AFTER) {
        // Asked for again late in its lap: copied to the head of this thread's region for another lap, as an LRU would keep it.
        const to = this.reserve(n);
        out.copyToShared(this.ring, this.base + (to % capacity), start, start + n);
        this.keep(j, key, to, n);
      }
      return true;
    }
    return false;
  }

  /** Forgets every building this thread wrote (its region's bytes are left, unreachable) and the counts of hits and misses. */
  clear(): void {
    // Two laps on, lap-aligned: every entry of the region is then stale by the rule readers check.
    const cleared = (Math.floor(this.writtenOf(this.own) / this.capacity) + 2) * this.capacity;
    this.ownWritten = cleared;
    Atomics.store(this.written, this.own * COUNTER_STRIDE, BigInt(cleared));
    this.clearedAt = cleared;
    this.hits = 0;
    this.misses = 0;
  }

  /** Bytes this thread's region holds: the region once it has gone round (each building's bytes, and the gaps at the ends of laps). */
  get size(): number {
    return Math.min(this.writtenOf(this.own) - this.clearedAt, this.capacity);
  }

  /** A region's counter; this thread's own, which only it writes, from a plain copy. */
  private writtenOf(region: number): number {
    if (region === this.own) return this.ownWritten;
    return Number(Atomics.load(this.written, region * COUNTER_STRIDE));
  }

  private bucketOf(key: number): number {
    const lo = key >>> 0;
    const hi = (key / 0x100000000) >>> 0;
    let h = Math.imul(lo ^ Math.imul(hi, 0x9e3779b1), 0x85ebca6b);
    h ^= h >>> 15;
    h = Math.imul(h, 0xc2b2ae35);
    h ^= h >>> 13;
    return (h & this.bucketMask) * WAYS;
  }

  /**
   * The position in this thread's region where n bytes go next (after the last entry, or at the
   * start of the next lap), the counter moved past them before they are written.
   */
  private reserve(n: number): number {
    let pos = this.writtenOf(this.own);
    const off = pos % this.capacity;
    if (off + n > this.capacity) pos += this.capacity - off;
    this.ownWritten = pos + n;
    Atomics.store(this.written, this.own * COUNTER_STRIDE, BigInt(pos + n));
    return pos;
  }

  /** The slot for a new entry in the bucket from `first`: a free or stale one, else the one furthest into its lap. */
  private slotFor(first: number, key: number): number {
    const { keys, at, capacity } = this;
    let slot = first;
    let age = -1;
    for (let j = first; j < first + WAYS; j++) {
      if (keys[j] === -1 || keys[j] === key) return j;
      const a = this.writtenOf(this.region[j]) - at[j];
      if (a > capacity) return j;
      if (a > age) {
        age = a;
        slot = j;
      }
    }
    return slot;
  }

  /** Points slot j at the n bytes of `key` at `pos` of this thread's region; left as it is if another thread is writing it. */
  private keep(j: number, key: number, pos: number, n: number): void {
    const s = Atomics.load(this.seq, j);
    if (s & 1 || Atomics.compareExchange(this.seq, j, s, s + 1) !== s) return;
    this.keys[j] = key;
    this.at[j] = pos;
    this.len[j] = n;
    this.region[j] = this.own;
    Atomics.store(this.seq, j, s + 2);
  }
}
