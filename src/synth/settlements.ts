/**
 * The settlements of a synthetic country: how many, how big, what kind, where. Sizes follow
 * Zipf's law (size ∝ 1/rank, jittered), as city sizes do: one big city, a few large ones, many
 * towns and a long tail of villages. The biggest are placed first, most of them on rivers,
 * each clear of the others. Only this plan is held in memory; buildings are laid out settlement
 * by settlement while they are generated.
 */
import type { Country } from './bounds.ts';
import type { FloodMaps } from './flood.ts';
import { localityName } from './names.ts';
import type { Prng } from './prng.ts';

export const CITY = 0;
export const TOWN = 1;
export const VILLAGE = 2;
export type SettlementKind = typeof CITY | typeof TOWN | typeof VILLAGE;

/** Plot grid of each kind: cell width and depth, street width (m), blocks of plots between cross streets. */
export const CELL_W = [32, 30, 24];
export const CELL_H = [32, 36, 52];
export const STREET_M = [14, 11, 9];
export const BLOCK_CELLS = 8;
/** Grid cells a building takes on average (plots hold several; big buildings take several). */
const CELLS_PER_BUILDING = [0.85, 0.55, 0.42];
/** How far past its nominal radius a settlement's irregular outline may reach. */
const EXTENT = 1.25;

export interface Settlement {
  index: number;
  name: string;
  kind: SettlementKind;
  lon: number;
  lat: number;
  buildings: number;
  county: number;
  /** First 4-digit part of its postal codes; cities and towns use a range from it. */
  postalBase: number;
  /** Where the street-name sequence starts, so settlements do not all have the same streets. */
  streetOffset: number;
  /** Street grid orientation, radians counter-clockwise from east. */
  rotation: number;
  /** Metres from the centre to where the suburbs end (the outline is irregular). */
  radiusM: number;
  /** The industrial quarter: a sector of the outer part, from this angle, this wide (radians). */
  industryFrom: number;
  industryWidth: number;
  districtHeating: boolean;
  gasNetwork: boolean;
}

/** Settlement sizes summing to `total`, largest first. */
function settlementSizes(total: number, rng: Prng): number[] {
  // Villages of at least `smallest` buildings; with size ∝ 1/rank the count S solves S·H(S) = total/smallest.
  const smallest = Math.max(10, Math.min(60, Math.round(total / 2000)));
  const target = total / smallest;
  let count = 1,
    harmonic = 1;
  while (count * harmonic < target) {
    count++;
    harmonic += 1 / count;
  }
  const raw = new Float64Array(count);
  let sum = 0;
  for (let k = 0; k < count; k++) {
    raw[k] = rng.lognormal(1 / (k + 1), 0.3);
    sum += raw[k];
  }
  // Largest-remainder rounding to the exact total, every settlement keeping at least one building.
  const sizes = new Array<number>(count);
  let assigned = 0;
  for (let k = 0; k < count; k++) {
    sizes[k] = Math.max(1, Math.floor((raw[k] / sum) * total));
    assigned += sizes[k];
  }
  const byRemainder = Array.from(raw.keys()).sort((a, b) => {
    const ra = (raw[a] / sum) * total - Math.floor((raw[a] / sum) * total);
    const rb = (raw[b] / sum) * total - Math.floor((raw[b] / sum) * total);
    return rb - ra || a - b;
  });
  for (let i = 0; assigned < total; i = (i + 1) % count) {
    sizes[byRemainder[i]]++;
    assigned++;
  }
  for (let i = count - 1; assigned > total; i = (i - 1 + count) % count) {
    if (sizes[i] > 1) {
      sizes[i]--;
      assigned--;
    }
  }
  return sizes.sort((a, b) => b - a);
}

function kindOfRank(rank: number, count: number): SettlementKind {
  if (rank < Math.max(1, Math.round(count * 0.003))) return CITY;
  if (rank < Math.max(3, Math.round(count * 0.03))) return TOWN;
  return VILLAGE;
}

/**
 * Cells the plot grid of a settlement holds: room for its irregular outline (several times
 * the cells it should use), and never fewer than its buildings, since a one-cell plot holds
 * at least one building: the grid cannot run out.
 */
export function gridCells(s: Settlement): number {
  return Math.max(s.buildings + 16, 3.5 * s.buildings * CELLS_PER_BUILDING[s.kind]);
}

function radiusM(kind: SettlementKind, buildings: number): number {
  const cellArea = (CELL_W[kind] + STREET_M[kind] / BLOCK_CELLS) * (CELL_H[kind] + STREET_M[kind] / 2);
  return Math.sqrt((buildings * CELLS_PER_BUILDING[kind] * cellArea) / Math.PI);
}

