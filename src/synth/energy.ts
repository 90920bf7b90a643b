/**
 * Energy facts: the modelled annual heating demand for the local climate, the rare
 * building-specific thermal assessments (some with the design temperatures a peak heat load
 * needs), and which networks serve the location: district heating in the centres of cities
 * that have it, gas in towns and many villages.
 */
import type { BuildingRecord, ThermalAssessment } from '../snapshot/schema.ts';
import type { Climate } from './climate.ts';
import type { Facts } from './facts.ts';
import { CORE, INNER, TOWN_CENTRE } from './layout.ts';
import type { Prng } from './prng.ts';
import { CITY, TOWN } from './settlements.ts';

const ASSESSMENTS: readonly ThermalAssessment[] = ['energy_certificate', 'audit', 'as_built_model', 'survey'];
const ASSESSMENT_WEIGHTS = [72, 14, 7, 7];
const ASSESSMENT_TOTAL = ASSESSMENT_WEIGHTS.reduce((a, b) => a + b, 0);

/** Heating need (kWh per m² of floor a year, mild lowland climate) by when the building went up. */
function specificDemand(year: number, block: boolean): number {
  if (year < 1950) return 230;
  if (year < 1990) return block ? 150 : 200;
  if (year < 2010) return 125;
  return 70;
}

export function energy(rng: Prng, f: Facts, r: BuildingRecord, climate: Climate): void {
  // The model needs a heated building and a floor area it can work out.
  const floors = r.floors ?? (r.height_m !== null ? Math.max(1, Math.round(r.height_m / 3)) : null);
  if (f.kind.heated && floors !== null && rng.chance(0.9)) {
    const demand = r.footprint_area_m2 * floors * 0.85 * specificDemand(f.year, f.kind.category === 'apartment_block');
    r.annual_heating_demand_kwh = Math.round((demand * climate.heatingFactor * rng.lognormal(1, 0.12)) / 10) * 10;
  } else {
    r.annual_heating_demand_kwh = null;
  }

  // Certificates come with sales and renovations: more often for newer and bigger buildings.
  const p = !f.kind.heated ? 0.004 : (f.year >= 2007 ? 0.09 : 0.045) * (f.kind.category === 'residential_house' ? 1 : 1.6);
  if (rng.chance(p)) {
    r.thermal_assessment = ASSESSMENTS[rng.weighted(ASSESSMENT_WEIGHTS, ASSESSMENT_TOTAL)];
    const withDesign = rng.chance(r.thermal_assessment === 'energy_certificate' ? 0.35 : 0.7);
    const careHome = r.building_type === 'hospital' || r.building_type === 'kindergarten';
    r.design_indoor_temperature_c = withDesign ? (careHome ? 22 : rng.chance(0.85) ? 20 : 18) : null;
    // Now and then an assessment states only one of the two.
    r.design_outdoor_temperature_c = withDesign && rng.chance(0.93) ? climate.designOutdoor : null;
  } else {
    r.thermal_assessment = null;
    r.design_indoor_temperature_c = null;
    r.design_outdoor_temperature_c = null;
  }

  const s = f.settlement;
  const centre = f.zone === CORE || f.zone === INNER || f.zone === TOWN_CENTRE;
  if (rng.chance(0.08)) {
    r.district_heating_available = null;
  } else if (s.districtHeating && centre) {
    r.district_heating_available = rng.chance(f.zone === INNER ? 0.75 : 0.95);
  } else {
    r.district_heating_available = s.kind === CITY || s.kind === TOWN ? false : rng.chance(0.4) ? false : null;
  }
  const g = rng.next();
  if (s.gasNetwork) r.gas_network_available = g < 0.9 ? true : g < 0.96 ? false : null;
  else r.gas_network_available = g < 0.7 ? false : null;
}
