/**
 * Recent climate of the synthetic country, as a gridded dataset would give it: values belong
 * to 0.05° cells, so every building of a cell shares them exactly. Temperature falls with
 * latitude and with the height of a noise-drawn relief; the other figures follow from it.
 * Stations have gaps: in patches some figures are missing, so that the `has_recent_*` facts
 * differ from place to place.
 */
import type { Country } from './bounds.ts';
import { fractalNoise, valueNoise } from './noise.ts';

const CELL_DEG = 0.05;
/** Fields per cell, in this order; NaN = not in the dataset. */
const FIELDS = 10;
const MEAN = 0,
  TREND = 1,
  FROST = 2,
  HOT = 3,
  MIN = 4,
  MAX = 5,
  PRECIP = 6,
  MAX_DAY = 7,
  DESIGN = 8,
  HEATING = 9;

/**
 * Where each figure is missing: a noise channel and the level above which it is (levels set
 * from the noise's quantiles: 2 % of the country lacks the mean, 8 % the trend, and so on).
 */
const GAPS: readonly [field: number, channel: number, above: number][] = [
  [MEAN, 31, 0.77],
  [TREND, 32, 0.698],
  [FROST, 33, 0.74],
  [HOT, 34, 0.727],
  [MIN, 35, 0.74],
  [MAX, 36, 0.753],
  [PRECIP, 37, 0.74],
  [MAX_DAY, 38, 0.705],
];

function round1(v: number): number {
  return Math.round(v * 10) / 10;
}

export class Climate {
  private readonly cols: number;
  private readonly rows: number;
  private readonly values: Float64Array;
  private readonly done: Uint8Array;
  private cell = 0;

  constructor(
    private readonly country: Country,
    private readonly seed: number,
  ) {
    this.cols = Math.ceil((country.maxLon - country.minLon) / CELL_DEG) + 1;
    this.rows = Math.ceil((country.maxLat - country.minLat) / CELL_DEG) + 1;
    this.values = new Float64Array(this.cols * this.rows * FIELDS);
    this.done = new Uint8Array(this.cols * this.rows);
  }

  /** Relief in km above sea level: mostly lowland, a mountain chain where noise peaks. */
  private elevationKm(lon: number, lat: number): number {
    const n = fractalNoise(this.seed, 11, lon * 0.9, lat * 0.9);
    const ridge = Math.max(0, n - 0.5);
    return 0.08 + 14 * ridge * ridge;
  }

  /** Selects the cell of a point; the getters below then read it. */
  locate(lon: number, lat: number): this {
    const c = Math.min(this.cols - 1, Math.max(0, Math.floor((lon - this.country.minLon) / CELL_DEG)));
    const r = Math.min(this.rows - 1, Math.max(0, Math.floor((lat - this.country.minLat) / CELL_DEG)));
    this.cell = r * this.cols + c;
    if (this.done[this.cell] === 0) {
      this.compute(this.country.minLon + (c + 0.5) * CELL_DEG, this.country.minLat + (r + 0.5) * CELL_DEG);
      this.done[this.cell] = 1;
    }
    return this;
  }

  private compute(lon: number, lat: number): void {
    const v = this.values;
    const at = this.cell * FIELDS;
    const elevation = this.elevationKm(lon, lat);
    const wobble = valueNoise(this.seed, 21, lon * 3, lat * 3) - 0.5;
    const mean = 28 - 0.38 * Math.abs(lat) - 6.5 * elevation + wobble;
    const cold = 11 - mean; // degrees colder than a warm southern plain
    v[at + MEAN] = round1(mean);
    v[at + TREND] = Math.round((0.3 + 0.25 * valueNoise(this.seed, 22, lon * 2, lat * 2)) * 100) / 100;
    v[at + FROST] = round1(Math.max(0, Math.min(300, 100 + 13 * cold + 10 * wobble)));
    v[at + HOT] = round1(Math.max(0, 40 - 11 * cold + 8 * wobble));
    v[at + MIN] = round1(-18 - 1.8 * cold - 4 * valueNoise(this.seed, 23, lon * 4, lat * 4));
    v[at + MAX] = round1(38 - 0.8 * cold + 2 * wobble);
    const precip =
      480 + 380 * elevation + 120 * (1 - (lon - this.country.minLon) / (this.country.maxLon - this.country.minLon)) + 150 * wobble;
    v[at + PRECIP] = Math.round(precip);
    v[at + MAX_DAY] = round1(38 + 0.05 * precip + 25 * valueNoise(this.seed, 24, lon * 5, lat * 5));
    // Design outdoor temperature of the heating code's zone (SR 1907 steps of 3 °C).
    v[at + DESIGN] = mean > 10.5 ? -12 : mean > 9 ? -15 : mean > 6 ? -18 : -21;
    v[at + HEATING] = Math.max(0.6, (18 - mean) / 8);
    for (const [field, channel, above] of GAPS) {
      if (fractalNoise(this.seed, channel, lon * 1.5, lat * 1.5) > above) v[at + field] = NaN;
    }
  }

  private get(field: number): number | null {
    const x = this.values[this.cell * FIELDS + field];
    return x === x ? x : null;
  }

  get meanTemperature(): number | null {
    return this.get(MEAN);
  }
  get trend(): number | null {
    return this.get(TREND);
  }
  get frostDays(): number | null {
    return this.get(FROST);
  }
  get hotDays(): number | null {
    return this.get(HOT);
  }
  get minimumDaily(): number | null {
    return this.get(MIN);
  }
  get maximumDaily(): number | null {
    return this.get(MAX);
  }
  get annualPrecipitation(): number | null {
    return this.get(PRECIP);
  }
  get maxOneDayPrecipitation(): number | null {
    return this.get(MAX_DAY);
  }
  /** Design outdoor temperature of the place (never missing: it comes from the code's map). */
  get designOutdoor(): number {
    return this.values[this.cell * FIELDS + DESIGN];
  }
  /** Heating degree-days relative to a mild lowland (1 = ~2,900 K·d): scales heating demand. */
  get heatingFactor(): number {
    return this.values[this.cell * FIELDS + HEATING];
  }
}
