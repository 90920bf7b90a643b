/**
 * Approved business removals, applied to a snapshot without reloading it: the business child
 * columns are rebuilt without the removed businesses and the rows' "has an active business" flag
 * recomputed, so that every reader of the store (filters, sorts, serializers, public pages,
 * reports) sees the business gone. Everything else is shared with the snapshot as loaded.
 *
 * Always applied to the snapshot as loaded, with the whole set of removals so far, so applying
 * twice or out of order gives the same store.
 */
import { createHash } from 'node:crypto';
import { F } from './flags.ts';
import { shownFlags } from './largest-business.ts';
import { sharedF64, sharedI32, sharedU16, sharedU32, sharedU8 } from './shared.ts';
import type { BusinessColumns, Snapshot } from './snapshot.ts';

/** Businesses to hide: one matching either set is removed. */
export interface RemovalSet {
  businessIds: ReadonlySet<string>;
  registrationNumbers: ReadonlySet<string>;
}

export function isRemoved(removed: RemovalSet, businessId: string, registrationNumber: string | null): boolean {
  return removed.businessIds.has(businessId) || (registrationNumber !== null && removed.registrationNumbers.has(registrationNumber));
}

/**
 * `base` without the removed businesses; `base` itself when none of them is in it. The result's
 * revision names the businesses removed from it, so caches and ETags change exactly when what a
 * building shows changes, the same way in every process and after a restart.
 */
export function applyRemovals(base: Snapshot, removed: RemovalSet): Snapshot {
  const b = base.business;
  const total = b.row.length;
  if (total === 0 || (removed.businessIds.size === 0 && removed.registrationNumbers.size === 0)) return base;
  const keep = new Uint8Array(total);
  const tag = createHash('sha256');
  let kept = 0;
  for (let j = 0; j < total; j++) {
    const { businessId, registrationNumber } = base.businessKeys(j);
    if (!isRemoved(removed, businessId, registrationNumber)) {
      keep[j] = 1;
      kept++;
    } else {
      tag.update(`${j},`);
    }
  }
  if (kept === total) return base;

  const rows = base.rows;
  const offsets = sharedU32(rows + 1);
  const row = sharedU32(kept);
  const active = sharedU8(kept);
  const employeesMin = sharedI32(kept);
  const employeesMax = sharedI32(kept);
  const turnover = sharedF64(kept);
  const currency = sharedU16(kept);
  const year = sharedI32(kept);
  const name = sharedU32(kept);
  const stringOffsets = sharedU32(kept + 1);
  const flags = sharedU32(rows);
  flags.set(base.flags);
  let k = 0;
  for (let r = 0; r < rows; r++) {
    offsets[r] = k;
    const first = b.offsets[r];
    const last = b.offsets[r + 1];
    if (first === last) continue;
    let anyActive = false;
    for (let j = first; j < last; j++) {
      if (keep[j] === 0) continue;
      row[k] = r;
      active[k] = b.active[j];
      employeesMin[k] = b.employeesMin[j];
      employeesMax[k] = b.employeesMax[j];
      turnover[k] = b.turnover[j];
      currency[k] = b.currency[j];
      year[k] = b.year[j];
      name[k] = b.name[j];
      stringOffsets[k] = b.stringOffsets[j];
      if (b.active[j] === 1) anyActive = true;
      k++;
    }
    flags[r] = anyActive ? flags[r] | F.ACTIVE_BUSINESS : flags[r] & ~F.ACTIVE_BUSINESS;
  }
  offsets[rows] = k;
  // Past the last kept business: only read as the end of the last one, never decoded.
  stringOffsets[kept] = b.stringOffsets[total];

  const figures = { offsets, employeesMin, employeesMax, turnover, currency, currencies: b.currencies, year };
  const business: BusinessColumns = { ...b, ...figures, row, active, name, stringOffsets, shown: shownFlags(figures, rows) };
  return base.withBusinesses(business, flags, tag.digest('base64url').slice(0, 12));
}
