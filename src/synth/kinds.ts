/**
 * Kinds of building the generator draws, and which kinds each zone of a settlement holds. A
 * kind fixes what records would say of such a building: category and granular types, footprint
 * size and shape, floors and storey height, roof shapes, when such buildings were built. The
 * tables are data so that proportions can be read and tuned in one place.
 */
import type { Category, RoofShape } from '../snapshot/schema.ts';
import { CORE, INDUSTRIAL, INNER, SUBURB, TOWN_CENTRE, TOWN_EDGE, VILLAGE_ZONE, ZONES } from './layout.ts';
import { CHAMFERED, COURTYARD, CROSS, L_SHAPE, RECTANGLE, ROUND, STEPPED, TWO_PARTS, T_SHAPE, U_SHAPE } from './outlines.ts';

/** A value drawn with weights. */
export interface Weighted<T> {
  values: readonly T[];
  weights: Float64Array;
  total: number;
}

function weighted<T>(entries: readonly (readonly [T, number])[]): Weighted<T> {
  const weights = Float64Array.from(entries, (e) => e[1]);
  return { values: entries.map((e) => e[0]), weights, total: weights.reduce((a, b) => a + b, 0) };
}

export interface Kind {
  name: string;
  category: Category;
  types: Weighted<string>;
  /** Footprint area (m²): median and log-normal spread, clamped to [min, max]. */
  area: readonly [median: number, sigma: number, min: number, max: number];
  /** Long side over short side, uniform in this range. */
  aspect: readonly [number, number];
  shapes: Weighted<number>;
  floors: Weighted<number>;
  /** Storey height (m): height is floors x storey plus the roof. */
  storeyM: number;
  roofs: Weighted<RoofShape>;
  /** Years of construction: eras and their weights, a year drawn uniformly inside the era. */
  eras: Weighted<readonly [number, number]>;
  /** Heated: gets an annual heating estimate and, sometimes, a thermal assessment. */
  heated: boolean;
  /** On official seismic lists when old enough (blocks and public buildings). */
  listed: boolean;
  /** Share of such buildings with a registered office, and the mean number of businesses there. */
  businesses: readonly [share: number, mean: number];
  /** Median workforce of a business registered in such a building. */
  workforce: number;
  /** Share of such addresses with a registered solar installation, and its typical power (kW). */
  solar: readonly [share: number, kw: number];
}

const PITCHED = weighted<RoofShape>([
  ['gabled', 36],
  ['hipped', 30],
  ['half_hipped', 8],
  ['pyramidal', 6],
  ['mansard', 3],
  ['flat', 9],
  ['gambrel', 2],
  ['skillion', 6],
]);
const FLAT = weighted<RoofShape>([
  ['flat', 90],
  ['hipped', 5],
  ['gabled', 5],
]);
const OLD_TOWN = weighted<RoofShape>([
  ['gabled', 25],
  ['hipped', 30],
  ['mansard', 15],
  ['flat', 15],
  ['half_hipped', 10],
  ['gambrel', 5],
]);
const SHED_ROOFS = weighted<RoofShape>([
  ['skillion', 45],
  ['gabled', 35],
  ['flat', 20],
]);
const INDUSTRIAL_ROOFS = weighted<RoofShape>([
  ['flat', 50],
  ['gabled', 32],
  ['skillion', 14],
  ['round', 4],
]);

const MODERN = weighted<readonly [number, number]>([
  [[1990, 2009], 45],
  [[2010, 2026], 55],
]);
const ANY_ERA = weighted<readonly [number, number]>([
  [[1880, 1944], 8],
  [[1945, 1989], 42],
  [[1990, 2009], 28],
  [[2010, 2026], 22],
]);
const COMMUNIST = weighted<readonly [number, number]>([
  [[1955, 1977], 45],
  [[1978, 1989], 40],
  [[1990, 2009], 5],
  [[2010, 2026], 10],
]);
const VILLAGE_ERAS = weighted<readonly [number, number]>([
  [[1880, 1944], 18],
  [[1945, 1989], 52],
  [[1990, 2009], 20],
  [[2010, 2026], 10],
]);
const OLD = weighted<readonly [number, number]>([
  [[1850, 1918], 40],
  [[1919, 1944], 35],
  [[1945, 1989], 15],
  [[1990, 2026], 10],
]);

