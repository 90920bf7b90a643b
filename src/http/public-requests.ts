/**
 * The operations anyone may call without a key that are not cacheable pages: country requests
 * (under /public, so also within its 120 a minute), removal requests, building report checkout,
 * reading a report with its token, and the payment provider's signed webhook. Errors use the
 * structured format `{error: {code, message, parameter}}`, parameter naming the field at fault.
 *
 * Limits per client address: address-limits.ts. The webhook is not limited by address: its
 * signature gates it.
 * Every write is one ledger transaction, so a refused request stores nothing.
 */
import type { HttpRequest, HttpResponse, TemplatedApp } from 'uWebSockets.js';
import {
  ApiError,
  MAX_BODY_BYTES,
  decodePathSegment,
  freezeReport,
  parseBody,
  parseParameters,
  renderReport,
  tooLarge,
} from '../api/index.ts';
import type { Snapshot } from '../catalog/catalog.ts';
import { asUnavailable } from '../ledger/errors.ts';
import { WindowLimiter, paymentProvider, verifyWebhook, type ReportOrder } from '../ledger/index.ts';
import { ABANDONED } from './page-charges.ts';
import { isoTime } from '../ledger/clock.ts';
import { findBuilding } from '../query/children.ts';
import { readBody } from './body.ts';
import { clientOf, finish, type HttpContext } from './context.ts';
import { refuseOtherMethods } from './methods.ts';
import { errorReply, internalErrorReply, jsonReply, type Reply } from './reply.ts';

const MINUTE_MS = 60_000;

/** What a handler sees of its request. */
interface Incoming {
  client: string;
  rawQuery: string;
  path: Record<string, string>;
  headers: Record<string, string>;
  body: Buffer | null;
  /** The connection closed before the answer: a write not yet sent is not sent (ctx.writePublic). */
  abandoned(): boolean;
}

interface Answered {
  status: 200 | 201 | 202;
  doc: unknown;
}

/** Reads answer at once; writes, through ctx.writePublic, once the write is done. */
type Handler = (request: Incoming) => Answered | Promise<Answered>;

function orderDoc(o: ReportOrder): Record<string, unknown> {
  return {
    order_id: o.id,
    status: o.status,
    building_id: o.buildingId,
    country: o.country,
    snapshot_date: o.snapshotDate,
    price: { amount_minor: o.priceMinor, currency: o.priceCurrency },
    created_at: isoTime(o.createdAt),
    paid_at: o.paidAt === null ? null : isoTime(o.paidAt),
  };
}

function building(ctx: HttpContext, buildingId: string): { snapshot: Snapshot; row: number } {
  const view = ctx.catalog.view();
  if (view.snapshots.length === 0) throw new ApiError('unavailable', 'No snapshot is loaded yet; retry shortly.', '', 5);
  const ref = findBuilding(view, buildingId);
  if (!ref) throw ApiError.unknownBuilding(buildingId);
  return ref;
}

