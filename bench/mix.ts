/**
 * The fixed, seeded query mix. Every bbox is centred on a building drawn uniformly from the
 * snapshot, so areas land where buildings are (on the settlements) in proportion to their
 * density. Thresholds come from the data's own quantiles rounded to two significant digits,
 * as a caller would type them, so filters keep a sensible share of buildings whatever the
 * generator's distributions.
 */
import { CATEGORY, FLOOD_ZONE, PANELS_STATUS, ROOF_SHAPE, SEISMIC_RISK_CLASS, SOLAR_PRESENCE } from '../src/snapshot/schema.ts';
import { MAX_BBOX_SIDE_DEG, MAX_WINDOW, type BuildingsQuery, type SortKey } from '../src/query/types.ts';
import { Prng } from '../src/synth/prng.ts';
import type { BenchColumns } from './columns.ts';
import type { MixQuery } from './engine.ts';

export interface ClassSpec {
  name: string;
  /** Queries of this class in the mix (before --scale). */
  count: number;
  kind: 'buildings' | 'point';
  /** Side of the bbox in degrees, drawn uniformly in [lo, hi]. */
  side?: [number, number];
  /** Number of filters, drawn uniformly in [lo, hi]. */
  filters?: [number, number];
  loose?: boolean;
  deepOffset?: boolean;
}

export const CLASSES: readonly ClassSpec[] = [
  { name: 'street', count: 200, kind: 'buildings', side: [0.0015, 0.0025], filters: [0, 3] },
  { name: 'neighbourhood', count: 150, kind: 'buildings', side: [0.008, 0.02], filters: [0, 4] },
  { name: 'city', count: 100, kind: 'buildings', side: [0.08, 0.2], filters: [0, 6] },
  { name: 'region-1deg', count: 50, kind: 'buildings', side: [1, 1], filters: [0, 6] },
  { name: 'heavy-3x3', count: 30, kind: 'buildings', side: [3, 3], filters: [0, 2], loose: true },
  { name: 'deep-offset', count: 50, kind: 'buildings', side: [0.2, 1], filters: [0, 2], loose: true, deepOffset: true },
  { name: 'point', count: 200, kind: 'point' },
];

/** Rounds to two significant digits (what a caller types). */
function round2(v: number): number {
  if (v === 0 || !Number.isFinite(v)) return v;
  const e = Math.floor(Math.log10(Math.abs(v))) - 1;
  const f = 10 ** e;
  return Number((Math.round(v / f) * f).toPrecision(2));
}

class Quantiles {
  private readonly sorted: Float64Array;
  constructor(col: Float64Array, rng: Prng, samples = 100_000) {
    const out: number[] = [];
    for (let s = 0; s < samples; s++) {
      const v = col[Math.floor(rng.next() * col.length)];
      if (v === v) out.push(v);
    }
    this.sorted = Float64Array.from(out).sort();
  }
  get empty(): boolean {
    return this.sorted.length === 0;
  }
  at(p: number): number {
    return round2(this.sorted[Math.min(this.sorted.length - 1, Math.floor(p * this.sorted.length))]);
  }
}

function pickSome<T>(rng: Prng, values: readonly T[], lo: number, hi: number): T[] {
  const k = Math.min(values.length, rng.int(lo, hi));
  const pool = values.slice();
  const out: T[] = [];
  for (let i = 0; i < k; i++) out.push(pool.splice(Math.floor(rng.next() * pool.length), 1)[0]);
  return out;
}

const round6 = (v: number): number => Math.round(v * 1e6) / 1e6;

export interface Mix {
  queries: MixQuery[];
  currency: string | null;
}

