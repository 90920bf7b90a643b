/**
 * A place's facts from hand-made columns: what a real list gives and the synthetic country does
 * not (a building assessed without a risk class, a place with no solar record, solar estimate,
 * flood map, district heating or gas network known); and from real files, one written by the
 * writer and one of format v1, loaded as the server loads them.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { publicPlace } from '../src/api/place.ts';
import { NULL_CODE_U8, NULL_I32 } from '../src/catalog/arrow.ts';
import { F } from '../src/catalog/flags.ts';
import { loadSnapshot } from '../src/catalog/load.ts';
import { buildPlaces, median, type PlaceInputs } from '../src/catalog/places.ts';
import { readSnapshot } from '../src/snapshot/reader.ts';
import { blankRecord } from '../src/snapshot/record.ts';
import { FLOOD_ZONE, SEISMIC_RISK_CLASS, SOLAR_PRESENCE, type BuildingRecord } from '../src/snapshot/schema.ts';
import { SnapshotWriter } from '../src/snapshot/writer.ts';

const root = mkdtempSync(join(tmpdir(), 'edifice-places-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Four buildings in "A", three in "B"; each column as given, or unknown. */
function inputs(over: Partial<PlaceInputs>): PlaceInputs {
  const n = 7;
  return {
    rows: n,
    names: ['A', 'B'],
    locality: Int32Array.from([0, 0, 0, 0, 1, 1, 1]),
    category: new Uint8Array(n),
    solarPresence: new Uint8Array(n).fill(SOLAR_PRESENCE.indexOf('unknown')),
    floodZone: new Uint8Array(n).fill(NULL_CODE_U8),
    seismicRiskClass: new Uint8Array(n).fill(NULL_CODE_U8),
    seismicListed: new Uint8Array(n),
    flags: new Uint32Array(n),
    constructionYear: new Int32Array(n).fill(NULL_I32),
    heightM: new Float64Array(n).fill(NaN),
    heightEstimated: new Uint8Array(n),
    floors: new Int32Array(n).fill(NULL_I32),
    solarCapacityKwp: new Float64Array(n).fill(NaN),
    ...over,
  };
}

const facts = (p: PlaceInputs, locality: string) =>
  publicPlace(buildPlaces(p).get(locality)!, { country: 'RO', snapshotDate: '2024-01-03' }).facts;

describe('place facts', () => {
  it('count the buildings a seismic list names, by their flag, whatever their class', () => {
    const cls = new Uint8Array(7).fill(NULL_CODE_U8);
    cls[0] = SEISMIC_RISK_CLASS.indexOf('RsI');
    const listed = Uint8Array.from([1, 1, 0, 0, 0, 1, 0]); // 1: listed without a class (N/A)
    const p = inputs({ seismicRiskClass: cls, seismicListed: listed });
    expect(facts(p, 'A').buildingsOnSeismicList).toEqual({ value: 2, estimate: false });
    expect((facts(p, 'A').buildingsBySeismicRiskClass.value as Record<string, number>).RsI).toBe(1);
    expect(facts(p, 'B').buildingsOnSeismicList).toEqual({ value: 1, estimate: false });
  });

  it('give no solar count, share or capacity where no building has a solar record or estimate, and no flood counts where none is mapped', () => {
    const solar = new Uint8Array(7).fill(SOLAR_PRESENCE.indexOf('unknown'));
    solar[4] = SOLAR_PRESENCE.indexOf('none_seen');
    solar[5] = SOLAR_PRESENCE.indexOf('detected');
    const flags = new Uint32Array(7);
    flags[6] = F.FLOOD_ZONE_MAPPED;
    flags[5] = F.SOLAR_POTENTIAL;
    const kwp = new Float64Array(7).fill(NaN);
    kwp[5] = 4.25;
    const zone = new Uint8Array(7).fill(NULL_CODE_U8);
    zone[6] = FLOOD_ZONE.indexOf('100_year');
    const p = inputs({ solarPresence: solar, flags, floodZone: zone, solarCapacityKwp: kwp });
    const a = facts(p, 'A');
    expect([a.buildingsWithSolar.value, a.shareWithSolar.value, a.buildingsInFloodZone.value, a.buildingsByFloodZone.value]).toEqual([
      null,
      null,
      null,
      null,
    ]);
    expect(a.buildingsFloodMapped.value).toBe(0);
    expect(a.solarCapacityKwpTotal).toEqual({ value: null, estimate: false });
    const b = facts(p, 'B');
    // Of B's three buildings one has no known solar_presence: the share is 1 of the 2 known.
    expect([b.buildingsWithSolar.value, b.shareWithSolar.value, b.buildingsInFloodZone.value]).toEqual([1, 0.5, 1]);
    expect((b.buildingsByFloodZone.value as Record<string, number>)['100_year']).toBe(1);
    expect(b.solarCapacityKwpTotal).toEqual({ value: 4.25, estimate: true });
  });

  it('give no district heating or gas network count where neither is known for any building, and count the known ones', () => {
    const flags = new Uint32Array(7);
    flags[4] = F.DISTRICT_HEATING_KNOWN; // known: not served
    flags[5] = F.DISTRICT_HEATING_KNOWN | F.DISTRICT_HEATING | F.GAS_NETWORK_KNOWN;
    flags[6] = F.DISTRICT_HEATING; // a value bit without its known bit counts for nothing
    const p = inputs({ flags });
    const a = facts(p, 'A');
    expect([a.buildingsWithDistrictHeating, a.buildingsWithGasNetwork]).toEqual([
      { value: null, estimate: false },
      { value: null, estimate: false },
    ]);
    const b = facts(p, 'B');
    expect([b.buildingsWithDistrictHeating, b.buildingsWithGasNetwork]).toEqual([
      { value: 1, estimate: false },
      { value: 0, estimate: false },
    ]);
  });

  it('share with solar: registered or detected, over the buildings whose solar_presence is known (unclear is known)', () => {
    const code = (v: string) => SOLAR_PRESENCE.indexOf(v as (typeof SOLAR_PRESENCE)[number]);
    // A: registered, unclear, unknown, unknown: 1 of 2 known. B: detected, registered_at_address, none_seen: 1 of 3.
    const solar = Uint8Array.from(
      ['registered', 'unclear', 'unknown', 'unknown', 'detected', 'registered_at_address', 'none_seen'].map(code),
    );
    const p = inputs({ solarPresence: solar });
    expect([facts(p, 'A').buildingsWithSolar, facts(p, 'A').shareWithSolar]).toEqual([
      { value: 1, estimate: false },
      { value: 0.5, estimate: false },
    ]);
    expect([facts(p, 'B').buildingsWithSolar, facts(p, 'B').shareWithSolar]).toEqual([
      { value: 1, estimate: false },
      { value: 0.333, estimate: false },
    ]);
    // Every building of A unknown: no share (not 0), whatever B holds.
    const unknownA = Uint8Array.from(['unknown', 'unknown', 'unknown', 'unknown', 'detected', 'detected', 'none_seen'].map(code));
    expect(facts(inputs({ solarPresence: unknownA }), 'A').shareWithSolar).toEqual({ value: null, estimate: false });
    expect(facts(inputs({ solarPresence: unknownA }), 'B').shareWithSolar).toEqual({ value: 0.667, estimate: false });
  });
});

