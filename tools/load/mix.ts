/**
 * The request mix: what a day of real callers looks like, as seeded request paths.
 *
 * Kinds (weights by `--mix`, default `point=30,street=25,city=15,region=5,filters=10,walk=10,public=5`):
 * - point    GET /buildings/at within ~20 m of a known building, radius 5–200 m, limit 1–25;
 * - street   GET /buildings over 0.0015–0.0025° (a street), 0–1 filter;
 * - city     GET /buildings over 0.08–0.2°, 0–1 filter;
 * - region   GET /buildings over 1–3° (the largest bbox allowed), 0–2 filters;
 * - filters  GET /buildings over 0.008–0.2° with 2–5 filters;
 * - walk     a bulk ranking script: GET /buildings over 0.05–0.3°, limit 100, then `links.next`
 *            page by page until it is null (up to the 10,000 window); each page is one request;
 * - public   the public pages: /public/buildings/{id} (70%), /public/places/{country}/{locality}
 *            (25%), /public/countries (5%), from buildings and localities seen in answers.
 * Every area is centred near a building of the discovered area (`Area`), so requests land where
 * buildings are, in proportion to where discovery found them. Pages are limit 25 (60%) or 100,
 * offset 0 (85%) or one to three pages deep; sorts by volume 40%, area 20%, height 20%, business
 * employees 10%, business turnover 10% (when a turnover currency was seen).
 */
import { CATEGORY, FLOOD_ZONE, PANELS_STATUS, ROOF_SHAPE, SEISMIC_RISK_CLASS, SOLAR_PRESENCE } from '../../src/snapshot/schema.ts';
import { Prng } from '../../src/synth/prng.ts';

export const KINDS = ['point', 'street', 'city', 'region', 'filters', 'walk', 'public'] as const;
export type Kind = (typeof KINDS)[number];
export type Weights = Record<Kind, number>;

export const DEFAULT_WEIGHTS: Weights = { point: 30, street: 25, city: 15, region: 5, filters: 10, walk: 10, public: 5 };

/** `point=30,street=25,...`: kinds left out weigh 0; an unknown kind or a bad weight is refused by name. */
export function parseWeights(text: string): Weights {
  const w: Weights = { point: 0, street: 0, city: 0, region: 0, filters: 0, walk: 0, public: 0 };
  for (const part of text.split(',')) {
    const item = part.trim();
    if (item === '') continue;
    const eq = item.indexOf('=');
    const name = eq < 0 ? item : item.slice(0, eq);
    if (!(KINDS as readonly string[]).includes(name)) {
      throw new RangeError(`--mix: unknown kind "${name}"; expected some of ${KINDS.join(', ')}.`);
    }
    const value = Number(eq < 0 ? '' : item.slice(eq + 1));
    if (eq < 0 || !Number.isFinite(value) || value < 0 || value > 1e6) {
      throw new RangeError(`--mix: ${name} needs a weight from 0 to 1,000,000 (like ${name}=10), got "${item}".`);
    }
    w[name as Kind] = value;
  }
  if (KINDS.every((k) => w[k] === 0)) throw new RangeError('--mix: every weight is 0; give at least one kind a weight.');
  return w;
}

export function formatWeights(w: Weights): string {
  return KINDS.map((k) => `${k}=${w[k]}`).join(',');
}

/** What discovery learnt of the served area; plain data, so it crosses to worker threads. */
export interface Area {
  /** Representative points of buildings to centre requests on (repeated by local density). */
  lon: number[];
  lat: number[];
  /** Building ids seen in answers (public building pages). */
  ids: string[];
  /** [country, locality] pairs seen in answers (public place pages). */
  places: [string, string][];
  /** A turnover currency seen, for sort=registered_business_turnover; null: that sort is left out. */
  currency: string | null;
}

/** One request of the mix. `walk` marks a paging-walk page whose answer's links.next continues it. */
export interface Planned {
  kind: number;
  path: string;
  /** Needs the API key (everything but /public). */
  auth: boolean;
}

const STREET: [number, number] = [0.0015, 0.0025];
const NEIGHBOURHOOD_TO_CITY: [number, number] = [0.008, 0.2];
const CITY: [number, number] = [0.08, 0.2];
const REGION: [number, number] = [1, 2.999];
const WALK: [number, number] = [0.05, 0.3];
const RADII = [5, 10, 25, 25, 25, 50, 100, 200];
const POINT_LIMITS = [1, 5, 10, 10, 10, 25];
/** Pool sizes of what answers teach (ids, places): bounded memory on long runs. */
const POOL = 10_000;

const deg = (v: number): string => v.toFixed(6);

export class Mix {
  readonly weights: Weights;
  private readonly cumulative: Float64Array;
  private readonly total: number;
  private readonly rng: Prng;
  private readonly sorts: string[];
  private readonly sortWeights: Float64Array;
  private readonly sortTotal: number;
  /** Next-page paths of walks in progress, waiting for their turn. */
  private readonly walkQueue: string[] = [];
  walksStarted = 0;
  walksFinished = 0;

