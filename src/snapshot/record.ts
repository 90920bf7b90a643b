/**
 * A building with nothing known but what identifies and places it. Producers and tests start
 * from it and set what their source states, so a new column never breaks them silently: it
 * arrives here as unknown.
 */
import { buildingId } from './building-id.ts';
import type { BuildingRecord, Polygon } from './schema.ts';

/** A small axis-aligned rectangle around (lon, lat), `sizeM` metres on each side. */
export function squareAround(lon: number, lat: number, sizeM = 10): Polygon[] {
  const dLat = sizeM / 2 / 111_320;
  const dLon = dLat / Math.cos((lat * Math.PI) / 180);
  return [[[lon - dLon, lat - dLat, lon + dLon, lat - dLat, lon + dLon, lat + dLat, lon - dLon, lat + dLat, lon - dLon, lat - dLat]]];
}

/** What identifies and places a building: the fields every producer sets itself. */
type Identity = 'building_id' | 'source_id' | 'latitude' | 'longitude' | 'footprint' | 'footprint_area_m2' | 'locality';

/** Every field but the identity and place, unknown (fresh lists each call: records are filled in place). */
export function unknownFields(): Omit<BuildingRecord, Identity> {
  return {
    address: null,
    nearest_road: null,
    address_evidence: 'none',
    address_corroboration: null,
    postal_code: null,
    locality_basis: null,
    category: 'unknown',
    category_evidence: 'inferred',
    building_type: 'unspecified',
    roof_shape: null,
    height_m: null,
    height_basis: null,
    volume_m3: null,
    volume_basis: null,
    floor_area_m2: null,
    floor_area_basis: null,
    floor_area_scope: null,
    floors: null,
    floors_including_underground: null,
    construction_year: null,
    completed_by_year: null,
    dwellings: null,
    construction_year_is_estimate: false,
    floors_is_estimate: false,
    dwellings_is_estimate: false,
    has_3d_model: false,
    panels_status: null,
    panels_photo_date: null,
    panels_confidence: null,
    panels_analysed_on: null,
    panels_photo_resolution_cm: null,
    solar_presence: 'unknown',
    solar_installations: [],
    solar_panel_count: null,
    solar_capacity_kwp: null,
    solar_yearly_energy_kwh: null,
    solar_co2_savings_kg_per_year: null,
    solar_potential_basis: null,
    roof_planes: [],
    businesses: [],
    units: [],
    entrances: [],
    flood_zone: null,
    flood_zone_mapped: false,
    flood_zone_source: null,
    seismic_design_acceleration_g: null,
    seismic_listed: false,
    seismic_risk_class: null,
    seismic_risk_assessment_year: null,
    annual_heating_demand_kwh: null,
    thermal_assessment: null,
    design_indoor_temperature_c: null,
    design_outdoor_temperature_c: null,
    recent_mean_temperature_c: null,
    recent_temperature_trend_c_per_decade: null,
    recent_frost_days: null,
    recent_hot_days: null,
    recent_minimum_daily_temperature_c: null,
    recent_maximum_daily_temperature_c: null,
    recent_annual_precipitation_mm: null,
    recent_max_one_day_precipitation_mm: null,
    district_heating_available: null,
    gas_network_available: null,
  };
}

export function blankRecord(sourceId: string, lon: number, lat: number, overrides: Partial<BuildingRecord> = {}): BuildingRecord {
  return {
    building_id: buildingId(sourceId),
    source_id: sourceId,
    latitude: lat,
    longitude: lon,
    footprint: squareAround(lon, lat),
    footprint_area_m2: 100,
    locality: '',
    ...unknownFields(),
    ...overrides,
  };
}
