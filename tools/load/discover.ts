/**
 * Discovery: where the served buildings are, before any load is sent.
 *
 * The covered area is `--bbox` (any size up to 24° a side), or else the extents that
 * `GET /public/countries` lists (objects with a `bbox` of four numbers). The area is cut into a
 * grid of at least 4 x 4 cells of at most 3° a side (the spec's bbox limit), and each cell is
 * probed once with an authenticated `GET /buildings?bbox=<cell>&limit=100&sort=volume`. A cell's
 * `meta.total` says how dense it is, its buildings say where: the mix centres its requests on
 * the buildings seen, each cell's repeated in proportion to its total. The probe's answers also
 * give the first building ids and localities for the public pages. Then one public page is asked
 * for: if it answers 404 the server has no public endpoints, and the public weight drops to 0
 * with a warning.
 *
 * Probe requests are few (at most 64), sequential, and reported apart from the measured load.
 */
import type { Area } from './mix.ts';
import type { Target } from './target.ts';

export interface BBox {
  minLon: number;
  minLat: number;
  maxLon: number;
  maxLat: number;
}

export interface Discovery {
  area: Area;
  /** A public building page answered something else than 404. */
  publicAvailable: boolean;
  requests: number;
  credits: number;
  statuses: Record<string, number>;
  cells: number;
  buildings: number;
  warnings: string[];
}

const MAX_SIDE_DEG = 3;
const MAX_CELLS = 64;

/** "minLon,minLat,maxLon,maxLat" → BBox; throws RangeError naming --bbox. */
export function parseBBox(text: string): BBox {
  const parts = text.split(',').map((s) => Number(s.trim()));
  if (parts.length !== 4 || parts.some((v) => !Number.isFinite(v))) {
    throw new RangeError(`--bbox: expected four numbers minLon,minLat,maxLon,maxLat, got "${text}".`);
  }
  const [minLon, minLat, maxLon, maxLat] = parts;
  if (minLon < -180 || maxLon > 180 || minLat < -90 || maxLat > 90 || minLon >= maxLon || minLat >= maxLat) {
    throw new RangeError(`--bbox: expected -180 <= minLon < maxLon <= 180 and -90 <= minLat < maxLat <= 90, got "${text}".`);
  }
  if (maxLon - minLon > MAX_SIDE_DEG * 8 || maxLat - minLat > MAX_SIDE_DEG * 8) {
    throw new RangeError(`--bbox: at most ${MAX_SIDE_DEG * 8}° a side (${MAX_CELLS} probe cells of ${MAX_SIDE_DEG}°), got "${text}".`);
  }
  return { minLon, minLat, maxLon, maxLat };
}

/** The probe grid over `b`: at least 4 x 4 cells, none wider than 3°. */
export function probeCells(b: BBox): BBox[] {
  const nx = Math.max(4, Math.ceil((b.maxLon - b.minLon) / MAX_SIDE_DEG - 1e-9));
  const ny = Math.max(4, Math.ceil((b.maxLat - b.minLat) / MAX_SIDE_DEG - 1e-9));
  const dx = (b.maxLon - b.minLon) / nx,
    dy = (b.maxLat - b.minLat) / ny;
  const out: BBox[] = [];
  for (let j = 0; j < ny; j++) {
    for (let i = 0; i < nx; i++) {
      out.push({ minLon: b.minLon + i * dx, minLat: b.minLat + j * dy, maxLon: b.minLon + (i + 1) * dx, maxLat: b.minLat + (j + 1) * dy });
    }
  }
  return out;
}

interface Got {
  status: number;
  body: unknown;
}

interface ProbeBuilding {
  building_id?: unknown;
  latitude?: unknown;
  longitude?: unknown;
  country?: unknown;
  locality?: unknown;
  registered_business_turnover?: { currency?: unknown } | null;
}

class Prober {
  requests = 0;
  credits = 0;
  readonly statuses: Record<string, number> = {};
  readonly warnings: string[] = [];
  private turn = 0;
  private readonly refused = new Set<number>();

  constructor(
    private readonly target: Target,
    private readonly keys: readonly string[],
  ) {}

  async get(path: string, auth: boolean): Promise<Got> {
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': 'edifice-loadtest' };
    let keyIndex = -1;
    if (auth) {
      // Keys the server refused are skipped here (they stay in the load, where their errors show).
      for (let tries = 0; tries < this.keys.length; tries++) {
        const k = this.turn++ % this.keys.length;
        if (!this.refused.has(k)) {
          keyIndex = k;
          break;
        }
      }
      if (keyIndex < 0) throw new Error('discovery: the server refused every key given (401/403); check --keys.');
      headers.authorization = `Bearer ${this.keys[keyIndex]}`;
    }
    let res: Response;
    try {
      res = await fetch(`http://${this.target.hostHeader}${path}`, { headers, signal: AbortSignal.timeout(30_000) });
    } catch (err) {
      const cause = (err as { cause?: { code?: string } }).cause;
      throw new Error(`discovery: cannot reach ${this.target.url} (${cause?.code ?? (err as Error).message}).`, { cause: err });
    }
    const text = await res.text();
    this.requests++;
    this.statuses[String(res.status)] = (this.statuses[String(res.status)] ?? 0) + 1;
    this.credits += Number(res.headers.get('x-credits-charged')) || 0;
    let body: unknown = null;
    try {
      body = JSON.parse(text);
    } catch {
      // Not JSON: the status says enough.
    }
    if (keyIndex >= 0 && (res.status === 401 || res.status === 403)) {
      this.refused.add(keyIndex);
      this.warnings.push(`key #${keyIndex + 1} was refused with ${res.status} during discovery; it stays in the load`);
      return this.get(path, auth);
    }
    return { status: res.status, body };
  }
}

