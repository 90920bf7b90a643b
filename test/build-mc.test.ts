/**
 * The Monaco snapshot built from test/fixtures/osm/monaco-2021-04-21.osm.pbf (a dense city the
 * builder was not written for) and served by a real server on 127.0.0.1. Expected values come
 * from the file read by other tools: osmium's tag filter and OPL text, GDAL (GEOS) for
 * outlines drawn inside others and for points on surfaces; a few ways were looked up by hand
 * with `osmium getid -r <pbf> w890168503 w94399476 r1369193 w890153084 -f opl`.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSnapshot, type BuildResult } from '../src/build/builder.ts';
import { exportPbf } from '../src/build/osmium.ts';
import { buildingId } from '../src/snapshot/building-id.ts';
import { readSnapshot } from '../src/snapshot/reader.ts';
import { startTestServer, workspaceWithKey, type TestServer } from './http-helpers.ts';
import { nestedByGdal, osmiumIds } from './osm-reference.ts';

const PBF = fileURLToPath(new URL('./fixtures/osm/monaco-2021-04-21.osm.pbf', import.meta.url));

/** Tags of every building way and multipolygon, from osmium's OPL text (`%xx%` escapes decoded). */
function buildingTags(): Map<string, Record<string, string>> {
  const opl = execFileSync('osmium', ['tags-filter', PBF, 'w/building!=no', 'r/building!=no', '-R', '-f', 'opl', '-o', '-'], {
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  });
  const out = new Map<string, Record<string, string>>();
  for (const line of opl.split('\n')) {
    if (line === '') continue;
    const fields = line.split(' ');
    const tags: Record<string, string> = {};
    const text = fields.find((f) => f.startsWith('T'))!.slice(1);
    for (const kv of text === '' ? [] : text.split(',')) {
      const [k, v] = kv.split('=').map((s) => s.replace(/%([0-9a-f]+)%/g, (_, hex) => String.fromCodePoint(parseInt(hex, 16))));
      tags[k] = v;
    }
    const type = { w: 'way', r: 'relation' }[fields[0][0]]!;
    if (type === 'relation' && tags.type !== 'multipolygon') continue;
    out.set(`osm:${type}/${fields[0].slice(1)}`, tags);
  }
  return out;
}

