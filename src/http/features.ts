/**
 * The routes of OGC API – Features (`api/oapif.ts`): the landing page at the base path, the
 * conformance and collection documents without a key, and the items through the server's
 * authenticated path (`serve`): key, limits, the same charge as every page.
 */
import type { HttpRequest, HttpResponse, TemplatedApp } from 'uWebSockets.js';
import {
  ApiError,
  COLLECTION_ID,
  collection,
  collections,
  conformance,
  decodePathSegment,
  featureCollectionJson,
  FEATURE_ROUTE,
  GEOJSON_CONTENT_TYPE,
  ITEMS_PATH,
  itemsTail,
  landingPage,
  parseFeatureQuery,
  parseItemsQuery,
  unknownCollection,
  type Output,
} from '../api/index.ts';
import type { BuildingsResult } from '../query/buildings.ts';
import { MAX_WINDOW, type BBox, type BuildingsQuery } from '../query/types.ts';
import type { CatalogView } from '../catalog/catalog.ts';
import { findBuilding } from '../query/children.ts';
import { listStored } from '../query/stored.ts';
import type { BuildingItems } from './building-items.ts';
import { finish, type HttpContext } from './context.ts';
import { refuseOtherMethods } from './methods.ts';
import { errorReply, jsonReply } from './reply.ts';
import type { Handler } from './server.ts';

export interface FeatureRoutes {
  /**
   * The server's authenticated path: key → limits → handler → charge → answer. Its errors are
   * JSON whatever the Accept header asks: these routes answer nothing else.
   */
  serve(route: string, handler: Handler): (res: HttpResponse, req: HttpRequest) => void;
  items: BuildingItems;
  /** GET /buildings' ranking (through its cache: a client walking the pages ranks about log2(pages) times). */
  rank(view: CatalogView, query: BuildingsQuery): BuildingsResult;
  /** The clock of timeStamp. */
  now(): number;
}

/** The union of the snapshots' extents, and their buildings. */
function extentOf(view: CatalogView): { extent: BBox | null; buildings: number } {
  let extent: BBox | null = null;
  let buildings = 0;
  for (const s of view.snapshots) {
    buildings += s.rows;
    const e = s.extent;
    if (!e) continue;
    extent =
      extent === null
        ? { ...e }
        : {
            minLon: Math.min(extent.minLon, e.minLon),
            minLat: Math.min(extent.minLat, e.minLat),
            maxLon: Math.max(extent.maxLon, e.maxLon),
            maxLat: Math.max(extent.maxLat, e.maxLat),
          };
  }
  return { extent, buildings };
}

export function registerFeatures(app: TemplatedApp, ctx: HttpContext, routes: FeatureRoutes): void {
  const base = ctx.config.basePath;
  const { items } = routes;

  // The documents: no key, JSON, HEAD as GET without the body.
  const document = (pattern: string, route: string, doc: (param: string) => unknown) => {
    for (const method of ['GET', 'HEAD'] as const) {
      const register = method === 'GET' ? app.get.bind(app) : app.head.bind(app);
      register(pattern, (res, req) => {
        const t0 = performance.now();
        const param = route.includes('{') ? (req.getParameter(0) ?? '') : '';
        let reply;
        try {
          reply = jsonReply(200, doc(param), { 'Cache-Control': 'no-cache' });
        } catch (err) {
          if (!(err instanceof ApiError)) throw err;
          reply = errorReply(err, 'json');
        }
        finish(ctx, res, route, method, req.getUrl(), t0, reply);
      });
    }
    refuseOtherMethods(app, ctx, pattern, route, ['GET', 'HEAD'], false);
  };
  const summary = () => extentOf(ctx.catalog.view());
  document(base, '/', () => landingPage(ctx.baseUrl()));
  document(`${base}/`, '/', () => landingPage(ctx.baseUrl()));
  document(`${base}/conformance`, '/conformance', () => conformance());
  document(`${base}/collections`, '/collections', () => {
    const s = summary();
    return collections(ctx.baseUrl(), s.extent, s.buildings);
  });
  document(`${base}/collections/:collectionId`, '/collections/{collectionId}', (id) => {
    if (decodePathSegment(id, 'collectionId') !== COLLECTION_ID) throw unknownCollection(id);
    const s = summary();
    return collection(ctx.baseUrl(), s.extent, s.buildings);
  });
  // Items of any other collection: 404 before a key is asked for.
  document(`${base}/collections/:collectionId/items`, '/collections/{collectionId}/items', (id) => {
    throw unknownCollection(id);
  });
  document(`${base}/collections/:collectionId/items/:featureId`, '/collections/{collectionId}/items/{featureId}', (id) => {
    throw unknownCollection(id);
  });

  const features = (rows: Parameters<BuildingItems['of']>[0], output: Output) => items.of(rows, 'json', output);

  app.get(
    `${base}${ITEMS_PATH}`,
    routes.serve(ITEMS_PATH, ({ rawQuery, view, link }) => {
      const q = parseItemsQuery(rawQuery);
      let rows;
      let matched: number | null;
      let next: number | null;
      if (q.kind === 'stored') {
        const listed = listStored(view, q.offset, q.limit);
        rows = listed.rows;
        matched = listed.total;
        next = q.offset + rows.length < listed.total ? q.offset + rows.length : null;
      } else {
        const { query } = q;
        const result = routes.rank(view, query);
        rows = result.rows;
        matched = result.totalIsCapped ? null : result.total;
        const end = query.offset + rows.length;
        next = rows.length === query.limit && end < result.total && end < MAX_WINDOW ? end : null;
      }
      const now = new Date(routes.now());
      return {
        charge: rows.map((r) => r.snapshot.buildingId(r.row)),
        contentType: GEOJSON_CONTENT_TYPE,
        render: (_encoding, out) => featureCollectionJson(features(rows, q.output), itemsTail(link, rows.length, matched, next, now), out),
      };
    }),
  );

  app.get(
    `${base}${ITEMS_PATH}/:featureId`,
    routes.serve(FEATURE_ROUTE, ({ rawQuery, pathParameter, view, link }) => {
      const id = decodePathSegment(pathParameter, 'featureId').toLowerCase();
      parseFeatureQuery(rawQuery);
      const found = findBuilding(view, id);
      if (!found) throw new ApiError('not_found', `No building has the id ${id}.`, 'featureId');
      const b = link.baseUrl.replace(/\/$/, '');
      const links = JSON.stringify([
        { href: `${b}${ITEMS_PATH}/${id}`, rel: 'self', type: GEOJSON_CONTENT_TYPE },
        { href: `${b}/collections/${COLLECTION_ID}`, rel: 'collection', type: 'application/json' },
      ]);
      const props = items.of([found], 'json', { format: 'geojson', geometry: 'footprint', fields: null });
      return {
        charge: [found.snapshot.buildingId(found.row)],
        contentType: GEOJSON_CONTENT_TYPE,
        render: (_encoding, out) => {
          out.reset();
          props.write(0, out);
          out.length--; // the Feature's closing brace: its links go before it
          out.text(`,"links":${links}}`);
          return out.view();
        },
      };
    }),
  );

  refuseOtherMethods(app, ctx, `${base}${ITEMS_PATH}`, ITEMS_PATH, ['GET'], false);
  refuseOtherMethods(app, ctx, `${base}${ITEMS_PATH}/:featureId`, FEATURE_ROUTE, ['GET'], false);
}
