/**
 * The public side over real HTTP: building and place pages, covered countries, country
 * requests, removal requests and building reports, on a real server with a real ledger file and a
 * snapshot written by the real generator. Expected facts are worked out here from the snapshot
 * decoded independently (test/reference), not from the server's code; every live response is
 * checked against the OpenAPI document the server serves.
 */
import { spawnSync } from 'node:child_process';
import { connect } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Ledger, signWebhook } from '../src/ledger/index.ts';
import { CATEGORY, FLOOD_ZONE, SEISMIC_RISK_CLASS, type BuildingRecord } from '../src/snapshot/schema.ts';
import { writeSyntheticCountry } from '../src/synth/generate.ts';
import {
  ResponseValidator,
  killServerProcesses,
  removeDir,
  startServerProcess,
  startTestServer,
  syntheticSnapshots,
  type TestServer,
} from './http-helpers.ts';
import { decodeSnapshotDir, type RefBuilding } from './reference/reference.ts';
import { Rng } from './reference/random.ts';

type J = Record<string, any>;
interface Got {
  status: number;
  headers: Headers;
  body: J;
  text: string;
}

const START = Date.parse('2026-11-22T10:00:00Z');
const clock = { ms: START };
const now = () => clock.ms;
const BOUNDS: [number, number, number, number] = [9.4, 47.0, 9.7, 47.3];
/** Reports given away, so that orders are paid at once without a payment provider. */
const FREE_REPORTS = { EDIFICE_REPORTS_FREE: '1' };

let dir: string;
let t: TestServer;
let validator: ResponseValidator;
let buildings: RefBuilding[];

/** One request, checked against the served OpenAPI document (template names its path). */
async function call(
  server: TestServer,
  method: string,
  template: string,
  path: string,
  init: { headers?: Record<string, string>; body?: string } = {},
): Promise<Got> {
  const res = await fetch(`${server.base}${path}`, { method, headers: init.headers, body: init.body });
  const text = await res.text();
  const body = text === '' ? {} : (JSON.parse(text) as J);
  expect(validator.problems(template, res.status, res.headers, body, method.toLowerCase())).toEqual([]);
  return { status: res.status, headers: res.headers, body, text };
}

