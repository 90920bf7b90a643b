/** The Unit object of GET /buildings/{building_id}/units: the snapshot's unit record, snake_case as stored. */
import type { UnitRecord, UnitUse } from '../snapshot/schema.ts';

export interface UnitOut {
  unit_id: string;
  label: string | null;
  floor: number | null;
  use: UnitUse | null;
  area_m2: number | null;
  rooms: number | null;
}

export function serializeUnit(u: UnitRecord): UnitOut {
  return { unit_id: u.unit_id, label: u.label, floor: u.floor, use: u.use, area_m2: u.area_m2, rooms: u.rooms };
}
