/**
 * The snapshot builder: OpenStreetMap features (an `osmium export` GeoJSON Sequence) and
 * official lists in, one country's snapshot out.
 *
 * 1. Read: building outlines, address points, points of interest, named roads and settlement
 *    nodes, streaming, one feature at a time. Points wait for the outlines: osmium writes
 *    nodes before ways.
 * 2. Join: every point to the outline that contains it (Flatbush + point-in-polygon); seismic
 *    list rows to the outline containing them, else the nearest within `seismicMaxM`.
 * 3. Derive: area on the ellipsoid, representative point, address and its corroboration,
 *    height, volume and floor area with their basis, locality, nearest road.
 * 4. Write through `SnapshotWriter` (temporary file + rename).
 */
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import type { BuildingRecord, BusinessRecord, SnapshotSource } from '../snapshot/schema.ts';
import { blankRecord } from '../snapshot/record.ts';
import { SnapshotWriter } from '../snapshot/writer.ts';
import { byHouseNumber, settleAddress, type AddressRecord } from './address-join.ts';
import { RowLog, type ReasonCount, type Where } from './bad-rows.ts';
import { footprintArea } from './geodesy.ts';
import { readFeatures, type Feature } from './geojsonseq.ts';
import { isSettlement, PlaceIndex } from './locality.ts';
import { isNamedRoad, RoadCollector, type RoadIndex } from './nearest-road.ts';
import {
  buildingFacts, buildingValue, estimatedHeight, residentialCategory, taggedAddress, type BuildingFacts, type TagProblem, type Tags,
} from './osm-tags.ts';
import { osmSourceId, osmTags } from './osmium.ts';
import { outlineFrom, type Outline } from './outline.ts';
import { OutlineIndex } from './outline-index.ts';
import { businessFrom, isBusiness } from './poi-join.ts';
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
  /** Points of interest from this file instead of `buildings`. */
  pois?: string;
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
  roads: number;
  with_address: number;
  with_nearest_road: number;
}