/** Writes `requests` on one connection to 127.0.0.1:port and returns what came back within 1.5 s (or until the server closes). */
function exchange(port: number, requests: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let got = '';
    const socket = connect(port, '127.0.0.1', () => socket.write(requests));
    const done = () => {
      socket.destroy();
      resolve(got);
    };
    const timer = setTimeout(done, 1500);
    socket.on('data', (d) => {
      got += d.toString('latin1');
    });
    socket.on('end', () => {
      clearTimeout(timer);
      done();
    });
    socket.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

const get = (path: string, template: string, headers: Record<string, string> = {}, server = t) =>
  call(server, 'GET', template, path, { headers });
const post = (template: string, doc: unknown, headers: Record<string, string> = {}, server = t) =>
  call(server, 'POST', template, template, {
    headers: { 'Content-Type': 'application/json', ...headers },
    body: typeof doc === 'string' ? doc : JSON.stringify(doc),
  });

const median = (values: number[]): number | null => {
  if (values.length === 0) return null;
  const v = [...values].sort((a, b) => a - b);
  const m = v.length >> 1;
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
};

beforeAll(async () => {
  dir = await syntheticSnapshots(4000, 11, 'LI');
  t = await startTestServer(dir, { now, perKeyPerMinute: 1_000_000, dailyQuota: 1_000_000 }, 'ledger.db', FREE_REPORTS);
  validator = new ResponseValidator((await (await fetch(`${t.base}/openapi.json`)).json()) as J);
  buildings = decodeSnapshotDir(join(dir, 'snapshots'))[0].buildings;
});

afterAll(() => {
  t?.close();
  killServerProcesses();
  if (dir) removeDir(dir);
});

// Each test starts with full per-address buckets: an hour passes between tests.
beforeEach(() => {
  clock.ms += 3_600_000;
});

describe('covered countries', () => {
  it('lists each country with its snapshot date, buildings, places and sources', async () => {
    const r = await get('/public/countries', '/public/countries');
    expect(r.status).toBe(200);
    const places = new Set(buildings.map((b) => b.locality).filter((l) => l !== ''));
    const lons = buildings.map((b) => b.longitude);
    const lats = buildings.map((b) => b.latitude);
    expect(r.body.data).toEqual([
      {
        country: 'LI',
        snapshotDate: '2026-11-21',
        buildings: buildings.length,
        places: places.size,
        bbox: [Math.min(...lons), Math.min(...lats), Math.max(...lons), Math.max(...lats)],
        sources: [expect.objectContaining({ name: 'Edifice synthetic generator', licence: 'CC0-1.0' })],
      },
    ]);
  });
});

describe('public building pages', () => {
  /** Every fact the page shows, by hand from the record and spec 2.4: [value, estimate]. */
  function expectedFacts(b: BuildingRecord): Record<string, [unknown, boolean]> {
    const est = (value: unknown, modelled: boolean): [unknown, boolean] => [value, value === null ? false : modelled];
    const power =
      b.solar_installations.length === 0 || b.solar_installations.some((i) => i.power_kw === null)
        ? null
        : Math.round(b.solar_installations.reduce((s, i) => s + i.power_kw!, 0) * 1e6) / 1e6;
    const solarModelled = b.solar_potential_basis === 'estimated';
    return {
      address: est(b.address, false),
      nearestRoad: est(b.nearest_road, false),
      postalCode: est(b.postal_code, false),
      locality: est(b.locality || null, b.locality_basis === 'inferred'),
      category: est(b.category === 'unknown' ? null : b.category, b.category_evidence === 'inferred'),
      buildingType: est(b.building_type === 'unspecified' ? null : b.building_type, false),
      roofShape: est(b.roof_shape, false),
      footprintAreaM2: est(b.footprint_area_m2, false),
      heightM: est(b.height_m, b.height_basis === 'estimated'),
      floors: est(b.floors, b.floors_is_estimate),
      floorsIncludingUnderground: est(b.floors_including_underground, b.floors_is_estimate),
      floorAreaM2: est(b.floor_area_m2, b.floor_area_basis === 'estimated'),
      volumeM3: est(b.volume_m3, b.volume_basis === 'estimated'),
      constructionYear: est(b.construction_year, b.construction_year_is_estimate),
      completedByYear: est(b.completed_by_year, false),
      dwellings: est(b.dwellings, b.dwellings_is_estimate),
      has3dModel: est(b.has_3d_model, false),
      solarPresence: est(b.solar_presence === 'unknown' ? null : b.solar_presence, false),
      existingSolarPanels: est(b.panels_status, false),
      registeredSolarPowerKw: est(power, false),
      solarPanelCount: est(b.solar_panel_count, solarModelled),
      solarCapacityKwp: est(b.solar_capacity_kwp, solarModelled),
      solarYearlyEnergyKwh: est(b.solar_yearly_energy_kwh, solarModelled),
      solarCo2SavingsKgPerYear: est(b.solar_co2_savings_kg_per_year, solarModelled),
      floodZone: est(b.flood_zone, false),
      floodZoneMapped: est(b.flood_zone_mapped, false),
      floodZoneSource: est(b.flood_zone_source, false),
      seismicDesignAccelerationG: est(b.seismic_design_acceleration_g, false),
      seismicRiskClass: est(b.seismic_risk_class, false),
      seismicRiskAssessmentYear: est(b.seismic_risk_assessment_year, false),
      recentMeanTemperatureC: est(b.recent_mean_temperature_c, true),
      recentTemperatureTrendCPerDecade: est(b.recent_temperature_trend_c_per_decade, true),
      recentFrostDays: est(b.recent_frost_days, true),
      recentHotDays: est(b.recent_hot_days, true),
      recentMinimumDailyTemperatureC: est(b.recent_minimum_daily_temperature_c, true),
      recentMaximumDailyTemperatureC: est(b.recent_maximum_daily_temperature_c, true),
      recentAnnualPrecipitationMm: est(b.recent_annual_precipitation_mm, true),
      recentMaxOneDayPrecipitationMm: est(b.recent_max_one_day_precipitation_mm, true),
      annualHeatingDemandKwh: est(b.annual_heating_demand_kwh, true),
      thermalAssessment: est(b.thermal_assessment, false),
      designIndoorTemperatureC: est(b.design_indoor_temperature_c, false),
      designOutdoorTemperatureC: est(b.design_outdoor_temperature_c, false),
      districtHeatingAvailable: est(b.district_heating_available, false),
      gasNetworkAvailable: est(b.gas_network_available, false),
    };
  }

  it('show every fact as {value, estimate}, camelCase, and the businesses with the caution', async () => {
    const rng = new Rng(5);
    const inferred = buildings.filter((b) => b.locality_basis === 'inferred' && b.locality !== '').slice(0, 3);
    const stated = buildings.filter((b) => b.locality_basis === 'stated').slice(0, 2);
    expect([inferred.length, stated.length]).toEqual([3, 2]);
    const sample = [
      ...buildings.filter((b) => b.businesses.length > 1).slice(0, 3),
      ...inferred,
      ...stated,
      ...Array.from({ length: 25 }, () => buildings[rng.int(0, buildings.length - 1)]),
    ];
    for (const b of sample) {
      const r = await get(`/public/buildings/${b.building_id}`, '/public/buildings/{building_id}');
      expect(r.status).toBe(200);
      expect(r.body.buildingId).toBe(b.building_id);
      expect([r.body.country, r.body.snapshotDate]).toEqual(['LI', '2026-11-21']);
      const expected = expectedFacts(b);
      expect(Object.keys(r.body.facts).sort()).toEqual(Object.keys(expected).sort());
      for (const [name, [value, estimate]] of Object.entries(expected)) {
        expect(r.body.facts[name], `${b.building_id} ${name}`).toEqual({ value, estimate });
      }
      expect(r.body.registeredBusinesses.caution).toMatch(/never evidence that it owns or occupies/);
      expect(r.body.registeredBusinesses.count).toBe(b.businesses.length);
      expect(r.body.registeredBusinesses.data).toEqual(
        b.businesses.map((x) => ({
          businessId: x.business_id,
          registrationNumber: x.registration_number,
          name: x.name,
          active: x.active,
        })),
      );
      for (const key of [...Object.keys(r.body), ...Object.keys(r.body.facts)]) expect(key).toMatch(/^[a-z][A-Za-z0-9]*$/);
    }
  });

  it('an unknown building is 404 {error: not_found}; a bad id or an unknown parameter is 400 with a message', async () => {
    const missing = await get('/public/buildings/00000000-0000-5000-8000-000000000000', '/public/buildings/{building_id}');
    expect([missing.status, missing.body]).toEqual([404, { error: 'not_found' }]);
    const bad = await get('/public/buildings/not-a-uuid', '/public/buildings/{building_id}');
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ error: 'invalid_parameter', message: expect.stringMatching(/^building_id: expected a UUID/) });
    const unknown = await get(`/public/buildings/${buildings[0].building_id}?lang=ro`, '/public/buildings/{building_id}');
    expect(unknown.status).toBe(400);
    expect(unknown.body).toEqual({ error: 'invalid_parameter', message: expect.stringMatching(/^lang: not a parameter/) });
    const escape = await get('/public/places/LI/%E0%A4%A', '/public/places/{country}/{locality}');
    expect(escape.body).toEqual({ error: 'invalid_parameter', message: expect.stringMatching(/^locality:/) });
    for (const unknownPath of ['/public/nothing/here', '/public', '/public/']) {
      const path = await fetch(`${t.base}${unknownPath}`);
      expect([unknownPath, path.status, await path.json()]).toEqual([unknownPath, 404, { error: 'not_found' }]);
    }
  });
});

