/**
 * GET /buildings/at in the engine: exact distances from a point to hand-made outlines (inside,
 * on an edge, near a corner, inside a hole, another polygon of the same building), radius
 * inclusion, nearest first with ties by building_id, limit, and two countries.
 *
 * Expected distances are geodesics on the WGS84 ellipsoid from GeographicLib (test/reference/
 * geodesic.ts), to the nearest vertex, or to the foot of the perpendicular on an edge.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Catalog, type CatalogView } from '../src/catalog/catalog.ts';
import { queryPoint } from '../src/query/point.ts';
import { QueryError } from '../src/query/types.ts';
import { buildingId } from '../src/snapshot/building-id.ts';
import { blankRecord } from '../src/snapshot/record.ts';
import type { Polygon } from '../src/snapshot/schema.ts';
import { SnapshotWriter } from '../src/snapshot/writer.ts';
import { arrivalAzimuth, destination, geodesicDistance as geo } from './reference/geodesic.ts';

/**
 * A triangle whose nearest point to (lon, lat) is its apex, `metres` away along the geodesic
 * leaving at `azimuth`: its sides leave the apex 30° either side of the way onward.
 */
function apexAt(lon: number, lat: number, azimuth: number, metres: number): { at: [number, number]; footprint: Polygon[] } {
  const apex = destination(lon, lat, azimuth, metres);
  const onward = arrivalAzimuth(lon, lat, azimuth, metres);
  const b = destination(apex[0], apex[1], onward - 30, 10);
  const c = destination(apex[0], apex[1], onward + 30, 10);
  return { at: apex, footprint: [[[...apex, ...b, ...c, ...apex]]] };
}

/**
 * A 40 m by 10 m rectangle whose near side crosses the geodesic from (lon, lat) at right angles
 * `metres` away, at the middle of the side: its nearest point, inside an edge.
 */
function sideAt(lon: number, lat: number, azimuth: number, metres: number): { at: [number, number]; footprint: Polygon[] } {
  const foot = destination(lon, lat, azimuth, metres);
  const onward = arrivalAzimuth(lon, lat, azimuth, metres);
  const a = destination(foot[0], foot[1], onward - 90, 20);
  const b = destination(foot[0], foot[1], onward + 90, 20);
  const c = destination(b[0], b[1], onward, 10);
  const d = destination(a[0], a[1], onward, 10);
  return { at: foot, footprint: [[[...a, ...b, ...c, ...d, ...a]]] };
}

// Where the ellipsoid and the sphere differ most. At 45°N a degree of longitude is 0.28% longer on the ellipsoid than on
// the sphere of mean radius; at the equator a degree of latitude is 0.56% shorter.
const AT_45 = [10, 45] as const;
const AT_45_B = [10.01, 45] as const;
const AT_EQUATOR = [20, 0] as const;
const ISSUE_CASES = {
  east117: apexAt(...AT_45, 90, 117.19),
  orderEast: apexAt(...AT_45_B, 90, 117.1),
  orderNorth: apexAt(...AT_45_B, 0, 117.0),
  north117: apexAt(...AT_EQUATOR, 0, 117.19),
};

// Latitudes (each with its own longitude), azimuths and distances of the sweep.
const SWEEP_LATITUDES = [0, 45, 60, 70, 74.99, 75.01, 78.2, -33.9, -62.2, 89.99, -89.999, 90];
const SWEEP_AZIMUTHS = Array.from({ length: 12 }, (_, i) => 30 * i + 7);
const SWEEP_METRES = [1.5, 117.19, 199.99];
const sweepOrigin = (i: number): [number, number] => [-120 + 17 * i, SWEEP_LATITUDES[i]];

function sweepBuildings(): Record<string, { at: [number, number]; footprint: Polygon[] }> {
  const out: Record<string, { at: [number, number]; footprint: Polygon[] }> = {};
  SWEEP_LATITUDES.forEach((_, i) => {
    const [lon, lat] = sweepOrigin(i);
    for (const [k, az] of SWEEP_AZIMUTHS.entries()) {
      for (const m of SWEEP_METRES) out[`sweep:${i}:${az}:${m}`] = (k % 2 === 0 ? apexAt : sideAt)(lon, lat, az, m);
    }
  });
  return out;
}

// Points by the antimeridian (Taveuni, the equator, Chukotka): a sweep around each reaches across it.
const ANTIMERIDIAN = [
  [179.9996, -16.8],
  [180, 0],
  [-179.9993, 65.5],
] as const;