export const HOUSE: Kind = {
  name: 'house',
  businesses: [0.025, 1],
  workforce: 2,
  solar: [0.05, 5.5],
  category: 'residential_house',
  types: weighted([
    ['house', 55],
    ['detached', 25],
    ['semidetached_house', 8],
    ['terrace', 4],
    ['bungalow', 3],
    ['unspecified', 5],
  ]),
  area: [95, 0.35, 35, 420],
  aspect: [1, 1.7],
  shapes: weighted([
    [RECTANGLE, 66],
    [L_SHAPE, 18],
    [CHAMFERED, 5],
    [T_SHAPE, 4],
    [STEPPED, 5],
    [TWO_PARTS, 2],
  ]),
  floors: weighted([
    [1, 55],
    [2, 37],
    [3, 8],
  ]),
  storeyM: 2.9,
  roofs: PITCHED,
  eras: ANY_ERA,
  heated: true,
  listed: false,
};
export const FARMHOUSE: Kind = {
  ...HOUSE,
  name: 'farmhouse',
  businesses: [0.02, 1],
  workforce: 2,
  solar: [0.035, 5],
  types: weighted([
    ['house', 60],
    ['farm', 20],
    ['detached', 12],
    ['unspecified', 8],
  ]),
  area: [85, 0.3, 35, 300],
  floors: weighted([
    [1, 78],
    [2, 20],
    [3, 2],
  ]),
  eras: VILLAGE_ERAS,
};
export const TOWNHOUSE: Kind = {
  ...HOUSE,
  name: 'townhouse',
  businesses: [0.08, 1.3],
  workforce: 2,
  solar: [0.03, 6],
  types: weighted([
    ['house', 60],
    ['terrace', 25],
    ['unspecified', 15],
  ]),
  area: [150, 0.35, 60, 600],
  shapes: weighted([
    [RECTANGLE, 45],
    [L_SHAPE, 30],
    [U_SHAPE, 12],
    [T_SHAPE, 13],
  ]),
  floors: weighted([
    [1, 20],
    [2, 45],
    [3, 25],
    [4, 10],
  ]),
  storeyM: 3.4,
  roofs: OLD_TOWN,
  eras: OLD,
  listed: true,
};
/** Socialist-era slab: 11-14 m deep, one staircase per ~16 m of length. */
export const SLAB: Kind = {
  name: 'slab',
  businesses: [0.3, 2.5],
  workforce: 2,
  solar: [0.015, 15],
  category: 'apartment_block',
  types: weighted([
    ['apartments', 88],
    ['residential', 8],
    ['unspecified', 4],
  ]),
  area: [620, 0.3, 300, 1500],
  aspect: [2.5, 5],
  shapes: weighted([
    [RECTANGLE, 78],
    [STEPPED, 14],
    [L_SHAPE, 8],
  ]),
  floors: weighted([
    [4, 10],
    [5, 40],
    [8, 8],
    [9, 14],
    [10, 16],
    [11, 12],
  ]),
  storeyM: 2.75,
  roofs: FLAT,
  eras: COMMUNIST,
  heated: true,
  listed: true,
};
export const TOWER: Kind = {
  ...SLAB,
  name: 'tower',
  businesses: [0.35, 3],
  workforce: 2,
  solar: [0.005, 10],
  area: [480, 0.2, 300, 750],
  aspect: [1, 1.3],
  shapes: weighted([
    [RECTANGLE, 65],
    [CROSS, 15],
    [CHAMFERED, 20],
  ]),
  floors: weighted([
    [12, 30],
    [14, 25],
    [16, 20],
    [18, 10],
    [20, 8],
    [24, 5],
    [30, 2],
  ]),
  storeyM: 2.9,
  eras: weighted([
    [[1965, 1989], 60],
    [[1990, 2009], 15],
    [[2010, 2026], 25],
  ]),
};
/** Closed perimeter blocks of the old centre: courtyards, U and L plans. */
export const PERIMETER: Kind = {
  ...SLAB,
  name: 'perimeter',
  businesses: [0.45, 3],
  workforce: 2,
  solar: [0.01, 15],
  types: weighted([
    ['apartments', 80],
    ['residential', 12],
    ['unspecified', 8],
  ]),
  area: [1500, 0.3, 700, 3000],
  aspect: [1, 1.5],
  shapes: weighted([
    [COURTYARD, 45],
    [U_SHAPE, 30],
    [L_SHAPE, 15],
    [T_SHAPE, 10],
  ]),
  floors: weighted([
    [3, 20],
    [4, 30],
    [5, 25],
    [6, 15],
    [7, 10],
  ]),
  storeyM: 3.3,
  roofs: OLD_TOWN,
  eras: OLD,
};
export const SMALL_BLOCK: Kind = {
  ...SLAB,
  name: 'small_block',
  businesses: [0.15, 1.5],
  workforce: 2,
  solar: [0.02, 10],
  area: [330, 0.3, 160, 700],
  aspect: [1.5, 3],
  shapes: weighted([
    [RECTANGLE, 80],
    [L_SHAPE, 12],
    [STEPPED, 8],
  ]),
  floors: weighted([
    [3, 35],
    [4, 35],
    [5, 30],
  ]),
  roofs: weighted<RoofShape>([
    ['flat', 60],
    ['hipped', 25],
    ['gabled', 15],
  ]),
  eras: weighted([
    [[1960, 1989], 50],
    [[1990, 2009], 20],
    [[2010, 2026], 30],
  ]),
};
export const SHOP: Kind = {
  name: 'shop',
  businesses: [0.7, 1.3],
  workforce: 2,
  solar: [0.04, 20],
  category: 'commercial',
  types: weighted([
    ['retail', 50],
    ['commercial', 22],
    ['kiosk', 8],
    ['unspecified', 20],
  ]),
  area: [120, 0.6, 8, 900],
  aspect: [1, 2.2],
  shapes: weighted([
    [RECTANGLE, 80],
    [L_SHAPE, 15],
    [CHAMFERED, 5],
  ]),
  floors: weighted([
    [1, 75],
    [2, 25],
  ]),
  storeyM: 3.6,
  roofs: weighted<RoofShape>([
    ['flat', 50],
    ['gabled', 30],
    ['skillion', 10],
    ['hipped', 10],
  ]),
  eras: MODERN,
  heated: true,
  listed: false,
};
export const OFFICE: Kind = {
  ...SHOP,
  name: 'office',
  businesses: [0.9, 6],
  workforce: 8,
  solar: [0.04, 40],
  types: weighted([
    ['office', 80],
    ['commercial', 12],
    ['unspecified', 8],
  ]),
  area: [800, 0.5, 200, 2400],
  aspect: [1, 2.5],
  shapes: weighted([
    [RECTANGLE, 60],
    [L_SHAPE, 20],
    [T_SHAPE, 10],
    [STEPPED, 10],
  ]),
  floors: weighted([
    [3, 15],
    [4, 20],
    [5, 20],
    [6, 15],
    [8, 12],
    [10, 10],
    [12, 5],
    [16, 3],
  ]),
  roofs: FLAT,
  eras: ANY_ERA,
  listed: true,
};
export const HOTEL: Kind = {
  ...OFFICE,
  name: 'hotel',
  businesses: [0.8, 1.2],
  workforce: 8,
  solar: [0.06, 50],
  types: weighted([
    ['hotel', 90],
    ['commercial', 10],
  ]),
  area: [700, 0.4, 250, 2000],
  floors: weighted([
    [4, 25],
    [5, 25],
    [6, 20],
    [8, 15],
    [10, 10],
    [14, 5],
  ]),
  storeyM: 3.1,
};
export const SUPERMARKET: Kind = {
  ...SHOP,
  name: 'supermarket',
  businesses: [0.7, 1.5],
  workforce: 18,
  solar: [0.12, 150],
  types: weighted([
    ['supermarket', 55],
    ['retail', 35],
    ['commercial', 10],
  ]),
  area: [2500, 0.5, 800, 9000],
  aspect: [1, 2],
  shapes: weighted([
    [RECTANGLE, 85],
    [L_SHAPE, 15],
  ]),
  floors: weighted([
    [1, 85],
    [2, 15],
  ]),
  storeyM: 6,
  roofs: FLAT,
  eras: weighted([
    [[1995, 2009], 40],
    [[2010, 2026], 60],
  ]),
};
export const WAREHOUSE: Kind = {
  name: 'warehouse',
  businesses: [0.45, 1.4],
  workforce: 18,
  solar: [0.1, 250],
  category: 'industrial',
  types: weighted([
    ['warehouse', 70],
    ['industrial', 25],
    ['unspecified', 5],
  ]),
  area: [2200, 0.75, 300, 10_000],
  aspect: [1, 3.5],
  shapes: weighted([
    [RECTANGLE, 85],
    [L_SHAPE, 10],
    [STEPPED, 5],
  ]),
  floors: weighted([[1, 100]]),
  storeyM: 9,
  roofs: INDUSTRIAL_ROOFS,
  eras: ANY_ERA,
  heated: false,
  listed: false,
};
export const FACTORY: Kind = {
  ...WAREHOUSE,
  name: 'factory',
  businesses: [0.7, 1.6],
  workforce: 40,
  solar: [0.12, 400],
  types: weighted([
    ['industrial', 55],
    ['manufacture', 30],
    ['unspecified', 15],
  ]),
  area: [3000, 0.6, 600, 10_000],
  aspect: [1, 3],
  shapes: weighted([
    [RECTANGLE, 55],
    [L_SHAPE, 20],
    [T_SHAPE, 10],
    [U_SHAPE, 10],
    [STEPPED, 5],
  ]),
  floors: weighted([
    [1, 70],
    [2, 20],
    [3, 10],
  ]),
  storeyM: 6,
  heated: true,
};
export const WORKSHOP: Kind = {
  ...WAREHOUSE,
  name: 'workshop',
  businesses: [0.5, 1.1],
  workforce: 2,
  solar: [0.06, 25],
  types: weighted([
    ['industrial', 45],
    ['workshop', 35],
    ['service', 10],
    ['unspecified', 10],
  ]),
  area: [220, 0.5, 40, 900],
  aspect: [1, 2.5],
  shapes: weighted([
    [RECTANGLE, 90],
    [L_SHAPE, 10],
  ]),
  storeyM: 4.5,
  roofs: weighted<RoofShape>([
    ['gabled', 40],
    ['flat', 35],
    ['skillion', 25],
  ]),
  heated: true,
};
export const SCHOOL: Kind = {
  name: 'school',
  businesses: [0.1, 1],
  workforce: 8,
  solar: [0.08, 30],
  category: 'public',
  types: weighted([
    ['school', 65],
    ['kindergarten', 30],
    ['unspecified', 5],
  ]),
  area: [1100, 0.45, 250, 3500],
  aspect: [1.2, 3],
  shapes: weighted([
    [L_SHAPE, 30],
    [U_SHAPE, 22],
    [T_SHAPE, 20],
    [RECTANGLE, 28],
  ]),
  floors: weighted([
    [1, 20],
    [2, 40],
    [3, 30],
    [4, 10],
  ]),
  storeyM: 3.4,
  roofs: weighted<RoofShape>([
    ['hipped', 40],
    ['gabled', 30],
    ['flat', 30],
  ]),
  eras: ANY_ERA,
  heated: true,
  listed: true,
};
export const CIVIC: Kind = {
  ...SCHOOL,
  name: 'civic',
  businesses: [0.15, 1.2],
  workforce: 8,
  solar: [0.06, 60],
  types: weighted([
    ['townhall', 20],
    ['hospital', 25],
    ['civic', 20],
    ['public', 15],
    ['university', 12],
    ['train_station', 8],
  ]),
  area: [2000, 0.5, 400, 8000],
  aspect: [1, 2.5],
  shapes: weighted([
    [RECTANGLE, 30],
    [U_SHAPE, 22],
    [COURTYARD, 13],
    [T_SHAPE, 15],
    [L_SHAPE, 15],
    [CROSS, 5],
  ]),
  floors: weighted([
    [2, 15],
    [3, 25],
    [4, 25],
    [5, 15],
    [6, 10],
    [8, 10],
  ]),
  storeyM: 3.6,
  roofs: weighted<RoofShape>([
    ['flat', 45],
    ['hipped', 30],
    ['mansard', 12],
    ['dome', 8],
    ['gabled', 5],
  ]),
};
export const CHURCH: Kind = {
  ...SCHOOL,
  name: 'church',
  businesses: [0.05, 1],
  workforce: 2,
  solar: [0.01, 8],
  types: weighted([
    ['church', 80],
    ['chapel', 15],
    ['religious', 5],
  ]),
  area: [280, 0.5, 40, 1500],
  aspect: [1.3, 2.6],
  shapes: weighted([
    [CROSS, 45],
    [RECTANGLE, 45],
    [ROUND, 10],
  ]),
  floors: weighted([[1, 100]]),
  storeyM: 12,
  roofs: weighted<RoofShape>([
    ['gabled', 45],
    ['dome', 40],
    ['hipped', 15],
  ]),
  eras: OLD,
  heated: false,
};
/** Barns, stables and outbuildings of a village household. */
export const BARN: Kind = {
  name: 'barn',
  businesses: [0, 0],
  workforce: 2,
  solar: [0, 5],
  category: 'agricultural',
  types: weighted([
    ['barn', 50],
    ['farm_auxiliary', 28],
    ['stable', 10],
    ['cowshed', 8],
    ['sty', 4],
  ]),
  area: [70, 0.5, 15, 400],
  aspect: [1.2, 2.5],
  shapes: weighted([
    [RECTANGLE, 92],
    [L_SHAPE, 8],
  ]),
  floors: weighted([[1, 100]]),
  storeyM: 4.5,
  roofs: weighted<RoofShape>([
    ['gabled', 68],
    ['skillion', 15],
    ['gambrel', 10],
    ['half_hipped', 7],
  ]),
  eras: VILLAGE_ERAS,
  heated: false,
  listed: false,
};
/** Buildings of a farm business: long sheds, greenhouses, silos. */
export const FARM: Kind = {
  ...BARN,
  name: 'farm',
  businesses: [0.3, 1.2],
  workforce: 5,
  solar: [0.08, 60],
  types: weighted([
    ['barn', 25],
    ['cowshed', 22],
    ['farm_auxiliary', 20],
    ['greenhouse', 18],
    ['silo', 5],
    ['unspecified', 10],
  ]),
  area: [900, 0.6, 150, 6000],
  aspect: [2, 6],
  shapes: weighted([
    [RECTANGLE, 90],
    [L_SHAPE, 5],
    [ROUND, 5],
  ]),
  storeyM: 6,
  roofs: weighted<RoofShape>([
    ['gabled', 58],
    ['round', 15],
    ['skillion', 10],
    ['flat', 17],
  ]),
  eras: ANY_ERA,
};
export const SHED: Kind = {
  name: 'shed',
  businesses: [0, 0],
  workforce: 2,
  solar: [0, 5],
  category: 'ancillary',
  types: weighted([
    ['shed', 62],
    ['hut', 18],
    ['outbuilding', 12],
    ['unspecified', 8],
  ]),
  area: [9, 0.5, 2.5, 30],
  aspect: [1, 1.8],
  shapes: weighted([[RECTANGLE, 100]]),
  floors: weighted([[1, 100]]),
  storeyM: 2.4,
  roofs: SHED_ROOFS,
  eras: ANY_ERA,
  heated: false,
  listed: false,
};
export const GARAGE: Kind = {
  ...SHED,
  name: 'garage',
  businesses: [0, 0],
  workforce: 2,
  solar: [0, 5],
  types: weighted([
    ['garage', 92],
    ['unspecified', 8],
  ]),
  area: [21, 0.25, 12, 48],
  aspect: [1.3, 2.2],
  storeyM: 2.6,
  roofs: weighted<RoofShape>([
    ['flat', 50],
    ['skillion', 25],
    ['gabled', 25],
  ]),
  eras: MODERN,
};
/** Summer kitchens and other outbuildings of a household. */
export const OUTBUILDING: Kind = {
  ...SHED,
  name: 'outbuilding',
  businesses: [0, 0],
  workforce: 2,
  solar: [0, 5],
  types: weighted([
    ['outbuilding', 65],
    ['summer_kitchen', 25],
    ['unspecified', 10],
  ]),
  area: [28, 0.35, 8, 80],
  aspect: [1, 2],
  storeyM: 2.7,
  roofs: weighted<RoofShape>([
    ['gabled', 60],
    ['skillion', 40],
  ]),
  eras: VILLAGE_ERAS,
};
/** A row of lock-up garages beside blocks of flats: identical 3 x 6 m boxes. */
export const GARAGE_ROW: Kind = {
  ...SHED,
  name: 'garage_row',
  businesses: [0.01, 1],
  workforce: 2,
  solar: [0, 5],
  types: weighted([
    ['garages', 95],
    ['unspecified', 5],
  ]),
  area: [90, 0.4, 36, 260],
  aspect: [3, 10],
  storeyM: 2.5,
  roofs: weighted<RoofShape>([
    ['flat', 80],
    ['skillion', 20],
  ]),
  eras: COMMUNIST,
};
export const UNKNOWN: Kind = {
  name: 'unknown',
  businesses: [0.03, 1],
  workforce: 2,
  solar: [0.005, 5],
  category: 'unknown',
  types: weighted([['unspecified', 100]]),
  area: [60, 0.9, 6, 2000],
  aspect: [1, 2.5],
  shapes: weighted([
    [RECTANGLE, 85],
    [L_SHAPE, 15],
  ]),
  floors: weighted([
    [1, 75],
    [2, 20],
    [3, 5],
  ]),
  storeyM: 3,
  roofs: PITCHED,
  eras: ANY_ERA,
  heated: false,
  listed: false,
};

