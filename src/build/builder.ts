/**
 * The snapshot builder: OpenStreetMap features (an `osmium export` GeoJSON Sequence) and
 * official lists in, one country's snapshot out.
 *
 * 1. Read: building outlines, address points, points of interest, named roads and settlement
 *    nodes, streaming, one feature at a time. Points wait for the outlines: osmium writes
 *    nodes before ways.
 * 2. Merge: an outline lying almost wholly inside another is the same building drawn twice
 *    (nested-outlines.ts): it is folded into the outer one, which takes the tags it lacks.
 * 3. Join: every point to the outline that contains it (Flatbush + point-in-polygon); a
 *    business register's rows to the building they name, contain or share an address with;
 *    seismic list rows to the outline containing them, else the nearest within `seismicMaxM`.
 * 4. Derive: area on the ellipsoid, representative point, address and its corroboration,
 *    height, volume and floor area with their basis, locality (one spelling per locality),
 *    nearest road.
 * 5. Write through `SnapshotWriter` (temporary file + rename).
 */
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import type { BuildingRecord, BusinessRecord, LocalityBasis, SnapshotSource } from '../snapshot/schema.ts';
import { blankRecord } from '../snapshot/record.ts';
import { SnapshotWriter } from '../snapshot/writer.ts';
import { byHouseNumber, settleAddress, type AddressRecord, type SettledAddress } from './address-join.ts';
import { RowLog, type ReasonCount, type Where } from './bad-rows.ts';
import { readBusinessRegister, RegisterPlaces } from './business-register.ts';
import { footprintArea } from '../geo/area.ts';
import { readFeatures, type Feature } from './geojsonseq.ts';
import { isSettlement, LocalitySpellings, PlaceIndex } from './locality.ts';
import { nestedOutlines } from './nested-outlines.ts';
import { isNamedRoad, RoadCollector, type RoadIndex } from './nearest-road.ts';
import {
  buildingFacts,
  buildingValue,
  estimatedHeight,
  residentialCategory,
  taggedAddress,
  type BuildingFacts,
  type TagProblem,
  type Tags,
} from './osm-tags.ts';
import { osmSourceId, osmTags } from './osmium.ts';
import { outlineFrom, type Outline } from './outline.ts';
import { OutlineIndex } from './outline-index.ts';
import { isBusiness } from './poi-join.ts';
import { representativePoint } from './representative-point.ts';
import { readSeismicList, type SeismicColumns, type SeismicRow } from './seismic.ts';

export interface BuildOptions {
  /** ISO 3166-1 alpha-2, uppercase. */
  country: string;
  /** YYYY-MM-DD; also the sources' retrieval date. */
  snapshotDate: string;
  /** OSM features as GeoJSON or a GeoJSON Sequence: outlines, and by default every other layer. */
  buildings: string;
  /** Address points from this file instead of `buildings`. */
  addresses?: string;
  /** Points of interest from this file instead of `buildings`: business listings, for addresses. */
  pois?: string;
  /** A business register (CSV, business-register.ts): the buildings' registered businesses. */
  businesses?: string;
  /** Seismic-risk lists with their column mapping. */
  seismic?: readonly { path: string; columns: SeismicColumns | 'auto' }[];
  /** Stop at the first bad row (default false: count it and go on). */
  strict?: boolean;
  /** The snapshot file to write. */
  out: string;
  /** How far nearest_road looks for a named road (default 1,000 m). */
  nearestRoadMaxM?: number;
  /** How far a seismic-list point may lie from an outline that does not contain it (default 15 m). */
  seismicMaxM?: number;
  onProgress?: (progress: Progress) => void;
}

export interface Progress {
  phase: string;
  done: number;
  total: number;
}

export interface BuildResult {
  path: string;
  rows: number;
  bytes: number;
  checksum: string;
  seconds: number;
  counts: BuildCounts;
  bad: ReasonCount[];
  notes: ReasonCount[];
  /** Rows folded into another: outlines inside another building's. */
  merged: ReasonCount[];
}

export interface BuildCounts {
  features: number;
  buildings: number;
  address_points: number;
  address_points_joined: number;
  pois: number;
  pois_joined: number;
  seismic_rows: number;
  seismic_joined: number;
  register_rows: number;
  register_joined: number;
  roads: number;
  with_address: number;
  with_nearest_road: number;
  /** Buildings whose locality a record states, and those given the nearest settlement's. */
  locality_stated: number;
  locality_inferred: number;
  /** Spellings of a locality written as another (case, accents). */
  locality_spellings_merged: number;
}

