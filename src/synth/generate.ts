/**
 * `generateCountry`: a seeded synthetic country, one `BuildingRecord` at a time;
 * `writeSyntheticCountry`: the same country as a snapshot file.
 *
 * The plan is small and made first: rivers and flood maps, seismic and climate fields, and the
 * list of settlements (sizes, places, names). Buildings are then laid out settlement by
 * settlement, plot by plot, and yielded as they are made, so ten million of them never sit in
 * memory together. Every draw comes from streams of the seed: the same options give the same
 * records in the same order.
 *
 * ```ts
 * for (const record of generateCountry({ seed: 42, buildings: 10_000 })) writer.add(record);
 * ```
 */
import { join } from 'node:path';
import { buildingId } from '../snapshot/building-id.ts';
import { unknownFields } from '../snapshot/record.ts';
import type { BuildingRecord } from '../snapshot/schema.ts';
import { SnapshotWriter } from '../snapshot/writer.ts';
import { AddressBook } from './addresses.ts';
import { describe, drawBody } from './attributes.ts';
import { Country } from './bounds.ts';
import { BusinessRegister } from './businesses.ts';
import { Climate } from './climate.ts';
import { energy } from './energy.ts';
import { flatAscii } from './flat.ts';
import { blankFacts, type Facts } from './facts.ts';
import { FloodMaps, type FloodAt } from './flood.ts';
import { metresPerDegreeLat, metresPerDegreeLon } from '../geo/wgs84.ts';
import { HOUSE } from './kinds.ts';
import { PlotGrid } from './layout.ts';
import { resolveOptions, type GenerateOptions, type ResolvedOptions } from './options.ts';
import { Outline } from './outlines.ts';
import { MAX_ON_PLOT, PlotPlanner } from './plots.ts';
import { Prng } from './prng.ts';
import { SeismicHazard, type Assessment } from './seismic.ts';
import { gridCells, planSettlements, VILLAGE, type Settlement } from './settlements.ts';
import { settleSolarPresence, Solar } from './solar.ts';
import { unitsAndDwellings } from './units.ts';

/** Independent random streams of one seed. */
const WORLD = 1,
  SETTLEMENTS = 2,
  BUILDINGS = 3;
/** Share of cells left empty as parks and squares, where the plot budget allows. */
const PARKS = 0.03;
/** No plot within this many metres of a river's bank: the bed and its embankment. */
const RIVER_BED_M = 15;
/** An outbuilding carries its plot's address, shared with the house, this often. */
const SHARES_ADDRESS = 0.3;
/** Panels nobody registered: on this share of main buildings, and of outbuildings. */
const UNREGISTERED_MAIN = 0.015;
const UNREGISTERED_OTHER = 0.004;
const PROGRESS_EVERY = 4096;

/** Yields the buildings of a synthetic country. Options are checked now, not on first use. */
export function generateCountry(options: GenerateOptions): Iterable<BuildingRecord> {
  return new CountryGenerator(resolveOptions(options)).buildings();
}

export interface WrittenCountry {
  path: string;
  rows: number;
  bytes: number;
  checksum: string;
  /** Wall-clock seconds, generation and writing together. */
  seconds: number;
}

/**
 * Generates a country and writes it as `<outDir>/<CC>/<date>.arrow` (through a temporary
 * file, so a crash leaves no half snapshot). Same options, same bytes.
 */
export async function writeSyntheticCountry(options: GenerateOptions & { outDir: string }): Promise<WrittenCountry> {
  const t0 = performance.now();
  const o = resolveOptions(options, ['outDir']);
  if (typeof options.outDir !== 'string' || options.outDir === '') throw new TypeError('outDir must name a folder.');
  const writer = new SnapshotWriter({
    country: o.country,
    snapshotDate: o.date,
    sources: [
      {
        name: 'Edifice synthetic generator',
        licence: 'CC0-1.0',
        attribution: `Synthetic buildings (seed ${o.seed}, ${o.buildings} buildings); no real building is described.`,
        retrieved: o.date,
      },
    ],
  });
  for (const record of new CountryGenerator(o).buildings()) writer.add(record);
  const written = await writer.finish(join(options.outDir, o.country, `${o.date}.arrow`));
  return { ...written, seconds: (performance.now() - t0) / 1000 };
}

