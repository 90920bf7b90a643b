/**
 * The SQL conditions of a GET /buildings query's bbox and column filters, and the columns of the
 * sort keys, shared by the SQL engines (DuckDB, PostGIS), whose tables name the columns alike;
 * `double` writes a number as a literal of the engine's dialect that parses back to exactly it.
 */
import type { BuildingsQuery } from '../src/query/types.ts';

export const sqlString = (s: string): string => `'${s.replace(/'/g, "''")}'`;
export const inList = (col: string, values: readonly string[]): string => `${col} IN (${values.map(sqlString).join(', ')})`;

/** The column of a sort key that is one (the business sorts compute theirs from the businesses). */
export const SORT_COLUMNS = { volume: 'volume_m3', area: 'footprint_area_m2', height: 'height_m' } as const;

export function filterConditions(q: BuildingsQuery, double: (v: number) => string): string[] {
  const w: string[] = [
    `longitude >= ${double(q.bbox.minLon)}`,
    `longitude <= ${double(q.bbox.maxLon)}`,
    `latitude >= ${double(q.bbox.minLat)}`,
    `latitude <= ${double(q.bbox.maxLat)}`,
  ];
  const num = (col: string, lo: number | undefined, hi: number | undefined): void => {
    if (lo !== undefined) w.push(`${col} >= ${double(lo)}`);
    if (hi !== undefined) w.push(`${col} <= ${double(hi)}`);
  };
  if (q.category) w.push(inList('category', q.category));
  if (q.roofShape) w.push(inList('roof_shape', q.roofShape));
  num('floors', q.minFloors, q.maxFloors);
  num('dwellings', q.minDwellings, q.maxDwellings);
  num('footprint_area_m2', q.minAreaM2, q.maxAreaM2);
  num('height_m', q.minHeightM, q.maxHeightM);
  num('volume_m3', q.minVolumeM3, q.maxVolumeM3);
  if (q.measuredHeightOnly) w.push(`volume_basis = 'measured'`);
  if (q.solarPresence) w.push(inList('solar_presence', q.solarPresence));
  // solar_presence is never unknown (the schema settles it at build time), so NOT IN meets no NULL.
  if (q.excludeSolarPresence) w.push(`NOT ${inList('solar_presence', q.excludeSolarPresence)}`);
  if (q.existingSolarPanels) w.push(inList('panels_status', q.existingSolarPanels));
  if (q.hasSolarPotential) w.push('solar_potential_basis IS NOT NULL');
  if (q.has3dModel) w.push('has_3d_model');
  num('recent_frost_days', q.minRecentFrostDays, undefined);
  if (q.floodZone) w.push(inList('flood_zone', q.floodZone));
  if (q.seismicRiskClass) w.push(inList('seismic_risk_class', q.seismicRiskClass));
  return w;
}