interface PendingBuilding {
  sourceId: string;
  where: Where;
  outline: Outline;
  area: number;
  facts: BuildingFacts;
  /** The outline's own addr:* tags. */
  ownAddress: AddressRecord | null;
  /** Address points inside the outline. */
  pointAddresses: AddressRecord[];
  /** Addresses of the businesses listed inside (OpenStreetMap points of interest). */
  listings: AddressRecord[];
  /** Registered businesses, from a business register. */
  businesses: BusinessRecord[];
  seismic: SeismicRow | null;
}

interface PendingPoint<T> {
  lon: number;
  lat: number;
  where: Where;
  value: T;
}

interface Roles {
  buildings: boolean;
  addresses: boolean;
  pois: boolean;
  /** Roads and settlements: they come with the outlines' extract. */
  context: boolean;
}

const PROGRESS_EVERY = 4096;
/**
 * Address nodes are often vertices of the outline (an entrance drawn on the wall), which a
 * point-in-polygon test may put either side: a point this close to an outline is on it.
 */
const ON_OUTLINE_M = 0.5;

function sources(options: BuildOptions): SnapshotSource[] {
  const list: SnapshotSource[] = [
    {
      name: 'OpenStreetMap',
      licence: 'ODbL-1.0',
      attribution: '© OpenStreetMap contributors',
      retrieved: options.snapshotDate,
    },
  ];
  if (options.businesses) {
    list.push({
      name: `Business register ${basename(options.businesses)}`,
      licence: 'as published by the register',
      attribution: 'the business register',
      retrieved: options.snapshotDate,
    });
  }
  for (const s of options.seismic ?? []) {
    list.push({
      name: `Romanian seismic risk list ${basename(s.path)}`,
      licence: 'public sector information',
      attribution: 'Romanian municipalities, collected by Code for Romania (seismic-risc)',
      retrieved: options.snapshotDate,
    });
  }
  return list;
}

/** A seismic row replaces another on the same building when it was examined later. */
function laterAssessment(candidate: SeismicRow, current: SeismicRow | null): boolean {
  return current === null || (candidate.assessment_year ?? -Infinity) > (current.assessment_year ?? -Infinity);
}

function pointOf(feature: Feature): [number, number] | null {
  const g = feature.geometry;
  if (!g || g.type !== 'Point' || !Array.isArray(g.coordinates)) return null;
  const [x, y] = g.coordinates as unknown[];
  if (typeof x !== 'number' || typeof y !== 'number' || !Number.isFinite(x) || !Number.isFinite(y) || Math.abs(x) > 180 || Math.abs(y) > 90)
    return null;
  return [x, y];
}

