/**
 * The HTTP edge: a uWebSockets.js app under the base path (default /v1). An authenticated
 * request runs: key → limits → parameters → query → serialise → charge (all or nothing) →
 * respond; every response after authentication carries the headers of spec section 8. On the
 * SQLite ledger all of it is synchronous but the charge of a page that costs credits, which waits
 * for the group commit of its turn (page-charges.ts): only those responses are sent later, with
 * onAborted set. A replica of a fleet (fleet-ledger.ts) awaits its admission (key, limits, quota
 * in PostgreSQL and Redis) first, with the response paused the same way, then runs the same
 * pipeline. One log line per request, never a key's secret.
 */
import type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket } from 'uWebSockets.js';
import type { Logger } from 'pino';
import {
  ApiError,
  CONTENT_TYPE,
  buildOpenApi,
  decodePathSegment,
  parseParameters,
  toOpenApi30,
  encode,
  negotiateEncoding,
  parseBuildingsQuery,
  parsePointQuery,
  parseRegisteredBusinessesQuery,
  parseUnitsQuery,
  pointPageJson,
  pointPageMsgpack,
  rankedPageJson,
  rankedPageMsgpack,
  registeredBusinessesPage,
  unitsPage,
  type ByteWriter,
  type Encoding,
  type LinkContext,
  contentTypeOf,
  pointPageGeoJson,
  rankedPageGeoJson,
  takeOutput,
  EXPORT_CONTENT_TYPE,
  exportRecords,
  parseExportQuery,
  type Output,
} from '../api/index.ts';
import { streamRecords, type RecordStream } from './export-stream.ts';
import { Catalog, type CatalogSource, type CatalogView, type CountryReport } from '../catalog/catalog.ts';
import { RankingCache } from '../query/rankings.ts';
import { PointSearch, queryPoint } from '../query/point.ts';
import { SearchState } from '../query/search-state.ts';
import { listBusinesses, listUnits } from '../query/children.ts';
import { QueryError } from '../query/types.ts';
import type { ChargeResult, Ledger } from '../ledger/index.ts';
import { admitHere, type Admission } from './admission.ts';
import type { FleetLedger } from './fleet-ledger.ts';
import { followRemovals, followRemovalsOf } from './follow-removals.ts';
import { asUnavailable } from '../ledger/errors.ts';
import type { Config } from '../config.ts';
import { fallbackRefusal, listenOn, uws, uwsImplementation } from './uws.ts';
import { listenFailure } from './port.ts';
import { Metrics } from './metrics.ts';
import { FragmentCache, type FragmentCacheMemory } from './fragment-cache.ts';
import { WriterPool } from './writer-pool.ts';
import { errorReply, internalErrorReply, jsonReply, publicErrorReply, type Reply } from './reply.ts';
import { finish as finishReply, type HttpContext } from './context.ts';
import { writeHere, writeOn, type WritePublic } from './public-writes.ts';
import { addressLimiters, type AddressLimiterTables } from './address-limits.ts';
import { PageCharges } from './page-charges.ts';
import { refuseOtherMethods } from './methods.ts';
import { registerPublicPages } from './public-pages.ts';
import { registerPublicRequests } from './public-requests.ts';
import { warmUp, type WarmUpRoute } from './warm-up.ts';
import { registerMapPage } from './map-page.ts';
import { BuildingItems } from './building-items.ts';
import { registerFeatures } from './features.ts';
import { registerDocsPage } from './docs-page.ts';
import { CorsPolicy, withCors } from './cors.ts';

