/**
 * Rooftop solar: installations the official registers list at an address, panels a roof photo
 * shows, the settled `solar_presence`, and the rooftop potential plane by plane.
 *
 * A register lists an installation at an address, so every building carrying that address gets
 * it; the panels themselves are on one of them (usually the main building), which is what the
 * photo may see. `settleSolarPresence` applies spec 2.1 to those inputs.
 */
import type { BuildingRecord, PanelsStatus, SolarInstallationRecord, SolarPresence } from '../snapshot/schema.ts';
import type { Facts } from './facts.ts';
import type { Kind } from './kinds.ts';
import { CORE, INNER } from './layout.ts';
import type { Prng } from './prng.ts';

const PANEL_KWP = 0.42;
const PANEL_M2 = 1.95;
/** kg of CO2 avoided per kWh produced (grid emission factor). */
const CO2_KG_PER_KWH = 0.28;
const DAY_MS = 86_400_000;
/** Azimuth of each plane relative to the first: the two main planes, then the two ends. */
const PLANE_TURN = [0, 180, 90, 270];

/** The settled solar answer of spec 2.1, from the register entries and the photo result. */
export function settleSolarPresence(registered: boolean, addressShared: boolean, photo: PanelsStatus | null): SolarPresence {
  if (registered && !addressShared) return 'registered';
  if (photo === 'detected') return 'detected';
  if (registered) return 'registered_at_address';
  if (photo === 'none_seen') return 'none_seen';
  if (photo === 'unclear') return 'unclear';
  return 'unknown';
}

/** Dates reach back at most this many days before the snapshot. */
const PAST_DAYS = 4_000;

export class Solar {
  /** `days[k]`: the date k days before the snapshot, YYYY-MM-DD. Formatting a Date per record
   *  costs more than the rest of the solar facts; the table also shares the strings. */
  private readonly days: string[] = [];

  constructor(snapshotDate: string) {
    const snapshotMs = Date.parse(`${snapshotDate}T00:00:00Z`);
    for (let k = 0; k <= PAST_DAYS; k++) this.days.push(new Date(snapshotMs - k * DAY_MS).toISOString().slice(0, 10));
  }

  /** Installations a register lists at a plot's address (usually none), by its main building's kind. */
  registered(rng: Prng, kind: Kind): SolarInstallationRecord[] {
    const out: SolarInstallationRecord[] = [];
    if (!rng.chance(kind.solar[0])) return out;
    const typical = kind.solar[1];
    const n = rng.chance(0.9) ? 1 : rng.chance(0.8) ? 2 : 3;
    for (let i = 0; i < n; i++) {
      const power = Math.round(rng.lognormal(typical, 0.45) * 10) / 10;
      const s = rng.next();
      out.push({
        power_kw: rng.chance(0.8) ? Math.max(0.8, power) : null,
        storage: s < 0.15 ? true : s < 0.6 ? false : null,
        // Large plants hold a licence from the regulator; small ones are on the grid operator's list.
        register: power > 400 || rng.chance(0.1) ? 'energy_regulator' : 'grid_operator',
        commissioned_on: rng.chance(0.75) ? this.days[rng.int(30, 3650)] : null,
      });
    }
    return out;
  }

  /**
   * The roof photo's result for a building that carries panels (`panels`) or not. A quarter of
   * roofs have no result (never analysed, or a photo too coarse to tell).
   */
  photo(rng: Prng, r: BuildingRecord, panels: boolean): void {
    if (rng.chance(0.25)) {
      r.panels_status = null;
      r.panels_photo_date = null;
      r.panels_confidence = null;
      r.panels_analysed_on = null;
      r.panels_photo_resolution_cm = null;
      return;
    }
    const s = rng.next();
    // Panels go unseen when fitted after the photo; a few roofs fool the detector.
    const status: PanelsStatus = panels
      ? s < 0.84
        ? 'detected'
        : s < 0.93
          ? 'unclear'
          : 'none_seen'
      : s < 0.012
        ? 'detected'
        : s < 0.05
          ? 'unclear'
          : 'none_seen';
    const photoAge = rng.int(60, 1460);
    r.panels_status = status;
    r.panels_photo_date = this.days[photoAge];
    r.panels_confidence = Math.round((status === 'unclear' ? rng.range(0.3, 0.6) : rng.range(0.62, 0.995)) * 100) / 100;
    r.panels_analysed_on = rng.chance(0.9) ? this.days[Math.max(0, photoAge - rng.int(10, 400))] : null;
    r.panels_photo_resolution_cm = rng.chance(0.85) ? rng.pick([7.5, 10, 12.5, 15, 20, 25]) : null;
  }

