/**
 * The fragment cache: the JSON and the MessagePack bytes of a building (a fragment of a page),
 * kept per snapshot row, so that a page of buildings a caller has seen recently costs a copy, not
 * a read of the store and an encoding. A building's JSON (`writeBuildingJson`) or MessagePack
 * costs microseconds to write from the store; a 100-building page from the cache costs its
 * lookups and one copy. Its size is EDIFICE_FRAGMENT_CACHE_MB per serving thread (default 256
 * MiB: bench/README.md, What the operating defaults rest on).
 *
 * The bytes sit in one ring per thread, written in turn and overwritten a lap later, and are
 * found through a table of typed arrays: no object per building, so nothing for the garbage
 * collector. A building asked for again in the oldest quarter of the ring is copied to its head,
 * so that what is asked for often stays, as in an LRU. An LRU of one Buffer per building would
 * turn its memory over every few seconds under load, each evicted Buffer garbage of the old
 * generation, and the workers would run full collections often.
 * A building is copied into the page being written (ByteWriter) as soon as it is found or
 * encoded, so no later write to the ring can reach bytes a page still needs.
 *
 * Keys are numbers: the snapshot's serial (a new one for every store, hot-swapped or with other
 * removals applied), the row, the turnover the request's currency shows (`turnoverView`) and the
 * encoding, so stale bytes are never served.
 */
import { pack } from 'msgpackr';
import { BUILDING_FIELDS, serializeBuilding, writeBuildingJson, type ByteWriter, type Encoding } from '../api/index.ts';
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

export class FragmentCache {
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
  /** Lookups answered from the cache, and those that encoded the building (for /metrics: sizing the cache). */
  hits = 0;
  misses = 0;

  constructor(
    private readonly appUrl: string,
    maxBytes: number,
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
    this.misses++;
    const context = { country: snapshot.country, appUrl: this.appUrl, turnoverCurrency };
    if (encoding === 'json') {
      // Written into the page, then copied into the ring: the page needs the bytes anyway.
      const start = out.length;
      writeBuildingJson(out, snapshot, row, context);
      const n = out.length - start;
      if (n > this.largest) return;
      out.copyTo(this.ring, this.place(n), start, start + n);
      this.keep(first, key, n);
      return;
    }
    const bytes = pack(serializeBuilding(snapshot.fields(row, BUILDING_FIELDS), context));
    if (bytes.length > this.largest) return out.bytes(bytes);
    const from = this.place(bytes.length);
    bytes.copy(this.ring, from);
    this.keep(first, key, bytes.length);
    out.bytes(this.ring, from, from + bytes.length);
  }

  /** Forgets every building (the ring's bytes are left, unreachable) and the counts of hits and misses. */
  clear(): void {
    this.keys.fill(-1);
    this.written = 0;
    this.hits = 0;
    this.misses = 0;
  }

  /** Bytes the cache holds: the ring once it has gone round (each building's bytes, and the gaps at the ends of laps). */
  get size(): number {
    return Math.min(this.written, this.capacity);
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
