/**
 * The synthetic generator: deterministic files, plausible distributions and consistent records.
 * Every figure here is recomputed from the records with code of its own (point in polygon,
 * planar area, the solar rule of spec 2.1), not with the generator's helpers.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateCountry, writeSyntheticCountry } from '../src/synth/generate.ts';
import { readSnapshot } from '../src/snapshot/reader.ts';
import { buildingId } from '../src/snapshot/building-id.ts';
import type { BuildingRecord, Ring, SolarPresence } from '../src/snapshot/schema.ts';

const REPO = new URL('..', import.meta.url).pathname;
const SEED = 7;
const N = 20_000;

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'edifice-synth-'));
  dirs.push(dir);
  return dir;
}
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

let records: BuildingRecord[] = [];
beforeAll(() => {
  records = [...generateCountry({ seed: SEED, buildings: N })];
});

/** The first few records breaking a rule, by source id: one assertion per rule names them. */
function breaking(rule: (r: BuildingRecord) => boolean): string[] {
  const out: string[] = [];
  for (const r of records) if (!rule(r) && out.push(r.source_id) >= 5) break;
  return out;
}

function share(test: (r: BuildingRecord) => boolean): number {
  let k = 0;
  for (const r of records) if (test(r)) k++;
  return k / records.length;
}

// ---------------------------------------------------------------------------------------------
// Independent geometry
// ---------------------------------------------------------------------------------------------

const EARTH_M = 6_371_008.8;
const RAD = Math.PI / 180;

/** Shoelace area of a lon/lat ring in m², equirectangular at latitude `lat0` (signed: CCW > 0). */
function planarArea(ring: Ring, lat0: number): number {
  const kx = EARTH_M * RAD * Math.cos(lat0 * RAD),
    ky = EARTH_M * RAD;
  let twice = 0;
  for (let i = 0; i + 3 < ring.length; i += 2) {
    twice += ring[i] * kx * (ring[i + 3] * ky) - ring[i + 2] * kx * (ring[i + 1] * ky);
  }
  return twice / 2;
}