  constructor(
    private readonly area: Area,
    weights: Weights,
    seed: number,
    stream: number,
    private readonly base: string,
  ) {
    if (area.lon.length === 0) throw new RangeError('Mix: the area holds no building to centre requests on.');
    this.weights = { ...weights };
    this.cumulative = Float64Array.from(KINDS, (k) => this.weights[k]);
    this.total = this.cumulative.reduce((a, b) => a + b, 0);
    this.rng = new Prng(seed, 0x6c6f6164 + stream);
    const sorts: [string, number][] = [
      ['volume', 0.4],
      ['area', 0.2],
      ['height', 0.2],
      ['registered_business_employees', 0.1],
    ];
    if (area.currency) sorts.push([`registered_business_turnover&registered_business_turnover_currency=${area.currency}`, 0.1]);
    this.sorts = sorts.map((s) => s[0]);
    this.sortWeights = Float64Array.from(sorts, (s) => s[1]);
    this.sortTotal = this.sortWeights.reduce((a, b) => a + b, 0);
  }

  /** The next request of the mix. */
  next(): Planned {
    const kind = this.rng.weighted(this.cumulative, this.total);
    const base = this.base;
    switch (KINDS[kind]) {
      case 'point':
        return { kind, path: `${base}/buildings/at?${this.point()}`, auth: true };
      case 'street':
        return { kind, path: `${base}/buildings?${this.ranked(STREET, 0, 1)}`, auth: true };
      case 'city':
        return { kind, path: `${base}/buildings?${this.ranked(CITY, 0, 1)}`, auth: true };
      case 'region':
        return { kind, path: `${base}/buildings?${this.ranked(REGION, 0, 2)}`, auth: true };
      case 'filters':
        return { kind, path: `${base}/buildings?${this.ranked(NEIGHBOURHOOD_TO_CITY, 2, 5)}`, auth: true };
      case 'walk':
        return { kind, path: this.walkPage(), auth: true };
      default:
        return { kind, path: this.publicPage(), auth: false };
    }
  }

  /** A walk page's answer arrived: continue the walk at `nextPath`, or end it (null). */
  walked(nextPath: string | null): void {
    if (nextPath === null) this.walksFinished++;
    else this.walkQueue.push(nextPath);
  }

  /** Learns building ids and places from a JSON answer of GET /buildings or /buildings/at. */
  learn(body: Buffer): void {
    let doc: {
      data?: {
        building_id?: unknown;
        country?: unknown;
        locality?: unknown;
        registered_business_turnover?: { currency?: unknown } | null;
      }[];
    };
    try {
      doc = JSON.parse(body.toString('utf8'));
    } catch {
      return;
    }
    if (!Array.isArray(doc.data)) return;
    for (const b of doc.data) {
      if (typeof b.building_id === 'string') addBounded(this.area.ids, b.building_id, this.rng);
      if (typeof b.country === 'string' && typeof b.locality === 'string' && b.locality !== '') {
        addBounded(this.area.places, [b.country, b.locality], this.rng);
      }
    }
  }

  private centre(): number {
    return Math.floor(this.rng.next() * this.area.lon.length);
  }

  private point(): string {
    const rng = this.rng;
    const at = this.centre();
    const lat = this.area.lat[at],
      lon = this.area.lon[at];
    // Up to ~20 m from the building's representative point, half of the time.
    const jitter = rng.next() < 0.5 ? 0 : 20 / 111_320;
    const pLat = lat + (rng.next() - 0.5) * jitter;
    const pLon = lon + ((rng.next() - 0.5) * jitter) / Math.cos((lat * Math.PI) / 180);
    return `lat=${deg(pLat)}&lon=${deg(pLon)}&radius_m=${rng.pick(RADII)}&limit=${rng.pick(POINT_LIMITS)}`;
  }

  private bbox(side: [number, number]): string {
    const rng = this.rng;
    const at = this.centre();
    const s = side[0] + rng.next() * (side[1] - side[0]);
    // Not centred exactly on the building, so the building sits anywhere in the box.
    const minLon = Math.max(-180, this.area.lon[at] - s * (0.2 + 0.6 * rng.next()));
    const minLat = Math.max(-90, this.area.lat[at] - s * (0.2 + 0.6 * rng.next()));
    return `bbox=${deg(minLon)},${deg(minLat)},${deg(Math.min(180, minLon + s))},${deg(Math.min(90, minLat + s))}`;
  }

  private ranked(side: [number, number], minFilters: number, maxFilters: number): string {
    const rng = this.rng;
    const limit = rng.chance(0.6) ? 25 : 100;
    const offset = rng.chance(0.85) ? 0 : limit * rng.int(1, 3);
    const sort = this.sorts[rng.weighted(this.sortWeights, this.sortTotal)];
    let q = `${this.bbox(side)}&sort=${sort}&limit=${limit}`;
    if (offset > 0) q += `&offset=${offset}`;
    return q + this.filters(rng.int(minFilters, maxFilters));
  }

