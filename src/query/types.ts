/**
 * A validated `GET /buildings` query, as the HTTP layer hands it to the engine. Field names are
 * the spec's parameter names in camelCase; an absent optional field means the filter is off.
 * Booleans documented "default false" are `true` or absent (false keeps everything).
 */
import type { BBox } from '../geo/bbox.ts';
import type {
  AddressCorroboration,
  Category,
  FloodZone,
  PanelsStatus,
  RoofShape,
  SeismicRiskClass,
  SolarPresence,
} from '../snapshot/schema.ts';

export const SORT_KEYS = ['volume', 'area', 'height', 'registered_business_turnover', 'registered_business_employees'] as const;
export type SortKey = (typeof SORT_KEYS)[number];

export const MAX_BBOX_SIDE_DEG = 3;
/**
 * A side is measured as maxLon - minLon in binary floating point, which can land a rounding above
 * 3 for decimals exactly 3 apart (-127.8 - -130.8 = 3.0000000000000142): sides up to this are 3.
 */
export const MAX_BBOX_SIDE_WITH_ROUNDING = MAX_BBOX_SIDE_DEG + 1e-9;
export const MAX_WINDOW = 10_000; // offset + limit, and the count cap of meta.total

export type { BBox };

export interface BuildingsQuery {
  bbox: BBox;
  sort: SortKey;
  limit: number;
  offset: number;

  category?: Category[];
  buildingType?: string[];
  roofShape?: RoofShape[];
  minFloors?: number;
  maxFloors?: number;
  minDwellings?: number;
  maxDwellings?: number;
  minEntrances?: number;
  maxEntrances?: number;
  addressCorroboration?: AddressCorroboration[];

  minAreaM2?: number;
  maxAreaM2?: number;
  minHeightM?: number;
  maxHeightM?: number;
  minVolumeM3?: number;
  maxVolumeM3?: number;
  measuredHeightOnly?: boolean;

  solarPresence?: SolarPresence[];
  excludeSolarPresence?: SolarPresence[];
  existingSolarPanels?: PanelsStatus[];
  registeredSolar?: boolean;
  registeredSolarStorage?: boolean;
  minRegisteredSolarKw?: number;
  hasSolarPotential?: boolean;
  minPanelCount?: number;
  maxPanelCount?: number;
  minCapacityKwp?: number;
  maxCapacityKwp?: number;
  minYearlyEnergyKwh?: number;
  maxYearlyEnergyKwh?: number;
  minCo2SavingsKgPerYear?: number;
  maxCo2SavingsKgPerYear?: number;
  has3dModel?: boolean;

  hasRegisteredBusiness?: boolean;
  registeredBusinessName?: string;
  minRegisteredBusinessTurnover?: number;
  maxRegisteredBusinessTurnover?: number;
  registeredBusinessTurnoverCurrency?: string;
  registeredBusinessFinancialYear?: number;
  minRegisteredBusinessEmployees?: number;
  maxRegisteredBusinessEmployees?: number;

  hasAnnualHeatingEstimate?: boolean;
  hasThermalAssessment?: boolean;
  hasPeakHeatLoad?: boolean;
  hasRecentClimateTrend?: boolean;
  hasRecentTemperatureExtremes?: boolean;
  hasRecentPrecipitation?: boolean;
  minRecentFrostDays?: number;
  maxRecentMinimumDailyTemperatureC?: number;
  minRecentHotDays?: number;
  minRecentMaxOneDayPrecipitationMm?: number;

  floodZone?: FloodZone[];
  seismicRiskClass?: SeismicRiskClass[];
}

/**
 * Every field of BuildingsQuery, each undefined, in one order: the type lists them all (a field
 * added to the interface and not here fails to compile).
 */
const EVERY_FIELD: { [K in keyof Required<BuildingsQuery>]: undefined } = {
  bbox: undefined,
  sort: undefined,
  limit: undefined,
  offset: undefined,
  category: undefined,
  buildingType: undefined,
  roofShape: undefined,
  minFloors: undefined,
  maxFloors: undefined,
  minDwellings: undefined,
  maxDwellings: undefined,
  minEntrances: undefined,
  maxEntrances: undefined,
  addressCorroboration: undefined,
  minAreaM2: undefined,
  maxAreaM2: undefined,
  minHeightM: undefined,
  maxHeightM: undefined,
  minVolumeM3: undefined,
  maxVolumeM3: undefined,
  measuredHeightOnly: undefined,
  solarPresence: undefined,
  excludeSolarPresence: undefined,
  existingSolarPanels: undefined,
  registeredSolar: undefined,
  registeredSolarStorage: undefined,
  minRegisteredSolarKw: undefined,
  hasSolarPotential: undefined,
  minPanelCount: undefined,
  maxPanelCount: undefined,
  minCapacityKwp: undefined,
  maxCapacityKwp: undefined,
  minYearlyEnergyKwh: undefined,
  maxYearlyEnergyKwh: undefined,
  minCo2SavingsKgPerYear: undefined,
  maxCo2SavingsKgPerYear: undefined,
  has3dModel: undefined,
  hasRegisteredBusiness: undefined,
  registeredBusinessName: undefined,
  minRegisteredBusinessTurnover: undefined,
  maxRegisteredBusinessTurnover: undefined,
  registeredBusinessTurnoverCurrency: undefined,
  registeredBusinessFinancialYear: undefined,
  minRegisteredBusinessEmployees: undefined,
  maxRegisteredBusinessEmployees: undefined,
  hasAnnualHeatingEstimate: undefined,
  hasThermalAssessment: undefined,
  hasPeakHeatLoad: undefined,
  hasRecentClimateTrend: undefined,
  hasRecentTemperatureExtremes: undefined,
  hasRecentPrecipitation: undefined,
  minRecentFrostDays: undefined,
  maxRecentMinimumDailyTemperatureC: undefined,
  minRecentHotDays: undefined,
  minRecentMaxOneDayPrecipitationMm: undefined,
  floodZone: undefined,
  seismicRiskClass: undefined,
};

/**
 * q with every field present (absent ones undefined), in one order, so that all queries share
 * one hidden class. Queries come with only the fields their callers set (hundreds of different
 * sets of keys), and compile reads ~60 of them: on so many shapes each read is a megamorphic
 * lookup that mostly misses V8's stub cache, costing compile more than the scan of a street's
 * rows; on this one shape it costs a few microseconds.
 */
export function withEveryField(q: BuildingsQuery): BuildingsQuery {
  return Object.assign({ ...EVERY_FIELD }, q) as BuildingsQuery;
}

/** A `GET /buildings/at` query. */
export interface PointQuery {
  lat: number;
  lon: number;
  radiusM: number;
  limit: number;
}

/** The engine refuses impossible input with this instead of scanning. */
export class QueryError extends RangeError {
  constructor(
    readonly parameter: string,
    message: string,
  ) {
    super(message);
    this.name = 'QueryError';
  }
}
