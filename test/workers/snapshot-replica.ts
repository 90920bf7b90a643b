/** Worker for catalog-transfer.test.ts: rebuilds snapshots from transfers and answers queries on them. */
import { parentPort } from 'node:worker_threads';
import { fromTransfer, type SnapshotTransfer } from '../../src/catalog/transfer.ts';
import { queryBuildings } from '../../src/query/buildings.ts';
import { queryPoint } from '../../src/query/point.ts';
import type { BuildingsQuery, PointQuery } from '../../src/query/types.ts';

parentPort!.on('message', (m: { transfers: SnapshotTransfer[]; buildings: BuildingsQuery[]; points: PointQuery[]; rows: number[] }) => {
  const view = { snapshots: m.transfers.map(fromTransfer) };
  const s = view.snapshots[0];
  parentPort!.postMessage({
    buildings: m.buildings.map((q) => {
      const r = queryBuildings(view, q);
      return { ids: r.rows.map((x) => x.snapshot.buildingId(x.row)), total: r.total, capped: r.totalIsCapped };
    }),
    points: m.points.map((q) => queryPoint(view, q).rows.map((x) => x.snapshot.buildingId(x.row))),
    records: m.rows.map((row) => JSON.stringify(s.record(row))),
    units: m.rows.map((row) => JSON.stringify(s.units(row))),
    places: JSON.stringify(s.places.list()),
    // What the count walk reads to count a list filter's matches unread: lost in transfer, it would only be slower.
    codeCounts: {
      from: s.summaries.countsFrom,
      sums: Object.entries(s.summaries.codeCounts).map(([name, a]) => [name, a.length, a.reduce((x, y) => x + y, 0)]),
    },
  });
});