class CountryGenerator {
  private readonly country: Country;
  private readonly flood: FloodMaps;
  private readonly seismic: SeismicHazard;
  private readonly climate: Climate;
  private readonly settlements: Settlement[];
  private readonly rng: Prng;
  private readonly addresses = new AddressBook();
  private readonly businesses: BusinessRegister;
  private readonly solar: Solar;
  private readonly sourcePrefix: string;
  // Scratch reused for every building and plot.
  private readonly outline = new Outline();
  private readonly facts: Facts;
  private readonly planner: PlotPlanner;
  private readonly floodAt: FloodAt = { zone: null, mapped: false, source: null, distanceM: 0, bankM: 0 };
  private readonly assessed: Assessment = { listed: false, cls: null, year: null };
  private readonly rep = { lon: 0, lat: 0 };
  private readonly carries = new Uint8Array(MAX_ON_PLOT);

  constructor(private readonly o: ResolvedOptions) {
    this.country = new Country(o.bounds);
    const world = new Prng(o.seed, WORLD);
    this.flood = new FloodMaps(this.country, world, o.seed);
    this.seismic = new SeismicHazard(this.country, world, o.seed);
    this.climate = new Climate(this.country, o.seed);
    this.settlements = planSettlements(this.country, this.flood, new Prng(o.seed, SETTLEMENTS), o.buildings);
    this.rng = new Prng(o.seed, BUILDINGS);
    this.sourcePrefix = `synthetic:${o.seed}:`;
    this.businesses = new BusinessRegister(this.sourcePrefix, o.year);
    this.solar = new Solar(o.date);
    this.facts = blankFacts(HOUSE, this.settlements[0]);
    this.planner = new PlotPlanner(this.facts);
  }

  *buildings(): Generator<BuildingRecord, void, undefined> {
    const { rng, planner, addresses, carries, solar } = this;
    let index = 0;
    for (const s of this.settlements) {
      const grid = new PlotGrid(s, this.o.seed, gridCells(s));
      const mPerLon = metresPerDegreeLon(s.lat),
        mPerLat = metresPerDegreeLat(s.lat);
      const cos = Math.cos(s.rotation),
        sin = Math.sin(s.rotation);
      let remaining = s.buildings;
      while (remaining > 0) {
        if (!grid.next()) throw new Error(`Settlement ${s.name}: plot grid exhausted with ${remaining} buildings left.`);
        // Parks, river beds and land past the border stay empty while enough free cells remain.
        if (grid.free - 1 >= remaining) {
          const x = grid.cellX,
            y = grid.cellY;
          const lon = s.lon + (x * cos - y * sin) / mPerLon,
            lat = s.lat + (x * sin + y * cos) / mPerLat;
          if (rng.chance(PARKS) || !this.country.contains(lon, lat) || this.flood.at(lon, lat, this.floodAt).bankM < RIVER_BED_M) {
            grid.skip();
            continue;
          }
        }
        planner.plan(rng, grid, s.kind, remaining);
        const main = planner.kinds[0];
        addresses.plot(rng, s, grid, main.category);
        // Which buildings the plot's address names: the main one, and sometimes an outbuilding.
        let carriers = 0;
        for (let i = 0; i < planner.count; i++) {
          carries[i] = i === 0 || rng.chance(SHARES_ADDRESS) ? 1 : 0;
          carriers += carries[i];
        }
        const shared = addresses.addressed && carriers > 1;
        // A register lists installations at the plot's address: every building the address names
        // gets them. The panels sit on the main building, now and then on an outbuilding.
        const installations = addresses.addressed ? solar.registered(rng, main) : [];
        let panelsOn = installations.length > 0 ? 0 : -1;
        if (panelsOn === 0 && shared && rng.chance(0.1)) {
          for (let i = planner.count - 1; i > 0; i--) if (carries[i]) panelsOn = i;
        }
        for (let i = 0; i < planner.count; i++) {
          const x = planner.cx[i],
            y = planner.cy[i];
          const lon = s.lon + (x * cos - y * sin) / mPerLon,
            lat = s.lat + (x * sin + y * cos) / mPerLat;
          const record = this.building(index, s, grid.zone, i, lon, lat);
          const carried = carries[i] === 1;
          const listing = i === 0 && record.businesses.length > 0 && rng.chance(0.6);
          // this.facts still describe building i: its staircases are its entrances.
          addresses.apply(rng, record, carried, listing, this.facts.staircases, this.sourcePrefix);
          // An address names its settlement; a building without one takes the settlement it stands in.
          record.locality_basis = record.address !== null ? 'stated' : 'inferred';
          const registered = carried && installations.length > 0;
          record.solar_installations = registered ? installations.map((e) => ({ ...e })) : [];
          const panels = panelsOn === i || rng.chance(i === 0 ? UNREGISTERED_MAIN : UNREGISTERED_OTHER);
          solar.photo(rng, record, panels);
          record.solar_presence = settleSolarPresence(registered, registered && shared, record.panels_status);
          index++;
          remaining--;
          if (this.o.onProgress !== null && index % PROGRESS_EVERY === 0) this.o.onProgress(index);
          yield record;
        }
      }
    }
    if (this.o.onProgress !== null) this.o.onProgress(index);
  }

