/**
 * The public pages under /public (spec 2.4, 4.5, 7, 8): building and place facts, the places of
 * a country and the covered countries. No key; the same answer to everyone; `Cache-Control:
 * public` and an `ETag` tied to the snapshots served, `304` on a matching If-None-Match. 120
 * requests a minute per client address across /public (the country requests included, see
 * public-requests.ts). Errors in the flat format `{error: code}`.
 */
import { createHash } from 'node:crypto';
import type { HttpRequest, HttpResponse, TemplatedApp } from 'uWebSockets.js';
import {
  ApiError,
  CONTENT_TYPE,
  decodePathSegment,
  parseParameters,
  publicBuilding,
  publicPlace,
  type CountryEntry,
  type OperationId,
} from '../api/index.ts';
import type { CatalogView, Snapshot } from '../catalog/catalog.ts';
import type { LimitDecision } from '../ledger/index.ts';
import { findBuilding } from '../query/children.ts';
import { clientOf, finish, type HttpContext } from './context.ts';
import { refuseOtherMethods } from './methods.ts';
import { internalErrorReply, publicErrorReply, type Reply } from './reply.ts';

interface Page {
  doc: unknown;
  /** Identifies the representation: the revisions of the snapshots it was made from. */
  tag: string;
}

type PageHandler = (view: CatalogView, params: Record<string, unknown>) => Page;

/** Does If-None-Match hold this entity tag (weak comparison, RFC 9110 13.1.2)? */
export function matchesEtag(ifNoneMatch: string, etag: string): boolean {
  if (ifNoneMatch === '') return false;
  const strip = (t: string) => t.trim().replace(/^W\//, '');
  const want = strip(etag);
  return ifNoneMatch.split(',').some((t) => t.trim() === '*' || strip(t) === want);
}

function snapshotOf(view: CatalogView, country: string): Snapshot {
  const s = view.snapshots.find((x) => x.country === country);
  if (!s) throw new ApiError('not_found', `No snapshot of ${country}.`);
  return s;
}

function countryEntries(view: CatalogView): CountryEntry[] {
  return view.snapshots.map((s) => {
    const e = s.extent;
    return {
      country: s.country,
      snapshotDate: s.date,
      buildings: s.rows,
      places: s.places.size,
      bbox: e === null ? null : [e.minLon, e.minLat, e.maxLon, e.maxLat],
      sources: [...s.sources],
    };
  });
}

export function registerPublicPages(app: TemplatedApp, ctx: HttpContext): void {
  const base = `${ctx.config.basePath}/public`;
  const limiter = ctx.limiters.public;
  const cacheControl = `public, max-age=${ctx.config.publicMaxAgeS}`;

  const page =
    (op: OperationId, route: string, pathNames: readonly string[], handler: PageHandler, head: boolean) =>
    (res: HttpResponse, req: HttpRequest) => {
      const t0 = performance.now();
      const path = req.getUrl();
      const rawQuery = req.getQuery() ?? '';
      const ifNoneMatch = req.getHeader('if-none-match');
      const client = clientOf(ctx, res, req);
      const raw = pathNames.map((_, i) => req.getParameter(i) ?? '');
      const answer = (limit: LimitDecision): void => {
        let reply: Reply;
        try {
          if (!limit.ok) throw new ApiError('rate_limited', 'Too many requests from this address.', '', limit.retryAfterS);
          const view = ctx.catalog.view();
          if (view.snapshots.length === 0) throw new ApiError('unavailable', 'No snapshot is loaded yet.', '', 5);
          const pathParams: Record<string, string> = {};
          pathNames.forEach((name, i) => {
            pathParams[name] = decodePathSegment(raw[i], name);
          });
          const { doc, tag } = handler(view, parseParameters(op, rawQuery, pathParams));
          const etag = `"${tag}"`;
          const headers = { 'Cache-Control': cacheControl, ETag: etag };
          reply = matchesEtag(ifNoneMatch, etag)
            ? { status: 304, headers, body: '' }
            : { status: 200, headers: { ...headers, 'Content-Type': CONTENT_TYPE.json }, body: JSON.stringify(doc) };
        } catch (err) {
          if (!(err instanceof ApiError)) {
            ctx.log.error({ err, path, route }, 'unexpected error');
            reply = internalErrorReply('public');
          } else {
            reply = publicErrorReply(err);
          }
        }
        // To HEAD, finish sends the headers and the body's length without the body.
        finish(ctx, res, route, head ? 'HEAD' : 'GET', path, t0, reply);
      };
      const limit = limiter.take(client, ctx.now());
      if (!(limit instanceof Promise)) return answer(limit);
      // Counted in Redis: paused until decided, as a charged page is (server.ts).
      let aborted = false;
      res.onAborted(() => {
        aborted = true;
      });
      res.pause();
      ctx.inFlight.count++;
      void limit
        .then((decided) => {
          if (!aborted)
            res.cork(() => {
              res.resume();
              answer(decided);
            });
        })
        .finally(() => {
          ctx.inFlight.count--;
        });
    };

  /** GET and HEAD (the same headers, no body) on `pattern`; other methods 405. */
  const serve = (pattern: string, op: OperationId, route: string, pathNames: readonly string[], handler: PageHandler): void => {
    app.get(pattern, page(op, route, pathNames, handler, false));
    app.head(pattern, page(op, route, pathNames, handler, true));
    refuseOtherMethods(app, ctx, pattern, route, ['GET', 'HEAD'], true);
  };

  serve(`${base}/buildings/:building_id`, 'getPublicBuilding', '/public/buildings/{building_id}', ['building_id'], (view, p) => {
    const ref = findBuilding(view, p.buildingId as string);
    if (!ref) throw new ApiError('not_found', 'No such building.');
    const s = ref.snapshot;
    return { doc: publicBuilding(s.record(ref.row), { country: s.country, snapshotDate: s.date }), tag: `${s.country}.${s.revision}` };
  });

  serve(
    `${base}/places/:country/:locality`,
    'getPublicPlace',
    '/public/places/{country}/{locality}',
    ['country', 'locality'],
    (view, p) => {
      const s = snapshotOf(view, p.country as string);
      const facts = s.places.get(p.locality as string);
      if (!facts) throw new ApiError('not_found', 'No such place.');
      return { doc: publicPlace(facts, { country: s.country, snapshotDate: s.date }), tag: `${s.country}.${s.revision}` };
    },
  );

  serve(`${base}/countries/:country/places`, 'listPublicPlaces', '/public/countries/{country}/places', ['country'], (view, p) => {
    const s = snapshotOf(view, p.country as string);
    return { doc: { country: s.country, snapshotDate: s.date, data: s.places.list() }, tag: `${s.country}.${s.revision}` };
  });

  serve(`${base}/countries`, 'listCountries', '/public/countries', [], (view) => {
    const tag = createHash('sha256')
      .update(view.snapshots.map((s) => `${s.country}.${s.date}.${s.revision}`).join('|'))
      .digest('base64url')
      .slice(0, 22);
    return { doc: { data: countryEntries(view) }, tag };
  });
}