let dir: string;
let result: BuildResult;
let nested: [string, string][];
const rows = new Map<string, Record<string, any>>();
let t: TestServer;
let key: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'edifice-build-mc-'));
  const exported = await exportPbf(PBF, dir);
  nested = nestedByGdal(exported, dir);
  mkdirSync(join(dir, 'snapshots', 'MC'), { recursive: true });
  result = await buildSnapshot({
    country: 'MC',
    snapshotDate: '2021-04-21',
    buildings: exported,
    out: join(dir, 'snapshots', 'MC', '2021-04-21.arrow'),
  });
  const { table } = readSnapshot(result.path);
  for (let i = 0; i < table.numRows; i++) {
    const r = table.get(i)!.toJSON() as Record<string, any>;
    rows.set(r.source_id, { ...r, entrances: [...r.entrances].map((e: any) => e.toJSON()), businesses: [...r.businesses] });
  }
  t = await startTestServer(dir, { perKeyPerMinute: 1_000_000, dailyQuota: 1_000_000 });
  key = workspaceWithKey(t.ledger, 1_000_000).key;
});
afterAll(() => {
  t?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('Monaco snapshot', () => {
  it('holds one row per building osmium finds, less the 11 outlines GEOS finds 95% or more inside another', () => {
    const all = osmiumIds(PBF, 'w/building!=no', 'r/building!=no');
    expect(all.length).toBe(1207);
    expect(nested.length).toBe(11);
    const inner = new Set(nested.map(([a]) => a));
    expect(inner.size).toBe(11);
    const expected = all.filter((id) => !inner.has(id)).sort();
    expect([...rows.keys()].sort()).toEqual(expected);
    expect(result.merged).toMatchObject([{ reason: 'nested_outline', count: 11 }]);
    for (const [source, r] of rows) expect(r.building_id).toBe(buildingId(source));
  });

  it('states every height and level count the tags give, the merged ones on the building they repeat', () => {
    const tags = buildingTags();
    const into = new Map(nested);
    const keptId = (id: string) => into.get(id) ?? id;
    const withTag = (key: string) =>
      new Set([...tags].filter(([, t]) => t[key] !== undefined && /^\d+(\.\d+)?$/.test(t[key])).map(([id]) => keptId(id)));
    const heights = withTag('height');
    expect(heights.size).toBe(35);
    const stated = [...rows.values()]
      .filter((r) => r.height_basis === 'stated')
      .map((r) => r.source_id)
      .sort();
    expect(stated).toEqual([...heights].sort());
    const levels = withTag('building:levels');
    expect(
      [...rows.values()]
        .filter((r) => r.floors !== null)
        .map((r) => r.source_id)
        .sort(),
    ).toEqual([...levels].sort());
    // L'Annonciade: height=111.
    expect(rows.get('osm:way/93732628')).toMatchObject({ height_m: 111, height_basis: 'stated' });
  });

  it("merges a building drawn twice: the outer outline keeps its tags and takes the inner one's height, levels and address", () => {
    // w890168503: Santa Monica, addr:street=Boulevard d'Italie, no height; w94399476 inside it: height=16, building:levels=5.
    expect(rows.get('osm:way/890168503')).toMatchObject({
      address: "Boulevard d'Italie",
      height_m: 16,
      height_basis: 'stated',
      floors: 5,
      postal_code: '98000',
    });
    expect(rows.has('osm:way/94399476')).toBe(false);
    // r1369193: building=yes and nothing else; w890153084 inside it: Rue des Lilas 4, 98000 Monte-Carlo.
    expect(rows.get('osm:relation/1369193')).toMatchObject({
      address: 'Rue des Lilas 4',
      postal_code: '98000',
      locality: 'Monte-Carlo',
      locality_basis: 'stated',
      address_evidence: 'address_record',
    });
    expect(rows.get('osm:relation/1369193')!.entrances).toEqual([
      { address: 'Rue des Lilas 4', house_number: '4', postal_code: '98000', source: 'osm:way/890153084' },
    ]);
  });

  it("counts no registered business: the extract's shops and restaurants are listings", () => {
    expect([...rows.values()].every((r) => r.businesses.length === 0)).toBe(true);
  });

  it("serves the snapshot: every building in the extract's box, the tallest first, and a point inside L'Annonciade", async () => {
    const auth = { Authorization: `Bearer ${key}` };
    // The header's box (osmium fileinfo): 7.409205,43.72335,7.448637,43.75169; a margin for outlines crossing it.
    const page = (await (
      await fetch(`${t.base}/buildings?bbox=7.39,43.71,7.46,43.77&sort=height&limit=3`, { headers: auth })
    ).json()) as any;
    expect(page.meta.total).toBe(1207 - 11);
    // height=111 on L'Annonciade (w93732628) and Le Millefiori (w94399978), ties by building_id; then Parc Saint Roman, 108.
    const tallest = [buildingId('osm:way/93732628'), buildingId('osm:way/94399978')].sort();
    expect(page.data.map((b: any) => [b.building_id, b.height.metres])).toEqual([
      [tallest[0], 111],
      [tallest[1], 111],
      [buildingId('osm:way/94452883'), 108],
    ]);
    // A point on L'Annonciade's surface, as GEOS picks one.
    const csv = execFileSync(
      'ogr2ogr',
      [
        '-f',
        'CSV',
        '/vsistdout/',
        PBF,
        '-dialect',
        'SQLite',
        '-sql',
        "SELECT ST_X(ST_PointOnSurface(geometry)) AS x, ST_Y(ST_PointOnSurface(geometry)) AS y FROM multipolygons WHERE osm_way_id = '93732628'",
      ],
      { encoding: 'utf8' },
    );
    const [x, y] = csv.trim().split('\n')[1].split(',').map(Number);
    const at = (await (await fetch(`${t.base}/buildings/at?lat=${y}&lon=${x}&radius_m=1`, { headers: auth })).json()) as any;
    expect(at.data[0]).toMatchObject({ building_id: buildingId('osm:way/93732628'), height: { metres: 111 } });
  });
});
