/**
 * GET /buildings/at in the engine: exact distances from a point to hand-made outlines (inside,
 * on an edge, near a corner, inside a hole, another polygon of the same building), radius
 * inclusion, nearest first with ties by building_id, limit, and two countries.
 *
 * Expected distances are worked out in the local equirectangular frame of the query point:
 * x = dLon * cos(lat0) * M, y = dLat * M, with M = R * pi / 180 metres per degree.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Catalog, type CatalogView } from '../src/catalog/catalog.ts';
import { queryPoint } from '../src/query/point.ts';
import { QueryError } from '../src/query/types.ts';
import { buildingId } from '../src/snapshot/ids.ts';
import { blankRecord } from '../src/snapshot/record.ts';
import type { Polygon } from '../src/snapshot/schema.ts';
import { SnapshotWriter } from '../src/snapshot/writer.ts';

const R = 6_371_008.8;
const M = (R * Math.PI) / 180;
const cosd = (deg: number): number => Math.cos((deg * Math.PI) / 180);

/** Axis-aligned ring [x0, x1] x [y0, y1], closed. */
function box(x0: number, y0: number, x1: number, y1: number): number[] {
  return [x0, y0, x1, y0, x1, y1, x0, y1, x0, y0];
}

const SOURCES = [{ name: 'point-tests', licence: 'CC0-1.0', attribution: 'Edifice tests', retrieved: '2026-11-21' }];
const names = new Map<string, string>();
const root = mkdtempSync(join(tmpdir(), 'edifice-point-'));
let view: CatalogView;

async function write(dir: string, country: string, buildings: Record<string, { at: [number, number]; footprint: Polygon[] }>): Promise<void> {
  const writer = new SnapshotWriter({ country, snapshotDate: '2026-11-21', sources: SOURCES });
  for (const [name, b] of Object.entries(buildings)) {
    names.set(buildingId(`p:${name}`), name);
    writer.add(blankRecord(`p:${name}`, b.at[0], b.at[1], { footprint: b.footprint }));
  }
  await writer.finish(join(dir, country, '2026-11-21.arrow'));
}