describe('public place pages', () => {
  const byLocality = () => {
    const m = new Map<string, RefBuilding[]>();
    for (const b of buildings) if (b.locality !== '') m.set(b.locality, [...(m.get(b.locality) ?? []), b]);
    return m;
  };

  it('list the places of a country with their building counts', async () => {
    const r = await get('/public/countries/LI/places', '/public/countries/{country}/places');
    expect(r.status).toBe(200);
    expect([r.body.country, r.body.snapshotDate]).toEqual(['LI', '2026-11-21']);
    const expected = [...byLocality()].map(([locality, list]) => ({ locality, buildings: list.length }));
    const sort = (a: { locality: string }, b: { locality: string }) => (a.locality < b.locality ? -1 : 1);
    expect([...r.body.data].sort(sort)).toEqual(expected.sort(sort));
  });

  it("count and summarise a place's buildings as a brute force over its records does", async () => {
    const places = [...byLocality()].sort((a, b) => b[1].length - a[1].length);
    for (const [locality, list] of [places[0], places[Math.floor(places.length / 2)], places[places.length - 1]]) {
      const r = await get(`/public/places/LI/${encodeURIComponent(locality)}`, '/public/places/{country}/{locality}');
      expect(r.status).toBe(200);
      expect([r.body.country, r.body.locality]).toEqual(['LI', locality]);
      const f = r.body.facts;
      const exact = (value: unknown) => ({ value, estimate: false });
      const countBy = (values: readonly string[], pick: (b: RefBuilding) => string | null) =>
        Object.fromEntries(values.map((v) => [v, list.filter((b) => pick(b) === v).length]));
      expect(f.buildings).toEqual(exact(list.length));
      expect(f.buildingsByCategory).toEqual(exact(countBy(CATEGORY, (b) => b.category)));
      const years = list.filter((b) => b.construction_year !== null);
      const yearsModelled = years.some((b) => b.construction_year_is_estimate);
      expect(f.buildingsWithConstructionYear).toEqual(exact(years.length));
      const ys = years.map((b) => b.construction_year!);
      expect(f.constructionYearEarliest).toEqual({ value: ys.length ? Math.min(...ys) : null, estimate: yearsModelled });
      expect(f.constructionYearMedian).toEqual({ value: median(ys), estimate: yearsModelled });
      expect(f.constructionYearLatest).toEqual({ value: ys.length ? Math.max(...ys) : null, estimate: yearsModelled });
      const heights = list.filter((b) => b.height_m !== null);
      expect(f.medianHeightM).toEqual({
        value: median(heights.map((b) => b.height_m!)),
        estimate: heights.some((b) => b.height_basis === 'estimated'),
      });
      const floors = list.filter((b) => b.floors !== null);
      expect(f.medianFloors).toEqual({ value: median(floors.map((b) => b.floors!)), estimate: floors.some((b) => b.floors_is_estimate) });
      const solar = list.filter((b) => b.solar_presence === 'registered' || b.solar_presence === 'detected').length;
      // Unknown (null), not zero, when no building of the place has a solar record, nor a flood map.
      // The share is of the buildings whose solar_presence is known.
      const solarKnown = list.filter((b) => b.solar_presence !== 'unknown').length;
      expect(f.buildingsWithSolar).toEqual(exact(solarKnown > 0 ? solar : null));
      expect(f.shareWithSolar).toEqual(exact(solarKnown > 0 ? Math.round((solar / solarKnown) * 1000) / 1000 : null));
      const potential = list.filter((b) => b.solar_potential_basis !== null);
      expect(f.buildingsWithSolarPotential).toEqual(exact(potential.length));
      if (potential.length === 0) expect(f.solarCapacityKwpTotal).toEqual(exact(null));
      else
        expect(f.solarCapacityKwpTotal.value).toBeCloseTo(
          potential.reduce((s, b) => s + (b.solar_capacity_kwp ?? 0), 0),
          1,
        );
      expect(f.buildingsFloodMapped).toEqual(exact(list.filter((b) => b.flood_zone_mapped).length));
      const mapped = list.some((b) => b.flood_zone_mapped);
      expect(f.buildingsInFloodZone).toEqual(exact(mapped ? list.filter((b) => b.flood_zone !== null).length : null));
      expect(f.buildingsByFloodZone).toEqual(exact(mapped ? countBy(FLOOD_ZONE, (b) => b.flood_zone) : null));
      expect(f.buildingsOnSeismicList).toEqual(exact(list.filter((b) => b.seismic_listed).length));
      expect(f.buildingsBySeismicRiskClass).toEqual(exact(countBy(SEISMIC_RISK_CLASS, (b) => b.seismic_risk_class)));
      expect(f.buildingsWithHeatingEstimate).toEqual(exact(list.filter((b) => b.annual_heating_demand_kwh !== null).length));
      expect(f.buildingsWithThermalAssessment).toEqual(exact(list.filter((b) => b.thermal_assessment !== null).length));
      const knownCount = (known: (b: RefBuilding) => boolean, yes: (b: RefBuilding) => boolean) =>
        exact(list.some(known) ? list.filter(yes).length : null);
      expect(f.buildingsWithDistrictHeating).toEqual(
        knownCount(
          (b) => b.district_heating_available !== null,
          (b) => b.district_heating_available === true,
        ),
      );
      expect(f.buildingsWithGasNetwork).toEqual(
        knownCount(
          (b) => b.gas_network_available !== null,
          (b) => b.gas_network_available === true,
        ),
      );
    }
  });

  it('an unknown place or country is 404; a malformed country is 400', async () => {
    expect((await get('/public/places/LI/Nowhere%20at%20all', '/public/places/{country}/{locality}')).body).toEqual({ error: 'not_found' });
    expect((await get('/public/places/PT/Lisboa', '/public/places/{country}/{locality}')).body).toEqual({ error: 'not_found' });
    expect((await get('/public/countries/PT/places', '/public/countries/{country}/places')).status).toBe(404);
    const bad = await get('/public/countries/li/places', '/public/countries/{country}/places');
    expect([bad.status, bad.body.error]).toEqual([400, 'invalid_parameter']);
    expect(bad.body.message).toMatch(/^country:/);
  });
});