export async function buildSnapshot(options: BuildOptions): Promise<BuildResult> {
  const started = performance.now();
  const log = new RowLog(options.strict ?? false);
  const nearestRoadMaxM = options.nearestRoadMaxM ?? 1_000;
  const seismicMaxM = options.seismicMaxM ?? 15;
  const progress = options.onProgress ?? (() => {});
  // The writer checks country and date: a typo fails here, before minutes of reading.
  const writer = new SnapshotWriter({ country: options.country, snapshotDate: options.snapshotDate, sources: sources(options) });

  const buildings: PendingBuilding[] = [];
  const seenIds = new Set<string>();
  const addressPoints: PendingPoint<AddressRecord>[] = [];
  const pois: PendingPoint<{ source: string; name: string; listing: AddressRecord | null }>[] = [];
  const roads = new RoadCollector();
  const places = new PlaceIndex();
  const counts: BuildCounts = {
    features: 0,
    buildings: 0,
    address_points: 0,
    address_points_joined: 0,
    pois: 0,
    pois_joined: 0,
    seismic_rows: 0,
    seismic_joined: 0,
    register_rows: 0,
    register_joined: 0,
    roads: 0,
    with_address: 0,
    with_nearest_road: 0,
    locality_stated: 0,
    locality_inferred: 0,
    locality_spellings_merged: 0,
  };

  const readOsm = async (path: string, roles: Roles): Promise<void> => {
    const file = basename(path);
    const total = (await stat(path).catch(() => ({ size: 0 }))).size;
    let done = 0;
    let sinceReport = 0;
    for await (const row of readFeatures(path, (n) => {
      done += n;
    })) {
      if (++sinceReport === PROGRESS_EVERY) {
        sinceReport = 0;
        progress({ phase: `read ${file}`, done, total });
      }
      counts.features++;
      const where: Where = { file, line: row.line };
      if (row.error !== undefined) {
        log.bad('invalid_feature', where, row.error);
        continue;
      }
      const feature = row.feature;
      const tags = osmTags(feature);
      const type = feature.geometry?.type;
      if (buildingValue(tags) !== null) {
        if (type !== 'Point') {
          if (roles.buildings) readBuilding(feature, tags, where);
          continue;
        }
        // A building drawn as a node has no outline, but it may still be a shop or an address.
        if (roles.buildings) log.note('building_without_outline', where, `building=${tags.building} mapped as a node`);
      }
      if (type === 'Point') {
        const wantsPoi = roles.pois && isBusiness(tags);
        const wantsAddress = roles.addresses && !isBusiness(tags) && tags['addr:housenumber'] !== undefined;
        const wantsPlace = roles.context && isSettlement(tags);
        if (!wantsPoi && !wantsAddress && !wantsPlace) continue;
        const p = pointOf(feature);
        if (!p) {
          log.bad('invalid_geometry', where, 'a point without valid [lon, lat]');
          continue;
        }
        if (wantsPlace) places.add(p[0], p[1], tags.name);
        if (!wantsPoi && !wantsAddress) continue;
        const source = osmSourceId(feature);
        if (source === null) {
          log.bad('missing_id', where, 'the feature has no OSM id (export with osmium -a type,id or --add-unique-id=type_id)');
          continue;
        }
        if (wantsPoi) {
          const address = taggedAddress(tags);
          pois.push({ lon: p[0], lat: p[1], where, value: { source, name: tags.name.trim(), listing: address && { source, address } } });
        } else {
          addressPoints.push({ lon: p[0], lat: p[1], where, value: { source, address: taggedAddress(tags)! } });
        }
      } else if (roles.context && (type === 'LineString' || type === 'MultiLineString') && isNamedRoad(tags)) {
        if (roads.add(tags.name, feature.geometry!)) counts.roads++;
        else log.bad('invalid_geometry', where, `highway "${tags.name}" has no usable segment`);
      }
    }
    progress({ phase: `read ${file}`, done: total, total });
  };

  const readBuilding = (feature: Feature, tags: Tags, where: Where): void => {
    if (feature.geometry?.type === 'LineString') {
      // A default osmium export writes a closed way both as a line and as an area: the
      // line is the area's twin. An open way cannot be an outline.
      const c = feature.geometry!.coordinates as unknown[][] | undefined;
      const closed = Array.isArray(c) && c.length >= 4 && JSON.stringify(c[0]) === JSON.stringify(c[c.length - 1]);
      if (closed) log.note('building_line_twin', where, 'a closed building way exported as a line too');
      else log.bad('invalid_geometry', where, 'a building way that is not closed');
      return;
    }
    const result = outlineFrom(feature.geometry);
    if (!result.outline) {
      log.bad('invalid_geometry', where, result.problem);
      return;
    }
    const area = footprintArea(result.outline.polygons);
    if (!(area > 0)) {
      log.bad('invalid_geometry', where, 'the outline encloses no area');
      return;
    }
    const sourceId = osmSourceId(feature);
    if (sourceId === null) {
      log.bad('missing_id', where, 'the feature has no OSM id (export with osmium -a type,id or --add-unique-id=type_id)');
      return;
    }
    if (seenIds.has(sourceId)) {
      log.bad('duplicate_id', where, `${sourceId} appears twice`);
      return;
    }
    seenIds.add(sourceId);
    const problems: TagProblem[] = [];
    const facts = buildingFacts(tags, problems);
    for (const p of problems) (p.note ? log.note : log.bad).call(log, p.reason, where, `${sourceId}: ${p.detail}`);
    buildings.push({
      sourceId,
      where,
      outline: result.outline,
      area,
      facts,
      ownAddress: facts.address && { source: sourceId, address: facts.address },
      pointAddresses: [],
      // A shop or hotel mapped on the outline lists a business there; its address is the outline's own.
      listings: [],
      businesses: [],
      seismic: null,
    });
  };

  await readOsm(options.buildings, { buildings: true, addresses: !options.addresses, pois: !options.pois, context: true });
  if (options.addresses) await readOsm(options.addresses, { buildings: false, addresses: true, pois: false, context: false });
  if (options.pois) await readOsm(options.pois, { buildings: false, addresses: false, pois: true, context: false });
  counts.address_points = addressPoints.length;
  counts.pois = pois.length;

  progress({ phase: 'merge nested outlines', done: 0, total: buildings.length });
  // Source ids of merged outlines, to the kept one's: a register may name either.
  const mergedInto = new Map<string, string>();
  const nested = nestedOutlines(
    buildings.map((b) => b.outline),
    (done) => progress({ phase: 'merge nested outlines', done, total: buildings.length }),
  );
  const dropped = new Set<number>();
  for (const n of nested) {
    log.merged(
      'nested_outline',
      buildings[n.inner].where,
      `${buildings[n.inner].sourceId} lies ${(n.share * 100).toFixed(1)}% inside another building's outline; merged into ${buildings[n.into].sourceId}`,
    );
  }
  // The largest inner outline fills first what the outer one lacks.
  for (const n of [...nested].sort((a, b) => buildings[b.inner].area - buildings[a.inner].area || a.inner - b.inner)) {
    const inner = buildings[n.inner];
    const outer = buildings[n.into];
    mergeInto(outer, inner);
    mergedInto.set(inner.sourceId, outer.sourceId);
    dropped.add(n.inner);
  }
  if (dropped.size > 0) {
    let kept = 0;
    for (let i = 0; i < buildings.length; i++) if (!dropped.has(i)) buildings[kept++] = buildings[i];
    buildings.length = kept;
  }
  counts.buildings = buildings.length;

  const index = new OutlineIndex(
    buildings.map((b) => b.outline),
    Float64Array.from(buildings, (b) => b.area),
  );
  const points = addressPoints.length + pois.length;
  progress({ phase: 'join points', done: 0, total: points });
  let joinedPoints = 0;
  for (const p of addressPoints) {
    if ((++joinedPoints & 4095) === 0) progress({ phase: 'join points', done: joinedPoints, total: points });
    const i = index.containingOrNearest(p.lon, p.lat, ON_OUTLINE_M);
    if (i < 0) {
      log.note('address_point_outside_outlines', p.where, `${p.value.source} (${p.value.address.text})`);
      continue;
    }
    buildings[i].pointAddresses.push(p.value);
    counts.address_points_joined++;
  }
  for (const p of pois) {
    if ((++joinedPoints & 4095) === 0) progress({ phase: 'join points', done: joinedPoints, total: points });
    const i = index.containingOrNearest(p.lon, p.lat, ON_OUTLINE_M);
    if (i < 0) {
      log.note('poi_outside_outlines', p.where, `${p.value.source} (${p.value.name})`);
      continue;
    }
    if (p.value.listing) buildings[i].listings.push(p.value.listing);
    counts.pois_joined++;
  }
  if (options.businesses) {
    const joined = await joinRegister(options.businesses, buildings, index, mergedInto, log);
    counts.register_rows = joined.rows;
    counts.register_joined = joined.joined;
    // As with a seismic list: a register that places nothing is the wrong file, or mapped wrong,
    // and the snapshot would replace one whose buildings had their businesses.
    if (joined.rows === 0) {
      throw new RangeError(
        `${options.businesses}: no usable row (a header alone, or every row refused: see the bad rows); nothing written`,
      );
    }
    if (joined.joined === 0) {
      throw new RangeError(
        `${options.businesses}: none of its ${joined.rows} rows names, contains or shares an address with a building of this input (a register of another country?); nothing written`,
      );
    }
  }
  for (const list of options.seismic ?? []) {
    const total = (await stat(list.path).catch(() => ({ size: 0 }))).size;
    let done = 0;
    const [rowsBefore, joinedBefore] = [counts.seismic_rows, counts.seismic_joined];
    for await (const row of readSeismicList(list.path, list.columns, log, (n) => {
      done += n;
    })) {
      counts.seismic_rows++;
      const i = index.containingOrNearest(row.lon, row.lat, seismicMaxM);
      if (i < 0) {
        log.note(
          'seismic_unmatched',
          { file: basename(list.path), line: row.line },
          `no outline within ${seismicMaxM} m of ${row.lat}, ${row.lon}`,
        );
        continue;
      }
      counts.seismic_joined++;
      if (laterAssessment(row, buildings[i].seismic)) buildings[i].seismic = row;
      if (counts.seismic_rows % PROGRESS_EVERY === 0) progress({ phase: `join ${basename(list.path)}`, done, total });
    }
    // A list none of whose rows lies on a building is the wrong one (another area, coordinates
    // mapped wrong): built anyway, the snapshot would replace one that had its risk classes.
    // A list with no row that could be read (only a header, every row refused) is as wrong.
    const rows = counts.seismic_rows - rowsBefore;
    if (rows === 0) {
      throw new RangeError(
        `${list.path}: no usable row (a header alone, or every row refused: see the bad rows; columns mapped wrong?); nothing written`,
      );
    }
    if (counts.seismic_joined === joinedBefore) {
      throw new RangeError(
        `${list.path}: none of its ${rows} rows lies within ${seismicMaxM} m of a building (a list of another area, or latitude and longitude mapped wrong?); nothing written`,
      );
    }
  }

  // Each locality is written one way: its spellings are counted before any building is written.
  const settled: SettledAddress[] = [];
  const localities: string[] = [];
  const bases: (LocalityBasis | null)[] = [];
  const spellings = new LocalitySpellings();
  for (const b of buildings) {
    if ((settled.length & 4095) === 0) progress({ phase: 'addresses and localities', done: settled.length, total: buildings.length });
    const s = settle(b);
    const locality = s.city ?? places.nearestName(...representativePoint(b.outline.polygons));
    const basis = s.city !== null ? 'stated' : locality !== '' ? 'inferred' : null;
    if (basis === 'stated') counts.locality_stated++;
    if (basis === 'inferred') counts.locality_inferred++;
    settled.push(s);
    localities.push(locality);
    bases.push(basis);
    spellings.add(locality);
  }
  counts.locality_spellings_merged = spellings.merged;

  const roadIndex = roads.finish();
  for (let i = 0; i < buildings.length; i++) {
    if (i % PROGRESS_EVERY === 0) progress({ phase: 'derive', done: i, total: buildings.length });
    const record = derive(buildings[i], settled[i], spellings.name(localities[i]), bases[i], roadIndex, nearestRoadMaxM);
    if (record.address !== null) counts.with_address++;
    if (record.nearest_road !== null) counts.with_nearest_road++;
    writer.add(record);
    // The writer holds the record now; the pending copy would double the memory.
    (buildings as (PendingBuilding | null)[])[i] = null;
  }
  // A snapshot of no building would be served in place of the country's last good one.
  if (writer.count === 0) {
    throw new RangeError(
      `no building in the input (${counts.features} features read); nothing written, so the snapshots already there stay as they are`,
    );
  }
  progress({ phase: 'write', done: 0, total: 1 });
  const written = await writer.finish(options.out);
  progress({ phase: 'write', done: 1, total: 1 });
  const { bad, notes, merged } = log.summary();
  return { ...written, seconds: (performance.now() - started) / 1000, counts, bad, notes, merged };
}