const fmt = (v: number) => String(Math.round(v * 1e6) / 1e6);
const bboxParam = (b: BBox) => [b.minLon, b.minLat, b.maxLon, b.maxLat].map(fmt).join(',');

/** Country extents listed by GET /public/countries, when it exists and lists them. */
async function publicExtents(p: Prober, base: string): Promise<BBox[]> {
  const got = await p.get(`${base}/public/countries`, false);
  if (got.status !== 200) return [];
  const out: BBox[] = [];
  const visit = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(visit);
    else if (v && typeof v === 'object') {
      const b = (v as { bbox?: unknown }).bbox;
      if (Array.isArray(b) && b.length === 4 && b.every((x) => typeof x === 'number')) {
        try {
          out.push(parseBBox(b.join(',')));
        } catch {
          // A country wider than the probe grid allows: not used.
        }
      } else Object.values(v).forEach(visit);
    }
  };
  visit(got.body);
  return out;
}

export async function discover(target: Target, keys: readonly string[], bbox: BBox | null): Promise<Discovery> {
  const p = new Prober(target, keys);
  let areas = bbox ? [bbox] : await publicExtents(p, target.base);
  if (areas.length === 0) {
    throw new Error(
      `discovery: no --bbox given, and ${target.url}/public/countries lists no country extents ` +
        `(HTTP ${Object.keys(p.statuses).join(', ')}); give the served area as --bbox minLon,minLat,maxLon,maxLat.`,
    );
  }
  areas = areas.slice(0, 4);
  const area: Area = { lon: [], lat: [], ids: [], places: [], currency: null };
  const cells = areas.flatMap(probeCells).slice(0, MAX_CELLS);
  const found: { total: number; lon: number[]; lat: number[] }[] = [];
  const places = new Set<string>();
  for (const cell of cells) {
    const got = await p.get(`${target.base}/buildings?bbox=${bboxParam(cell)}&limit=100&sort=volume`, true);
    if (got.status !== 200) {
      p.warnings.push(`probe of ${bboxParam(cell)} answered ${got.status}`);
      continue;
    }
    const doc = got.body as { data?: ProbeBuilding[]; meta?: { total?: unknown } };
    const data = Array.isArray(doc?.data) ? doc.data : [];
    const total = typeof doc?.meta?.total === 'number' ? doc.meta.total : data.length;
    const lon: number[] = [],
      lat: number[] = [];
    for (const b of data) {
      if (typeof b.longitude !== 'number' || typeof b.latitude !== 'number') continue;
      lon.push(b.longitude);
      lat.push(b.latitude);
      if (typeof b.building_id === 'string') area.ids.push(b.building_id);
      if (typeof b.country === 'string' && typeof b.locality === 'string' && b.locality !== '') {
        const key = `${b.country}\u0000${b.locality}`;
        if (!places.has(key)) {
          places.add(key);
          area.places.push([b.country, b.locality]);
        }
      }
      const currency = b.registered_business_turnover?.currency;
      if (area.currency === null && typeof currency === 'string') area.currency = currency;
    }
    if (lon.length > 0) found.push({ total, lon, lat });
  }
  if (found.length === 0) {
    throw new Error(`discovery: no building found in ${areas.map(bboxParam).join('; ')} (${p.requests} probes); is this the served area?`);
  }
  // Each cell's buildings, repeated in proportion to the cell's total: requests land by density.
  const densest = Math.max(...found.map((f) => f.total));
  for (const f of found) {
    const share = Math.max(1, Math.round((f.total / densest) * f.lon.length));
    for (let i = 0; i < share; i++) {
      area.lon.push(f.lon[i % f.lon.length]);
      area.lat.push(f.lat[i % f.lat.length]);
    }
  }
  const probe = await p.get(
    `${target.base}/public/buildings/${encodeURIComponent(area.ids[0] ?? '00000000-0000-0000-0000-000000000000')}`,
    false,
  );
  const publicAvailable = probe.status !== 404;
  return {
    area,
    publicAvailable,
    requests: p.requests,
    credits: p.credits,
    statuses: p.statuses,
    cells: cells.length,
    buildings: found.reduce((s, f) => s + f.lon.length, 0),
    warnings: p.warnings,
  };
}
