/**
 * A place's facts from hand-made columns: what a real list gives and the synthetic country does
 * not (a building assessed without a risk class, a place with no solar record, solar estimate,
 * flood map, district heating or gas network known).
 */
import { describe, expect, it } from 'vitest';
import { publicPlace } from '../src/api/place.ts';
import { NULL_CODE_U8, NULL_I32 } from '../src/catalog/arrow.ts';
import { F } from '../src/catalog/flags.ts';
import { buildPlaces, type PlaceInputs } from '../src/catalog/places.ts';
import { FLOOD_ZONE, SEISMIC_RISK_CLASS, SOLAR_PRESENCE } from '../src/snapshot/schema.ts';

/** Four buildings in "A", three in "B"; each column as given, or unknown. */
function inputs(over: Partial<PlaceInputs>): PlaceInputs {
  const n = 7;
  return {
    rows: n, names: ['A', 'B'], locality: Int32Array.from([0, 0, 0, 0, 1, 1, 1]), category: new Uint8Array(n),
    solarPresence: new Uint8Array(n).fill(SOLAR_PRESENCE.indexOf('unknown')), floodZone: new Uint8Array(n).fill(NULL_CODE_U8),
    seismicRiskClass: new Uint8Array(n).fill(NULL_CODE_U8), seismicAssessmentYear: new Int32Array(n).fill(NULL_I32),
    flags: new Uint32Array(n), constructionYear: new Int32Array(n).fill(NULL_I32), heightM: new Float64Array(n).fill(NaN),
    heightEstimated: new Uint8Array(n), floors: new Int32Array(n).fill(NULL_I32), solarCapacityKwp: new Float64Array(n).fill(NaN),
    ...over,
  };
}

const facts = (p: PlaceInputs, locality: string) => publicPlace(buildPlaces(p).get(locality)!, { country: 'RO', snapshotDate: '2024-01-03' }).facts;

describe('place facts', () => {
  it('count a building on a seismic list by its assessment, with a risk class or without one (a list\'s N/A)', () => {
    const cls = new Uint8Array(7).fill(NULL_CODE_U8);
    cls[0] = SEISMIC_RISK_CLASS.indexOf('RsI');
    const year = new Int32Array(7).fill(NULL_I32);
    year[0] = 2007;
    year[1] = 1996; // assessed, class N/A
    year[5] = 2010;
    const p = inputs({ seismicRiskClass: cls, seismicAssessmentYear: year });
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
    expect([a.buildingsWithSolar.value, a.shareWithSolar.value, a.buildingsInFloodZone.value, a.buildingsByFloodZone.value]).toEqual([null, null, null, null]);
    expect(a.buildingsFloodMapped.value).toBe(0);
    expect(a.solarCapacityKwpTotal).toEqual({ value: null, estimate: false });
    const b = facts(p, 'B');
    expect([b.buildingsWithSolar.value, b.shareWithSolar.value, b.buildingsInFloodZone.value]).toEqual([1, 0.333, 1]);
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
    expect([a.buildingsWithDistrictHeating, a.buildingsWithGasNetwork]).toEqual([{ value: null, estimate: false }, { value: null, estimate: false }]);
    const b = facts(p, 'B');
    expect([b.buildingsWithDistrictHeating, b.buildingsWithGasNetwork]).toEqual([{ value: 1, estimate: false }, { value: 0, estimate: false }]);
  });
});