/**
 * Folds an outline drawn inside another into it: the outer outline's tags win, and what they
 * leave unknown the inner one's tell; its address becomes one of the outer building's.
 */
function mergeInto(outer: PendingBuilding, inner: PendingBuilding): void {
  const o = outer.facts;
  const f = inner.facts;
  if (o.building_type === 'unspecified' && f.building_type !== 'unspecified') {
    [o.category, o.category_evidence, o.building_type] = [f.category, f.category_evidence, f.building_type];
  }
  if (o.floors === null && f.floors !== null) [o.floors, o.floors_including_underground] = [f.floors, f.floors_including_underground];
  o.stated_height_m ??= f.stated_height_m;
  o.roof_shape ??= f.roof_shape;
  if (o.construction_year === null && o.completed_by_year === null) {
    [o.construction_year, o.construction_year_is_estimate, o.completed_by_year] = [
      f.construction_year,
      f.construction_year_is_estimate,
      f.completed_by_year,
    ];
  }
  o.stated_postal_code ??= f.stated_postal_code;
  o.stated_city ??= f.stated_city;
  if (inner.ownAddress) outer.pointAddresses.push(inner.ownAddress);
  outer.pointAddresses.push(...inner.pointAddresses);
  outer.listings.push(...inner.listings);
}