  /**
   * Rooftop potential: roof planes from the roof's form and the building's orientation, the
   * panels that fit on each, their yield at this latitude, and the totals.
   */
  potential(rng: Prng, f: Facts, r: BuildingRecord): void {
    r.roof_planes = [];
    if (f.area < 10 || rng.chance(0.15)) {
      r.solar_panel_count = null;
      r.solar_capacity_kwp = null;
      r.solar_yearly_energy_kwh = null;
      r.solar_co2_savings_kg_per_year = null;
      r.solar_potential_basis = null;
      return;
    }
    if (r.has_3d_model) {
      // Attached buildings of the centre share one measured roof, cut to each outline.
      const attached = (f.zone === CORE || f.zone === INNER) && rng.chance(0.45);
      r.solar_potential_basis = attached || rng.chance(0.1) ? 'measured_cut_to_outline' : 'measured';
    } else {
      r.solar_potential_basis = rng.chance(0.05) ? 'stated' : 'estimated';
    }
    // Specific yield (kWh per kWp) falls with latitude; a plane pays by its orientation and tilt.
    const yieldKwh = 1_300 - 12 * (Math.abs(f.lat) - 44);
    // The outline's x axis points f.angle counter-clockwise from east; the main planes face
    // across it, to its left (+y) and right: azimuth, clockwise from north, of +y is -f.angle.
    const facing = (-f.angle * 180) / Math.PI;
    let planes: number, tilt: number;
    switch (f.roof) {
      case 'flat':
        planes = 1;
        tilt = rng.range(0, 3);
        break;
      case 'skillion':
        planes = 1;
        tilt = rng.range(5, 20);
        break;
      case 'gabled':
      case 'round':
        planes = 2;
        tilt = rng.range(22, 42);
        break;
      case 'gambrel':
      case 'mansard':
        planes = 4;
        tilt = rng.range(25, 60);
        break;
      default:
        planes = 4;
        tilt = rng.range(22, 40); // hipped, half-hipped, pyramidal, dome
    }
    tilt = Math.round(tilt);
    const roofArea = f.area / Math.cos((tilt * Math.PI) / 180);
    let panelsTotal = 0,
      energyTotal = 0;
    const listed = r.solar_potential_basis !== 'estimated' || rng.chance(0.6);
    for (let p = 0; p < planes; p++) {
      // Two main planes share the area of hipped roofs with two smaller end planes.
      const share = planes === 1 ? 1 : planes === 2 ? 0.5 : p < 2 ? 0.35 : 0.15;
      const azimuth = (((facing + PLANE_TURN[p]) % 360) + 360) % 360;
      const area = Math.round(roofArea * share * 10) / 10;
      // Panels face the sun: a north-facing pitched plane gets none; a flat roof gets tilted rows.
      const south = Math.cos(((azimuth - 180) * Math.PI) / 180);
      const usable = tilt < 10 ? 0.45 : south > -0.3 ? 0.7 : 0;
      const panels = area < 4 ? null : Math.floor((area * usable) / PANEL_M2);
      const gain = tilt < 10 ? 0.93 : Math.max(0.55, 0.88 + 0.12 * south - Math.abs(tilt - 35) * 0.003);
      const energy = panels === null ? null : Math.round(panels * PANEL_KWP * yieldKwh * gain);
      if (panels !== null) {
        panelsTotal += panels;
        energyTotal += energy!;
      }
      if (listed)
        r.roof_planes.push({
          azimuth_deg: Math.round(azimuth),
          tilt_deg: tilt,
          area_m2: area,
          panel_count: panels,
          yearly_energy_kwh: energy,
        });
    }
    r.solar_panel_count = panelsTotal;
    r.solar_capacity_kwp = Math.round(panelsTotal * PANEL_KWP * 100) / 100;
    r.solar_yearly_energy_kwh = energyTotal;
    r.solar_co2_savings_kg_per_year = Math.round(energyTotal * CO2_KG_PER_KWH);
  }
}
