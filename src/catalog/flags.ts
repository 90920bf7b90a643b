/**
 * Bits of a store's per-row `flags`: boolean columns and the has_* facts filters test, so that
 * every boolean filter of a query becomes one test `(flags & mask) === want`.
 */
export const F = {
  HAS_3D_MODEL: 1 << 0,
  /** volume_basis = measured: `measured_height_only`. */
  VOLUME_MEASURED: 1 << 1,
  /** solar_potential_basis non-null: `has_solar_potential`. */
  SOLAR_POTENTIAL: 1 << 2,
  /** annual_heating_demand_kwh non-null. */
  HEATING_ESTIMATE: 1 << 3,
  /** thermal_assessment non-null. */
  THERMAL_ASSESSMENT: 1 << 4,
  /** thermal assessment and both design temperatures non-null. */
  PEAK_HEAT_LOAD: 1 << 5,
  /** recent mean temperature and its trend non-null. */
  CLIMATE_TREND: 1 << 6,
  /** frost days, hot days, minimum and maximum daily temperature non-null. */
  TEMPERATURE_EXTREMES: 1 << 7,
  /** annual and max one-day precipitation non-null. */
  PRECIPITATION: 1 << 8,
  /** some business is active: `has_registered_business`. */
  ACTIVE_BUSINESS: 1 << 9,
  /** solar_installations non-empty: `registered_solar`. */
  REGISTERED_SOLAR: 1 << 10,
  /** some installation states storage. */
  STORAGE_TRUE: 1 << 11,
  /** some installation states no storage. */
  STORAGE_FALSE: 1 << 12,
  CONSTRUCTION_YEAR_IS_ESTIMATE: 1 << 13,
  FLOORS_IS_ESTIMATE: 1 << 14,
  DWELLINGS_IS_ESTIMATE: 1 << 15,
  FLOOD_ZONE_MAPPED: 1 << 16,
  DISTRICT_HEATING_KNOWN: 1 << 17,
  DISTRICT_HEATING: 1 << 18,
  GAS_NETWORK_KNOWN: 1 << 19,
  GAS_NETWORK: 1 << 20,
} as const;