/** Reads a business register and gives each row's business to its building. */
async function joinRegister(
  path: string,
  buildings: PendingBuilding[],
  index: OutlineIndex,
  mergedInto: ReadonlyMap<string, string>,
  log: RowLog,
): Promise<{ rows: number; joined: number }> {
  const places = new RegisterPlaces(
    buildings.map((b) => ({
      sourceId: b.sourceId,
      addresses: [...(b.ownAddress ? [b.ownAddress.address] : []), ...b.pointAddresses.map((r) => r.address)],
      postal_code: b.facts.stated_postal_code,
      city: b.facts.stated_city,
    })),
    index,
    mergedInto,
  );
  let rows = 0;
  let joined = 0;
  for await (const row of readBusinessRegister(path, log)) {
    rows++;
    const i = places.find(row, log);
    if (i < 0) continue;
    buildings[i].businesses.push(row.business);
    joined++;
  }
  return { rows, joined };
}

/** The address a building's records settle on (address-join.ts), with its own postal code and city. */
function settle(b: PendingBuilding): SettledAddress {
  const s = b.seismic;
  const records = [...(b.ownAddress ? [b.ownAddress] : []), ...b.pointAddresses.sort(byHouseNumber)];
  if (s?.address) {
    records.push({
      source: s.source,
      address: { text: s.address, street: null, house_number: s.house_number, postal_code: null, city: s.locality },
    });
  }
  return settleAddress(records, b.listings, { postal_code: b.facts.stated_postal_code, city: b.facts.stated_city });
}

