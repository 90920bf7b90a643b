/**
 * The baseline for `bench:http`: a plain `node:http` server doing Edifice's query work the
 * straightforward way. Same validators (`src/api`), same engine (`src/query`), each building
 * serialised to an object (`serializeBuilding`) and the envelope through `JSON.stringify`; no
 * key, no ledger, no cache, no ETag, no log. Public building and place pages are served the same
 * way (`publicBuilding`, `publicPlace`, `JSON.stringify`); other paths answer 404.
 * Run as `node --import tsx bench/http/node-server.ts <snapshots dir> [port]`; prints `listening <port>`.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  ApiError,
  errorBody,
  parseBuildingsQuery,
  parsePointQuery,
  pointPage,
  publicBuilding,
  publicPlace,
  rankedPage,
  serializeBuilding,
} from '../../src/api/index.ts';
import { findBuilding } from '../../src/query/children.ts';
import { Catalog } from '../../src/catalog/catalog.ts';
import { queryBuildings, type RowRef } from '../../src/query/buildings.ts';
import { queryPoint } from '../../src/query/point.ts';
import { QueryError } from '../../src/query/types.ts';

const APP_URL = 'https://app.edifice.example';
const catalog = Catalog.open(process.argv[2] ?? './snapshots');
// Measured as it serves for good: with its cold blob, not reading cold fields from the Arrow file.
await catalog.whenEncoded();
let baseUrl = '';

const buildings = (rows: readonly RowRef[]) =>
  rows.map((r) => serializeBuilding(r.snapshot.record(r.row), { country: r.snapshot.country, appUrl: APP_URL }));

function reply(res: ServerResponse, status: number, doc: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(doc));
}

const server = createServer((req, res) => {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const rawQuery = q < 0 ? '' : url.slice(q + 1);
  try {
    const view = catalog.view();
    if (path === '/v1/buildings') {
      const query = parseBuildingsQuery(rawQuery);
      const result = queryBuildings(view, query);
      const info = { total: result.total, totalIsCapped: result.totalIsCapped, limit: query.limit, offset: query.offset, sort: query.sort };
      reply(res, 200, rankedPage(buildings(result.rows), info, { baseUrl, rawQuery }));
    } else if (path === '/v1/buildings/at') {
      reply(res, 200, pointPage(buildings(queryPoint(view, parsePointQuery(rawQuery)).rows)));
    } else if (path.startsWith('/v1/public/buildings/')) {
      const ref = findBuilding(view, decodeURIComponent(path.slice('/v1/public/buildings/'.length)));
      if (ref)
        reply(res, 200, publicBuilding(ref.snapshot.record(ref.row), { country: ref.snapshot.country, snapshotDate: ref.snapshot.date }));
      else reply(res, 404, { error: 'not_found' });
    } else if (path.startsWith('/v1/public/places/')) {
      const [country, locality] = path.slice('/v1/public/places/'.length).split('/').map(decodeURIComponent);
      const s = view.snapshots.find((x) => x.country === country);
      const facts = s?.places.get(locality);
      if (s && facts) reply(res, 200, publicPlace(facts, { country: s.country, snapshotDate: s.date }));
      else reply(res, 404, { error: 'not_found' });
    } else if (path === '/v1/public/countries') {
      reply(res, 200, { data: view.snapshots.map((s) => ({ country: s.country, snapshotDate: s.date, buildings: s.rows })) });
    } else {
      reply(res, 404, { error: { code: 'not_found', message: `No endpoint GET ${path}.`, parameter: '' } });
    }
  } catch (err) {
    const e = err instanceof QueryError ? ApiError.invalidParameter(err.parameter, err.message) : err;
    if (!(e instanceof ApiError)) throw e;
    reply(res, e.status, errorBody(e));
  }
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.argv[3] ?? 0), '127.0.0.1', () => {
  const port = (server.address() as AddressInfo).port;
  baseUrl = `http://127.0.0.1:${port}/v1`;
  process.stdout.write(`listening ${port}\n`);
});
process.once('SIGTERM', () => process.exit(0));