export interface ServerDeps {
  config: Config;
  /** A Catalog (this thread loads the snapshots) or a replica of one (a worker thread). */
  catalog: CatalogSource;
  /** The SQLite ledger of this process; or, for a replica of a fleet, `fleet`. */
  ledger?: Ledger;
  /** PostgreSQL and Redis: the server awaits each request's admission and charge. */
  fleet?: FleetLedger;
  log: Logger;
  /** Clock of the per-address limits; default Date.now. */
  now?: () => number;
  /** Per-address limiter tables shared with the other threads of the server; default: new ones. */
  limiterTables?: AddressLimiterTables;
  /** The label of this thread's process and runtime metrics: `main` (default) or a worker's. */
  thread?: string;
  /** The open operations' writes; default: on this thread's ledger (a worker sends them to the ledger thread). */
  writePublic?: WritePublic;
  /**
   * A worker of a pool: listens beside the pool's other workers (SO_REUSEPORT) on the port the
   * pool holds (port.ts holdPort). Otherwise the server listens exclusively: a port anyone
   * listens on already is refused.
   */
  sharedPort?: boolean;
  /** How pages are charged; default: grouped by turn on this thread's ledger (a worker sends them to the ledger thread). */
  charges?: PageCharges;
  /** The store of encoded buildings the pool's workers share, and the region this thread writes; default: a store of its own. */
  sharedBuildings?: { memory: FragmentCacheMemory; region: number };
}

export interface RunningServer {
  port: number;
  implementation: 'native' | 'js-fallback';
  metrics: Metrics;
  /** Stops accepting connections; each later response closes its connection (keep-alive clients go). */
  close(): void;
  /** Ends every open connection now, answered or not (the end of a stop's grace). */
  closeConnections(): void;
  /**
   * close(), then waits up to `graceMs` for the requests in flight (bodies being read, pages
   * waiting for their charge) to be answered, then closeConnections(): the stop of a server on
   * the main thread, which cannot wait for its event loop to empty as a worker thread does.
   */
  stop(graceMs: number): Promise<void>;
}

/** What an authenticated handler found: the document, and the buildings it returns (to charge). */
export interface Answer {
  charge: readonly string[];
  /** Content-Type of the body when not that of the negotiated encoding (f=, GeoJSON). */
  contentType?: string;
  /** The body; a page of buildings is written into `out` and is a view of it. */
  render(encoding: Encoding, out: ByteWriter): Uint8Array;
  /** Instead of the body: records streamed once charged (an export); its Content-Type is `contentType`. */
  stream?: () => RecordStream;
  /** The most the answer may cost; above it the charge is refused (402) and nothing is sent. */
  maxCredits?: number;
}

export interface Request {
  rawQuery: string;
  pathParameter: string;
  view: CatalogView;
  link: LinkContext;
  /** The Accept header ('' without one). */
  accept: string;
}

export type Handler = (req: Request) => Answer;

const EMPTY = new Uint8Array(0);

/** A 401 whose Authorization header was sent but holds no single bearer token (RFC 6750: invalid_request). */
const NOT_BEARER =
  'The Authorization header holds no API key in the form Bearer <API_KEY> (one key; Basic and other schemes are not accepted).';

function bearer(header: string): string | undefined {
  // RFC 7235: the scheme is case-insensitive; anything else (cookies, Basic, no scheme) is no key.
  const m = /^bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  return m ? m[1] : undefined;
}

/** The spec 8 headers with the credits of this answer. */
function credited(headers: Record<string, string>, charged: number, remaining: number): Record<string, string> {
  return { ...headers, 'X-Credits-Charged': String(charged), 'X-Credits-Remaining': String(remaining) };
}

function engineError(err: unknown): unknown {
  // The engine refuses impossible input itself; validation normally catches it first.
  return err instanceof QueryError ? ApiError.invalidParameter(err.parameter, err.message) : err;
}

