/**
 * Public building pages (spec 2.4): every fact a building page shows, camelCase, each
 * `{value, estimate}`: value null when unknown; estimate true when the value is modelled rather
 * than measured or stated (a basis of `estimated`, a modelled construction year, floors or
 * dwellings, a category inferred from other facts, a locality taken from the nearest place, the
 * climate figures interpolated to the location, the modelled heating demand). Businesses are listed with the spec's caution.
 */
import type { BuildingRecord, BusinessRecord } from '../snapshot/schema.ts';
import { installedPowerKw } from './building.ts';

export interface Fact<T> {
  value: T | null;
  estimate: boolean;
}

export const BUSINESS_CAUTION = 'A business registered at this address is never evidence that it owns or occupies the building.';

export interface PublicBusiness {
  businessId: string;
  registrationNumber: string | null;
  name: string;
  active: boolean;
}

export interface PublicBuilding {
  buildingId: string;
  country: string;
  snapshotDate: string;
  facts: Record<string, Fact<unknown>>;
  registeredBusinesses: { caution: string; count: number; data: PublicBusiness[] };
}

const fact = <T>(value: T | null, estimate = false): Fact<T> => ({ value, estimate: value === null ? false : estimate });

/** Names of the facts, in page order (the OpenAPI schema lists them from here). */
export const BUILDING_FACTS = [
  'address',
  'nearestRoad',
  'postalCode',
  'locality',
  'category',
  'buildingType',
  'roofShape',
  'footprintAreaM2',
  'heightM',
  'floors',
  'floorsIncludingUnderground',
  'floorAreaM2',
  'volumeM3',
  'constructionYear',
  'completedByYear',
  'dwellings',
  'has3dModel',
  'solarPresence',
  'existingSolarPanels',
  'registeredSolarPowerKw',
  'solarPanelCount',
  'solarCapacityKwp',
  'solarYearlyEnergyKwh',
  'solarCo2SavingsKgPerYear',
  'floodZone',
  'floodZoneMapped',
  'floodZoneSource',
  'seismicDesignAccelerationG',
  'seismicRiskClass',
  'seismicRiskAssessmentYear',
  'recentMeanTemperatureC',
  'recentTemperatureTrendCPerDecade',
  'recentFrostDays',
  'recentHotDays',
  'recentMinimumDailyTemperatureC',
  'recentMaximumDailyTemperatureC',
  'recentAnnualPrecipitationMm',
  'recentMaxOneDayPrecipitationMm',
  'annualHeatingDemandKwh',
  'thermalAssessment',
  'designIndoorTemperatureC',
  'designOutdoorTemperatureC',
  'districtHeatingAvailable',
  'gasNetworkAvailable',
] as const;

/** Facts whose estimate flag needs a word beyond "modelled" (the OpenAPI document shows these). */
export const BUILDING_FACT_DOCS: Partial<Record<(typeof BUILDING_FACTS)[number], string>> = {
  locality:
    "The locality the building's own record or address names (estimate false), or else the name of the nearest place (estimate true).",
};

export function publicBusiness(b: BusinessRecord): PublicBusiness {
  return { businessId: b.business_id, registrationNumber: b.registration_number, name: b.name, active: b.active };
}

export function publicBuilding(r: BuildingRecord, context: { country: string; snapshotDate: string }): PublicBuilding {
  const solarModelled = r.solar_potential_basis === 'estimated';
  const facts: Record<(typeof BUILDING_FACTS)[number], Fact<unknown>> = {
    address: fact(r.address),
    nearestRoad: fact(r.nearest_road),
    postalCode: fact(r.postal_code),
    locality: fact(r.locality === '' ? null : r.locality, r.locality_basis === 'inferred'),
    category: fact(r.category === 'unknown' ? null : r.category, r.category_evidence === 'inferred'),
    buildingType: fact(r.building_type === 'unspecified' ? null : r.building_type),
    roofShape: fact(r.roof_shape),
    footprintAreaM2: fact(r.footprint_area_m2),
    heightM: fact(r.height_m, r.height_basis === 'estimated'),
    floors: fact(r.floors, r.floors_is_estimate),
    floorsIncludingUnderground: fact(r.floors_including_underground, r.floors_is_estimate),
    floorAreaM2: fact(r.floor_area_m2, r.floor_area_basis === 'estimated'),
    volumeM3: fact(r.volume_m3, r.volume_basis === 'estimated'),
    constructionYear: fact(r.construction_year, r.construction_year_is_estimate),
    completedByYear: fact(r.completed_by_year),
    dwellings: fact(r.dwellings, r.dwellings_is_estimate),
    has3dModel: fact(r.has_3d_model),
    solarPresence: fact(r.solar_presence === 'unknown' ? null : r.solar_presence),
    existingSolarPanels: fact(r.panels_status),
    registeredSolarPowerKw: fact(r.solar_installations.length === 0 ? null : installedPowerKw(r.solar_installations)),
    solarPanelCount: fact(r.solar_panel_count, solarModelled),
    solarCapacityKwp: fact(r.solar_capacity_kwp, solarModelled),
    solarYearlyEnergyKwh: fact(r.solar_yearly_energy_kwh, solarModelled),
    solarCo2SavingsKgPerYear: fact(r.solar_co2_savings_kg_per_year, solarModelled),
    floodZone: fact(r.flood_zone),
    floodZoneMapped: fact(r.flood_zone_mapped),
    floodZoneSource: fact(r.flood_zone_source),
    seismicDesignAccelerationG: fact(r.seismic_design_acceleration_g),
    seismicRiskClass: fact(r.seismic_risk_class),
    seismicRiskAssessmentYear: fact(r.seismic_risk_assessment_year),
    recentMeanTemperatureC: fact(r.recent_mean_temperature_c, true),
    recentTemperatureTrendCPerDecade: fact(r.recent_temperature_trend_c_per_decade, true),
    recentFrostDays: fact(r.recent_frost_days, true),
    recentHotDays: fact(r.recent_hot_days, true),
    recentMinimumDailyTemperatureC: fact(r.recent_minimum_daily_temperature_c, true),
    recentMaximumDailyTemperatureC: fact(r.recent_maximum_daily_temperature_c, true),
    recentAnnualPrecipitationMm: fact(r.recent_annual_precipitation_mm, true),
    recentMaxOneDayPrecipitationMm: fact(r.recent_max_one_day_precipitation_mm, true),
    annualHeatingDemandKwh: fact(r.annual_heating_demand_kwh, true),
    thermalAssessment: fact(r.thermal_assessment),
    designIndoorTemperatureC: fact(r.design_indoor_temperature_c),
    designOutdoorTemperatureC: fact(r.design_outdoor_temperature_c),
    districtHeatingAvailable: fact(r.district_heating_available),
    gasNetworkAvailable: fact(r.gas_network_available),
  };
  return {
    buildingId: r.building_id,
    country: context.country,
    snapshotDate: context.snapshotDate,
    facts,
    registeredBusinesses: { caution: BUSINESS_CAUTION, count: r.businesses.length, data: r.businesses.map(publicBusiness) },
  };
}