export function registerPublicRequests(app: TemplatedApp, ctx: HttpContext): void {
  const base = ctx.config.basePath;
  const limiters = ctx.limiters;
  const provider = paymentProvider(ctx.config.paymentProvider);

  /** Runs the checks every open operation shares, then the handler; answers in the structured format. */
  const run = (
    route: string,
    method: string,
    path: string,
    t0: number,
    res: HttpResponse,
    checks: readonly WindowLimiter[],
    incoming: Omit<Incoming, 'abandoned'>,
    handler: Handler,
  ): void => {
    const answer = (a: Answered): Reply => jsonReply(a.status, a.doc, { 'Cache-Control': 'no-store' });
    // Before the handler, so that a write it starts knows (a POST's body is read: this replaces readBody's).
    let aborted = false;
    res.onAborted(() => {
      aborted = true;
    });
    const request: Incoming = { ...incoming, abandoned: () => aborted };
    let reply: Reply;
    try {
      const now = ctx.now();
      for (const limiter of checks) {
        const d = limiter.take(request.client, now);
        if (!d.ok) {
          throw new ApiError(
            'rate_limited',
            `More than ${limiter.limit} requests in ${limiter.periodMs / MINUTE_MS} minutes from this address; retry in ${d.retryAfterS} s.`,
            '',
            d.retryAfterS,
          );
        }
      }
      const answered = handler(request);
      if (answered instanceof Promise) {
        // Paused, as a charged page's connection is (server.ts): a request pipelined behind is
        // read once this is answered.
        res.pause();
        ctx.inFlight.count++;
        answered
          .then(answer, (err: unknown) => (err === ABANDONED ? null : refusal(ctx, err, route, path)))
          .then((later) => {
            if (later === null || aborted) return;
            res.cork(() => {
              res.resume();
              finish(ctx, res, route, method, path, t0, later);
            });
          })
          .catch((err: unknown) => ctx.log.error({ err, path, route }, 'answer failed'))
          .finally(() => {
            ctx.inFlight.count--;
          });
        return;
      }
      reply = answer(answered);
    } catch (err) {
      reply = refusal(ctx, err, route, path);
    }
    finish(ctx, res, route, method, path, t0, reply);
  };

  const get =
    (route: string, pathNames: readonly string[], checks: readonly WindowLimiter[], handler: Handler) =>
    (res: HttpResponse, req: HttpRequest) => {
      const t0 = performance.now();
      const path: Record<string, string> = {};
      pathNames.forEach((name, i) => {
        path[name] = req.getParameter(i) ?? '';
      });
      run(
        route,
        'GET',
        req.getUrl(),
        t0,
        res,
        checks,
        { client: clientOf(ctx, res, req), rawQuery: req.getQuery() ?? '', path, headers: {}, body: null },
        handler,
      );
    };

  const post =
    (route: string, headerNames: readonly string[], checks: readonly WindowLimiter[], handler: Handler) =>
    (res: HttpResponse, req: HttpRequest) => {
      const t0 = performance.now();
      const url = req.getUrl();
      const headers: Record<string, string> = { 'content-type': req.getHeader('content-type') };
      for (const name of headerNames) headers[name] = req.getHeader(name);
      const client = clientOf(ctx, res, req);
      const rawQuery = req.getQuery() ?? '';
      const declared = Number(req.getHeader('content-length') || '0');
      if (declared > MAX_BODY_BYTES) {
        // Refused before reading: a client should not have to upload what is refused anyway.
        finish(ctx, res, route, 'POST', url, t0, refusal(ctx, tooLarge(), route, url));
        return;
      }
      ctx.inFlight.count++;
      const reading = readBody(res, MAX_BODY_BYTES, (result) => {
        ctx.inFlight.count--;
        if (result.kind === 'aborted' || reading.aborted()) return;
        if (result.kind === 'too_large') {
          finish(ctx, res, route, 'POST', url, t0, refusal(ctx, tooLarge(), route, url));
          return;
        }
        res.cork(() => run(route, 'POST', url, t0, res, checks, { client, rawQuery, path: {}, headers, body: result.body }, handler));
      });
    };

  app.post(
    `${base}/public/country-requests`,
    post('/public/country-requests', [], [limiters.public, limiters.countryRequests], (r) => {
      parseParameters('createCountryRequest', r.rawQuery); // it takes none: an unknown one is refused, as on every GET
      const body = parseBody('createCountryRequest', r.headers['content-type'], r.body!);
      const country = body.country as string;
      const covered = ctx.catalog.view().snapshots.find((s) => s.country === country);
      if (covered) {
        throw ApiError.invalidParameter(
          'country',
          `country: ${country} is already covered (snapshot of ${covered.date}, ${covered.rows.toLocaleString('en-US')} buildings)`,
        );
      }
      return ctx
        .writePublic(r.abandoned, 'addCountryRequest', {
          country,
          email: (body.email as string | undefined) ?? null,
          comment: (body.comment as string | undefined) ?? null,
          client: r.client,
        })
        .then((saved) => ({
          status: 201,
          doc: { id: saved.id, country: saved.country, status: 'received', created_at: isoTime(saved.createdAt) },
        }));
    }),
  );

  app.post(
    `${base}/removal-requests`,
    post('/removal-requests', [], [limiters.removalRequests], (r) => {
      parseParameters('createRemovalRequest', r.rawQuery);
      const body = parseBody('createRemovalRequest', r.headers['content-type'], r.body!);
      const buildingId = body.buildingId as string;
      const businessId = (body.businessId as string | undefined) ?? null;
      const registrationNumber = (body.registrationNumber as string | undefined) ?? null;
      const { snapshot, row } = building(ctx, buildingId);
      const businesses = snapshot.businesses(row);
      const named =
        businessId !== null
          ? businesses.find((b) => b.business_id === businessId)
          : businesses.find((b) => b.registration_number === registrationNumber);
      if (!named) {
        const [field, value] = businessId !== null ? ['business_id', businessId] : ['registration_number', registrationNumber];
        throw ApiError.invalidParameter(field, `${field}: no business ${JSON.stringify(value)} is registered at building ${buildingId}`);
      }
      if (businessId !== null && registrationNumber !== null && named.registration_number !== registrationNumber) {
        throw ApiError.invalidParameter(
          'registration_number',
          `registration_number: business ${businessId} is registered under another number`,
        );
      }
      // Both of the business's identifiers are kept, so the removal still finds it in a later
      // snapshot that knows it by only one of them.
      return ctx
        .writePublic(r.abandoned, 'addRemovalRequest', {
          businessId: named.business_id,
          registrationNumber: named.registration_number,
          buildingId,
          country: snapshot.country,
          businessName: named.name,
          reason: body.reason as string,
          contact: body.contact as string,
          client: r.client,
        })
        .then((saved) => ({
          status: 202,
          doc: {
            id: saved.id,
            status: saved.status,
            building_id: saved.buildingId,
            business_id: saved.businessId,
            registration_number: saved.registrationNumber,
            created_at: isoTime(saved.createdAt),
          },
        }));
    }),
  );

  app.post(
    `${base}/reports`,
    post('/reports', [], [limiters.reportOrders], (r) => {
      // Not a passing outage (503 would ask clients to retry): this server sells no reports.
      if (ctx.config.reports === 'off') throw new ApiError('not_found', 'Building reports are not offered on this server.');
      parseParameters('createReportOrder', r.rawQuery);
      const body = parseBody('createReportOrder', r.headers['content-type'], r.body!);
      const { snapshot, row } = building(ctx, body.buildingId as string);
      const context = { country: snapshot.country, snapshotDate: snapshot.date };
      const report = freezeReport(snapshot.record(row), snapshot.units(row), context);
      const payment = provider.checkout({ orderAmountMinor: ctx.config.reportPriceMinor, currency: ctx.config.reportCurrency });
      return ctx
        .writePublic(r.abandoned, 'createReportOrder', {
          buildingId: snapshot.buildingId(row),
          country: snapshot.country,
          snapshotDate: snapshot.date,
          email: body.email as string,
          priceMinor: ctx.config.reportPriceMinor,
          priceCurrency: ctx.config.reportCurrency,
          provider: provider.name,
          paid: payment.paid,
          providerReference: payment.reference,
          report,
          client: r.client,
        })
        .then(({ order, token }) => ({
          status: 201,
          doc: { ...orderDoc(order), token, report_url: `${ctx.baseUrl()}/reports/${order.id}?token=${token}` },
        }));
    }),
  );

  app.get(
    `${base}/reports/:order_id`,
    get('/reports/{order_id}', ['order_id'], [limiters.reportReads], (r) => {
      const q = parseParameters('getReport', r.rawQuery, { order_id: decodePathSegment(r.path.order_id, 'order_id') });
      const show = (found: { order: ReportOrder; report: string | null } | null): Answered => {
        if (!found) throw new ApiError('not_found', `No report order ${q.orderId as string} with this token.`, 'token');
        const report = found.report === null ? null : renderReport(found.report, ctx.catalog.removals(), { appUrl: ctx.config.appUrl });
        return { status: 200, doc: { ...orderDoc(found.order), report } };
      };
      const found = ctx.publicReads.readReport(q.orderId as string, q.token as string);
      return found instanceof Promise ? found.then(show) : show(found);
    }),
  );

  app.post(
    `${base}/reports/payment-webhook`,
    post('/reports/payment-webhook', ['x-edifice-signature'], [], (r) => {
      // The signature covers the raw bytes: check it before reading anything of the body.
      const type = r.headers['content-type'];
      if (!verifyWebhook(ctx.config.paymentWebhookSecret, r.body!, r.headers['x-edifice-signature'] || undefined)) {
        const why =
          ctx.config.paymentWebhookSecret === null ? 'no webhook secret is configured on this server' : 'it does not match the body';
        throw new ApiError('unauthorized', `X-Edifice-Signature: refused, ${why}.`, 'X-Edifice-Signature');
      }
      const body = parseBody('confirmReportPayment', type, r.body!);
      const found = ctx.publicReads.reportOrder(body.orderId as string);
      return found instanceof Promise ? found.then((order) => pay(order, body, r.abandoned)) : pay(found, body, r.abandoned);
    }),
  );

  /** The webhook's confirmation of `order`'s payment, once the order is read. */
  const pay = (order: ReportOrder | null, body: Record<string, unknown>, abandoned: () => boolean): Promise<Answered> => {
    if (order === null) throw new ApiError('not_found', `No report order ${body.orderId as string}.`, 'order_id');
    if (body.amountMinor !== undefined && body.amountMinor !== order.priceMinor) {
      throw ApiError.invalidParameter(
        'amount_minor',
        `amount_minor: ${body.amountMinor as number} is not the order's price ${order.priceMinor}`,
      );
    }
    if (body.currency !== undefined && body.currency !== order.priceCurrency) {
      throw ApiError.invalidParameter('currency', `currency: ${body.currency as string} is not the order's ${order.priceCurrency}`);
    }
    return ctx
      .writePublic(abandoned, 'markReportPaid', order.id, (body.providerReference as string | undefined) ?? null)
      .then((paid) => ({ status: 200, doc: orderDoc(paid.order) }));
  };

  for (const [pattern, route, allow] of [
    [`${base}/public/country-requests`, '/public/country-requests', 'POST'],
    [`${base}/removal-requests`, '/removal-requests', 'POST'],
    [`${base}/reports`, '/reports', 'POST'],
    [`${base}/reports/:order_id`, '/reports/{order_id}', 'GET'],
    [`${base}/reports/payment-webhook`, '/reports/payment-webhook', 'POST'],
  ] as const)
    refuseOtherMethods(app, ctx, pattern, route, [allow], false);
}

/** A refusal in the structured format; a ledger that cannot serve is 503, anything else a logged 500. */
function refusal(ctx: HttpContext, err: unknown, route: string, path: string): Reply {
  if (err instanceof ApiError) return errorReply(err, 'json', { 'Cache-Control': 'no-store' });
  const unavailable = asUnavailable(err);
  if (unavailable)
    return errorReply(
      new ApiError('unavailable', 'The service cannot reach its ledger right now; retry shortly.', '', unavailable.retryAfterS),
      'json',
    );
  ctx.log.error({ err, path, route }, 'unexpected error');
  return internalErrorReply('json');
}