/** Main building of a plot, by zone. */
export const ZONE_KINDS: readonly Weighted<Kind>[] = (() => {
  const z: Weighted<Kind>[] = new Array(ZONES);
  z[CORE] = weighted<Kind>([
    [PERIMETER, 22],
    [SLAB, 14],
    [TOWER, 3],
    [OFFICE, 12],
    [SHOP, 12],
    [HOTEL, 3],
    [CIVIC, 4],
    [SCHOOL, 2],
    [CHURCH, 2],
    [TOWNHOUSE, 16],
    [GARAGE_ROW, 4],
    [SUPERMARKET, 1],
    [UNKNOWN, 2],
  ]);
  z[INNER] = weighted<Kind>([
    [SLAB, 24],
    [TOWER, 3],
    [SMALL_BLOCK, 8],
    [HOUSE, 34],
    [SHOP, 8],
    [OFFICE, 3],
    [SCHOOL, 2],
    [CHURCH, 1],
    [GARAGE_ROW, 6],
    [SUPERMARKET, 1.5],
    [WORKSHOP, 3],
    [CIVIC, 1],
    [UNKNOWN, 3],
  ]);
  z[SUBURB] = weighted<Kind>([
    [HOUSE, 80],
    [SMALL_BLOCK, 3],
    [SHOP, 4],
    [WORKSHOP, 3],
    [SCHOOL, 0.8],
    [CHURCH, 0.6],
    [SUPERMARKET, 0.6],
    [WAREHOUSE, 0.5],
    [UNKNOWN, 3],
  ]);
  z[INDUSTRIAL] = weighted<Kind>([
    [WAREHOUSE, 32],
    [FACTORY, 18],
    [WORKSHOP, 24],
    [OFFICE, 5],
    [SHOP, 4],
    [SUPERMARKET, 3],
    [GARAGE_ROW, 4],
    [UNKNOWN, 6],
  ]);
  z[TOWN_CENTRE] = weighted<Kind>([
    [SLAB, 16],
    [SMALL_BLOCK, 12],
    [TOWNHOUSE, 10],
    [HOUSE, 24],
    [SHOP, 15],
    [OFFICE, 4],
    [HOTEL, 1],
    [SCHOOL, 3],
    [CHURCH, 3],
    [CIVIC, 2],
    [GARAGE_ROW, 3],
    [SUPERMARKET, 1],
    [UNKNOWN, 2],
  ]);
  z[TOWN_EDGE] = weighted<Kind>([
    [HOUSE, 78],
    [SHOP, 4],
    [WORKSHOP, 4],
    [SMALL_BLOCK, 2],
    [SCHOOL, 0.8],
    [CHURCH, 0.8],
    [WAREHOUSE, 1.5],
    [FARM, 2.5],
    [UNKNOWN, 3],
  ]);
  z[VILLAGE_ZONE] = weighted<Kind>([
    [FARMHOUSE, 88],
    [FARM, 3],
    [SHOP, 2],
    [CHURCH, 0.4],
    [SCHOOL, 0.25],
    [WORKSHOP, 1],
    [UNKNOWN, 3],
  ]);
  return z;
})();

