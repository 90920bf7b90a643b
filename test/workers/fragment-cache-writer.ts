/**
 * Worker for http-fragment-cache.test.ts: writes pages of buildings through its region of a shared
 * store, once told to go, and counts the buildings whose bytes differ from those encoded afresh.
 */
import { pack } from 'msgpackr';
import { parentPort, workerData } from 'node:worker_threads';
import { BUILDING_FIELDS, ByteWriter, serializeBuilding } from '../../src/api/index.ts';
import { fromTransfer, type SnapshotTransfer } from '../../src/catalog/transfer.ts';
import { FragmentCache, type FragmentCacheMemory } from '../../src/http/fragment-cache.ts';

const { transfer, memory, region, pages, seed, go } = workerData as {
  transfer: SnapshotTransfer;
  memory: FragmentCacheMemory;
  region: number;
  pages: number;
  seed: number;
  go: SharedArrayBuffer;
};
const APP = 'https://app.example';
const snapshot = fromTransfer(transfer);
const cache = new FragmentCache(APP, memory, region);
const context = { country: snapshot.country, appUrl: APP };
const expected = (row: number, encoding: 'json' | 'msgpack'): Buffer =>
  encoding === 'json'
    ? Buffer.from(JSON.stringify(serializeBuilding(snapshot.record(row), context)))
    : pack(serializeBuilding(snapshot.fields(row, BUILDING_FIELDS), context));
// Every building's expected bytes before the race, so that the threads spend the race in the store.
const want = { json: [] as Buffer[], msgpack: [] as Buffer[] };
for (let row = 0; row < snapshot.rows; row++) {
  want.json.push(expected(row, 'json'));
  want.msgpack.push(expected(row, 'msgpack'));
}
let x = seed;
const next = (): number => {
  x ^= x << 13;
  x ^= x >>> 17;
  x ^= x << 5;
  return (x >>> 0) / 0x100000000;
};
parentPort!.postMessage('ready');
Atomics.wait(new Int32Array(go), 0, 0);
const out = new ByteWriter();
let wrong = 0;
for (let page = 0; page < pages; page++) {
  const encoding = page % 3 === 0 ? 'msgpack' : 'json';
  const start = Math.floor(next() * (snapshot.rows - 300));
  const rows = Array.from({ length: 100 }, () => start + Math.floor(next() * 300));
  out.reset();
  const at: number[] = [];
  for (const row of rows) {
    at.push(out.length);
    cache.write(out, snapshot, row, encoding);
  }
  at.push(out.length);
  const bytes = out.view();
  rows.forEach((row, i) => {
    if (!bytes.subarray(at[i], at[i + 1]).equals(want[encoding][row])) wrong++;
  });
}
parentPort!.postMessage({ wrong, hits: cache.hits, misses: cache.misses });
