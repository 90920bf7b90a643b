/**
 * Approved business removals in the store: a removed business is gone from every reader (child
 * lists, records, the has_registered_business flag, the name and employees filters, the
 * employees sort), matched by business_id or by registration_number, in the snapshots served and
 * in those loaded later; the rest of the store is shared, not copied. Expected ids are written
 * by hand from the records below.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeBuildingJson } from '../src/api/building.ts';
import { ByteWriter } from '../src/api/byte-writer.ts';
import { Catalog, type CatalogView, type Snapshot } from '../src/catalog/catalog.ts';
import { NodeSummaries } from '../src/catalog/summaries.ts';
import { queryBuildings } from '../src/query/buildings.ts';
import type { BuildingsQuery } from '../src/query/types.ts';
import { blankRecord } from '../src/snapshot/record.ts';
import type { BuildingRecord, BusinessRecord } from '../src/snapshot/schema.ts';
import { SnapshotWriter } from '../src/snapshot/writer.ts';

const root = mkdtempSync(join(tmpdir(), 'edifice-removals-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const biz = (id: string, reg: string | null, name: string, active: boolean, employees: number | null): BusinessRecord => ({
  business_id: id,
  registration_number: reg,
  name,
  active,
  employees_min: employees,
  employees_max: employees,
  turnover: null,
  turnover_currency: null,
  turnover_financial_year: null,
});

const A = blankRecord('t:a', 21.001, 45.001, {
  businesses: [biz('b1', 'R1', 'Alpha SRL', true, 40), biz('b2', 'R2', 'Beta SRL', false, 5)],
});
const B = blankRecord('t:b', 21.002, 45.002, { businesses: [biz('b3', 'R3', 'Gamma SA', true, 50)] });
const C = blankRecord('t:c', 21.003, 45.003, { businesses: [biz('b4', 'R4', 'Alpha SRL', true, 10)] });
const D = blankRecord('t:d', 21.004, 45.004, { businesses: [] });
const RECORDS = [A, B, C, D];

async function write(date: string): Promise<void> {
  const writer = new SnapshotWriter({
    country: 'XA',
    snapshotDate: date,
    sources: [{ name: 't', licence: 'CC0-1.0', attribution: 't', retrieved: date }],
  });
  for (const r of RECORDS) writer.add(r);
  await writer.finish(join(root, 'XA', `${date}.arrow`));
}

const ids = (view: CatalogView, q: Partial<BuildingsQuery>): string[] =>
  queryBuildings(view, {
    bbox: { minLon: 21, minLat: 45, maxLon: 21.01, maxLat: 45.01 },
    sort: 'volume',
    limit: 100,
    offset: 0,
    ...q,
  }).rows.map((r) => r.snapshot.buildingId(r.row));

const jsonOf = (s: Snapshot, row: number): string => {
  const w = new ByteWriter(1024);
  writeBuildingJson(w, s, row, { country: 'XA', appUrl: 'https://app.test' });
  return w.take().toString();
};

const businessesOf = (view: CatalogView, r: BuildingRecord): string[] => {
  const s = view.snapshots[0];
  return s.businesses(s.findRow(r.building_id)).map((b) => b.business_id);
};

describe('approved removals in the store', () => {
  it('hide a business by business_id or registration_number from every reader, sharing the rest of the store', async () => {
    await write('2026-11-21');
    const catalog = Catalog.open(root, { log: () => {} });
    const before = catalog.view();
    const s0 = before.snapshots[0];
    expect(ids(before, { hasRegisteredBusiness: true }).sort()).toEqual([A, B, C].map((r) => r.building_id).sort());
    expect(ids(before, { registeredBusinessName: 'alpha' }).sort()).toEqual([A, C].map((r) => r.building_id).sort());

    catalog.setRemovals({ businessIds: new Set(['b1']), registrationNumbers: new Set(['R3']) });
    const after = catalog.view();
    const s1 = after.snapshots[0];
    expect(s1).not.toBe(s0);
    expect(s1.revision).not.toBe(s0.revision);
    expect(s1.lon).toBe(s0.lon); // shared, not copied
    expect(s1.tree).toBe(s0.tree);

    expect(businessesOf(after, A)).toEqual(['b2']);
    expect(businessesOf(after, B)).toEqual([]);
    expect(businessesOf(after, C)).toEqual(['b4']);
    const recordA = s1.record(s1.findRow(A.building_id));
    expect(recordA.businesses.map((b) => b.business_id)).toEqual(['b2']);
    expect(s1.businessCount(s1.findRow(B.building_id))).toBe(0);
    // A keeps only an inactive business: no longer "has a registered business".
    expect(ids(after, { hasRegisteredBusiness: true })).toEqual([C.building_id]);
    expect(ids(after, { registeredBusinessName: 'alpha' })).toEqual([C.building_id]);
    expect(ids(after, { registeredBusinessName: 'gamma' })).toEqual([]);
    expect(ids(after, { minRegisteredBusinessEmployees: 30 })).toEqual([]);
    // What A shows is its remaining business's (40 employees were b1's), in JSON as in the record.
    const shownA = JSON.parse(jsonOf(s1, s1.findRow(A.building_id))) as Record<string, unknown>;
    expect([shownA.registered_business_count, shownA.registered_business_employees]).toEqual([1, { min: 5, max: 5 }]);
    expect(JSON.parse(jsonOf(s1, s1.findRow(B.building_id))).registered_business_employees).toBeNull();
    expect(JSON.parse(jsonOf(s1, s1.findRow(C.building_id))).registered_business_employees).toEqual({ min: 10, max: 10 });
    // Employees sort: C (10), then A (5, its inactive business), B and D unknown last by id.
    const ranked = ids(after, { sort: 'registered_business_employees' });
    expect(ranked.slice(0, 2)).toEqual([C.building_id, A.building_id]);
    expect(ranked.slice(2).sort()).toEqual(ranked.slice(2));

    // A query that captured the old view still reads it whole.
    expect(businessesOf(before, A)).toEqual(['b1', 'b2']);
    expect(catalog.removals().businessIds.has('b1')).toBe(true);
  });

  it('apply to a snapshot loaded later and to a catalog opened with them', async () => {
    const catalog = Catalog.open(root, { log: () => {}, removals: { businessIds: new Set(['b4']), registrationNumbers: new Set() } });
    expect(businessesOf(catalog.view(), C)).toEqual([]);
    await write('2026-11-22');
    expect(catalog.rescan().map((r) => r.status)).toEqual(['loaded']);
    const view = catalog.view();
    expect(view.snapshots[0].date).toBe('2026-11-22');
    expect(businessesOf(view, C)).toEqual([]);
    expect(businessesOf(view, A)).toEqual(['b1', 'b2']);
    // The whole set replaces the last one: an empty set shows everything again.
    catalog.setRemovals({ businessIds: new Set(), registrationNumbers: new Set() });
    expect(businessesOf(catalog.view(), C)).toEqual(['b4']);
  });

  it('rebuild the node summaries, so no path counts or ranks a removed business from a stale bound', async () => {
    // 640 buildings (ten leaves of the row tree), each with one active business of 100 + i
    // employees: every node is "all have an active business" until a removal.
    const dir = mkdtempSync(join(tmpdir(), 'edifice-removals-summaries-'));
    try {
      const records = Array.from({ length: 640 }, (_, i) =>
        blankRecord(`t:s${i}`, 22 + (i % 32) * 0.001, 46 + Math.floor(i / 32) * 0.001, {
          businesses: [biz(`s${i}`, `RS${i}`, `Shop ${i}`, true, 100 + i)],
        }),
      );
      const writer = new SnapshotWriter({
        country: 'XB',
        snapshotDate: '2026-11-21',
        sources: [{ name: 't', licence: 'CC0-1.0', attribution: 't', retrieved: '2026-11-21' }],
      });
      for (const r of records) writer.add(r);
      await writer.finish(join(dir, 'XB', '2026-11-21.arrow'));
      const catalog = Catalog.open(dir, { log: () => {} });
      const bbox = { minLon: 21.9, minLat: 45.9, maxLon: 22.1, maxLat: 46.1 };
      const ask = (q: Partial<BuildingsQuery>, path?: 'scan') =>
        queryBuildings(
          catalog.view(),
          {
            bbox,
            sort: 'volume',
            limit: 3,
            offset: 0,
            ...q,
          },
          path ? { path } : {},
        );
      expect(ask({ hasRegisteredBusiness: true }).total).toBe(640);

      // The largest employer (639: 739 employees) and one in the middle (300) go.
      const before = catalog.view().snapshots[0];
      catalog.setRemovals({ businessIds: new Set(['s639', 's300']), registrationNumbers: new Set() });
      // What flags and businesses bound is rebuilt; the rest is shared with the snapshot before, as a fresh build would have it.
      const after = catalog.view().snapshots[0];
      expect(after.summaries).toEqual(
        new NodeSummaries(after.tree, {
          rows: after.rows,
          num: after.num,
          enums: after.enums,
          flags: after.flags,
          business: after.business,
        }),
      );
      expect(after.summaries.employeesMax).not.toEqual(before.summaries.employeesMax);
      expect(after.summaries.flagsAll).not.toEqual(before.summaries.flagsAll);
      for (const name of ['codes', 'codeCounts', 'codeRows', 'min', 'max', 'nulls', 'floorsMax', 'roofMax'] as const)
        expect(after.summaries[name], name).toBe(before.summaries[name]);
      // The employees sort's order too: 638 down to 0 without 300, then the two left with no stated size, by building_id.
      const idsOf = (s: Snapshot, rows: Uint32Array) => Array.from(rows, (row) => s.buildingId(row));
      expect(idsOf(before, before.keyOrders.employees.subarray(0, 2))).toEqual([records[639].building_id, records[638].building_id]);
      const ranked = records
        .map((r, i) => ({ id: r.building_id, i }))
        .filter(({ i }) => i !== 639 && i !== 300)
        .reverse();
      const unknown = [records[639].building_id, records[300].building_id].sort();
      expect(idsOf(after, after.keyOrders.employees)).toEqual([...ranked.map((r) => r.id), ...unknown]);
      expect(after.keyOrders.volume_m3).toBe(before.keyOrders.volume_m3);
      for (const path of [undefined, 'scan'] as const) {
        expect(ask({ hasRegisteredBusiness: true }, path).total).toBe(638);
        expect(ask({ minRegisteredBusinessEmployees: 700 }, path).total).toBe(39); // i = 600..638
        const top = ask({ sort: 'registered_business_employees', limit: 2 }, path).rows.map((r) => r.snapshot.buildingId(r.row));
        expect(top).toEqual([records[638].building_id, records[637].building_id]);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