function antimeridianBuildings(): Record<string, { at: [number, number]; footprint: Polygon[] }> {
  const out: Record<string, { at: [number, number]; footprint: Polygon[] }> = {};
  ANTIMERIDIAN.forEach(([lon, lat], i) => {
    for (const [k, az] of SWEEP_AZIMUTHS.entries()) {
      for (const m of SWEEP_METRES) out[`antimeridian:${i}:${az}:${m}`] = (k % 2 === 0 ? apexAt : sideAt)(lon, lat, az, m);
    }
  });
  // A rectangle whose ring crosses the line itself, 50 m north of the equator's point.
  out['across-the-line'] = { at: [180, 0.00045], footprint: [[box(179.9999, 0.00045, -179.9999, 0.0005)]] };
  return out;
}

/** Axis-aligned ring [x0, x1] x [y0, y1], closed. */
function box(x0: number, y0: number, x1: number, y1: number): number[] {
  return [x0, y0, x1, y0, x1, y1, x0, y1, x0, y0];
}

const SOURCES = [{ name: 'point-tests', licence: 'CC0-1.0', attribution: 'Edifice tests', retrieved: '2026-11-21' }];
const names = new Map<string, string>();
const root = mkdtempSync(join(tmpdir(), 'edifice-point-'));
let view: CatalogView;

async function write(
  dir: string,
  country: string,
  buildings: Record<string, { at: [number, number]; footprint: Polygon[] }>,
): Promise<void> {
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
  await write(root, 'XC', { ...ISSUE_CASES, ...sweepBuildings() });
  await write(root, 'XD', antimeridianBuildings());
  view = Catalog.open(root, { log: () => {} }).view();
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

function at(lon: number, lat: number, radiusM: number, limit = 25): { name: string; d: number }[] {
  return queryPoint(view, { lon, lat, radiusM, limit }).rows.map((r) => ({
    name: names.get(r.snapshot.buildingId(r.row))!,
    d: r.distanceM,
  }));
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
    expect(d).toBeCloseTo(geo(-0.0002, 0.0005, 0, 0.0005), 6); // 22.264 m
    expect(d).toBeCloseTo(22.263898, 5);
  });

  it('near a corner: the distance to the corner', () => {
    const d = near(at(0.0011, 0.0012, 25), 'square');
    expect(d).toBeCloseTo(geo(0.0011, 0.0012, 0.001, 0.001), 6); // 24.759 m
    expect(d).toBeCloseTo(24.758576, 5);
  });

  it('inside a hole is outside: the distance to the hole ring', () => {
    const got = at(0.0105, 0.0105, 25);
    const d = near(got, 'holed');
    // 11.057 m, to the hole's south and north edges: at the equator a degree of latitude is
    // shorter than one of longitude (11.132 m to the west and east edges).
    expect(d).toBeCloseTo(geo(0.0105, 0.0105, 0.0105, 0.0104), 6);
    expect(at(0.0105, 0.0105, 11)).toEqual([]);
    // Between the hole and the outer ring: inside the building.
    expect(at(0.0102, 0.0105, 1)).toEqual([{ name: 'holed', d: 0 }]);
  });

  it('a building of several polygons: inside any is 0, else the nearest ring of all', () => {
    expect(at(0.0305, 0.0205, 1)).toEqual([{ name: 'twoParts', d: 0 }]);
    const d = near(at(0.025, 0.0205, 500), 'twoParts');
    expect(d).toBeCloseTo(geo(0.025, 0.0205, 0.021, 0.0205), 6); // to the nearer polygon, 445.3 m
  });
});

describe('radius, order and limit', () => {
  it('keeps outlines within the radius, the radius itself included', () => {
    const d = geo(0, 1, 0, 1.0001); // north, straight up
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
    expect(got[1].d).toBeCloseTo(geo(0, 1, 0.0002, 1), 6);
    expect(got[3].d).toBeCloseTo(geo(0, 1, 0, 0.9997), 6);
    expect(at(0, 1, 30).map((r) => r.name)).toEqual(['north', ...tie]);
    expect(at(0, 1, 40, 2).map((r) => r.name)).toEqual(['north', tie[0]]);
    expect(at(0, 1, 40, 0)).toEqual([]);
  });

  it('every country near the point answers', () => {
    const got = at(0.00115, 0.0005, 20);
    expect(got.map((r) => r.name).sort()).toEqual(['neighbour', 'square']);
    expect(near(got, 'square')).toBeCloseTo(geo(0.00115, 0.0005, 0.001, 0.0005), 6);
    expect(near(got, 'neighbour')).toBeCloseTo(geo(0.00115, 0.0005, 0.0013, 0.0005), 6);
    expect(at(50, 50, 200)).toEqual([]);
  });

  it('refuses impossible input with QueryError', () => {
    expect(() => queryPoint(view, { lon: 0, lat: 91, radiusM: 10, limit: 1 })).toThrow(QueryError);
    expect(() => queryPoint(view, { lon: 0, lat: 0, radiusM: NaN, limit: 1 })).toThrow(QueryError);
    expect(() => queryPoint(view, { lon: 0, lat: 0, radiusM: 10, limit: 1.5 })).toThrow(QueryError);
  });
});