/** Outbuildings a household plot may hold, by zone: expected count and which kinds. */
export const ZONE_EXTRAS: readonly { mean: number; kinds: Weighted<Kind> }[] = (() => {
  const urban = weighted<Kind>([
    [GARAGE, 50],
    [SHED, 40],
    [OUTBUILDING, 10],
  ]);
  const rural = weighted<Kind>([
    [BARN, 40],
    [SHED, 28],
    [OUTBUILDING, 20],
    [GARAGE, 12],
  ]);
  const z = new Array<{ mean: number; kinds: Weighted<Kind> }>(ZONES);
  z[CORE] = { mean: 0.1, kinds: urban };
  z[INNER] = { mean: 0.5, kinds: urban };
  z[SUBURB] = { mean: 0.8, kinds: urban };
  z[INDUSTRIAL] = {
    mean: 0.3,
    kinds: weighted<Kind>([
      [SHED, 50],
      [WORKSHOP, 30],
      [GARAGE, 20],
    ]),
  };
  z[TOWN_CENTRE] = { mean: 0.4, kinds: urban };
  z[TOWN_EDGE] = {
    mean: 1.1,
    kinds: weighted<Kind>([
      [GARAGE, 30],
      [SHED, 30],
      [BARN, 25],
      [OUTBUILDING, 15],
    ]),
  };
  z[VILLAGE_ZONE] = { mean: 1.9, kinds: rural };
  return z;
})();

/** Standard house designs built by the thousand: identical outlines give exact ties in area and volume. */
export const STANDARD_HOUSES: readonly (readonly [number, number])[] = [
  [10, 12],
  [9, 11],
  [8, 10],
  [11, 13],
  [12, 9],
  [10, 10],
  [7.5, 9],
];