export function startServer(deps: ServerDeps): Promise<RunningServer> {
  // The package's JS fallback throws from req.getQuery() on every request, which ends the
  // process at the first request: refuse to start instead.
  if (uwsImplementation !== 'native') return Promise.reject(new Error(fallbackRefusal()));
  const { config, catalog, log, fleet } = deps;
  const ledger = deps.ledger;
  if (!ledger && !fleet) return Promise.reject(new TypeError('startServer needs a ledger or a fleet.'));
  const charges = deps.charges ?? fleet?.pageCharges() ?? new PageCharges(ledger!);
  const metrics = new Metrics(deps.thread ?? 'main');
  const cache = deps.sharedBuildings
    ? new FragmentCache(config.appUrl, deps.sharedBuildings.memory, deps.sharedBuildings.region)
    : new FragmentCache(config.appUrl, config.fragmentCacheMb * 1024 * 1024);
  const writers = new WriterPool();
  metrics.watchFragmentCache(cache);
  const rankings = new RankingCache(config.rankingCacheMb * 1024 * 1024);
  // This serving thread's searches run one at a time, each in these states (cleared as it starts).
  const search = new SearchState();
  const pointSearch = new PointSearch();
  metrics.watchRankingCache(rankings);
  const base = config.basePath;
  // Known once listening (the port may be 0 = any free one): links.next and the OpenAPI servers.
  let baseUrl = config.baseUrl ?? '';
  let openapi = Buffer.alloc(0);
  let openapi30 = Buffer.alloc(0);
  let closing = false;
  const app: TemplatedApp = uws.App();

  metrics.watchSnapshots(() => catalog.report());
  if (fleet) metrics.watchFleet(() => ({ limitFallbacks: fleet.limits.fallbacks(), answeredAlone: fleet.answeredAlone }));

  const ctx: HttpContext = {
    config,
    catalog,
    publicReads: ledger ?? fleet!.engine,
    log,
    metrics,
    baseUrl: () => baseUrl,
    now: deps.now ?? Date.now,
    limiters: fleet?.limits.addresses ?? addressLimiters(deps.limiterTables),
    closing: () => closing,
    inFlight: { count: 0 },
    writePublic: deps.writePublic ?? (ledger ? writeHere(ledger) : writeOn(fleet!.engine)),
  };
  const { inFlight } = ctx;
  // Before any route: every route answers CORS (cors.ts).
  withCors(app, ctx, new CorsPolicy(base, config.corsOrigins));
  const finish = (
    res: HttpResponse,
    route: string,
    method: string,
    path: string,
    t0: number,
    reply: Reply,
    extra: Record<string, unknown> = {},
  ) => finishReply(ctx, res, route, method, path, t0, reply, extra);

  // A server that owns its catalog applies approved removals before the first request and within
  // removalsPollMs of each approval; a worker's replica receives them from the main thread.
  const stopFollowing = !(catalog instanceof Catalog)
    ? () => {}
    : ledger
      ? followRemovals(ledger, catalog, config.removalsPollMs, log)
      : followRemovalsOf(fleet!.engine, catalog, config.removalsPollMs, log);

  /**
   * A refusal of the ledger's (503 when it cannot serve now) or of anything unexpected (500,
   * logged); `headers`: those of spec section 8, when the request got as far as its limits.
   */
  const failure = (err: unknown, encoding: Encoding, path: string, route: string, headers: Record<string, string> = {}): Reply => {
    const unavailable = asUnavailable(err);
    if (unavailable) {
      return errorReply(
        new ApiError('unavailable', 'The service cannot reach its ledger right now; retry shortly.', '', unavailable.retryAfterS),
        encoding,
        headers,
      );
    }
    log.error({ err, path, route }, 'unexpected error');
    return internalErrorReply(encoding, headers);
  };

  /**
   * The section 8 headers of an answer that charges nothing (a refusal, a failed charge): the
   * balance when it can be read, so a ledger that cannot be read does not replace the refusal.
   * On PostgreSQL the balance is awaited (null: the headers follow).
   */
  const withBalance = (headers: Record<string, string>, balance: number | null): Record<string, string> =>
    balance === null ? { ...headers, 'X-Credits-Charged': '0' } : credited(headers, 0, balance);
  const uncharged = (headers: Record<string, string>, workspaceId: string): Record<string, string> | Promise<Record<string, string>> => {
    if (fleet) return fleet.balance(workspaceId).then((balance) => withBalance(headers, balance));
    try {
      return credited(headers, 0, ledger!.balance(workspaceId));
    } catch {
      return withBalance(headers, null);
    }
  };

  /** The authenticated routes' handlers, which the warm-up runs before listening. */
  const handlers = new Map<WarmUpRoute, Handler>();
  const authenticated = (route: WarmUpRoute, handler: Handler) => {
    handlers.set(route, handler);
    return serve(route, handler);
  };

  /**
   * key → limits → parameters → query → render → charge → respond. A page that costs credits is
   * charged with the others of the same turn of the event loop (group commit) and answered once
   * that has committed: nothing is sent that was not durably charged. A replica of a fleet awaits
   * the admission first; everything the request needs is read from it before.
   */
  const serve = (route: string, handler: Handler, jsonOnly?: boolean) => (res: HttpResponse, req: HttpRequest) => {
    const t0 = performance.now();
    const path = req.getUrl();
    const rawQuery = req.getQuery() ?? '';
    const pathParameter = route.includes('{') ? (req.getParameter(0) ?? '') : '';
    const accept = req.getHeader('accept');
    const encoding = jsonOnly ? 'json' : negotiateEncoding(accept || undefined);
    const authorization = req.getHeader('authorization');
    const token = bearer(authorization);
    let keyPrefix: string | undefined;
    let aborted = false;
    // Answered later than this call: onAborted set, the connection paused, counted in flight.
    let waiting = false;
    const wait = (): void => {
      if (waiting) return;
      waiting = true;
      inFlight.count++;
      res.onAborted(() => {
        aborted = true;
      });
      // Nothing more is read from the connection until this answer is written: uWS closes a
      // connection on a request read behind one not yet answered (no async pipelining), and a
      // page charged by then would be paid for and never received. A request already read
      // with this one (written together) makes chargeSoon drop the page instead.
      res.pause();
    };
    /** Ends the wait; false when the client went meanwhile (then nothing more is written). */
    const waited = (): boolean => {
      if (!waiting) return true;
      waiting = false;
      inFlight.count--;
      if (aborted) return false;
      res.resume(); // before the answer: the response is not valid after end()
      return true;
    };
    const respond = (reply: Reply, charged = 0) => {
      if (!waited()) return;
      finish(res, route, 'GET', path, t0, reply, { credits: charged, key: keyPrefix });
    };
    /** A reply that charges nothing, with the workspace's balance (awaited on PostgreSQL). */
    const refuseWith = (make: (headers: Record<string, string>) => Reply, headers: Record<string, string>, workspaceId: string) => {
      const withCredits = uncharged(headers, workspaceId);
      if (!(withCredits instanceof Promise)) return respond(make(withCredits));
      wait();
      void withCredits.then((h) => respond(make(h)));
    };
    const refuse = (error: ApiError, headers: Record<string, string>, workspaceId: string) =>
      refuseWith((h) => errorReply(error, encoding, h), headers, workspaceId);

    const admitted = (admission: Admission): void => {
      if (!admission.ok && admission.status === 401) {
        return respond(errorReply(new ApiError(admission.code, admission.message), encoding, { 'WWW-Authenticate': admission.challenge }));
      }
      keyPrefix = admission.keyPrefix;
      if (!admission.ok) {
        return refuse(
          new ApiError(admission.code, admission.message, '', admission.retryAfterS || undefined),
          admission.headers,
          admission.workspaceId,
        );
      }
      const { headers, workspaceId } = admission;
      let answer: Answer;
      let body: Uint8Array;
      const out = writers.take();
      try {
        const view = catalog.view();
        if (view.snapshots.length === 0) throw new ApiError('unavailable', 'No country snapshot is loaded yet; retry shortly.', '', 5);
        answer = handler({ rawQuery, pathParameter, view, link: { baseUrl, rawQuery }, accept });
        body = answer.render(encoding, out);
      } catch (err) {
        writers.give(out);
        const e = engineError(err);
        if (!(e instanceof ApiError)) throw e;
        return refuse(e, headers, workspaceId);
      }
      const asked = performance.now();
      let inCall = true;
      let called = false;
      const charged = (result: ChargeResult | Error): void => {
        called = true;
        if (!inCall) metrics.chargeWait.observe((performance.now() - asked) / 1000);
        // The body is a view of `out`, which goes back to the pool once it is sent: uWS copies what it cannot send at once.
        if (!waited()) return writers.give(out);
        if (result instanceof Error) refuseWith((h) => failure(result, encoding, path, route, h), headers, workspaceId);
        else if (!result.ok)
          respond(errorReply(new ApiError('insufficient_credits', result.message), encoding, credited(headers, 0, result.remaining)));
        else if (answer.stream) {
          metrics.credits.inc(result.charged);
          writers.give(out);
          inFlight.count++;
          const streamHeaders = { ...credited(headers, result.charged, result.remaining), 'Content-Type': answer.contentType! };
          streamRecords(res, '200 OK', streamHeaders, answer.stream(), closing, (completed, bytes) => {
            inFlight.count--;
            const seconds = (performance.now() - t0) / 1000;
            metrics.observe(route, 200, seconds);
            log.info(
              {
                method: 'GET',
                path,
                route,
                status: 200,
                ms: Math.round(seconds * 1e4) / 10,
                credits: result.charged,
                key: keyPrefix,
                bytes,
                completed,
              },
              'request',
            );
          });
          return;
        } else {
          metrics.credits.inc(result.charged);
          respond(
            {
              status: 200,
              headers: {
                ...credited(headers, result.charged, result.remaining),
                'Content-Type': answer.contentType ?? CONTENT_TYPE[encoding],
              },
              body,
            },
            result.charged,
          );
        }
        writers.give(out);
      };
      let settled: boolean;
      try {
        settled = charges.chargeSoon(workspaceId, admission.keyId, answer.charge, route, charged, () => aborted, answer.maxCredits);
      } catch (err) {
        if (called) throw err; // from answering, not from the ledger
        // Its free check read the ledger, and could not: nothing charged, and the limits' headers.
        writers.give(out);
        return refuseWith((h) => failure(err, encoding, path, route, h), headers, workspaceId);
      } finally {
        inCall = false;
      }
      if (!settled) wait();
    };

    try {
      if (token === undefined && authorization !== '') {
        return respond(
          errorReply(new ApiError('unauthorized', NOT_BEARER), encoding, { 'WWW-Authenticate': 'Bearer error="invalid_request"' }),
        );
      }
      if (!fleet) return admitted(admitHere(ledger!, token));
      wait();
      fleet.admit(token).then(
        (admission) => {
          if (aborted) return waited();
          try {
            res.cork(() => admitted(admission));
          } catch (err) {
            respond(failure(err, encoding, path, route));
          }
        },
        (err: unknown) => respond(failure(err, encoding, path, route)),
      );
    } catch (err) {
      respond(failure(err, encoding, path, route));
    }
  };

  // f=, geometry= and fields= (output.ts) change how a page is written, never which buildings it holds or what it costs.
  const items = new BuildingItems(cache, config.appUrl);

  app.get(
    `${base}/buildings`,
    authenticated('/buildings', ({ rawQuery, view, link, accept }) => {
      const q = parseBuildingsQuery(rawQuery);
      const output = takeOutput(q, accept);
      const result = rankings.query(view, q, search);
      const info = { total: result.total, totalIsCapped: result.totalIsCapped, limit: q.limit, offset: q.offset, sort: q.sort };
      return {
        charge: result.rows.map((r) => r.snapshot.buildingId(r.row)),
        contentType: output.format && contentTypeOf(output.format),
        render: (encoding, out) => {
          const page = items.of(result.rows, encoding, output, q.registeredBusinessTurnoverCurrency);
          const format = output.format ?? encoding;
          if (format === 'geojson') return rankedPageGeoJson(page, info, link, out);
          return format === 'json' ? rankedPageJson(page, info, link, out) : rankedPageMsgpack(page, info, link, out);
        },
      };
    }),
  );

  // The whole ranking of a GET /buildings query in one streamed answer, charged before its first byte.
  app.get(
    `${base}/buildings/export`,
    serve('/buildings/export', ({ rawQuery, view, accept }) => {
      const e = parseExportQuery(rawQuery, accept);
      const result = rankings.query(view, e.query, search);
      const rows = result.rows;
      const output: Output = { format: e.format === 'geojsonseq' ? 'geojson' : 'json', geometry: e.geometry, fields: e.fields };
      return {
        charge: rows.map((r) => r.snapshot.buildingId(r.row)),
        maxCredits: e.maxCredits,
        contentType: EXPORT_CONTENT_TYPE[e.format],
        render: () => EMPTY,
        stream: () => exportRecords(items.of(rows, 'json', output, e.query.registeredBusinessTurnoverCurrency), e),
      };
    }),
  );

  app.get(
    `${base}/buildings/at`,
    authenticated('/buildings/at', ({ rawQuery, view, accept }) => {
      const q = parsePointQuery(rawQuery);
      const output = takeOutput(q, accept);
      const { rows } = queryPoint(view, q, pointSearch);
      return {
        charge: rows.map((r) => r.snapshot.buildingId(r.row)),
        contentType: output.format && contentTypeOf(output.format),
        render: (encoding, out) => {
          const page = items.of(rows, encoding, output);
          const format = output.format ?? encoding;
          if (format === 'geojson') return pointPageGeoJson(page, out);
          return format === 'json' ? pointPageJson(page, out) : pointPageMsgpack(page, out);
        },
      };
    }),
  );

  app.get(
    `${base}/buildings/:building_id/units`,
    authenticated('/buildings/{building_id}/units', ({ rawQuery, pathParameter, view, link }) => {
      const q = parseUnitsQuery(decodePathSegment(pathParameter, 'building_id'), rawQuery);
      const page = listUnits(view, q.buildingId, q.limit, q.offset);
      if (!page) throw ApiError.unknownBuilding(q.buildingId);
      return { charge: [q.buildingId], render: (encoding) => encode(unitsPage(page.units, page.total, q, link), encoding) };
    }),
  );

  app.get(
    `${base}/buildings/:building_id/registered-businesses`,
    authenticated('/buildings/{building_id}/registered-businesses', ({ rawQuery, pathParameter, view, link }) => {
      const q = parseRegisteredBusinessesQuery(decodePathSegment(pathParameter, 'building_id'), rawQuery);
      const page = listBusinesses(view, q.buildingId, q.limit, q.offset);
      if (!page) throw ApiError.unknownBuilding(q.buildingId);
      return {
        charge: [q.buildingId],
        render: (encoding) => encode(registeredBusinessesPage(page.businesses, page.total, q, link), encoding),
      };
    }),
  );

  // The keyless documents answer HEAD as GET without the body (RFC 9110 9.3.2), as the public pages do.
  const getAndHead = (pattern: string, answer: (res: HttpResponse, req: HttpRequest, method: 'GET' | 'HEAD') => void): void => {
    app.get(pattern, (res, req) => answer(res, req, 'GET'));
    app.head(pattern, (res, req) => answer(res, req, 'HEAD'));
  };

  getAndHead(`${base}/openapi.json`, (res, req, method) => {
    const t0 = performance.now();
    const url = req.getUrl();
    let reply: Reply;
    try {
      const { version } = parseParameters('getOpenApi', req.getQuery() ?? '') as { version: '3.1' | '3.0' };
      const body = version === '3.0' ? openapi30 : openapi;
      reply = { status: 200, headers: { 'Content-Type': CONTENT_TYPE.json, 'Cache-Control': 'public, max-age=300' }, body };
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      reply = errorReply(err, 'json');
    }
    finish(res, '/openapi.json', method, url, t0, reply);
  });

  getAndHead('/healthz', (res, req, method) => {
    finish(res, '/healthz', method, req.getUrl(), performance.now(), jsonReply(200, { status: 'alive' }));
  });

  /**
   * Ready: snapshots loaded and the ledger open. A replica of a fleet stays ready while PostgreSQL
   * is away (the body says so): its siblings could not do better, and it answers what it can
   * (503 unavailable with Retry-After for the rest) rather than the proxy's bare 503.
   */
  const readiness = (snapshots: CountryReport[], ledgerOpen: boolean): Reply => {
    const ready = snapshots.length > 0 && (ledgerOpen || fleet !== undefined);
    return jsonReply(
      ready ? 200 : 503,
      {
        status: ready ? 'ready' : 'unavailable',
        ledger: ledgerOpen ? 'open' : 'unreachable',
        snapshots: snapshots.map((s) => ({ country: s.country, date: s.date, buildings: s.buildings })),
      },
      ready ? {} : { 'Retry-After': '5' },
    );
  };
  getAndHead('/readyz', (res, req, method) => {
    const t0 = performance.now();
    const path = req.getUrl();
    const snapshots = catalog.report();
    if (fleet) {
      let aborted = false;
      res.onAborted(() => {
        aborted = true;
      });
      inFlight.count++;
      void fleet.reachable().then((open) => {
        inFlight.count--;
        if (!aborted) finish(res, '/readyz', method, path, t0, readiness(snapshots, open));
      });
      return;
    }
    let ledgerOpen: boolean;
    try {
      ledger!.ping();
      ledgerOpen = charges.ready();
    } catch {
      ledgerOpen = false;
    }
    finish(res, '/readyz', method, path, t0, readiness(snapshots, ledgerOpen));
  });

  registerPublicPages(app, ctx);
  registerPublicRequests(app, ctx);
  registerFeatures(app, ctx, {
    serve: (route, handler) => serve(route, handler, true),
    items,
    rank: (v, q) => rankings.query(v, q, search),
    now: ctx.now,
  });
  registerDocsPage(app, ctx);
  registerMapPage(app, ctx);
  for (const [pattern, route] of [
    [`${base}/buildings`, '/buildings'],
    [`${base}/buildings/at`, '/buildings/at'],
    [`${base}/buildings/export`, '/buildings/export'],
    [`${base}/buildings/:building_id/units`, '/buildings/{building_id}/units'],
    [`${base}/buildings/:building_id/registered-businesses`, '/buildings/{building_id}/registered-businesses'],
  ] as const)
    refuseOtherMethods(app, ctx, pattern, route, ['GET'], false);
  for (const [pattern, route] of [
    [`${base}/openapi.json`, '/openapi.json'],
    ['/healthz', '/healthz'],
    ['/readyz', '/readyz'],
  ] as const) {
    refuseOtherMethods(app, ctx, pattern, route, ['GET', 'HEAD'], false);
  }

  // `/public/*` does not match `/public` itself, which is under /public too.
  for (const pattern of [`${base}/public`, `${base}/public/*`]) {
    app.any(pattern, (res, req) => {
      finish(
        res,
        'unknown',
        req.getMethod().toUpperCase(),
        req.getUrl(),
        performance.now(),
        publicErrorReply(new ApiError('not_found', 'No such page.')),
      );
    });
  }

  app.any('/*', (res, req) => {
    const t0 = performance.now();
    const method = req.getMethod().toUpperCase();
    const path = req.getUrl();
    const shown = path.length > 200 ? `${path.slice(0, 200)}…` : path; // not a huge path echoed back
    finish(
      res,
      'unknown',
      method,
      path,
      t0,
      jsonReply(404, { error: { code: 'not_found', message: `No endpoint ${method} ${shown}.`, parameter: '' } }),
    );
  });

  // Before the port opens: the first callers after a start would otherwise wait for V8 to compile the hot paths (warm-up.ts).
  const view = catalog.view();
  const warmed = warmUp(view, config.warmUpRequests, (route, rawQuery, pathParameter, encoding) => {
    const out = writers.take();
    try {
      handlers.get(route)!({ rawQuery, pathParameter, view, link: { baseUrl, rawQuery }, accept: '' }).render(encoding, out);
    } finally {
      writers.give(out);
    }
  });
  // What callers ask for starts from empty caches, and /metrics counts only their lookups.
  rankings.clear();
  cache.clear();
  if (warmed.requests > 0) (warmed.failed > 0 ? log.warn : log.info).call(log, warmed, 'warmed up before listening');

  return new Promise((resolve, reject) => {
    listenOn(app, config.host, config.port, !deps.sharedPort, (socket: us_listen_socket | false) => {
      if (!socket) {
        void listenFailure(config.host, config.port).then(reject);
        return;
      }
      const port = uws.us_socket_local_port(socket);
      baseUrl = config.baseUrl ?? `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}${base}`;
      const doc = buildOpenApi({ baseUrl });
      openapi = Buffer.from(JSON.stringify(doc));
      openapi30 = Buffer.from(JSON.stringify(toOpenApi30(doc)));
      const close = () => {
        if (closing) return;
        closing = true;
        stopFollowing();
        uws.us_listen_socket_close(socket);
      };
      // App.close() is in the native module but missing from the package's typings.
      const closeConnections = () => (app as TemplatedApp & { close(): void }).close();
      resolve({
        port,
        implementation: uwsImplementation,
        metrics,
        close,
        closeConnections,
        async stop(graceMs) {
          close();
          const until = performance.now() + graceMs;
          while (inFlight.count > 0 && performance.now() < until) await new Promise((r) => setTimeout(r, 10));
          closeConnections();
        },
      });
    });
  });
}