describe('place facts of real files', () => {
  const placeFacts = (path: string, locality: string) => {
    const snapshot = loadSnapshot(readSnapshot(path));
    return publicPlace(snapshot.places.get(locality)!, { country: snapshot.country, snapshotDate: snapshot.date }).facts;
  };

  it("buildingsOnSeismicList counts a listed building with no class and no year (a list's N/A), and one with a class", async () => {
    const writer = new SnapshotWriter({
      country: 'RO',
      snapshotDate: '2024-01-03',
      sources: [{ name: 't', licence: 'CC0-1.0', attribution: 't', retrieved: '2024-01-03' }],
    });
    const at = (i: number, o: Partial<BuildingRecord>) =>
      blankRecord(`t:${i}`, 26.1 + i * 0.001, 44.4, { locality: 'Vadu', locality_basis: 'stated', ...o });
    writer.add(at(0, { seismic_listed: true })); // N/A, no year
    writer.add(at(1, { seismic_listed: true, seismic_risk_class: 'RsII', seismic_risk_assessment_year: 2011 }));
    writer.add(at(2, { seismic_risk_assessment_year: 1996 })); // a year comes from a list: listed
    writer.add(at(3, {}));
    writer.add(at(4, { seismic_listed: true, locality: 'Lunca' }));
    const { path } = await writer.finish(join(root, 'RO', '2024-01-03.arrow'));
    expect(placeFacts(path, 'Vadu').buildingsOnSeismicList).toEqual({ value: 3, estimate: false });
    expect(placeFacts(path, 'Vadu').buildingsBySeismicRiskClass.value).toMatchObject({ RsII: 1, RsI: 0 });
    expect(placeFacts(path, 'Lunca').buildingsOnSeismicList).toEqual({ value: 1, estimate: false });
  });

  it('a v1 file: the buildings with a class or a year are the listed ones (v1 kept nothing of the others)', () => {
    const dir = join(root, 'v1', 'XA');
    mkdirSync(dir, { recursive: true });
    const path = join(dir, '2026-01-01.arrow');
    copyFileSync(new URL('./fixtures/snapshot-v1/XA/2026-01-01.arrow', import.meta.url), path);
    // Vadu: RsI 2007, N/A 1996, two unlisted; Lunca: U2 without a year, one unlisted.
    expect(placeFacts(path, 'Vadu').buildingsOnSeismicList).toEqual({ value: 2, estimate: false });
    expect(placeFacts(path, 'Lunca').buildingsOnSeismicList).toEqual({ value: 1, estimate: false });
    // detected, none_seen, two unknown: 1 of 2 known.
    expect(placeFacts(path, 'Vadu').shareWithSolar).toEqual({ value: 0.5, estimate: false });
  });
});

describe('the median of a place', () => {
  it('is the middle value, or the mean of the two middle ones, as a full sort gives it', () => {
    let x = 17;
    const next = (m: number): number => {
      x = (Math.imul(x, 1103515245) + 12345) >>> 0;
      return x % m;
    };
    for (let t = 0; t < 400; t++) {
      const n = 1 + next(60);
      // Few distinct values (ties, as floors and years have) or many.
      const distinct = next(2) === 0 ? 1 + next(4) : 1000;
      const values = new Float64Array(n + 5);
      for (let i = 0; i < n; i++) values[i] = next(distinct) * 0.5 - 3;
      const sorted = [...values.subarray(0, n)].sort((a, b) => a - b);
      const want = n % 2 === 1 ? sorted[n >> 1] : (sorted[(n >> 1) - 1] + sorted[n >> 1]) / 2;
      expect(median(values, n)).toBe(want);
    }
    expect(median(new Float64Array(3), 0)).toBeNaN();
  });
});
