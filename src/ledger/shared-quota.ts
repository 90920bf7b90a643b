/**
 * The daily quota's counters in shared memory: every authenticated request counts one against its
 * workspace's day, and a write to SQLite for each of them would make every request of every
 * thread queue for the database's one write lock. So the counts live in a table in a
 * SharedArrayBuffer that every thread of the server uses under one Atomics lock (exact across
 * threads), and are written to the ledger file in batches (`pending` / `persisted`) by whoever
 * owns persistence, every fraction of a second and at close: a restart reads them back, a crash
 * loses at most the last batch (a few requests counted in the user's favour, never a charge).
 *
 * Slot: the workspace id (ASCII, up to 32 bytes), the day (days since the epoch), the count, and
 * the count already written. A slot of an earlier day whose count is written is free again.
 */

const ID_BYTES = 32;
const PROBE = 64;
const HEADER = 8;
/** Int32 fields of a slot: day + 1 (0 = empty), count, persisted. */
const META = 3;

export interface QuotaCount {
  workspaceId: string;
  /** Days since 1970-01-01 (UTC). */
  day: number;
  requests: number;
}

export class SharedQuota {
  readonly buffer: SharedArrayBuffer;
  private readonly capacity: number;
  private readonly lock: Int32Array;
  private readonly meta: Int32Array;
  private readonly ids: Uint8Array;
  private readonly key = new Uint8Array(ID_BYTES);

  constructor(capacity = 65_536, buffer?: SharedArrayBuffer) {
    const bytes = HEADER + capacity * (META * 4 + ID_BYTES);
    if (buffer !== undefined && buffer.byteLength !== bytes)
      throw new RangeError(`A quota table of ${capacity} slots takes ${bytes} bytes, got ${buffer.byteLength}.`);
    this.buffer = buffer ?? new SharedArrayBuffer(bytes);
    this.capacity = capacity;
    this.lock = new Int32Array(this.buffer, 0, 1);
    this.meta = new Int32Array(this.buffer, HEADER, capacity * META);
    this.ids = new Uint8Array(this.buffer, HEADER + capacity * META * 4, capacity * ID_BYTES);
  }

  /**
   * Counts one request of `workspaceId` on `day` if fewer than `limit` were counted; `load` gives
   * the count the ledger file holds, read the first time the day is met. Null when the table has
   * no room: the caller counts in the file itself.
   */
  take(workspaceId: string, day: number, limit: number, load: () => number): { ok: boolean; used: number } | null {
    return this.locked(() => {
      const slot = this.slot(workspaceId, day, load, true);
      if (slot < 0) return null;
      const at = slot * META;
      const used = this.meta[at + 1];
      if (used >= limit) return { ok: false, used };
      this.meta[at + 1] = used + 1;
      return { ok: true, used: used + 1 };
    });
  }

  /** The count of the day (from the file when the table has not met it). */
  used(workspaceId: string, day: number, load: () => number): number {
    return this.locked(() => {
      const slot = this.slot(workspaceId, day, load, false);
      return slot < 0 ? load() : this.meta[slot * META + 1];
    });
  }

  /** Counts not yet written to the file. */
  pending(): QuotaCount[] {
    return this.locked(() => {
      const out: QuotaCount[] = [];
      for (let s = 0; s < this.capacity; s++) {
        const at = s * META;
        if (this.meta[at] !== 0 && this.meta[at + 1] > this.meta[at + 2]) {
          out.push({ workspaceId: this.idOf(s), day: this.meta[at] - 1, requests: this.meta[at + 1] });
        }
      }
      return out;
    });
  }

  /** Records that these counts are in the file. */
  persisted(counts: readonly QuotaCount[]): void {
    this.locked(() => {
      for (const c of counts) {
        const s = this.find(c.workspaceId, c.day);
        if (s >= 0) this.meta[s * META + 2] = Math.max(this.meta[s * META + 2], c.requests);
      }
    });
  }

  private locked<T>(fn: () => T): T {
    while (Atomics.compareExchange(this.lock, 0, 0, 1) !== 0) Atomics.wait(this.lock, 0, 1, 1);
    try {
      return fn();
    } finally {
      Atomics.store(this.lock, 0, 0);
      Atomics.notify(this.lock, 0, 1);
    }
  }

  /** Writes the id into `key` (zero-padded); false when it does not fit. */
  private encode(workspaceId: string): boolean {
    if (workspaceId.length > ID_BYTES) return false;
    this.key.fill(0);
    for (let i = 0; i < workspaceId.length; i++) {
      const c = workspaceId.charCodeAt(i);
      if (c === 0 || c > 0x7f) return false;
      this.key[i] = c;
    }
    return true;
  }

  private start(): number {
    let h = 0x811c9dc5;
    for (let i = 0; i < ID_BYTES; i++) h = Math.imul(h ^ this.key[i], 0x01000193);
    return (h >>> 0) % this.capacity;
  }

  private sameId(s: number): boolean {
    const base = s * ID_BYTES;
    for (let i = 0; i < ID_BYTES; i++) if (this.ids[base + i] !== this.key[i]) return false;
    return true;
  }

  private idOf(s: number): string {
    const base = s * ID_BYTES;
    let out = '';
    for (let i = 0; i < ID_BYTES && this.ids[base + i] !== 0; i++) out += String.fromCharCode(this.ids[base + i]);
    return out;
  }

  private find(workspaceId: string, day: number): number {
    if (!this.encode(workspaceId)) return -1;
    const start = this.start();
    for (let k = 0; k < Math.min(PROBE, this.capacity); k++) {
      const s = (start + k) % this.capacity;
      if (this.meta[s * META] === day + 1 && this.sameId(s)) return s;
    }
    return -1;
  }

  /** The slot of (id, day); with `claim`, a new one (counting from `load()`) if there is room. Lock held. */
  private slot(workspaceId: string, day: number, load: () => number, claim: boolean): number {
    if (!this.encode(workspaceId)) return -1;
    const start = this.start();
    let free = -1;
    for (let k = 0; k < Math.min(PROBE, this.capacity); k++) {
      const s = (start + k) % this.capacity;
      const at = s * META;
      const slotDay = this.meta[at] - 1;
      if (slotDay === day && this.sameId(s)) return s;
      // Empty, or of an earlier day and written to the file: reusable.
      if (free < 0 && (this.meta[at] === 0 || (slotDay < day && this.meta[at + 1] === this.meta[at + 2]))) free = s;
    }
    if (!claim || free < 0) return -1;
    const count = load();
    this.ids.set(this.key, free * ID_BYTES);
    this.meta[free * META] = day + 1;
    this.meta[free * META + 1] = count;
    this.meta[free * META + 2] = count;
    return free;
  }
}
