/**
 * Public place pages and the listing of covered countries (camelCase, spec 1 and 2.4). A place's
 * facts come from `catalog/places.ts`; each is `{value, estimate}` like a building page's: a
 * median or a sum is an estimate when any value behind it is modelled.
 */
import type { MedianFact, PlaceFacts } from '../catalog/places.ts';
import { CATEGORY, FLOOD_ZONE, SEISMIC_RISK_CLASS, SOLAR_PRESENCE, type SnapshotSource } from '../snapshot/schema.ts';
import type { Fact } from './facts.ts';

export interface PublicPlace {
  country: string;
  locality: string;
  snapshotDate: string;
  facts: Record<string, Fact<unknown>>;
}

export const PLACE_FACTS = [
  'buildings',
  'buildingsByCategory',
  'buildingsWithConstructionYear',
  'constructionYearEarliest',
  'constructionYearMedian',
  'constructionYearLatest',
  'medianHeightM',
  'medianFloors',
  'buildingsWithSolar',
  'shareWithSolar',
  'buildingsBySolarPresence',
  'buildingsWithSolarPotential',
  'solarCapacityKwpTotal',
  'buildingsFloodMapped',
  'buildingsInFloodZone',
  'buildingsByFloodZone',
  'buildingsOnSeismicList',
  'buildingsBySeismicRiskClass',
  'buildingsWithHeatingEstimate',
  'buildingsWithThermalAssessment',
  'buildingsWithDistrictHeating',
  'buildingsWithGasNetwork',
] as const;

/** What each place fact counts (the OpenAPI document shows these). */
export const PLACE_FACT_DOCS: Record<(typeof PLACE_FACTS)[number], string> = {
  buildings: 'Buildings whose locality is this place.',
  buildingsByCategory: 'Buildings per category, every category listed (zeros included).',
  buildingsWithConstructionYear: 'Buildings whose construction year is known.',
  constructionYearEarliest: 'Earliest known construction year; an estimate when any known year is modelled.',
  constructionYearMedian: 'Median of the known construction years; an estimate when any is modelled.',
  constructionYearLatest: 'Latest known construction year; an estimate when any known year is modelled.',
  medianHeightM: 'Median of the known heights, metres; an estimate when any is modelled.',
  medianFloors: 'Median of the known floor counts; an estimate when any is modelled.',
  buildingsWithSolar:
    'Buildings whose solar_presence is registered or detected; null when no building of the place has a known solar_presence.',
  shareWithSolar:
    'buildingsWithSolar divided by the buildings whose solar_presence is known (anything but unknown), to three decimals; null when none is known.',
  buildingsBySolarPresence: 'Buildings per solar_presence value, unknown included.',
  buildingsWithSolarPotential: 'Buildings with a rooftop solar-potential estimate.',
  solarCapacityKwpTotal: "Sum of those estimates' capacity, kWp (always an estimate); null when there is none.",
  buildingsFloodMapped: 'Buildings an official flood map covers.',
  buildingsInFloodZone: 'Buildings inside a mapped flood zone; null when no building of the place is covered by a flood map.',
  buildingsByFloodZone: 'Buildings per flood zone; null when no building of the place is covered by a flood map.',
  buildingsOnSeismicList: "Buildings an official seismic list names, whatever their risk class or assessment year (a list's N/A included).",
  buildingsBySeismicRiskClass: 'Listed buildings per seismic risk class.',
  buildingsWithHeatingEstimate: 'Buildings with a modelled annual heating demand.',
  buildingsWithThermalAssessment: 'Buildings with a building-specific thermal assessment.',
  buildingsWithDistrictHeating: 'Buildings a district heating network serves; null when that is known for no building of the place.',
  buildingsWithGasNetwork: 'Buildings a gas network serves; null when that is known for no building of the place.',
};

const exact = <T>(value: T): Fact<T> => ({ value, estimate: false });
const nan = (v: number): number | null => (v === v ? v : null);
const median = (m: MedianFact): Fact<number> => ({ value: nan(m.median), estimate: m.known > 0 && m.estimated > 0 });

/** Counts by enum value, keeping every value (zeros included) in the schema's order. */
function byValue(values: readonly string[], counts: readonly number[]): Record<string, number> {
  const out: Record<string, number> = {};
  values.forEach((v, i) => {
    out[v] = counts[i];
  });
  return out;
}

const sum = (counts: readonly number[]): number => counts.reduce((a, b) => a + b, 0);

export function publicPlace(p: PlaceFacts, context: { country: string; snapshotDate: string }): PublicPlace {
  const solar = p.bySolarPresence[SOLAR_PRESENCE.indexOf('registered')] + p.bySolarPresence[SOLAR_PRESENCE.indexOf('detected')];
  // shareWithSolar is of the buildings whose solar_presence is known: an unknown one may have panels.
  const solarKnown = p.buildings - p.bySolarPresence[SOLAR_PRESENCE.indexOf('unknown')];
  const facts: Record<(typeof PLACE_FACTS)[number], Fact<unknown>> = {
    buildings: exact(p.buildings),
    buildingsByCategory: exact(byValue(CATEGORY, p.byCategory)),
    buildingsWithConstructionYear: exact(p.constructionYear.known),
    constructionYearEarliest: { value: nan(p.constructionYear.earliest), estimate: p.constructionYear.estimated > 0 },
    constructionYearMedian: median(p.constructionYear),
    constructionYearLatest: { value: nan(p.constructionYear.latest), estimate: p.constructionYear.estimated > 0 },
    medianHeightM: median(p.heightM),
    medianFloors: median(p.floors),
    // Unknown, not zero (spec 1), where no building of the place has a solar record, a solar
    // potential estimate, a flood map, or a known district heating or gas network.
    buildingsWithSolar: exact(solarKnown > 0 ? solar : null),
    shareWithSolar: exact(solarKnown > 0 ? Math.round((solar / solarKnown) * 1000) / 1000 : null),
    buildingsBySolarPresence: exact(byValue(SOLAR_PRESENCE, p.bySolarPresence)),
    buildingsWithSolarPotential: exact(p.withSolarPotential),
    solarCapacityKwpTotal: p.withSolarPotential > 0 ? { value: Math.round(p.solarCapacityKwp * 100) / 100, estimate: true } : exact(null),
    buildingsFloodMapped: exact(p.floodMapped),
    buildingsInFloodZone: exact(p.floodMapped > 0 ? sum(p.byFloodZone) : null),
    buildingsByFloodZone: exact(p.floodMapped > 0 ? byValue(FLOOD_ZONE, p.byFloodZone) : null),
    buildingsOnSeismicList: exact(p.onSeismicList),
    buildingsBySeismicRiskClass: exact(byValue(SEISMIC_RISK_CLASS, p.bySeismicRiskClass)),
    buildingsWithHeatingEstimate: exact(p.withHeatingEstimate),
    buildingsWithThermalAssessment: exact(p.withThermalAssessment),
    buildingsWithDistrictHeating: exact(p.districtHeatingKnown > 0 ? p.districtHeatingAvailable : null),
    buildingsWithGasNetwork: exact(p.gasNetworkKnown > 0 ? p.gasNetworkAvailable : null),
  };
  return { country: context.country, locality: p.locality, snapshotDate: context.snapshotDate, facts };
}

export interface CountryEntry {
  country: string;
  snapshotDate: string;
  buildings: number;
  places: number;
  /** minLon, minLat, maxLon, maxLat of the buildings' representative points; null when there are none. */
  bbox: [number, number, number, number] | null;
  sources: SnapshotSource[];
}