describe('caching', () => {
  it('Cache-Control public with max-age, an ETag tied to the snapshot, 304 on If-None-Match', async () => {
    const path = `/public/buildings/${buildings[7].building_id}`;
    const first = await get(path, '/public/buildings/{building_id}');
    expect(first.headers.get('cache-control')).toBe('public, max-age=300');
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^"[^"]+"$/);
    for (const inm of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const again = await get(path, '/public/buildings/{building_id}', { 'If-None-Match': inm });
      // No Content-Length: a 304's would have to be the 200's (RFC 9110 8.6).
      expect([again.status, again.text, again.headers.get('etag'), again.headers.get('content-length')]).toEqual([304, '', etag, null]);
      const head = await fetch(`${t.base}${path}`, { method: 'HEAD', headers: { 'If-None-Match': inm } });
      expect([head.status, head.headers.get('etag'), head.headers.get('content-length')]).toEqual([304, etag, null]);
    }
    expect((await get(path, '/public/buildings/{building_id}', { 'If-None-Match': '"stale"' })).status).toBe(200);
    const countries = await get('/public/countries', '/public/countries');
    expect((await get('/public/countries', '/public/countries', { 'If-None-Match': countries.headers.get('etag')! })).status).toBe(304);
  });

  it("HEAD gives a page's headers without its body; another method is 405 with Allow, in the route's own error format", async () => {
    const path = `${t.base}/public/buildings/${buildings[8].building_id}`;
    const head = await fetch(path, { method: 'HEAD' });
    const got = await fetch(path);
    const gotBody = Buffer.from(await got.arrayBuffer());
    expect([head.status, await head.text()]).toEqual([200, '']);
    expect(head.headers.get('etag')).toBe(got.headers.get('etag'));
    // The length the body would have (RFC 9110 9.3.2), not 0.
    expect(head.headers.get('content-length')).toBe(String(gotBody.length));
    expect(head.headers.get('cache-control')).toBe('public, max-age=300');
    const post = await fetch(path, { method: 'POST' });
    expect([post.status, post.headers.get('allow'), await post.json()]).toEqual([
      405,
      'GET, HEAD',
      { error: 'invalid_parameter', message: 'POST is not allowed here; use GET, HEAD.' },
    ]);
    const getRequests = await fetch(`${t.base}/public/country-requests`);
    expect([getRequests.status, getRequests.headers.get('allow')]).toEqual([405, 'POST']);
    expect(await getRequests.json()).toEqual({
      error: { code: 'method_not_allowed', message: 'GET is not allowed here; use POST.', parameter: '' },
    });
    const postBuildings = await fetch(`${t.base}/buildings?bbox=1,1,2,2`, { method: 'POST' });
    expect([postBuildings.status, postBuildings.headers.get('allow'), ((await postBuildings.json()) as J).error.code]).toEqual([
      405,
      'GET',
      'method_not_allowed',
    ]);
    const deleteReport = await fetch(`${t.base}/reports/ord_AAAAAAAAAAAAAA`, { method: 'DELETE' });
    expect([deleteReport.status, deleteReport.headers.get('allow')]).toEqual([405, 'GET']);
  });

  it('a HEAD answer carries no body, whatever its status: the next response on the connection reads whole', async () => {
    const host = new URL(t.url);
    const base = new URL(t.base).pathname;
    // HEAD where only GET is served (405), on no route (404), on a page (200), each followed on
    // the same connection by a GET whose answer must start right after the HEAD's headers.
    for (const target of [
      `${base}/buildings?bbox=1,1,2,2`,
      `${base}/no-such-route`,
      `${base}/public/countries`,
      `${base}/public/nothing-here`,
    ]) {
      const raw = await exchange(
        Number(host.port),
        `HEAD ${target} HTTP/1.1\r\nHost: x\r\n\r\nGET ${base}/public/countries HTTP/1.1\r\nHost: x\r\n\r\n`,
      );
      const firstEnd = raw.indexOf('\r\n\r\n') + 4;
      expect(firstEnd, target).toBeGreaterThan(4);
      const second = raw.slice(firstEnd);
      expect(second.startsWith('HTTP/1.1 200 OK\r\n'), `${target}: ${JSON.stringify(second.slice(0, 80))}`).toBe(true);
      const length = Number(/content-length: (\d+)/i.exec(second)![1]);
      expect(JSON.parse(second.slice(second.indexOf('\r\n\r\n') + 4, second.indexOf('\r\n\r\n') + 4 + length)).data.length).toBeGreaterThan(
        0,
      );
    }
  });

  it('answers the same to everyone', async () => {
    const path = `/public/places/LI/${encodeURIComponent(buildings[3].locality)}`;
    const a = await get(path, '/public/places/{country}/{locality}', { Cookie: 'session=1', 'X-Forwarded-For': '198.51.100.7' });
    const b = await get(path, '/public/places/{country}/{locality}', { 'Accept-Language': 'ro' });
    expect(a.text).toBe(b.text);
    expect(a.headers.get('etag')).toBe(b.headers.get('etag'));
  });
});

describe('per-address limit: 120 a minute across /public', () => {
  /** Sends n GETs at once (the clock does not move) and returns their statuses. */
  async function burst(server: TestServer, n: number, headers: Record<string, string> = {}): Promise<Got[]> {
    return Promise.all(Array.from({ length: n }, () => get('/public/countries', '/public/countries', headers, server)));
  }

  it('the 121st request of a minute is 429 {error: rate_limited} with Retry-After; they come back when the minute has passed', async () => {
    const first = await burst(t, 120);
    expect(first.every((r) => r.status === 200)).toBe(true);
    const refused = await get('/public/countries', '/public/countries');
    expect([refused.status, refused.body]).toEqual([429, { error: 'rate_limited' }]);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // Country requests are under /public too.
    expect((await post('/public/country-requests', { country: 'PT' })).status).toBe(429);
    // The 120 stay in the window for a whole minute, then leave it together.
    clock.ms += 59_999;
    expect((await get('/public/countries', '/public/countries')).status).toBe(429);
    clock.ms += 1;
    expect((await burst(t, 3)).map((r) => r.status)).toEqual([200, 200, 200]);
  });

  it('without trusted proxies X-Forwarded-For is ignored: a client cannot pick its own address', async () => {
    await burst(t, 120, { 'X-Forwarded-For': '203.0.113.1' });
    expect((await get('/public/countries', '/public/countries', { 'X-Forwarded-For': '203.0.113.2' })).status).toBe(429);
  });

  it('behind one trusted proxy the rightmost X-Forwarded-For entry is the client; IPv6 counts by /56', async () => {
    const proxied = await startTestServer(dir, { now }, 'ledger-proxied.db', { EDIFICE_TRUSTED_PROXIES: '1' });
    try {
      expect((await burst(proxied, 120, { 'X-Forwarded-For': '203.0.113.5' })).every((r) => r.status === 200)).toBe(true);
      expect((await get('/public/countries', '/public/countries', { 'X-Forwarded-For': '203.0.113.5' }, proxied)).status).toBe(429);
      // A client writing its own entry to the left does not escape its bucket...
      expect((await get('/public/countries', '/public/countries', { 'X-Forwarded-For': '10.9.9.9, 203.0.113.5' }, proxied)).status).toBe(
        429,
      );
      // ...another client is not affected.
      expect((await get('/public/countries', '/public/countries', { 'X-Forwarded-For': '203.0.113.6' }, proxied)).status).toBe(200);
      expect((await burst(proxied, 120, { 'X-Forwarded-For': '2001:db8:0:100::1' })).every((r) => r.status === 200)).toBe(true);
      expect((await get('/public/countries', '/public/countries', { 'X-Forwarded-For': '2001:db8:0:1ff::2' }, proxied)).status).toBe(429);
      expect((await get('/public/countries', '/public/countries', { 'X-Forwarded-For': '2001:db8:0:200::1' }, proxied)).status).toBe(200);
    } finally {
      proxied.close();
    }
  });
});

