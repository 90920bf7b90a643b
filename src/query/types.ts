/**
 * A validated `GET /buildings` query, as the HTTP layer hands it to the engine. Field names are
 * the spec's parameter names in camelCase; an absent optional field means the filter is off.
 * Booleans documented "default false" are `true` or absent (false keeps everything).
 */
import type {
  AddressCorroboration, Category, FloodZone, PanelsStatus, RoofShape, SeismicRiskClass, SolarPresence,
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

export interface BBox {
  minLon: number;
  minLat: number;
  maxLon: number;
  maxLat: number;
}

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

/** A `GET /buildings/at` query. */
export interface PointQuery {
  lat: number;
  lon: number;
  radiusM: number;
  limit: number;
}

/** The engine refuses impossible input with this instead of scanning. */
export class QueryError extends RangeError {
  constructor(readonly parameter: string, message: string) {
    super(message);
    this.name = 'QueryError';
  }
}