/** Even-odd crossing test of one ring. */
function inRing(ring: Ring, x: number, y: number): boolean {
  let inside = false;
  for (let i = 0, j = ring.length - 4; i + 1 < ring.length - 2; j = i, i += 2) {
    const xi = ring[i],
      yi = ring[i + 1],
      xj = ring[j],
      yj = ring[j + 1];
    if (yi > y !== yj > y && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

function inFootprint(footprint: BuildingRecord['footprint'], x: number, y: number): boolean {
  return footprint.some(([outer, ...holes]) => inRing(outer, x, y) && !holes.some((h) => inRing(h, x, y)));
}

/** Do segments p1p2 and p3p4 cross or touch? */
function segmentsMeet(ax: number, ay: number, bx: number, by: number, cx: number, cy: number, dx: number, dy: number): boolean {
  const orient = (px: number, py: number, qx: number, qy: number, rx: number, ry: number) =>
    Math.sign((qx - px) * (ry - py) - (qy - py) * (rx - px));
  const o1 = orient(ax, ay, bx, by, cx, cy),
    o2 = orient(ax, ay, bx, by, dx, dy);
  const o3 = orient(cx, cy, dx, dy, ax, ay),
    o4 = orient(cx, cy, dx, dy, bx, by);
  return o1 !== o2 && o3 !== o4;
}

function isSimple(ring: Ring): boolean {
  const n = ring.length / 2 - 1; // edges
  for (let a = 0; a < n; a++) {
    for (let b = a + 2; b < n; b++) {
      if (a === 0 && b === n - 1) continue; // neighbours through the closing vertex
      if (
        segmentsMeet(
          ring[2 * a],
          ring[2 * a + 1],
          ring[2 * a + 2],
          ring[2 * a + 3],
          ring[2 * b],
          ring[2 * b + 1],
          ring[2 * b + 2],
          ring[2 * b + 3],
        )
      )
        return false;
    }
  }
  return true;
}

// ---------------------------------------------------------------------------------------------

describe('synthetic country: files', () => {
  it('same seed writes the same bytes; another seed writes another file', async () => {
    const [a, b, c] = await Promise.all([
      writeSyntheticCountry({ seed: 3, buildings: 3_000, outDir: tempDir() }),
      writeSyntheticCountry({ seed: 3, buildings: 3_000, outDir: tempDir() }),
      writeSyntheticCountry({ seed: 4, buildings: 3_000, outDir: tempDir() }),
    ]);
    expect(a.checksum).toBe(b.checksum);
    expect(readFileSync(a.path).equals(readFileSync(b.path))).toBe(true);
    expect(c.checksum).not.toBe(a.checksum);
    expect(readFileSync(c.path).equals(readFileSync(a.path))).toBe(false);
  });

  it('writes <outDir>/<CC>/<date>.arrow that the reader accepts, with its row count and metadata', async () => {
    const outDir = tempDir();
    const written = await writeSyntheticCountry({ seed: 11, buildings: 2_500, country: 'XB', date: '2026-03-01', outDir });
    expect(written.path).toBe(join(outDir, 'XB', '2026-03-01.arrow'));
    expect(written.rows).toBe(2_500);
    expect(written.seconds).toBeGreaterThan(0);
    const { metadata, table, bytes } = readSnapshot(written.path);
    expect(table.numRows).toBe(2_500);
    expect(bytes).toBe(written.bytes);
    expect(metadata).toMatchObject({ country: 'XB', snapshotDate: '2026-03-01', rowCount: 2_500, checksum: written.checksum });
    expect(metadata.sources).toEqual([
      expect.objectContaining({ name: 'Edifice synthetic generator', licence: 'CC0-1.0', retrieved: '2026-03-01' }),
    ]);
    // Dates inside the data never pass the snapshot date.
    const photos = Array.from(table.getChild('panels_photo_date')!.toArray() as ArrayLike<number | null>);
    expect(photos.filter((ms) => ms !== null).length).toBeGreaterThan(1_000);
    expect(photos.filter((ms) => ms !== null && ms > Date.UTC(2026, 2, 1))).toEqual([]);
  });

  it('refuses bad options by name', () => {
    expect(() => generateCountry({ seed: 1, buildings: 0 })).toThrow(RangeError);
    expect(() => generateCountry({ seed: 1, buildings: 10_000_001 })).toThrow(/buildings/);
    expect(() => generateCountry({ seed: -1, buildings: 10 })).toThrow(/seed/);
    expect(() => generateCountry({ seed: 1, buildings: 10, country: 'xa' })).toThrow(/country/);
    expect(() => generateCountry({ seed: 1, buildings: 10, date: '2026-02-30' })).toThrow(/date/);
    expect(() => generateCountry({ seed: 1, buildings: 10, bounds: [26, 44, 20, 48] })).toThrow(/bounds/);
    expect(() => generateCountry({ seed: 1, buildings: 10, builings: 5 } as never)).toThrow(/Unknown option "builings"/);
  });

  it('small and odd sizes come out exact', () => {
    for (const n of [1, 2, 17, 1_000]) expect([...generateCountry({ seed: 5, buildings: n })].length).toBe(n);
  });
});

describe('synthetic country: records', () => {
  it('has the requested count, ids derived from seed and index, and stays inside the bounds', () => {
    expect(records.length).toBe(N);
    expect(records.filter((r, i) => r.source_id !== `synthetic:${SEED}:${i}`).length).toBe(0);
    for (let i = 0; i < N; i += 97) expect(records[i].building_id).toBe(buildingId(records[i].source_id));
    expect(new Set(records.map((r) => r.building_id)).size).toBe(N);
    expect(share((r) => r.longitude > 20 && r.longitude < 26 && r.latitude > 44 && r.latitude < 48)).toBe(1);
  });

  it('draws outlines that are closed, simple, non-degenerate, hold their point and match their area', () => {
    const vertexCounts = new Map<number, number>();
    const bad: string[] = [];
    let holes = 0,
      parts = 0;
    for (const r of records) {
      const fail = (why: string) => bad.push(`${r.source_id}: ${why}`);
      if (r.footprint.length === 0) fail('no polygon');
      parts += r.footprint.length - 1;
      let area = 0;
      for (const polygon of r.footprint) {
        holes += polygon.length - 1;
        polygon.forEach((ring, k) => {
          const n = ring.length / 2 - 1;
          if (ring.length % 2 !== 0 || n < 4) fail(`ring of ${ring.length} numbers`);
          if (ring[0] !== ring[ring.length - 2] || ring[1] !== ring[ring.length - 1]) fail('ring not closed');
          for (let i = 0; i + 3 < ring.length; i += 2) if (ring[i] === ring[i + 2] && ring[i + 1] === ring[i + 3]) fail('repeated vertex');
          if (!isSimple(ring)) fail('ring crosses itself');
          const a = planarArea(ring, r.latitude);
          // Outer rings counter-clockwise, holes clockwise (RFC 7946), each holding real area.
          if (k === 0 ? a <= 1 : a >= -1) fail(`ring ${k} has signed area ${a}`);
          area += a;
          if (k === 0) vertexCounts.set(n, (vertexCounts.get(n) ?? 0) + 1);
        });
      }
      if (!inFootprint(r.footprint, r.longitude, r.latitude)) fail('representative point outside');
      if (Math.abs(area - r.footprint_area_m2) / r.footprint_area_m2 > 0.01) fail(`area ${r.footprint_area_m2} vs planar ${area}`);
    }
    expect(bad.slice(0, 5)).toEqual([]);
    // Rectangles mostly, but L, T, U, stepped, cross and round (12) shapes, holes and multi-part outlines too.
    expect([...vertexCounts.keys()].sort((a, b) => a - b)).toEqual(expect.arrayContaining([4, 5, 6, 8, 12]));
    expect(Math.max(...vertexCounts.keys())).toBeLessThanOrEqual(12);
    expect(vertexCounts.get(4)! / N).toBeGreaterThan(0.5);
    expect(holes).toBeGreaterThan(0);
    expect(parts).toBeGreaterThan(0);
  });

  it('has realistic shares of unknowns', () => {
    expect(share((r) => r.height_m === null)).toBeGreaterThan(0.15);
    expect(share((r) => r.height_m === null)).toBeLessThan(0.25);
    expect(share((r) => r.floors === null)).toBeGreaterThan(0.2);
    expect(share((r) => r.floors === null)).toBeLessThan(0.3);
    expect(share((r) => r.construction_year === null)).toBeGreaterThan(0.35);
    expect(share((r) => r.construction_year === null)).toBeLessThan(0.45);
    expect(share((r) => r.roof_shape === null)).toBeGreaterThan(0.45);
    expect(share((r) => r.roof_shape === null)).toBeLessThan(0.55);
    expect(share((r) => r.solar_potential_basis !== null)).toBeGreaterThan(0.6);
  });

  it('sizes are heavy-tailed, from sheds to warehouses, with exact ties in the sort keys', () => {
    const areas = records.map((r) => r.footprint_area_m2).sort((a, b) => a - b);
    expect(areas[0]).toBeLessThan(10);
    expect(areas[areas.length - 1]).toBeGreaterThan(2_000);
    expect(areas[areas.length - 1]).toBeLessThanOrEqual(10_100);
    const volumes = records.flatMap((r) => (r.volume_m3 === null ? [] : [r.volume_m3])).sort((a, b) => a - b);
    expect(volumes[volumes.length - 1] / volumes[volumes.length >> 1]).toBeGreaterThan(100);
    const heights = records.flatMap((r) => (r.height_m === null ? [] : [r.height_m]));
    expect(share((r) => r.height_m !== null && r.height_m > 30)).toBeLessThan(0.01);
    expect(Math.max(...heights)).toBeGreaterThan(30);
    const repeats = (values: number[]) => {
      const seen = new Map<number, number>();
      for (const v of values) seen.set(v, (seen.get(v) ?? 0) + 1);
      return Math.max(...seen.values());
    };
    expect(repeats(volumes)).toBeGreaterThanOrEqual(10);
    expect(repeats(areas)).toBeGreaterThanOrEqual(10);
    expect(repeats(heights)).toBeGreaterThanOrEqual(100);
  });

  it('fits categories to size and place', () => {
    const byCategory = new Map<string, BuildingRecord[]>();
    for (const r of records) {
      const list = byCategory.get(r.category);
      if (list) list.push(r);
      else byCategory.set(r.category, [r]);
    }
    for (const c of [
      'residential_house',
      'apartment_block',
      'commercial',
      'industrial',
      'public',
      'agricultural',
      'ancillary',
      'unknown',
    ]) {
      expect(byCategory.get(c)?.length ?? 0).toBeGreaterThan(0);
    }
    const median = (rs: BuildingRecord[]) => rs.map((r) => r.footprint_area_m2).sort((a, b) => a - b)[rs.length >> 1];
    expect(median(byCategory.get('ancillary')!)).toBeLessThan(median(byCategory.get('residential_house')!));
    expect(median(byCategory.get('residential_house')!)).toBeLessThan(median(byCategory.get('apartment_block')!));
    expect(median(byCategory.get('apartment_block')!)).toBeLessThan(median(byCategory.get('industrial')!) * 2);
    expect(share((r) => r.category === 'residential_house')).toBeGreaterThan(0.3);
    // Blocks list their flats; houses hold one or two dwellings.
    expect(share((r) => r.category === 'apartment_block' && r.units.length > 0)).toBeGreaterThan(0);
    expect(breaking((r) => r.category !== 'residential_house' || r.dwellings === null || r.dwellings <= 2)).toEqual([]);
    expect(
      breaking(
        (r) =>
          r.category !== 'apartment_block' || r.units.length === 0 || r.dwellings! >= r.units.filter((u) => u.use === 'residential').length,
      ),
    ).toEqual([]);
  });

  it('keeps addresses consistent: nearest_road only without address, evidence and corroboration agree', () => {
    expect(breaking((r) => r.address === null || r.nearest_road === null)).toEqual([]);
    expect(breaking((r) => (r.address === null) === (r.address_evidence === 'none'))).toEqual([]);
    expect(breaking((r) => r.address === null || r.address.endsWith(`, ${r.locality}`))).toEqual([]);
    expect(breaking((r) => r.address !== null || (r.address_corroboration === null && r.entrances.length === 0))).toEqual([]);
    expect(breaking((r) => r.address_evidence !== 'address_record' || r.entrances.length > 0)).toEqual([]);
    expect(breaking((r) => r.address_evidence !== 'business_listing' || r.businesses.length > 0)).toEqual([]);
    expect(breaking((r) => r.locality.length > 0)).toEqual([]);
    // The locality is stated where an address names it, else the settlement's: inferred.
    expect(breaking((r) => r.locality_basis === (r.address !== null ? 'stated' : 'inferred'))).toEqual([]);
    expect(share((r) => r.locality_basis === 'inferred')).toBeGreaterThan(0);
    // A corroboration speaks of a house number: a building shown without one has none.
    expect(
      breaking(
        (r) =>
          r.address_evidence !== 'address_record' ||
          (r.address_corroboration !== null) === r.entrances.every((e) => e.house_number !== null),
      ),
    ).toEqual([]);
    expect(share((r) => r.address !== null)).toBeGreaterThan(0.4);
    expect(share((r) => r.nearest_road !== null)).toBeGreaterThan(0.2);
    expect(share((r) => r.entrances.length > 1)).toBeGreaterThan(0);
    for (const c of ['corroborated', 'single_source', 'conflicting', null])
      expect(share((r) => r.address_corroboration === c)).toBeGreaterThan(0);
    expect(share((r) => r.address_evidence === 'business_listing')).toBeGreaterThan(0);
  });

  it('settles solar_presence from register and photo by spec 2.1, for every record', () => {
    const atAddress = new Map<string, number>();
    for (const r of records) if (r.address !== null) atAddress.set(r.address, (atAddress.get(r.address) ?? 0) + 1);
    const settled = (r: BuildingRecord): SolarPresence => {
      const registered = r.solar_installations.length > 0;
      const shared = r.address !== null && atAddress.get(r.address)! > 1;
      return registered && !shared
        ? 'registered'
        : r.panels_status === 'detected'
          ? 'detected'
          : registered
            ? 'registered_at_address'
            : r.panels_status === 'none_seen'
              ? 'none_seen'
              : r.panels_status === 'unclear'
                ? 'unclear'
                : 'unknown';
    };
    expect(breaking((r) => r.solar_presence === settled(r))).toEqual([]);
    // A register lists installations at an address record; the photo's fields come together.
    expect(breaking((r) => r.solar_installations.length === 0 || r.address_evidence === 'address_record')).toEqual([]);
    expect(
      breaking(
        (r) =>
          (r.panels_photo_date === null) === (r.panels_status === null) && (r.panels_confidence === null) === (r.panels_status === null),
      ),
    ).toEqual([]);
    const seen = new Set(records.map((r) => r.solar_presence));
    expect(seen.size).toBe(6);
    expect(share((r) => r.solar_installations.some((s) => s.power_kw === null))).toBeGreaterThan(0);
    expect(new Set(records.flatMap((r) => r.solar_installations.map((s) => s.storage)))).toEqual(new Set([true, false, null]));
  });

  it('gives solar potential all its figures together, with roof planes and every basis', () => {
    expect(
      breaking((r) => {
        const figures = [r.solar_panel_count, r.solar_capacity_kwp, r.solar_yearly_energy_kwh, r.solar_co2_savings_kg_per_year];
        return r.solar_potential_basis === null
          ? figures.every((v) => v === null) && r.roof_planes.length === 0
          : figures.every((v) => v !== null && v >= 0);
      }),
    ).toEqual([]);
    expect(
      breaking((r) => r.roof_planes.every((p) => p.azimuth_deg >= 0 && p.azimuth_deg <= 360 && p.tilt_deg >= 0 && p.tilt_deg < 90)),
    ).toEqual([]);
    const bases = new Set(records.map((r) => r.solar_potential_basis));
    expect(bases).toEqual(new Set([null, 'measured', 'estimated', 'stated', 'measured_cut_to_outline']));
  });

  it('registers businesses at a few per cent of buildings, with exact sizes, bands, open bands and unknowns', () => {
    const active = share((r) => r.businesses.some((b) => b.active));
    expect(active).toBeGreaterThan(0.02);
    expect(active).toBeLessThan(0.1);
    const all = records.flatMap((r) => r.businesses);
    expect(all.some((b) => !b.active)).toBe(true);
    expect(all.some((b) => b.employees_min !== null && b.employees_min === b.employees_max)).toBe(true);
    expect(all.some((b) => b.employees_min !== null && b.employees_max !== null && b.employees_max > b.employees_min)).toBe(true);
    expect(all.some((b) => b.employees_min !== null && b.employees_max === null)).toBe(true);
    expect(all.some((b) => b.employees_min === null && b.employees_max === null)).toBe(true);
    expect(
      all.filter(
        (b) => (b.employees_min === null && b.employees_max !== null) || (b.employees_max !== null && b.employees_max < b.employees_min!),
      ),
    ).toEqual([]);
    expect(all.filter((b) => b.turnover !== null && b.turnover_currency !== 'RON' && b.turnover_currency !== 'EUR')).toEqual([]);
    expect(new Set(all.map((b) => b.turnover_currency))).toEqual(new Set(['RON', 'EUR', null]));
    expect(new Set(all.map((b) => b.business_id)).size).toBe(all.length);
  });

  it('varies hazards and climate over the country', () => {
    expect(share((r) => r.flood_zone !== null)).toBeGreaterThan(0.01);
    expect(share((r) => r.flood_zone !== null)).toBeLessThan(0.3);
    expect(share((r) => r.flood_zone_mapped)).toBeGreaterThan(0.1);
    expect(
      breaking((r) => (r.flood_zone === null || r.flood_zone_mapped) && (r.flood_zone_source === null) === !r.flood_zone_mapped),
    ).toEqual([]);
    expect(breaking((r) => r.seismic_design_acceleration_g! >= 0.1 && r.seismic_design_acceleration_g! <= 0.4)).toEqual([]);
    expect(breaking((r) => (r.seismic_risk_class === null) === (r.seismic_risk_assessment_year === null))).toEqual([]);
    expect(share((r) => r.seismic_risk_class !== null)).toBeGreaterThan(0);
    expect(share((r) => r.seismic_risk_class !== null)).toBeLessThan(0.02);
    // A list's N/A: named, with neither class nor year; a class or a year only on a listed building.
    expect(share((r) => r.seismic_listed && r.seismic_risk_class === null)).toBeGreaterThan(0);
    expect(breaking((r) => r.seismic_listed || r.seismic_risk_class === null)).toEqual([]);
    // Colder to the north: the least-squares slope of mean temperature on latitude is negative.
    const pts = records.filter((r) => r.recent_mean_temperature_c !== null).map((r) => [r.latitude, r.recent_mean_temperature_c!]);
    const mx = pts.reduce((s, p) => s + p[0], 0) / pts.length,
      my = pts.reduce((s, p) => s + p[1], 0) / pts.length;
    const slope = pts.reduce((s, p) => s + (p[0] - mx) * (p[1] - my), 0) / pts.reduce((s, p) => s + (p[0] - mx) ** 2, 0);
    expect(slope).toBeLessThan(0);
    const trend = share((r) => r.recent_mean_temperature_c !== null && r.recent_temperature_trend_c_per_decade !== null);
    expect(trend).toBeGreaterThan(0.5);
    expect(trend).toBeLessThan(1);
  });

  it('fills energy facts in plausible proportions', () => {
    expect(share((r) => r.annual_heating_demand_kwh !== null)).toBeGreaterThan(0.2);
    const assessed = share((r) => r.thermal_assessment !== null);
    expect(assessed).toBeGreaterThan(0.005);
    expect(assessed).toBeLessThan(0.08);
    expect(
      share((r) => r.thermal_assessment !== null && r.design_indoor_temperature_c !== null && r.design_outdoor_temperature_c !== null),
    ).toBeGreaterThan(0);
    expect(
      breaking((r) => r.thermal_assessment !== null || (r.design_indoor_temperature_c === null && r.design_outdoor_temperature_c === null)),
    ).toEqual([]);
    expect(share((r) => r.district_heating_available === true)).toBeGreaterThan(0);
    expect(share((r) => r.gas_network_available === true)).toBeGreaterThan(0.3);
    expect(share((r) => r.volume_basis === 'measured')).toBeGreaterThan(0.05);
    expect(share((r) => r.has_3d_model)).toBeGreaterThan(0.05);
  });
});

describe('npm run synth', () => {
  function synth(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      execFile(process.execPath, ['--import', 'tsx', 'tools/synth.ts', ...args], { cwd: REPO, encoding: 'utf8' }, (err, stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
      });
    });
  }

  it('writes a country and prints a summary', async () => {
    const out = tempDir();
    const r = await synth(['--seed', '42', '--buildings', '1_000', '--country', 'XA', '--date', '2026-11-21', '--out', out]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/rows\s+1,000/);
    expect(r.stdout).toMatch(/bytes\/building\s+\d+/);
    expect(r.stdout).toMatch(/peak RSS\s+[\d,]+ MB/);
    expect(readSnapshot(join(out, 'XA', '2026-11-21.arrow')).table.numRows).toBe(1_000);
  });

  it('refuses bad options with a message and a non-zero exit', async () => {
    for (const args of [
      ['--buildings', '10000001'],
      ['--seed', 'x'],
      ['--nope'],
      ['--bounds', ',44,26,48'],
      ['--bounds', '20,44,26,48,'],
      ['--out', ' '],
    ]) {
      const r = await synth(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(/^synth: /);
    }
    // Given twice, the last value would win without a word.
    const twice = await synth(['--seed', '1', '--buildings', '1000', '--seed', '2', '--help']);
    expect([twice.code, twice.stdout, twice.stderr.split('\n')[0]]).toEqual([
      2,
      '',
      'synth: --seed given twice ("1", then "2"): give it once',
    ]);
  });

  it('says in one line why it cannot write where --out points', async () => {
    const file = join(tempDir(), 'a-file');
    writeFileSync(file, 'x');
    const [underFile, underProc] = await Promise.all([
      synth(['--buildings', '1000', '--out', file]),
      synth(['--buildings', '1000', '--out', '/proc/edifice-synth-test']),
    ]);
    expect([underFile.code, underFile.stderr.split('\n').filter((l) => l.startsWith('synth: ENOTDIR'))]).toEqual([
      1,
      [`synth: ENOTDIR: not a directory, mkdir '${file}/XA'`],
    ]);
    expect(underProc.code).toBe(1);
    expect(underProc.stderr).toMatch(/^synth: ENOENT: no such file or directory, mkdir '\/proc\/edifice-synth-test'$/m);
    expect(underProc.stderr).not.toMatch(/\n\s+at /);
  });
});