  private walkPage(): string {
    const queued = this.walkQueue.pop();
    if (queued !== undefined) return queued;
    this.walksStarted++;
    const rng = this.rng;
    const sort = rng.pick(['volume', 'volume', 'area', 'height']);
    return `${this.base}/buildings?${this.bbox(WALK)}&sort=${sort}&limit=100${this.filters(rng.int(0, 2))}`;
  }

  private publicPage(): string {
    const rng = this.rng;
    const r = rng.next();
    const { ids, places } = this.area;
    if (r < 0.7 && ids.length > 0) return `${this.base}/public/buildings/${ids[Math.floor(rng.next() * ids.length)]}`;
    if (r < 0.95 && places.length > 0) {
      const [country, locality] = places[Math.floor(rng.next() * places.length)];
      return `${this.base}/public/places/${encodeURIComponent(country)}/${encodeURIComponent(locality)}`;
    }
    return `${this.base}/public/countries`;
  }

  /** `n` distinct filters as `&name=value` parameters, thresholds as a caller types them. */
  private filters(n: number): string {
    if (n === 0) return '';
    const rng = this.rng;
    const chosen = new Set<number>();
    while (chosen.size < n) chosen.add(Math.floor(rng.next() * FILTERS.length));
    let out = '';
    for (const i of chosen) out += `&${FILTERS[i](rng)}`;
    return out;
  }
}

function some(rng: Prng, values: readonly string[], lo: number, hi: number): string {
  const k = Math.min(values.length, rng.int(lo, hi));
  const pool = values.slice();
  const out: string[] = [];
  for (let i = 0; i < k; i++) out.push(pool.splice(Math.floor(rng.next() * pool.length), 1)[0]);
  return out.join(',');
}

/** One filter each; solar_presence and its exclusion are one entry, so rule 6 never refuses the pair. */
const FILTERS: readonly ((rng: Prng) => string)[] = [
  (rng) => `category=${some(rng, CATEGORY, 1, 3)}`,
  (rng) => `roof_shape=${some(rng, ROOF_SHAPE, 1, 3)}`,
  (rng) => (rng.chance(0.6) ? `min_floors=${rng.pick([2, 3, 5])}` : `max_floors=${rng.pick([1, 2, 3])}`),
  (rng) => `min_dwellings=${rng.pick([2, 5, 10])}`,
  (rng) => `min_area_m2=${rng.pick([50, 100, 200, 500])}`,
  (rng) => `min_height_m=${rng.pick([5, 10, 20])}`,
  (rng) => (rng.chance(0.7) ? `min_volume_m3=${rng.pick([500, 1000, 5000, 20000])}` : `max_volume_m3=${rng.pick([300, 1000])}`),
  () => 'measured_height_only=true',
  () => 'has_solar_potential=true',
  () => 'has_3d_model=true',
  () => 'has_registered_business=true',
  (rng) => `flood_zone=${some(rng, FLOOD_ZONE, 2, 6)}`,
  (rng) => `seismic_risk_class=${some(rng, SEISMIC_RISK_CLASS, 2, 6)}`,
  (rng) =>
    rng.chance(0.7) ? `solar_presence=${some(rng, SOLAR_PRESENCE, 1, 3)}` : `exclude_solar_presence=${some(rng, SOLAR_PRESENCE, 1, 2)}`,
  (rng) => `existing_solar_panels=${some(rng, PANELS_STATUS, 1, 2)}`,
  (rng) => `min_recent_frost_days=${rng.pick([20, 50, 80])}`,
];

/** Adds to a pool of at most POOL values; past that, replaces a random one (reservoir-like). */
function addBounded<T>(pool: T[], value: T, rng: Prng): void {
  if (pool.length < POOL) pool.push(value);
  else pool[Math.floor(rng.next() * POOL)] = value;
}

/** The path of `links.next` in a ranked page's JSON text, or null (last page or no link). */
export function nextPath(body: Buffer): string | null {
  // links is the envelope's last member: read it from the end, no parse of the page.
  const text = body.toString('latin1', Math.max(0, body.length - 4096));
  const at = text.lastIndexOf('"next":');
  if (at < 0) return null;
  const rest = text.slice(at + 7).trimStart();
  if (!rest.startsWith('"')) return null;
  const end = rest.indexOf('"', 1);
  if (end < 0) return null;
  const url = rest.slice(1, end);
  // An absolute URL (the server's base) or a path: keep the path and query, sent to our target.
  const scheme = url.indexOf('://');
  if (scheme < 0) return url.startsWith('/') ? url : null;
  const slash = url.indexOf('/', scheme + 3);
  return slash < 0 ? null : url.slice(slash);
}