export function makeMix(c: BenchColumns, seed: number, scale = 1): Mix {
  const rng = new Prng(seed, 0x6d6978);
  const qs = {
    floors: new Quantiles(c.floors, rng),
    dwellings: new Quantiles(c.dwellings, rng),
    area: new Quantiles(c.areaM2, rng),
    height: new Quantiles(c.heightM, rng),
    volume: new Quantiles(c.volumeM3, rng),
    frost: new Quantiles(c.recentFrostDays, rng),
  };
  // The turnover currency of the mix: the one most businesses state.
  const perCurrency = new Array(c.currencies.length).fill(0);
  for (let j = 0; j < c.bizCurrency.length; j++) if (c.bizCurrency[j] < c.currencies.length) perCurrency[c.bizCurrency[j]]++;
  const top = perCurrency.indexOf(Math.max(...perCurrency));
  const currency = top >= 0 && perCurrency[top] > 0 ? c.currencies[top] : null;

  type F = (q: BuildingsQuery) => void;
  const tight: [string, F][] = [
    [
      'category',
      (q) => {
        q.category = pickSome(rng, CATEGORY, 1, 3);
      },
    ],
    [
      'roofShape',
      (q) => {
        q.roofShape = pickSome(rng, ROOF_SHAPE, 1, 3);
      },
    ],
    [
      'floors',
      (q) => {
        if (qs.floors.empty) return;
        if (rng.chance(0.6)) q.minFloors = Math.round(qs.floors.at(rng.pick([0.25, 0.5, 0.75, 0.9])));
        else q.maxFloors = Math.round(qs.floors.at(rng.pick([0.25, 0.5, 0.75])));
      },
    ],
    [
      'dwellings',
      (q) => {
        if (!qs.dwellings.empty) q.minDwellings = Math.round(qs.dwellings.at(rng.pick([0.5, 0.75, 0.9])));
      },
    ],
    [
      'area',
      (q) => {
        q.minAreaM2 = qs.area.at(rng.pick([0.25, 0.5, 0.75, 0.9]));
        if (rng.chance(0.2)) q.maxAreaM2 = qs.area.at(0.97);
      },
    ],
    [
      'height',
      (q) => {
        if (qs.height.empty) return;
        const p = rng.pick([0.25, 0.5, 0.75, 0.9]);
        q.minHeightM = qs.height.at(p);
        if (rng.chance(0.3)) q.maxHeightM = qs.height.at(Math.min(0.99, p + 0.2));
      },
    ],
    [
      'volume',
      (q) => {
        if (qs.volume.empty) return;
        if (rng.chance(0.7)) q.minVolumeM3 = qs.volume.at(rng.pick([0.5, 0.75, 0.9, 0.97]));
        else q.maxVolumeM3 = qs.volume.at(rng.pick([0.25, 0.5]));
      },
    ],
    [
      'measuredHeightOnly',
      (q) => {
        q.measuredHeightOnly = true;
      },
    ],
    [
      'hasSolarPotential',
      (q) => {
        q.hasSolarPotential = true;
      },
    ],
    [
      'has3dModel',
      (q) => {
        q.has3dModel = true;
      },
    ],
    [
      'floodZone',
      (q) => {
        q.floodZone = pickSome(rng, FLOOD_ZONE, 2, 6);
      },
    ],
    [
      'seismicRiskClass',
      (q) => {
        q.seismicRiskClass = pickSome(rng, SEISMIC_RISK_CLASS, 2, 6);
      },
    ],
    [
      'solarPresence',
      (q) => {
        if (rng.chance(0.7)) q.solarPresence = pickSome(rng, SOLAR_PRESENCE, 1, 3);
        else q.excludeSolarPresence = pickSome(rng, SOLAR_PRESENCE, 1, 2);
      },
    ],
    [
      'existingSolarPanels',
      (q) => {
        q.existingSolarPanels = pickSome(rng, PANELS_STATUS, 1, 2);
      },
    ],
    [
      'frost',
      (q) => {
        if (!qs.frost.empty) q.minRecentFrostDays = qs.frost.at(rng.pick([0.25, 0.5, 0.75]));
      },
    ],
  ];
  const loose: [string, F][] = [
    [
      'category',
      (q) => {
        q.category = pickSome(rng, CATEGORY, 5, 7);
      },
    ],
    [
      'area',
      (q) => {
        q.minAreaM2 = qs.area.at(0.1);
      },
    ],
    [
      'excludeSolarPresence',
      (q) => {
        q.excludeSolarPresence = [rng.pick(SOLAR_PRESENCE)];
      },
    ],
    [
      'floors',
      (q) => {
        if (!qs.floors.empty) q.maxFloors = Math.max(1, Math.round(qs.floors.at(0.97)));
      },
    ],
    [
      'roofShape',
      (q) => {
        q.roofShape = pickSome(rng, ROOF_SHAPE, 7, 9);
      },
    ],
    [
      'frost',
      (q) => {
        if (!qs.frost.empty) q.minRecentFrostDays = qs.frost.at(0.1);
      },
    ],
  ];

  const sorts: [SortKey, number][] = [
    ['volume', 0.4],
    ['area', 0.2],
    ['height', 0.2],
    ['registered_business_turnover', currency ? 0.1 : 0],
    ['registered_business_employees', 0.1],
  ];
  const sortWeights = Float64Array.from(sorts, (s) => s[1]);
  const sortTotal = sortWeights.reduce((a, b) => a + b, 0);

  const queries: MixQuery[] = [];
  for (const spec of CLASSES) {
    const count = Math.max(1, Math.round(spec.count * scale));
    for (let k = 0; k < count; k++) {
      const at = Math.floor(rng.next() * c.n);
      const lon = c.lon[at],
        lat = c.lat[at];
      if (spec.kind === 'point') {
        // Up to ~20 m from a building's representative point.
        const jitter = rng.next() < 0.5 ? 0 : 20 / 111_320;
        queries.push({
          cls: spec.name,
          kind: 'point',
          q: {
            lat: round6(lat + (rng.next() - 0.5) * jitter),
            lon: round6(lon + ((rng.next() - 0.5) * jitter) / Math.cos((lat * Math.PI) / 180)),
            radiusM: rng.pick([5, 10, 25, 25, 25, 50, 100, 200]),
            limit: rng.pick([1, 5, 10, 10, 10, 25]),
          },
        });
        continue;
      }
      const side = spec.side![0] + rng.next() * (spec.side![1] - spec.side![0]);
      // Not centred exactly on the building, so the building sits anywhere in the box.
      const minLon = round6(lon - side * (0.2 + 0.6 * rng.next()));
      const minLat = round6(lat - side * (0.2 + 0.6 * rng.next()));
      let maxLon = round6(minLon + side),
        maxLat = round6(minLat + side);
      while (maxLon - minLon > MAX_BBOX_SIDE_DEG) maxLon = round6(maxLon - 1e-6);
      while (maxLat - minLat > MAX_BBOX_SIDE_DEG) maxLat = round6(maxLat - 1e-6);
      const limit = rng.chance(0.6) ? 25 : 100;
      let offset = 0;
      if (spec.deepOffset) offset = 25 * rng.int(40, (MAX_WINDOW - limit) / 25);
      else if (rng.chance(0.15)) offset = limit * rng.int(1, 3);
      const sort = sorts[rng.weighted(sortWeights, sortTotal)][0];
      const q: BuildingsQuery = { bbox: { minLon, minLat, maxLon, maxLat }, sort, limit, offset };
      if (sort === 'registered_business_turnover') q.registeredBusinessTurnoverCurrency = currency!;
      const pool = spec.loose ? loose : tight;
      for (const [, add] of pickSome(rng, pool, spec.filters![0], spec.filters![1])) add(q);
      queries.push({ cls: spec.name, kind: 'buildings', q });
    }
  }
  return { queries, currency };
}