describe('country requests', () => {
  it('stores a request for a country not yet covered: 201 with the stored request', async () => {
    const r = await post('/public/country-requests', { country: 'PT', email: 'ana@example.pt', comment: 'Lisbon first, please.' });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({ id: expect.any(Number), country: 'PT', status: 'received', created_at: new Date(now()).toISOString() });
    expect(t.ledger.countryRequests()[0]).toMatchObject({
      id: r.body.id,
      country: 'PT',
      email: 'ana@example.pt',
      comment: 'Lisbon first, please.',
    });
    expect((await post('/public/country-requests', { country: 'RO' })).status).toBe(201);
    // Quotes, braces and a field's name inside a string are text, not a second field.
    const tricky = await post('/public/country-requests', '{"comment": "a \\"country\\": \\"ES\\", {[", "country": "PT"}');
    expect([tricky.status, tricky.body.country]).toEqual([201, 'PT']);
    for (const type of ['application/json; charset=utf-8', 'application/json;charset="UTF-8"', 'Application/JSON; charset=utf8']) {
      expect((await post('/public/country-requests', { country: 'RO' }, { 'Content-Type': type })).status, type).toBe(201);
    }
    // A pair of surrogate escapes is one character, kept as sent.
    const paired = await post('/public/country-requests', '{"country": "PT", "comment": "Lisboa \\ud83d\\ude00"}');
    expect(paired.status).toBe(201);
    expect(t.ledger.countryRequests()[0]).toMatchObject({ id: paired.body.id, comment: 'Lisboa 😀' });
  });

  it('refuses each bad body with the field named, in the authenticated error format, and stores nothing', async () => {
    const before = t.ledger.countryRequests().length;
    const cases: [unknown, string, RegExp][] = [
      [{ country: 'LI' }, 'country', /already covered/],
      [{ country: 'XA' }, 'country', /not an ISO 3166-1 alpha-2 country code/],
      [{ country: 'pt' }, 'country', /ISO 3166-1 alpha-2 code in capitals/],
      [{ country: 'PRT' }, 'country', /ISO 3166-1/],
      [{ country: 7 }, 'country', /expected a string/],
      [{}, 'country', /required/],
      [{ country: 'PT', email: 'not an email' }, 'email', /email address/],
      [{ country: 'PT', comment: 'x'.repeat(1001) }, 'comment', /at most 1000 characters/],
      [{ country: 'PT', comment: 'bell\u0007' }, 'comment', /control characters/],
      ['{"country": "PT", "comment": "half \\ud800 a pair"}', 'comment', /lone surrogate/],
      [{ country: 'PT', contry: 'PT' }, 'contry', /not a field/],
      [['PT'], 'body', /JSON object/],
      ['{"country": "PT", "email": "a@b.pt", "country": "ES"}', 'country', /given more than once/],
      ['{"country": "PT"', 'body', /not valid JSON/],
    ];
    for (const [doc, parameter, message] of cases) {
      const r = await post('/public/country-requests', doc);
      expect(r.status, JSON.stringify(doc)).toBe(400);
      expect(r.body).toEqual({ error: { code: 'invalid_parameter', message: expect.stringMatching(message), parameter } });
    }
    const form = await call(t, 'POST', '/public/country-requests', '/public/country-requests', {
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'country=PT',
    });
    expect([form.status, form.body.error.code, form.body.error.parameter]).toEqual([415, 'unsupported_media_type', 'Content-Type']);
    for (const type of ['application/json; charset=latin1', 'application/json;charset="ISO-8859-1"', 'application/json; charset=utf-16']) {
      const r = await post('/public/country-requests', { country: 'PT' }, { 'Content-Type': type });
      expect([r.status, r.body.error.code, r.body.error.parameter], type).toEqual([415, 'unsupported_media_type', 'Content-Type']);
      expect(r.body.error.message, type).toMatch(/a JSON body is UTF-8/);
    }
    const longField = await post('/public/country-requests', { country: 'PT', ['x'.repeat(5000)]: 1 });
    expect([longField.status, longField.body.error.parameter]).toEqual([400, `${'x'.repeat(64)}…`]);
    const big = await post('/public/country-requests', { country: 'PT', comment: 'x'.repeat(17_000) });
    expect([big.status, big.body.error.code, big.body.error.parameter]).toEqual([413, 'payload_too_large', 'body']);
    expect(t.ledger.countryRequests().length).toBe(before);
  });

  it('takes no query parameter: one is refused as on every GET, and nothing is stored', async () => {
    const before = t.ledger.countryRequests().length;
    for (const [query, parameter] of [
      ['foo=1', 'foo'],
      ['country=PT', 'country'],
      ['%zz=1', '%zz'],
    ]) {
      const r = await call(t, 'POST', '/public/country-requests', `/public/country-requests?${query}`, {
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ country: 'PT' }),
      });
      expect([r.status, r.body.error.code, r.body.error.parameter], query).toEqual([400, 'invalid_parameter', parameter]);
    }
    expect(t.ledger.countryRequests().length).toBe(before);
  });

  it('takes 20 an hour from one visitor; the 21st is 429 rate_limited with Retry-After', async () => {
    for (let i = 0; i < 20; i++) expect((await post('/public/country-requests', { country: 'FR' })).status).toBe(201);
    const r = await post('/public/country-requests', { country: 'FR' });
    expect(r.status).toBe(429);
    expect(r.body.error).toMatchObject({ code: 'rate_limited', parameter: '' });
    const wait = Number(r.headers.get('retry-after'));
    expect(wait).toBeGreaterThan(60);
    expect(wait).toBeLessThanOrEqual(3_600);
    // Any hour holds at most 20: one second short of Retry-After still refused, then one back.
    clock.ms += (wait - 1) * 1_000;
    expect((await post('/public/country-requests', { country: 'FR' })).status).toBe(429);
    clock.ms += 1_000;
    expect((await post('/public/country-requests', { country: 'FR' })).status).toBe(201);
  });

  it('the admin CLI lists them counted by country', () => {
    const out = spawnSync(
      process.execPath,
      ['--import', 'tsx', 'tools/admin.ts', 'country-requests', '--ledger', join(dir, 'ledger.db'), '--json'],
      { encoding: 'utf8', timeout: 60_000 },
    );
    expect(out.status, out.stderr).toBe(0);
    const demand = JSON.parse(out.stdout).demand as { country: string; requests: number }[];
    const expected = new Map<string, number>();
    for (const q of t.ledger.countryRequests()) expected.set(q.country, (expected.get(q.country) ?? 0) + 1);
    expect(new Map(demand.map((d) => [d.country, d.requests]))).toEqual(expected);
    expect(demand[0].country).toBe('FR');
  });
});