/** Spatial hash of placed settlements, to keep new ones clear of them. */
class Placed {
  private readonly cells = new Map<number, number[]>();
  private maxRadius = 0;
  constructor(
    private readonly country: Country,
    private readonly cellM: number,
    private readonly all: Settlement[],
  ) {}

  private key(cx: number, cy: number): number {
    return cx * 100_003 + cy;
  }

  add(s: Settlement): void {
    const cx = Math.floor(((s.lon - this.country.minLon) * this.country.mPerLon) / this.cellM);
    const cy = Math.floor(((s.lat - this.country.minLat) * this.country.mPerLat) / this.cellM);
    const k = this.key(cx, cy);
    const list = this.cells.get(k);
    if (list) list.push(s.index);
    else this.cells.set(k, [s.index]);
    this.maxRadius = Math.max(this.maxRadius, EXTENT * s.radiusM);
  }

  /** Smallest gap between a circle and the extents of the placed settlements (negative = overlap). */
  clearance(lon: number, lat: number, r: number): number {
    const x = (lon - this.country.minLon) * this.country.mPerLon;
    const y = (lat - this.country.minLat) * this.country.mPerLat;
    const reach = r + this.maxRadius + 500;
    let best = Infinity;
    for (let cx = Math.floor((x - reach) / this.cellM); cx <= Math.floor((x + reach) / this.cellM); cx++) {
      for (let cy = Math.floor((y - reach) / this.cellM); cy <= Math.floor((y + reach) / this.cellM); cy++) {
        const list = this.cells.get(this.key(cx, cy));
        if (!list) continue;
        for (const i of list) {
          const o = this.all[i];
          const dx = (o.lon - this.country.minLon) * this.country.mPerLon - x;
          const dy = (o.lat - this.country.minLat) * this.country.mPerLat - y;
          best = Math.min(best, Math.sqrt(dx * dx + dy * dy) - EXTENT * o.radiusM - r);
        }
      }
    }
    return best;
  }
}

export function planSettlements(country: Country, flood: FloodMaps, rng: Prng, buildings: number): Settlement[] {
  const sizes = settlementSizes(buildings, rng);
  const names = new Set<string>();
  const out: Settlement[] = [];
  const placed = new Placed(country, 10_000, out);
  const postalNext = new Int32Array(64).fill(100);
  const point = { lon: 0, lat: 0 };
  for (let rank = 0; rank < sizes.length; rank++) {
    const kind = kindOfRank(rank, sizes.length);
    const nominal = radiusM(kind, sizes[rank]);
    const r = EXTENT * nominal;
    const onRiver = rng.chance(kind === CITY ? 0.75 : kind === TOWN ? 0.45 : 0.2);
    // Keep the centre far enough inside that the lobes of the outline stay in the country.
    const insetLon = Math.min((1.3 * r) / country.mPerLon, (country.maxLon - country.minLon) / 2);
    const insetLat = Math.min((1.3 * r) / country.mPerLat, (country.maxLat - country.minLat) / 2);
    let bestLon = 0,
      bestLat = 0,
      bestClearance = -Infinity;
    for (let attempt = 0; attempt < 60 && bestClearance < 150; attempt++) {
      let lon: number, lat: number;
      if (onRiver && attempt < 30 && flood.pointNear(rng, r * 0.7 + 2_000, point)) {
        lon = Math.min(country.maxLon - insetLon, Math.max(country.minLon + insetLon, point.lon));
        lat = Math.min(country.maxLat - insetLat, Math.max(country.minLat + insetLat, point.lat));
      } else {
        lon = rng.range(country.minLon + insetLon, country.maxLon - insetLon);
        lat = rng.range(country.minLat + insetLat, country.maxLat - insetLat);
      }
      const clearance = placed.clearance(lon, lat, r);
      if (clearance > bestClearance) {
        bestClearance = clearance;
        bestLon = lon;
        bestLat = lat;
      }
    }
    const county = country.county(bestLon, bestLat);
    const postalBase = postalNext[county];
    postalNext[county] += kind === CITY ? 600 : kind === TOWN ? 10 : 1;
    const s: Settlement = {
      index: rank,
      name: localityName(rng, names),
      kind,
      lon: bestLon,
      lat: bestLat,
      buildings: sizes[rank],
      county,
      postalBase,
      streetOffset: rng.int(0, 10_000),
      rotation: rng.range(0, Math.PI / 2),
      radiusM: nominal,
      industryFrom: rng.range(0, 2 * Math.PI),
      industryWidth: rng.range(0.5, 1.1),
      districtHeating: kind === CITY ? rng.chance(0.85) : kind === TOWN ? rng.chance(0.3) : false,
      gasNetwork: kind === VILLAGE ? rng.chance(0.55) : true,
    };
    out.push(s);
    placed.add(s);
  }
  return out;
}
