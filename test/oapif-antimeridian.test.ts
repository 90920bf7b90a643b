/**
 * OGC API – Features reads a bbox whose first longitude is above its third as a box across the
 * antimeridian: its items are the buildings either side, ranked and paged as one list, against
 * the brute-force reference over two small countries by 180°. GET /buildings still asks for two
 * boxes.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeSyntheticCountry } from '../src/synth/generate.ts';
import { ResponseValidator, removeDir, startTestServer, workspaceWithKey, type TestServer } from './http-helpers.ts';
import { decodeSnapshotDir, refQueryBuildings, type RefBuildingsQuery, type RefSnapshot } from './reference/reference.ts';

type J = Record<string, any>;

let dir: string;
let t: TestServer;
let key: string;
let ref: RefSnapshot[];
let validator: ResponseValidator;

// Either side of 180°, by Taveuni; the box reaches 0.02° into each.
const ACROSS = { minLon: 179.98, minLat: -16.83, maxLon: -179.98, maxLat: -16.8 };
const across = `${ACROSS.minLon},${ACROSS.minLat},${ACROSS.maxLon},${ACROSS.maxLat}`;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'edifice-oapif-180-'));
  await writeSyntheticCountry({
    seed: 3,
    buildings: 600,
    country: 'XF',
    bounds: [179.96, -16.84, 179.9995, -16.79],
    outDir: join(dir, 'snapshots'),
  });
  await writeSyntheticCountry({
    seed: 4,
    buildings: 600,
    country: 'XG',
    bounds: [-179.9995, -16.84, -179.96, -16.79],
    outDir: join(dir, 'snapshots'),
  });
  t = await startTestServer(dir, { perKeyPerMinute: 1_000_000, dailyQuota: 1_000_000 });
  validator = new ResponseValidator((await (await fetch(`${t.base}/openapi.json`)).json()) as J);
  key = workspaceWithKey(t.ledger, 1_000_000).key;
  ref = decodeSnapshotDir(join(dir, 'snapshots'));
});

afterAll(() => {
  t?.close();
  if (dir) removeDir(dir);
});

async function get(path: string, k = key): Promise<{ status: number; headers: Headers; body: J }> {
  const res = await fetch(path.startsWith('http') ? path : `${t.base}${path}`, { headers: { Authorization: `Bearer ${k}` } });
  const body = (await res.json()) as J;
  if (res.status === 200) expect(validator.problems('/collections/{collectionId}/items', res.status, res.headers, body)).toEqual([]);
  return { status: res.status, headers: res.headers, body };
}

/** Every feature id of the items from `first`, following the next links. */
async function allItems(first: string): Promise<{ ids: string[]; matched: unknown; lons: number[] }> {
  const ids: string[] = [];
  const lons: number[] = [];
  let matched: unknown;
  let next: string | null = first;
  for (let pages = 0; next !== null && pages < 100; pages++) {
    const r = await get(next);
    expect(r.status, next).toBe(200);
    matched ??= r.body.numberMatched;
    for (const f of r.body.features) {
      ids.push(f.id);
      lons.push(f.properties.longitude);
    }
    next = r.body.links.find((l: J) => l.rel === 'next')?.href ?? null;
  }
  return { ids, matched, lons };
}

const everything = (q: Partial<RefBuildingsQuery>) =>
  refQueryBuildings(ref, { bbox: ACROSS, sort: 'volume', offset: 0, limit: 10_000, ...q } as RefBuildingsQuery);

describe('items with a bbox across the antimeridian', () => {
  it("are the buildings either side, in the reference's order (volume by default), paged to the end, with numberMatched", async () => {
    const want = everything({});
    expect(want.total).toBeGreaterThan(150);
    const got = await allItems(`${t.base}/collections/buildings/items?bbox=${across}&limit=70`);
    expect(got.ids).toEqual(want.ids);
    expect(got.matched).toBe(want.total);
    expect(got.lons.some((x) => x > 179)).toBe(true);
    expect(got.lons.some((x) => x < -179)).toBe(true);
  });

  it('rank by every sort, with filters, at any offset, as the reference does', async () => {
    for (const [sort, extra, q] of [
      ['height', '&min_floors=2', { minFloors: 2 }],
      ['volume', '&category=residential_house,apartment_block', { category: ['residential_house', 'apartment_block'] }],
      ['registered_business_employees', '', {}],
    ] as const) {
      for (const offset of [0, 35]) {
        const r = await get(`/collections/buildings/items?bbox=${across}&sort=${sort}&limit=25&offset=${offset}${extra}`);
        const want = refQueryBuildings(ref, { bbox: ACROSS, sort, offset, limit: 25, ...q } as RefBuildingsQuery);
        expect(
          r.body.features.map((f: J) => f.id),
          `${sort} ${extra} @${offset}`,
        ).toEqual(want.ids);
      }
    }
  });

  it('charge each building once, as any page does', async () => {
    const w = workspaceWithKey(t.ledger, 1000, 'oapif-180');
    const first = await get(`/collections/buildings/items?bbox=${across}&limit=40`, w.key);
    expect(first.headers.get('X-Credits-Charged')).toBe('40');
    const again = await get(`/collections/buildings/items?bbox=${across}&limit=40`, w.key);
    expect(again.headers.get('X-Credits-Charged')).toBe('0');
  });

  it('are taken past 3 degrees of longitude across the line, as any size is; GET /buildings still asks for two boxes', async () => {
    const WIDE = { minLon: 170, minLat: -20, maxLon: -170, maxLat: -10 };
    const wide = await allItems(
      `${t.base}/collections/buildings/items?bbox=${WIDE.minLon},${WIDE.minLat},${WIDE.maxLon},${WIDE.maxLat}&limit=100`,
    );
    const want = refQueryBuildings(ref, { bbox: WIDE, sort: 'volume', offset: 0, limit: 10_000 } as RefBuildingsQuery);
    expect(want.ids.length).toBe(1200);
    expect(wide.ids).toEqual(want.ids);
    expect(wide.matched).toBe(1200);
    const plain = await get(`/buildings?bbox=${across}`);
    expect([plain.status, plain.body.error.parameter]).toEqual([400, 'bbox']);
    expect(plain.body.error.message).toContain('a box across the antimeridian is asked as two boxes');
  });
});