describe('building reports', () => {
  const checkout = (doc: unknown, server = t) => post('/reports', doc, {}, server);
  const read = (orderId: string, token: string, server = t) => get(`/reports/${orderId}?token=${token}`, '/reports/{order_id}', {}, server);

  it('checkout with the built-in provider is paid at once; the token reads the whole report', async () => {
    const b = buildings.find((x) => x.units.length > 1 && x.businesses.length > 0)!;
    const r = await checkout({ building_id: b.building_id.toUpperCase(), email: 'ana@example.li' });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      status: 'paid',
      building_id: b.building_id,
      country: 'LI',
      snapshot_date: '2026-11-21',
      price: { amount_minor: 0, currency: 'EUR' },
    });
    expect(r.body.token).toMatch(/^rpt_[0-9A-Za-z]{32}$/);
    expect(r.body.report_url).toBe(`${t.base}/reports/${r.body.order_id}?token=${r.body.token}`);
    const report = await read(r.body.order_id, r.body.token);
    expect(report.status).toBe(200);
    expect(report.headers.get('cache-control')).toBe('no-store');
    const doc = report.body.report;
    expect(doc.building).toMatchObject({
      building_id: b.building_id,
      address: b.address,
      locality: b.locality,
      floors: b.floors,
      construction_year: b.construction_year,
      registered_business_count: b.businesses.length,
    });
    expect(doc.units.map((u: J) => u.unit_id)).toEqual(b.units.map((u) => u.unit_id));
    expect(doc.registered_businesses.data.map((x: J) => x.business_id)).toEqual(b.businesses.map((x) => x.business_id));
    expect(doc.footprint.coordinates).toEqual(
      b.footprint.map((poly) =>
        poly.map((ring) => {
          const pts: number[][] = [];
          for (let i = 0; i < ring.length; i += 2) pts.push([ring[i], ring[i + 1]]);
          return pts;
        }),
      ),
    );
    expect(doc.climate.recent_frost_days).toBe(b.recent_frost_days);
    expect(doc.energy.annual_heating_demand_kwh).toBe(b.annual_heating_demand_kwh);
  });

  it('a wrong token or order is 404 not_found; a malformed one 400; bad checkouts store nothing', async () => {
    const r = await checkout({ building_id: buildings[1].building_id, email: 'ana@example.li' });
    const other = `rpt_${'A'.repeat(32)}`;
    const wrong = await read(r.body.order_id, other);
    expect([wrong.status, wrong.body.error.code, wrong.body.error.parameter]).toEqual([404, 'not_found', 'token']);
    expect((await read('ord_AAAAAAAAAAAAAA', r.body.token)).status).toBe(404);
    const malformed = await read(r.body.order_id, 'rpt_short');
    expect([malformed.status, malformed.body.error.parameter]).toEqual([400, 'token']);
    const missing = await get(`/reports/${r.body.order_id}`, '/reports/{order_id}');
    expect([missing.status, missing.body.error.parameter]).toEqual([400, 'token']);
    const before = t.ledger.reportOrders().length;
    for (const [doc, parameter] of [
      [{ building_id: '00000000-0000-5000-8000-000000000000', email: 'a@b.li' }, 'building_id'],
      [{ building_id: 'x', email: 'a@b.li' }, 'building_id'],
      [{ building_id: buildings[1].building_id }, 'email'],
      [{ building_id: buildings[1].building_id, email: 'a@b.li', price: 0 }, 'price'],
    ] as const) {
      const bad = await checkout(doc);
      expect([bad.status, bad.body.error.code, bad.body.error.parameter]).toEqual([400, 'invalid_parameter', parameter]);
    }
    expect(t.ledger.reportOrders().length).toBe(before);
  });

  it('are off by default: an order is refused 404 not_found and stores nothing; EDIFICE_REPORTS_FREE=1 turns them on at price 0', async () => {
    const off = await startTestServer(dir, { now }, 'ledger-reports-off.db');
    try {
      const r = await checkout({ building_id: buildings[3].building_id, email: 'ana@example.li' }, off);
      expect([r.status, r.body.error.code, r.body.error.parameter]).toEqual([404, 'not_found', '']);
      expect(r.body.error.message).toBe('Building reports are not offered on this server.');
      expect(r.text).not.toContain(buildings[3].building_id);
      expect(off.ledger.reportOrders()).toEqual([]);
    } finally {
      off.close();
    }
    const free = await checkout({ building_id: buildings[3].building_id, email: 'ana@example.li' });
    expect([free.status, free.body.status, free.body.price]).toEqual([201, 'paid', { amount_minor: 0, currency: 'EUR' }]);
  });

  it('the start says whether reports are off or free', { timeout: 120_000 }, async () => {
    const env = {
      EDIFICE_SNAPSHOTS: join(dir, 'snapshots'),
      EDIFICE_WORKERS: '0',
      EDIFICE_WARMUP_REQUESTS: '0',
      EDIFICE_LOG_LEVEL: 'info',
    };
    for (const [extra, line] of [
      [{}, /building reports are off: POST \/reports answers 404 until EDIFICE_REPORT_PRICE is set/],
      [FREE_REPORTS, /building reports are free \(EDIFICE_REPORTS_FREE=1\)/],
    ] as const) {
      const ledgerDir = mkdtempSync(join(dir, 'start-'));
      const server = await startServerProcess({ ...env, ...extra, EDIFICE_LEDGER: join(ledgerDir, 'ledger.db') }, []);
      // The log is written apart from the banner: wait for it (10 s at most).
      for (let i = 0; i < 200 && !line.test(server.output()); i++) await new Promise((r) => setTimeout(r, 50));
      expect(server.output()).toMatch(line);
      server.child.kill('SIGTERM');
      await new Promise((r) => server.child.once('exit', r));
    }
  });

  it('ten orders an hour per address', async () => {
    for (let i = 0; i < 10; i++) expect((await checkout({ building_id: buildings[2].building_id, email: 'a@b.li' })).status).toBe(201);
    const r = await checkout({ building_id: buildings[2].building_id, email: 'a@b.li' });
    expect([r.status, r.body.error.code]).toEqual([429, 'rate_limited']);
  });

  it('with an external provider: pending until a signed webhook confirms payment; a forged one is refused', async () => {
    const secret = 'test-webhook-secret-0123456789';
    const paid = await startTestServer(dir, { now }, 'ledger-webhook.db', {
      EDIFICE_PAYMENT_PROVIDER: 'webhook',
      EDIFICE_PAYMENT_WEBHOOK_SECRET: secret,
      EDIFICE_REPORT_PRICE: '9.90',
    });
    try {
      const b = buildings[10];
      const order = await checkout({ building_id: b.building_id, email: 'ana@example.li' }, paid);
      expect(order.body).toMatchObject({ status: 'pending', price: { amount_minor: 990, currency: 'EUR' }, paid_at: null });
      const pending = await read(order.body.order_id, order.body.token, paid);
      expect(pending.body).toMatchObject({ status: 'pending', report: null });

      const hook = (doc: unknown, signature?: string) => {
        const body = JSON.stringify(doc);
        const headers: Record<string, string> = { 'Content-Type': 'application/json' };
        if (signature !== undefined) headers['X-Edifice-Signature'] = signature;
        return call(paid, 'POST', '/reports/payment-webhook', '/reports/payment-webhook', { headers, body });
      };
      const confirm = { order_id: order.body.order_id, status: 'paid', provider_reference: 'pay_123', amount_minor: 990, currency: 'EUR' };
      for (const signature of [
        undefined,
        'sha256=00',
        signWebhook('another-secret-000000000', JSON.stringify(confirm)),
        signWebhook(secret, JSON.stringify({ ...confirm, amount_minor: 1 })),
      ]) {
        const forged = await hook(confirm, signature);
        expect([forged.status, forged.body.error.code, forged.body.error.parameter]).toEqual([401, 'unauthorized', 'X-Edifice-Signature']);
      }
      expect((await read(order.body.order_id, order.body.token, paid)).body.status).toBe('pending');
      const wrongAmount = { ...confirm, amount_minor: 100 };
      const refused = await hook(wrongAmount, signWebhook(secret, JSON.stringify(wrongAmount)));
      expect([refused.status, refused.body.error.parameter]).toEqual([400, 'amount_minor']);
      const unknown = { ...confirm, order_id: 'ord_AAAAAAAAAAAAAA' };
      expect((await hook(unknown, signWebhook(secret, JSON.stringify(unknown)))).status).toBe(404);

      const ok = await hook(confirm, signWebhook(secret, JSON.stringify(confirm)));
      expect(ok.status).toBe(200);
      expect(ok.body).toMatchObject({ order_id: order.body.order_id, status: 'paid' });
      expect(ok.body).not.toHaveProperty('token');
      const again = await hook(confirm, signWebhook(secret, JSON.stringify(confirm)));
      expect(again.body.paid_at).toBe(ok.body.paid_at);
      const report = await read(order.body.order_id, order.body.token, paid);
      expect(report.body.status).toBe('paid');
      expect(report.body.report.building.building_id).toBe(b.building_id);
    } finally {
      paid.close();
    }
  });
});