function derive(
  b: PendingBuilding,
  settled: SettledAddress,
  locality: string,
  localityBasis: LocalityBasis | null,
  roads: RoadIndex,
  nearestRoadMaxM: number,
): BuildingRecord {
  const [lon, lat] = representativePoint(b.outline.polygons);
  const f = b.facts;
  const s = b.seismic;

  // An expert's height regime is the better record of floors than a map tag.
  const floors = s?.regime ? s.regime.floors : f.floors;
  const floorsAll = s?.regime ? s.regime.floors_including_underground : f.floors_including_underground;
  let height: number | null = null;
  let basis: 'stated' | 'estimated' | null = null;
  if (f.stated_height_m !== null) {
    height = f.stated_height_m;
    basis = 'stated';
  } else if (floors !== null && floors > 0) {
    height = estimatedHeight(floors, f.roof_shape);
    basis = 'estimated';
  }
  const constructionYear = s?.construction_year ?? f.construction_year;
  const nearestRoad = settled.address === null ? roads.nearestName(b.outline, lon, lat, nearestRoadMaxM) : null;

  return blankRecord(b.sourceId, lon, lat, {
    footprint: b.outline.polygons,
    address: settled.address,
    nearest_road: nearestRoad,
    address_evidence: settled.address_evidence,
    address_corroboration: settled.address_corroboration,
    postal_code: settled.postal_code,
    locality,
    // A record naming the city (the building's own tags, an address point inside it, a list, a
    // listing's address) states it; the nearest settlement's name is an inference.
    locality_basis: localityBasis,
    // `residential` splits into house or block by floors, which a list may have supplied.
    category: f.building_type === 'residential' ? residentialCategory(floors) : f.category,
    category_evidence: f.category_evidence,
    building_type: f.building_type,
    roof_shape: f.roof_shape,
    footprint_area_m2: b.area,
    height_m: height,
    height_basis: basis,
    volume_m3: height === null ? null : b.area * height,
    // No record states a volume: footprint times height is modelled, whatever the height's basis (spec 2.3).
    volume_basis: height === null ? null : 'estimated',
    floor_area_m2: floors === null ? null : b.area * floors,
    floor_area_basis: floors === null ? null : 'estimated',
    floor_area_scope: floors === null ? null : 'gross_above_ground',
    floors,
    floors_including_underground: floorsAll,
    construction_year: constructionYear,
    construction_year_is_estimate: s?.construction_year != null ? false : f.construction_year_is_estimate,
    completed_by_year: f.completed_by_year,
    dwellings: s?.dwellings ?? null,
    businesses: b.businesses,
    entrances: settled.entrances,
    // Named by a list, whatever the class (N/A) or year it gives.
    seismic_listed: s !== null,
    seismic_risk_class: s?.risk_class ?? null,
    seismic_risk_assessment_year: s?.assessment_year ?? null,
  });
}