  /**
   * Building `i` of the current plot, centred at (lon, lat): outline, body and every fact that
   * does not depend on the plot's address (which the caller adds).
   */
  private building(index: number, s: Settlement, zone: number, i: number, lon: number, lat: number): BuildingRecord {
    const { rng, planner, facts: f } = this;
    f.kind = planner.kinds[i];
    f.settlement = s;
    f.zone = zone;
    f.shape = planner.shape[i];
    f.w = planner.w[i];
    f.d = planner.d[i];
    f.angle = s.rotation + planner.turn[i];
    this.outline.draw(f.shape, f.w, f.d, rng);
    const footprint = this.outline.footprint(lon, lat, f.angle, this.rep);
    f.area = this.outline.area;
    f.lon = this.rep.lon;
    f.lat = this.rep.lat;
    drawBody(rng, f);

    const sourceId = flatAscii(`${this.sourcePrefix}${index}`);
    const r = newRecord(sourceId, f.lon, f.lat, s.name);
    r.footprint = footprint;
    describe(rng, f, r, this.o.year);
    if (i === 0) r.businesses = this.businesses.draw(rng, f);
    unitsAndDwellings(rng, f, r);
    this.solar.potential(rng, f, r);

    const flood = this.flood.at(f.lon, f.lat, this.floodAt);
    r.flood_zone = flood.zone;
    r.flood_zone_mapped = flood.mapped;
    r.flood_zone_source = flood.source;

    const ag = this.seismic.acceleration(f.lon, f.lat);
    r.seismic_design_acceleration_g = ag;
    this.seismic.assess(rng, ag, f.year, f.kind.listed && s.kind !== VILLAGE, this.o.year, this.assessed);
    r.seismic_listed = this.assessed.listed;
    r.seismic_risk_class = this.assessed.cls;
    r.seismic_risk_assessment_year = this.assessed.year;

    const c = this.climate.locate(f.lon, f.lat);
    r.recent_mean_temperature_c = c.meanTemperature;
    r.recent_temperature_trend_c_per_decade = c.trend;
    r.recent_frost_days = c.frostDays;
    r.recent_hot_days = c.hotDays;
    r.recent_minimum_daily_temperature_c = c.minimumDaily;
    r.recent_maximum_daily_temperature_c = c.maximumDaily;
    r.recent_annual_precipitation_mm = c.annualPrecipitation;
    r.recent_max_one_day_precipitation_mm = c.maxOneDayPrecipitation;
    energy(rng, f, r, c);
    return r;
  }
}

/** A record with its identity and place, every other field unknown until a module sets it. */
function newRecord(sourceId: string, lon: number, lat: number, locality: string): BuildingRecord {
  return {
    building_id: flatAscii(buildingId(sourceId)),
    source_id: sourceId,
    latitude: lat,
    longitude: lon,
    footprint: [],
    footprint_area_m2: 0,
    locality,
    ...unknownFields(),
  };
}