describe('on the WGS84 ellipsoid', () => {
  it('leaves out a building just beyond the radius on the ellipsoid, though within it on a sphere', () => {
    // 117.19 m east at 45°N: 116.86 m on the sphere of mean radius.
    expect(at(...AT_45, 117.14).map((r) => r.name)).not.toContain('east117');
    expect(near(at(...AT_45, 117.24), 'east117')).toBeCloseTo(117.19, 5);
  });

  it('keeps a building just within the radius on the ellipsoid, though beyond it on a sphere', () => {
    // 117.19 m north at the equator: 117.85 m on the sphere.
    expect(near(at(...AT_EQUATOR, 117.24), 'north117')).toBeCloseTo(117.19, 5);
    expect(at(...AT_EQUATOR, 117.14).map((r) => r.name)).not.toContain('north117');
  });

  it('orders near-ties by their distance on the ellipsoid', () => {
    // 117.00 m north and 117.10 m east at 45°N: 117.07 m and 116.77 m on the sphere.
    const got = at(...AT_45_B, 150).filter((r) => r.name.startsWith('order'));
    expect(got.map((r) => r.name)).toEqual(['orderNorth', 'orderEast']);
    expect(got[0].d).toBeCloseTo(117.0, 5);
    expect(got[1].d).toBeCloseTo(117.1, 5);
  });

  const sweep = SWEEP_LATITUDES.map((lat, i) => [lat, i]);
  it.each(sweep)('at %f°: the geodesic distance to a vertex or an edge, within 10 µm, at every azimuth up to 200 m', (_lat, i) => {
    const [lon, lat] = sweepOrigin(i);
    const rows = queryPoint(view, { lon, lat, radiusM: 200, limit: 1000 }).rows;
    const got = new Map(rows.map((r) => [names.get(r.snapshot.buildingId(r.row))!, r.distanceM]));
    const errors: string[] = [];
    for (const az of SWEEP_AZIMUTHS) {
      for (const m of SWEEP_METRES) {
        const d = got.get(`sweep:${i}:${az}:${m}`);
        if (d === undefined || !(Math.abs(d - m) <= 1e-5)) errors.push(`azimuth ${az}°, ${m} m: got ${d}`);
      }
    }
    expect(errors).toEqual([]);
  });
});

describe('by the antimeridian', () => {
  it.each(ANTIMERIDIAN.map(([lon, lat], i) => [lon, lat, i]))(
    'at (%f, %f): buildings on both sides at their geodesic distance, each once, from either name of the meridian',
    (lon, lat, i) => {
      const names180 = [lon, lon === 180 ? -180 : lon];
      for (const from of names180) {
        const rows = queryPoint(view, { lon: from, lat, radiusM: 200, limit: 1000 }).rows;
        const got = rows.map((r) => names.get(r.snapshot.buildingId(r.row))!).filter((n) => n.startsWith(`antimeridian:${i}:`));
        expect(new Set(got).size, 'each building once').toBe(got.length);
        const byName = new Map(rows.map((r) => [names.get(r.snapshot.buildingId(r.row))!, r.distanceM]));
        const errors: string[] = [];
        let across = 0;
        for (const [k, az] of SWEEP_AZIMUTHS.entries()) {
          for (const m of SWEEP_METRES) {
            const b = (k % 2 === 0 ? apexAt : sideAt)(lon, lat, az, m);
            if (Math.sign(b.at[0]) !== Math.sign(lon)) across++;
            const d = byName.get(`antimeridian:${i}:${az}:${m}`);
            if (d === undefined || !(Math.abs(d - m) <= 1e-5)) errors.push(`from ${from}: azimuth ${az}°, ${m} m: got ${d}`);
          }
        }
        expect(errors).toEqual([]);
        expect(across, 'buildings across the line from the point').toBeGreaterThan(3);
        // None farther than the radius, though a window's two parts meet buildings of the other sweeps.
        for (const r of rows) expect(r.distanceM).toBeLessThanOrEqual(200);
      }
    },
  );

  it('an outline across the line itself: its distance, from both sides', () => {
    // Its south edge runs along 0.00045°N; from (±180, 0) the nearest point is straight north.
    const want = geo(180, 0, 180, 0.00045);
    for (const lon of [180, -180, 179.99995, -179.99995]) {
      const got = at(lon, 0, 100);
      expect(near(got, 'across-the-line')).toBeCloseTo(lon === 180 || lon === -180 ? want : geo(lon, 0, lon, 0.00045), 5);
      expect(got.filter((r) => r.name === 'across-the-line')).toHaveLength(1);
    }
    // Inside it: 0.
    expect(near(at(180, 0.00047, 10), 'across-the-line')).toBe(0);
    expect(near(at(-179.99995, 0.00047, 10), 'across-the-line')).toBe(0);
  });
});