interface PendingBuilding {
  sourceId: string;
  outline: Outline;
  area: number;
  facts: BuildingFacts;
  /** The outline's own addr:* tags. */
  ownAddress: AddressRecord | null;
  /** Address points inside the outline. */
  pointAddresses: AddressRecord[];
  /** Addresses of the businesses listed inside. */
  listings: AddressRecord[];
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
  const list: SnapshotSource[] = [{
    name: 'OpenStreetMap', licence: 'ODbL-1.0', attribution: '© OpenStreetMap contributors', retrieved: options.snapshotDate,
  }];
  for (const s of options.seismic ?? []) {
    list.push({
      name: `Romanian seismic risk list ${basename(s.path)}`, licence: 'public sector information',
      attribution: 'Romanian municipalities, collected by Code for Romania (seismic-risc)', retrieved: options.snapshotDate,
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
  if (typeof x !== 'number' || typeof y !== 'number' || !Number.isFinite(x) || !Number.isFinite(y) || Math.abs(x) > 180 || Math.abs(y) > 90) return null;
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
  const pois: PendingPoint<{ business: BusinessRecord; listing: AddressRecord | null }>[] = [];
  const roads = new RoadCollector();
  const places = new PlaceIndex();
  const counts: BuildCounts = {
    features: 0, buildings: 0, address_points: 0, address_points_joined: 0, pois: 0, pois_joined: 0,
    seismic_rows: 0, seismic_joined: 0, roads: 0, with_address: 0, with_nearest_road: 0,
  };

  const readOsm = async (path: string, roles: Roles): Promise<void> => {
    const file = basename(path);
    const total = (await stat(path).catch(() => ({ size: 0 }))).size;
    let done = 0;
    let sinceReport = 0;
    for await (const row of readFeatures(path, (n) => { done += n; })) {
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
          pois.push({ lon: p[0], lat: p[1], where, value: { business: businessFrom(source, tags), listing: address && { source, address } } });
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
    for (const p of problems) log.bad(p.reason, where, `${sourceId}: ${p.detail}`);
    buildings.push({
      sourceId,
      outline: result.outline,
      area,
      facts,
      ownAddress: facts.address && { source: sourceId, address: facts.address },
      pointAddresses: [],
      listings: [],
      businesses: isBusiness(tags) ? [businessFrom(sourceId, tags)] : [],
      seismic: null,
    });
  };

  await readOsm(options.buildings, { buildings: true, addresses: !options.addresses, pois: !options.pois, context: true });
  if (options.addresses) await readOsm(options.addresses, { buildings: false, addresses: true, pois: false, context: false });
  if (options.pois) await readOsm(options.pois, { buildings: false, addresses: false, pois: true, context: false });
  counts.buildings = buildings.length;
  counts.address_points = addressPoints.length;
  counts.pois = pois.length;

  progress({ phase: 'join', done: 0, total: buildings.length });
  const index = new OutlineIndex(buildings.map((b) => b.outline), Float64Array.from(buildings, (b) => b.area));
  for (const p of addressPoints) {
    const i = index.containingOrNearest(p.lon, p.lat, ON_OUTLINE_M);
    if (i < 0) {
      log.note('address_point_outside_outlines', p.where, `${p.value.source} (${p.value.address.text})`);
      continue;
    }
    buildings[i].pointAddresses.push(p.value);
    counts.address_points_joined++;
  }
  for (const p of pois) {
    const i = index.containingOrNearest(p.lon, p.lat, ON_OUTLINE_M);
    if (i < 0) {
      log.note('poi_outside_outlines', p.where, `${p.value.business.business_id} (${p.value.business.name})`);
      continue;
    }
    buildings[i].businesses.push(p.value.business);
    if (p.value.listing) buildings[i].listings.push(p.value.listing);
    counts.pois_joined++;
  }
  for (const list of options.seismic ?? []) {
    const total = (await stat(list.path).catch(() => ({ size: 0 }))).size;
    let done = 0;
    const [rowsBefore, joinedBefore] = [counts.seismic_rows, counts.seismic_joined];
    for await (const row of readSeismicList(list.path, list.columns, log, (n) => { done += n; })) {
      counts.seismic_rows++;
      const i = index.containingOrNearest(row.lon, row.lat, seismicMaxM);
      if (i < 0) {
        log.note('seismic_unmatched', { file: basename(list.path), line: row.line }, `no outline within ${seismicMaxM} m of ${row.lat}, ${row.lon}`);
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
      throw new RangeError(`${list.path}: no usable row (a header alone, or every row refused: see the bad rows; columns mapped wrong?); nothing written`);
    }
    if (counts.seismic_joined === joinedBefore) {
      throw new RangeError(`${list.path}: none of its ${rows} rows lies within ${seismicMaxM} m of a building (a list of another area, or latitude and longitude mapped wrong?); nothing written`);
    }
  }

  const roadIndex = roads.finish();
  for (let i = 0; i < buildings.length; i++) {
    if (i % PROGRESS_EVERY === 0) progress({ phase: 'derive', done: i, total: buildings.length });
    const record = derive(buildings[i], roadIndex, places, nearestRoadMaxM);
    if (record.address !== null) counts.with_address++;
    if (record.nearest_road !== null) counts.with_nearest_road++;
    writer.add(record);
    // The writer holds the record now; the pending copy would double the memory.
    (buildings as (PendingBuilding | null)[])[i] = null;
  }
  // A snapshot of no building would be served in place of the country's last good one.
  if (writer.count === 0) {
    throw new RangeError(`no building in the input (${counts.features} features read); nothing written, so the snapshots already there stay as they are`);
  }
  progress({ phase: 'write', done: 0, total: 1 });
  const written = await writer.finish(options.out);
  progress({ phase: 'write', done: 1, total: 1 });
  const { bad, notes } = log.summary();
  return { ...written, seconds: (performance.now() - started) / 1000, counts, bad, notes };
}

function derive(b: PendingBuilding, roads: RoadIndex, places: PlaceIndex, nearestRoadMaxM: number): BuildingRecord {
  const [lon, lat] = representativePoint(b.outline.polygons);
  const f = b.facts;
  const s = b.seismic;
  const records = [...(b.ownAddress ? [b.ownAddress] : []), ...b.pointAddresses.sort(byHouseNumber)];
  if (s?.address) {
    records.push({ source: s.source, address: { text: s.address, house_number: s.house_number, postal_code: null, city: s.locality } });
  }
  const settled = settleAddress(records, b.listings);

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
    locality: settled.city ?? places.nearestName(lon, lat),
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
    seismic_risk_class: s?.risk_class ?? null,
    seismic_risk_assessment_year: s?.assessment_year ?? null,
  });
}