beforeAll(async () => {
  await write(root, 'XA', {
    // A 0.001 degree square at the equator, and a square with a square hole.
    square: { at: [0.0005, 0.0005], footprint: [[box(0, 0, 0.001, 0.001)]] },
    holed: { at: [0.0101, 0.0101], footprint: [[box(0.01, 0.01, 0.011, 0.011), box(0.0104, 0.0104, 0.0106, 0.0106)]] },
    // One building of two polygons.
    twoParts: { at: [0.0205, 0.0205], footprint: [[box(0.02, 0.02, 0.021, 0.021)], [box(0.03, 0.02, 0.031, 0.021)]] },
    // Around (0, 1): north 0.0001 degree away, east and west mirrored 0.0002 away, south 0.0003.
    north: { at: [0, 1.00015], footprint: [[box(-0.00005, 1.0001, 0.00005, 1.0002)]] },
    east: { at: [0.00025, 1], footprint: [[box(0.0002, 0.9999, 0.0003, 1.0001)]] },
    west: { at: [-0.00025, 1], footprint: [[box(-0.0003, 0.9999, -0.0002, 1.0001)]] },
    south: { at: [0, 0.99965], footprint: [[box(-0.00005, 0.9996, 0.00005, 0.9997)]] },
  });
  await write(root, 'XB', {
    // Across a border from XA's square: 0.0003 degree east of it.
    neighbour: { at: [0.00135, 0.0005], footprint: [[box(0.0013, 0.0004, 0.0014, 0.0006)]] },
  });
  view = Catalog.open(root, { log: () => {} }).view();
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

function at(lon: number, lat: number, radiusM: number, limit = 25): { name: string; d: number }[] {
  return queryPoint(view, { lon, lat, radiusM, limit }).rows.map((r) => ({ name: names.get(r.snapshot.buildingId(r.row))!, d: r.distanceM }));
}

const near = (got: { name: string; d: number }[], name: string): number => {
  const row = got.find((r) => r.name === name);
  expect(row, `${name} in ${JSON.stringify(got)}`).toBeDefined();
  return row!.d;
};

describe('distance from the point to the outline', () => {
  it('is 0 inside the outline and on its edge', () => {
    expect(at(0.0005, 0.0005, 1)).toEqual([{ name: 'square', d: 0 }]);
    expect(at(0.0002, 0.0009, 1)).toEqual([{ name: 'square', d: 0 }]);
    expect(near(at(0.001, 0.0005, 1), 'square')).toBe(0);
    expect(near(at(0, 0, 1), 'square')).toBe(0);
  });

  it('beside an edge: the perpendicular distance', () => {
    const d = near(at(-0.0002, 0.0005, 25), 'square');
    expect(d).toBeCloseTo(0.0002 * cosd(0.0005) * M, 6); // 22.239 m
    expect(d).toBeCloseTo(22.239016, 5);
  });

  it('near a corner: the distance to the corner', () => {
    const d = near(at(0.0011, 0.0012, 25), 'square');
    expect(d).toBeCloseTo(Math.hypot(0.0001 * cosd(0.0012) * M, 0.0002 * M), 6); // 24.863 m
    expect(d).toBeCloseTo(24.863976, 5);
  });

  it('inside a hole is outside: the distance to the hole ring', () => {
    const got = at(0.0105, 0.0105, 25);
    const d = near(got, 'holed');
    expect(d).toBeCloseTo(0.0001 * cosd(0.0105) * M, 6); // 11.120 m, to the hole's west and east edges
    expect(at(0.0105, 0.0105, 11)).toEqual([]);
    // Between the hole and the outer ring: inside the building.
    expect(at(0.0102, 0.0105, 1)).toEqual([{ name: 'holed', d: 0 }]);
  });

  it('a building of several polygons: inside any is 0, else the nearest ring of all', () => {
    expect(at(0.0305, 0.0205, 1)).toEqual([{ name: 'twoParts', d: 0 }]);
    const d = near(at(0.025, 0.0205, 500), 'twoParts');
    expect(d).toBeCloseTo(0.004 * cosd(0.0205) * M, 6); // to the nearer polygon, 444.8 m
  });
});

describe('radius, order and limit', () => {
  it('keeps outlines within the radius, the radius itself included', () => {
    const d = 0.0001 * M; // north, straight up
    expect(near(at(0, 1, d + 1e-6), 'north')).toBeCloseTo(d, 6);
    expect(at(0, 1, d - 1e-6)).toEqual([]);
    const exact = at(0, 1, 30).find((r) => r.name === 'north')!.d;
    expect(at(0, 1, exact).map((r) => r.name)).toEqual(['north']);
  });

  it('nearest first, equal distances by building_id, at most limit', () => {
    const tie = ['east', 'west'].sort((a, b) => (buildingId(`p:${a}`) < buildingId(`p:${b}`) ? -1 : 1));
    const got = at(0, 1, 40);
    expect(got.map((r) => r.name)).toEqual(['north', ...tie, 'south']);
    expect(got[1].d).toBe(got[2].d);
    expect(got[1].d).toBeCloseTo(0.0002 * cosd(1) * M, 6);
    expect(got[3].d).toBeCloseTo(0.0003 * M, 6);
    expect(at(0, 1, 30).map((r) => r.name)).toEqual(['north', ...tie]);
    expect(at(0, 1, 40, 2).map((r) => r.name)).toEqual(['north', tie[0]]);
    expect(at(0, 1, 40, 0)).toEqual([]);
  });

  it('every country near the point answers', () => {
    const got = at(0.00115, 0.0005, 20);
    expect(got.map((r) => r.name).sort()).toEqual(['neighbour', 'square']);
    expect(near(got, 'square')).toBeCloseTo(0.00015 * cosd(0.0005) * M, 6);
    expect(near(got, 'neighbour')).toBeCloseTo(0.00015 * cosd(0.0005) * M, 6);
    expect(at(50, 50, 200)).toEqual([]);
  });

  it('refuses impossible input with QueryError', () => {
    expect(() => queryPoint(view, { lon: 0, lat: 91, radiusM: 10, limit: 1 })).toThrow(QueryError);
    expect(() => queryPoint(view, { lon: 0, lat: 0, radiusM: NaN, limit: 1 })).toThrow(QueryError);
    expect(() => queryPoint(view, { lon: 0, lat: 0, radiusM: 10, limit: 1.5 })).toThrow(QueryError);
  });
});
