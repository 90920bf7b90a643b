/**
 * Pre-serialised buildings: the JSON bytes of a building, kept per snapshot row in a bounded
 * LRU so that a page of buildings a caller has seen recently costs a copy, not an encoding.
 * The key holds the snapshot's revision (its checksum and the removals applied), so neither a
 * hot-swapped snapshot nor an approved removal ever serves stale bytes.
 */
import { LRUCache } from 'lru-cache';
import { buildingJson } from '../api/index.ts';
import type { Snapshot } from '../catalog/catalog.ts';

export class BuildingCache {
  private readonly cache: LRUCache<string, Buffer>;

  constructor(private readonly appUrl: string, maxBytes = 64 * 1024 * 1024) {
    this.cache = new LRUCache<string, Buffer>({ maxSize: maxBytes, sizeCalculation: (b) => b.length + 64 });
  }

  json(snapshot: Snapshot, row: number): Buffer {
    const key = `${snapshot.country}.${snapshot.revision}:${row}`;
    let bytes = this.cache.get(key);
    if (bytes === undefined) {
      bytes = Buffer.from(buildingJson(snapshot.record(row), { country: snapshot.country, appUrl: this.appUrl }));
      this.cache.set(key, bytes);
    }
    return bytes;
  }
}
