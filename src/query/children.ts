/**
 * A building's child lists: units (GET /buildings/{building_id}/units, spec 4.3) and
 * registered businesses, paged by limit and offset in file order. `undefined` = no building
 * with that id in the view.
 */
import type { CatalogView } from '../catalog/catalog.ts';
import type { BusinessRecord, UnitRecord } from '../snapshot/schema.ts';
import type { RowRef } from './buildings.ts';
import { QueryError } from './types.ts';

function checkPage(limit: number, offset: number): void {
  if (!Number.isInteger(limit) || limit < 0) throw new QueryError('limit', `limit must be a non-negative integer, got ${limit}.`);
  if (!Number.isInteger(offset) || offset < 0) throw new QueryError('offset', `offset must be a non-negative integer, got ${offset}.`);
}

/** The building with that id in the view (countries in code order), or undefined. */
export function findBuilding(view: CatalogView, buildingId: string): RowRef | undefined {
  for (const snapshot of view.snapshots) {
    const row = snapshot.findRow(buildingId);
    if (row >= 0) return { snapshot, row };
  }
  return undefined;
}

export function listUnits(
  view: CatalogView,
  buildingId: string,
  limit: number,
  offset: number,
): { units: UnitRecord[]; total: number } | undefined {
  checkPage(limit, offset);
  const ref = findBuilding(view, buildingId);
  if (!ref) return undefined;
  const units = ref.snapshot.units(ref.row);
  return { units: units.slice(offset, offset + limit), total: units.length };
}

export function listBusinesses(
  view: CatalogView,
  buildingId: string,
  limit: number,
  offset: number,
): { businesses: BusinessRecord[]; total: number } | undefined {
  checkPage(limit, offset);
  const ref = findBuilding(view, buildingId);
  if (!ref) return undefined;
  return { businesses: ref.snapshot.businesses(ref.row, offset, offset + limit), total: ref.snapshot.businessCount(ref.row) };
}