describe('removal requests', () => {
  let rdir: string;
  let server: TestServer;
  const POLL = { EDIFICE_REMOVALS_POLL_MS: '100', ...FREE_REPORTS };

  beforeAll(async () => {
    rdir = await syntheticSnapshots(4000, 11, 'LI');
    server = await startTestServer(rdir, { now, perKeyPerMinute: 1_000_000, dailyQuota: 1_000_000 }, 'ledger.db', POLL);
  });
  afterAll(() => {
    server?.close();
    if (rdir) removeDir(rdir);
  });

  /** Polls `check` until it holds (the server applies approvals within its poll interval). */
  async function eventually(check: () => Promise<boolean>): Promise<void> {
    for (let i = 0; i < 100; i++) {
      if (await check()) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('not within 5 s');
  }

  it('refuses requests that name no business of the building, field by field', async () => {
    const b = buildings.find((x) => x.businesses.length > 0 && x.businesses.every((y) => y.registration_number !== null))!;
    const ok = {
      building_id: b.building_id,
      business_id: b.businesses[0].business_id,
      reason: 'The company moved out in 2019.',
      contact: 'owner@example.li',
    };
    const cases: [unknown, string][] = [
      [{ ...ok, business_id: 'nope' }, 'business_id'],
      [{ ...ok, business_id: undefined, registration_number: 'nope' }, 'registration_number'],
      [{ ...ok, registration_number: `${b.businesses[0].registration_number}x` }, 'registration_number'],
      [{ ...ok, business_id: undefined }, 'business_id'],
      [{ ...ok, building_id: '00000000-0000-5000-8000-000000000000' }, 'building_id'],
      [{ ...ok, reason: 'short' }, 'reason'],
      [{ ...ok, contact: 'nobody' }, 'contact'],
    ];
    for (const [doc, parameter] of cases) {
      const r = await post('/removal-requests', doc, {}, server);
      expect([r.status, r.body.error.code, r.body.error.parameter], JSON.stringify(doc)).toEqual([400, 'invalid_parameter', parameter]);
    }
    expect(server.ledger.removalRequests()).toEqual([]);
  });

  it('an approved removal takes effect at once everywhere, survives a restart and applies to a later snapshot', async () => {
    const key = (() => {
      const email = 'ops@example.li';
      const { workspaceId } = server.ledger.createWorkspace('removals', { createdBy: email });
      server.ledger.grantCredits(workspaceId, 100_000, { kind: 'bought' });
      return server.ledger.createKey(workspaceId, email).key;
    })();
    const auth = { Authorization: `Bearer ${key}` };
    const b = buildings.find(
      (x) =>
        x.businesses.length >= 2 &&
        x.businesses.filter((y) => y.name === x.businesses[0].name).length === 1 &&
        buildings.filter((y) => y.businesses.some((z) => z.name === x.businesses[0].name)).length === 1,
    )!;
    const gone = b.businesses[0];
    const bbox = [b.longitude - 0.001, b.latitude - 0.001, b.longitude + 0.001, b.latitude + 0.001].map((v) => v.toFixed(4)).join(',');
    const byName = `/buildings?bbox=${bbox}&registered_business_name=${encodeURIComponent(gone.name)}`;

    // A report bought before the removal, and the state before.
    const order = await post('/reports', { building_id: b.building_id, email: 'a@b.li' }, {}, server);
    expect(((await (await fetch(`${server.base}${byName}`, { headers: auth })).json()) as J).data.map((x: J) => x.building_id)).toEqual([
      b.building_id,
    ]);

    const asked = await post(
      '/removal-requests',
      { building_id: b.building_id, business_id: gone.business_id, reason: 'We closed this company in 2020.', contact: 'owner@example.li' },
      {},
      server,
    );
    expect(asked.status).toBe(202);
    expect(asked.body).toMatchObject({
      status: 'pending',
      building_id: b.building_id,
      business_id: gone.business_id,
      registration_number: gone.registration_number,
    });
    const page = async (s = server) => (await get(`/public/buildings/${b.building_id}`, '/public/buildings/{building_id}', {}, s)).body;
    const etagBefore = (await get(`/public/buildings/${b.building_id}`, '/public/buildings/{building_id}', {}, server)).headers.get('etag');
    expect((await page()).registeredBusinesses.data.map((x: J) => x.businessId)).toContain(gone.business_id);

    // Approved through another connection to the file, as the admin CLI does.
    const admin = Ledger.open(join(rdir, 'ledger.db'));
    admin.decideRemoval(asked.body.id, 'approved', 'checked with the register');
    admin.close();
    await eventually(async () => !(await page()).registeredBusinesses.data.some((x: J) => x.businessId === gone.business_id));

    const remaining = b.businesses.slice(1).map((x) => x.business_id);
    expect((await page()).registeredBusinesses.data.map((x: J) => x.businessId)).toEqual(remaining);
    const etagAfter = (await get(`/public/buildings/${b.building_id}`, '/public/buildings/{building_id}', {}, server)).headers.get('etag');
    expect(etagAfter).not.toBe(etagBefore);
    const listing = (await (await fetch(`${server.base}/buildings/${b.building_id}/registered-businesses`, { headers: auth })).json()) as J;
    expect(listing.data.map((x: J) => x.business_id)).toEqual(remaining);
    expect(((await (await fetch(`${server.base}${byName}`, { headers: auth })).json()) as J).data).toEqual([]);
    const at = (await (
      await fetch(`${server.base}/buildings/at?lat=${b.latitude}&lon=${b.longitude}&radius_m=1`, { headers: auth })
    ).json()) as J;
    expect(at.data.find((x: J) => x.building_id === b.building_id).registered_business_count).toBe(b.businesses.length - 1);
    const report = await get(`/reports/${order.body.order_id}?token=${order.body.token}`, '/reports/{order_id}', {}, server);
    expect(report.body.report.registered_businesses.data.map((x: J) => x.business_id)).toEqual(remaining);
    expect(report.body.report.building.registered_business_count).toBe(b.businesses.length - 1);
    expect(server.ledger.removalRequests('approved').map((q) => q.id)).toEqual([asked.body.id]);

    // A restart reads the approvals from the ledger before serving.
    server.close();
    server = await startTestServer(rdir, { now, perKeyPerMinute: 1_000_000, dailyQuota: 1_000_000 }, 'ledger.db', POLL);
    expect((await page()).registeredBusinesses.data.map((x: J) => x.businessId)).toEqual(remaining);
    // The ETag names the content: the same after a restart, never the one of the page with the business.
    const path = `/public/buildings/${b.building_id}`;
    expect((await get(path, '/public/buildings/{building_id}', {}, server)).headers.get('etag')).toBe(etagAfter);
    expect((await get(path, '/public/buildings/{building_id}', { 'If-None-Match': etagBefore! }, server)).status).toBe(200);

    // A later snapshot of the country (same sources, next day) is served without the business too.
    await writeSyntheticCountry({
      seed: 11,
      buildings: 4000,
      country: 'LI',
      date: '2026-11-22',
      bounds: BOUNDS,
      outDir: join(rdir, 'snapshots'),
    });
    expect(server.catalog.rescan().map((r) => r.status)).toEqual(['loaded']);
    const later = await page();
    expect(later.snapshotDate).toBe('2026-11-22');
    expect(later.registeredBusinesses.data.map((x: J) => x.businessId)).toEqual(remaining);
    // The report still reads the snapshot current at purchase.
    const still = await get(`/reports/${order.body.order_id}?token=${order.body.token}`, '/reports/{order_id}', {}, server);
    expect(still.body.snapshot_date).toBe('2026-11-21');
  });
});
