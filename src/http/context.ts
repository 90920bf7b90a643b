/**
 * What every route module of the server shares: configuration, the catalog, the ledger, logs and
 * metrics, the public base URL (known once listening) and the one way a response is finished
 * (written, counted, logged).
 */
import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import type { Logger } from 'pino';
import type { CatalogSource } from '../catalog/catalog.ts';
import type { Config } from '../config.ts';
import type { ReportOrder } from '../ledger/index.ts';
import type { AddressLimiters } from './address-limits.ts';
import { clientAddress } from './client-address.ts';
import type { Metrics } from './metrics.ts';
import type { WritePublic } from './public-writes.ts';
import { send, type Reply } from './reply.ts';

/** The open operations' reads of the ledger: at once on the SQLite ledger, awaited on PostgreSQL. */
export interface PublicReads {
  readReport(orderId: string, token: string): MaybeAsync<{ order: ReportOrder; report: string | null } | null>;
  reportOrder(orderId: string): MaybeAsync<ReportOrder | null>;
}

export type MaybeAsync<T> = T | Promise<T>;

export interface HttpContext {
  readonly config: Config;
  readonly catalog: CatalogSource;
  readonly publicReads: PublicReads;
  readonly log: Logger;
  readonly metrics: Metrics;
  /** The base URL ending in the base path, as clients reach it. */
  baseUrl(): string;
  /** The clock of the per-address limits (ms since the epoch); tests move it. */
  now(): number;
  readonly limiters: AddressLimiters;
  /** True once the server stops accepting: each response then closes its connection, so keep-alive clients go. */
  closing(): boolean;
  /**
   * Requests begun and not yet answered: bodies being read, pages waiting for their charge,
   * /metrics being summed. A stop on the main thread waits for them before ending connections.
   */
  readonly inFlight: { count: number };
  readonly writePublic: WritePublic;
}

/** Writes the reply (naming the replica, in a fleet), then counts and logs it (one line per request, never a secret). */
export function finish(
  ctx: HttpContext,
  res: HttpResponse,
  route: string,
  method: string,
  path: string,
  t0: number,
  reply: Reply,
  extra: Record<string, unknown> = {},
): void {
  const replica = ctx.config.replica;
  send(
    res,
    replica === null ? reply : { ...reply, headers: { ...reply.headers, 'X-Edifice-Replica': replica } },
    method === 'HEAD',
    ctx.closing(),
  );
  const seconds = (performance.now() - t0) / 1000;
  ctx.metrics.observe(route, reply.status, seconds);
  ctx.log.info({ method, path, route, status: reply.status, ms: Math.round(seconds * 1e4) / 10, ...extra }, 'request');
}

/** The client address bucket of a request; read while the handler runs synchronously. */
export function clientOf(ctx: HttpContext, res: HttpResponse, req: HttpRequest): string {
  const peer = Buffer.from(res.getRemoteAddressAsText()).toString('utf8');
  return clientAddress(peer, req.getHeader('x-forwarded-for'), ctx.config.trustedProxies);
}
