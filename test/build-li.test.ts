/**
 * The Liechtenstein snapshot built from test/fixtures/osm/liechtenstein-2013-08-03.osm.pbf
 * (osmium export into a temporary folder, then the builder), read back and checked against
 * what osmium itself reports and against values worked out by hand from the file.
 *
 * Known buildings were looked up with `osmium getid <pbf> w3084 n23875 n36972 -f opl` and the
 * like; the expected values below are what those objects' tags say.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSnapshot, type BuildResult } from '../src/build/builder.ts';
import { exportPbf } from '../src/build/osmium.ts';
import { buildingId } from '../src/snapshot/building-id.ts';
import { readSnapshot } from '../src/snapshot/reader.ts';
import { nestedByGdal, osmiumIds as osmiumRead } from './osm-reference.ts';
import type { SnapshotMetadata } from '../src/snapshot/schema.ts';

const PBF = fileURLToPath(new URL('./fixtures/osm/liechtenstein-2013-08-03.osm.pbf', import.meta.url));

// WGS84 radii of curvature, for areas worked out by hand in a local plane.
const A = 6_378_137;
const E2 = (1 / 298.257223563) * (2 - 1 / 298.257223563);
const RAD = Math.PI / 180;
function radii(lat: number): { m: number; n: number } {
  const w = 1 - E2 * Math.sin(lat * RAD) ** 2;
  return { m: (A * (1 - E2)) / w ** 1.5, n: A / Math.sqrt(w) };
}

interface Row {
  [k: string]: any;
  rings: number[][][];
}

let dir: string;
let exported: string;
let result: BuildResult;
let metadata: SnapshotMetadata;
const rows = new Map<string, Row>();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'edifice-build-li-'));
  exported = await exportPbf(PBF, dir);
  result = await buildSnapshot({
    country: 'LI',
    snapshotDate: '2013-08-03',
    buildings: exported,
    out: join(dir, 'LI', '2013-08-03.arrow'),
  });
  const opened = readSnapshot(result.path);
  const table = opened.table;
  metadata = opened.metadata;
  for (let i = 0; i < table.numRows; i++) {
    const r = table.get(i)!.toJSON() as Record<string, any>;
    const rings: number[][][] = [];
    for (const polygon of r.footprint) for (const ring of polygon) rings.push([...ring].map((p: any) => [p.get(0), p.get(1)]));
    rows.set(r.source_id, {
      ...r,
      rings,
      entrances: [...r.entrances].map((e: any) => e.toJSON()),
      businesses: [...r.businesses].map((b: any) => b.toJSON()),
    });
  }
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const osmiumIds = (...expressions: string[]): string[] => osmiumRead(PBF, ...expressions);

describe('Liechtenstein snapshot', () => {
  it('holds one row per building way and multipolygon osmium finds, less the outlines drawn inside another, with stable ids', () => {
    const osmium = osmiumIds('w/building!=no', 'r/building!=no');
    expect(osmium.length).toBe(3723);
    // GDAL (GEOS) finds the outlines lying 95% or more inside another in osmium's own export.
    const nested = nestedByGdal(exported, dir);
    expect(nested).toEqual([
      ['osm:way/1172', 'osm:way/1176'],
      ['osm:way/1176', 'osm:way/1172'],
      ['osm:way/2531', 'osm:way/2530'],
      ['osm:way/2878', 'osm:way/2921'],
    ]);
    // w1172 and w1176 are one outline drawn twice: the one read first (osmium writes ways by id) stays.
    const inner = new Set(['osm:way/1176', 'osm:way/2531', 'osm:way/2878']);
    const expected = osmium.filter((id) => !inner.has(id));
    expect(result.rows).toBe(3720);
    expect([...rows.keys()].sort()).toEqual(expected.sort());
    expect(result.merged).toMatchObject([{ reason: 'nested_outline', count: 3 }]);
    for (const [source, r] of rows) expect(r.building_id).toBe(buildingId(source));
    expect(rows.get('osm:relation/52')).toBeDefined(); // Schloss Vaduz, a multipolygon with two courtyards
  });

  it('counts no bad rows in this extract and notes the building nodes it cannot draw', () => {
    expect(result.bad).toEqual([]);
    const nodes = osmiumIds('n/building!=no').length;
    expect(result.notes.find((n) => n.reason === 'building_without_outline')?.count).toBe(nodes);
  });

  it('measures footprints on the ellipsoid: two rectangles worked out by hand', () => {
    // w3341: an axis-aligned rectangle, corners n40443 (9.5357288, 47.1424104) and n40449 (9.5359088, 47.1424909).
    const { m, n } = radii((47.1424104 + 47.1424909) / 2);
    const width = n * Math.cos(((47.1424104 + 47.1424909) / 2) * RAD) * (9.5359088 - 9.5357288) * RAD;
    const height = m * (47.1424909 - 47.1424104) * RAD;
    expect(rows.get('osm:way/3341')!.footprint_area_m2 / (width * height)).toBeCloseTo(1, 6);

    // w493: a rotated parallelogram with corners p0 (9.5337485, 47.2074374), p1 (9.5340105, 47.2073582),
    // p3 (9.5340997, 47.2079738): area |u × v| with u = p1 − p0 and v = p3 − p0 in metres.
    const lat = 47.207666;
    const k = radii(lat);
    const kx = k.n * Math.cos(lat * RAD) * RAD;
    const ky = k.m * RAD;
    const u = [(9.5340105 - 9.5337485) * kx, (47.2073582 - 47.2074374) * ky];
    const v = [(9.5340997 - 9.5337485) * kx, (47.2079738 - 47.2074374) * ky];
    expect(rows.get('osm:way/493')!.footprint_area_m2 / Math.abs(u[0] * v[1] - u[1] * v[0])).toBeCloseTo(1, 5);
  });

  it('puts every representative point inside its outline', () => {
    let outside = 0;
    for (const r of rows.values()) {
      let c = false;
      for (const ring of r.rings) {
        for (let i = 1; i < ring.length; i++) {
          const [x1, y1] = ring[i - 1];
          const [x2, y2] = ring[i];
          if (y1 > r.latitude !== y2 > r.latitude && r.longitude < x1 + ((r.latitude - y1) * (x2 - x1)) / (y2 - y1)) c = !c;
        }
      }
      if (!c) outside++;
    }
    expect(outside).toBe(0);
  });

  it('states the addresses of known buildings and how well other records back them', () => {
    // w1561 addr:street=Under Rüttigass, addr:housenumber=6, addr:postcode=9494, addr:city=Schaan; inside it the
    // hostels n24184 (no address) and n58238 (also number 6).
    expect(rows.get('osm:way/1561')).toMatchObject({
      address: 'Under Rüttigass 6',
      postal_code: '9494',
      locality: 'Schaan',
      address_evidence: 'address_record',
      address_corroboration: 'corroborated',
      nearest_road: null,
    });
    expect(rows.get('osm:way/1561')!.entrances).toEqual([
      { address: 'Under Rüttigass 6', house_number: '6', postal_code: '9494', source: 'osm:way/1561' },
    ]);
    // The hostels are OpenStreetMap listings, not a register's entries: no registered business.
    expect(rows.get('osm:way/1561')!.businesses).toEqual([]);

    // w3084 Im Rösle 2 holds the supermarket n23875 (number 2) and the brewery n36972 (number 4).
    expect(rows.get('osm:way/3084')).toMatchObject({ address: 'Im Rösle 2', address_corroboration: 'conflicting', postal_code: null });
    expect(rows.get('osm:way/3084')!.businesses).toEqual([]);

    // w1628 has no addr:* tags; its vertices n17724 Kirchstrasse 2, n17725 Landstrasse 3 and n17722 Landstrasse 7 are
    // address nodes (entrances drawn on the wall): three entrances, the lowest number shown, the others disagree.
    const w1628 = rows.get('osm:way/1628')!;
    expect(w1628.entrances.map((e: any) => [e.address, e.source])).toEqual([
      ['Kirchstrasse 2', 'osm:node/17724'],
      ['Landstrasse 3', 'osm:node/17725'],
      ['Landstrasse 7', 'osm:node/17722'],
    ]);
    expect(w1628).toMatchObject({ address: 'Kirchstrasse 2', address_evidence: 'address_record', address_corroboration: 'conflicting' });

    // w5031 has no address; the supermarket n65582 inside gives Landstrasse 20, addr:postcode=LI-9496.
    expect(rows.get('osm:way/5031')).toMatchObject({
      address: 'Landstrasse 20',
      postal_code: 'LI-9496',
      address_evidence: 'business_listing',
      address_corroboration: 'single_source',
      entrances: [],
      nearest_road: null,
    });
  });

  it("gives the stated city as locality, else the nearest settlement's name as a brute-force search finds it", () => {
    // w1561 states addr:city=Schaan.
    expect(rows.get('osm:way/1561')).toMatchObject({ locality: 'Schaan', locality_basis: 'stated' });
    // The 17 settlement nodes, read from osmium's OPL text (x and y fields, the name tag).
    const opl = execFileSync('osmium', ['tags-filter', PBF, 'n/place=city,town,village,hamlet', '-f', 'opl', '-o', '-'], {
      encoding: 'utf8',
    });
    const places = opl
      .split('\n')
      .filter((l) => l !== '')
      .map((line) => {
        const f = line.split(' ');
        const name = /(?:^T|,)name=([^,]*)/
          .exec(f.find((x) => x.startsWith('T'))!)![1]
          .replace(/%([0-9a-f]+)%/g, (_, h) => String.fromCodePoint(parseInt(h, 16)));
        return { name, lon: Number(f.find((x) => x.startsWith('x'))!.slice(1)), lat: Number(f.find((x) => x.startsWith('y'))!.slice(1)) };
      });
    expect(places.length).toBe(17);
    const inferred = [...rows.values()].filter((r) => r.locality_basis === 'inferred');
    expect(inferred.length).toBeGreaterThan(3000);
    for (const r of inferred.filter((_, i) => i % 50 === 0)) {
      const { m, n } = radii(r.latitude);
      const metres = (p: { lon: number; lat: number }) =>
        Math.hypot((p.lon - r.longitude) * RAD * n * Math.cos(r.latitude * RAD), (p.lat - r.latitude) * RAD * m);
      const nearest = places.reduce((a, b) => (metres(b) < metres(a) ? b : a));
      expect(metres(nearest)).toBeLessThanOrEqual(5000);
      expect(r.locality).toBe(nearest.name);
    }
    // No building of this extract lies 5 km from every settlement: each has a locality and a basis.
    expect([...rows.values()].every((r) => r.locality !== '' && r.locality_basis !== null)).toBe(true);
  });

  it('states floors and heights only where a tag does: this extract tags none', () => {
    // osmium tags-filter finds no building:levels, height, roof:shape or start_date in the file.
    expect(osmiumIds('w/building:levels', 'r/building:levels', 'w/height', 'w/roof:shape', 'w/start_date')).toEqual([]);
    for (const r of rows.values()) {
      expect(r.floors).toBeNull();
      expect(r.height_m).toBeNull();
      expect(r.volume_m3).toBeNull();
      expect(r.floor_area_m2).toBeNull();
      expect(r.roof_shape).toBeNull();
    }
    expect(rows.get('osm:way/3341')).toMatchObject({ category: 'unknown', category_evidence: 'inferred', building_type: 'unspecified' });
  });

  it('maps building values to categories', () => {
    // The first way osmium's tags-filter finds with each value.
    const sample = (value: string) => osmiumIds(`w/building=${value}`)[0];
    expect(rows.get(sample('house'))).toMatchObject({
      category: 'residential_house',
      category_evidence: 'confirmed',
      building_type: 'house',
    });
    expect(rows.get(sample('church'))).toMatchObject({ category: 'public', category_evidence: 'confirmed', building_type: 'church' });
    expect(rows.get(sample('farm'))).toMatchObject({ category: 'agricultural', building_type: 'farm' });
    expect(rows.get(sample('residential'))).toMatchObject({ category: 'residential_house', category_evidence: 'inferred' });
  });

  it('names the nearest named road only for buildings without an address, as a brute-force search finds it', () => {
    // Roads and outlines straight from osmium's export, every road segment tried for each building.
    const roads: { name: string; line: number[][] }[] = [];
    const outlines = new Map<string, number[][][]>();
    for (const text of readFileSync(exported, 'utf8').split('\n')) {
      if (text.trim() === '') continue;
      const f = JSON.parse(text.startsWith('\x1e') ? text.slice(1) : text);
      const p = f.properties;
      if (p.highway && p.name && f.geometry.type === 'LineString') roads.push({ name: p.name, line: f.geometry.coordinates });
      if (p.building && f.geometry.type === 'MultiPolygon') outlines.set(`osm:${p['@type']}/${p['@id']}`, f.geometry.coordinates.flat());
    }
    const seg = (px: number, py: number, ax: number, ay: number, bx: number, by: number) => {
      const dx = bx - ax;
      const dy = by - ay;
      const t = Math.max(0, Math.min(1, ((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy || 1)));
      return Math.hypot(px - ax - t * dx, py - ay - t * dy);
    };
    const side = (a: number[], b: number[], c: number[]) => Math.sign((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]));
    const cross = (a: number[], b: number[], c: number[], d: number[]) =>
      side(a, b, c) * side(a, b, d) < 0 && side(c, d, a) * side(c, d, b) < 0;
    const withoutAddress = [...rows.values()].filter((r) => r.address === null);
    const withAddress = [...rows.values()].filter((r) => r.address !== null);
    expect(withAddress.every((r) => r.nearest_road === null)).toBe(true);
    for (const r of withoutAddress.filter((_, i) => i % 150 === 0)) {
      const { m, n } = radii(r.latitude);
      const kx = n * Math.cos(r.latitude * RAD) * RAD;
      const ky = m * RAD;
      const xy = ([lon, lat]: number[]) => [(lon - r.longitude) * kx, (lat - r.latitude) * ky];
      const rings = outlines.get(r.source_id)!.map((ring) => ring.map(xy));
      // Vertex-to-segment distances both ways: for segments that do not cross, the minimum is among them.
      const distance = (line: number[][]) => {
        const pts = line.map(xy);
        let d = Infinity;
        for (const ring of rings) {
          for (let i = 1; i < ring.length; i++) {
            for (let j = 1; j < pts.length; j++) {
              if (cross(ring[i - 1], ring[i], pts[j - 1], pts[j])) return 0;
              d = Math.min(
                d,
                seg(pts[j][0], pts[j][1], ring[i - 1][0], ring[i - 1][1], ring[i][0], ring[i][1]),
                seg(ring[i][0], ring[i][1], pts[j - 1][0], pts[j - 1][1], pts[j][0], pts[j][1]),
                seg(pts[j - 1][0], pts[j - 1][1], ring[i - 1][0], ring[i - 1][1], ring[i][0], ring[i][1]),
              );
            }
          }
        }
        return d;
      };
      let best = Infinity;
      const at = new Map<string, number>();
      for (const road of roads) {
        const d = distance(road.line);
        at.set(road.name, Math.min(at.get(road.name) ?? Infinity, d));
        best = Math.min(best, d);
      }
      if (best > 1000) {
        expect(r.nearest_road).toBeNull();
      } else {
        expect(r.nearest_road).not.toBeNull();
        expect(at.get(r.nearest_road)!).toBeCloseTo(best, 3);
      }
    }
  });

  it('records its source and stays small enough for a country-scale build', () => {
    expect(metadata).toMatchObject({ country: 'LI', snapshotDate: '2013-08-03', rowCount: 3720 });
    expect(metadata.sources).toEqual([
      { name: 'OpenStreetMap', licence: 'ODbL-1.0', attribution: '© OpenStreetMap contributors', retrieved: '2013-08-03' },
    ]);
    expect(result.bytes / result.rows).toBeLessThan(1000);
  });
});
