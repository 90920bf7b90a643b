/**
 * Every building of a view in the order the snapshots store them (country by country, rows in
 * Hilbert order): a listing that needs no area, paged by offset. Stable while the view is.
 */
import type { CatalogView } from '../catalog/catalog.ts';
import type { RowRef } from './buildings.ts';
import { QueryError } from './types.ts';

export function listStored(view: CatalogView, offset: number, limit: number): { rows: RowRef[]; total: number } {
  if (!Number.isSafeInteger(offset) || offset < 0) throw new QueryError('offset', `offset must be a non-negative integer, got ${offset}.`);
  if (!Number.isSafeInteger(limit) || limit < 0) throw new QueryError('limit', `limit must be a non-negative integer, got ${limit}.`);
  let total = 0;
  for (const s of view.snapshots) total += s.rows;
  const rows: RowRef[] = [];
  let skip = offset;
  for (const snapshot of view.snapshots) {
    if (rows.length === limit) break;
    if (skip >= snapshot.rows) {
      skip -= snapshot.rows;
      continue;
    }
    for (let row = skip; row < snapshot.rows && rows.length < limit; row++) rows.push({ snapshot, row });
    skip = 0;
  }
  return { rows, total };
}
