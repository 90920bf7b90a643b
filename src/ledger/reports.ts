/**
 * Orders of building reports, bought without an account. Checkout stores the order and the
 * report frozen from the snapshot current at purchase, in one statement, and hands out a read
 * token once (`rpt_` + 32 base62 characters, 190 bits); only its SHA-256 is kept. The report is
 * readable with the token once the order is paid: at once with the built-in provider, or when a
 * signed webhook of an external provider confirms payment.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Clock } from './clock.ts';
import type { Db } from './db.ts';
import { LedgerError } from './errors.ts';
import { newId, randomBase62 } from './base62.ts';

export const REPORT_TOKEN_PREFIX = 'rpt_';
const TOKEN_RE = /^rpt_[0-9A-Za-z]{32}$/;

export type OrderStatus = 'pending' | 'paid';

export interface ReportOrder {
  id: string;
  buildingId: string;
  country: string;
  snapshotDate: string;
  email: string;
  status: OrderStatus;
  /** Price in minor units (cents) of priceCurrency. */
  priceMinor: number;
  priceCurrency: string;
  provider: string;
  providerReference: string | null;
  createdAt: number;
  paidAt: number | null;
}

export interface NewReportOrder {
  buildingId: string;
  country: string;
  snapshotDate: string;
  email: string;
  priceMinor: number;
  priceCurrency: string;
  provider: string;
  /** Paid at checkout (the built-in provider) or pending until the webhook. */
  paid: boolean;
  providerReference: string | null;
  /** The report document, frozen. */
  report: string;
  client: string;
}

export interface OrderRow {
  id: string;
  building_id: string;
  country: string;
  snapshot_date: string;
  email: string;
  token_sha256: Buffer;
  status: OrderStatus;
  price_minor: number;
  price_currency: string;
  provider: string;
  provider_reference: string | null;
  report: string;
  client: string;
  created_at: number;
  paid_at: number | null;
}

export const toOrder = (r: OrderRow): ReportOrder => ({
  id: r.id,
  buildingId: r.building_id,
  country: r.country,
  snapshotDate: r.snapshot_date,
  email: r.email,
  status: r.status,
  priceMinor: r.price_minor,
  priceCurrency: r.price_currency,
  provider: r.provider,
  providerReference: r.provider_reference,
  createdAt: r.created_at,
  paidAt: r.paid_at,
});

export const hashToken = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();

export function isReportToken(token: string): boolean {
  return TOKEN_RE.test(token);
}

/** The row of a new order and its read token, shown once. */
export function newOrderRow(order: NewReportOrder, now: number): { row: OrderRow; token: string } {
  if (!Number.isSafeInteger(order.priceMinor) || order.priceMinor < 0)
    throw new RangeError(`A price is a whole number of minor units ≥ 0, got ${order.priceMinor}.`);
  const token = REPORT_TOKEN_PREFIX + randomBase62(32);
  return {
    token,
    row: {
      id: newId('ord'),
      building_id: order.buildingId,
      country: order.country,
      snapshot_date: order.snapshotDate,
      email: order.email,
      token_sha256: hashToken(token),
      status: order.paid ? 'paid' : 'pending',
      price_minor: order.priceMinor,
      price_currency: order.priceCurrency,
      provider: order.provider,
      provider_reference: order.providerReference,
      report: order.report,
      client: order.client,
      created_at: now,
      paid_at: order.paid ? now : null,
    },
  };
}

/** The order and its report once paid, when `token` is its own; null otherwise, as for no order. */
export function readOrder(row: OrderRow | undefined, token: string): { order: ReportOrder; report: string | null } | null {
  if (!row || !timingSafeEqual(row.token_sha256, hashToken(token))) return null;
  return { order: toOrder(row), report: row.status === 'paid' ? row.report : null };
}

export class Reports {
  private readonly insert;
  private readonly selectOne;
  private readonly selectRecent;
  private readonly pay;

  constructor(
    db: Db,
    private readonly now: Clock,
  ) {
    this.insert = db.prepare<[OrderRow], OrderRow>(`INSERT INTO report_orders
      (id, building_id, country, snapshot_date, email, token_sha256, status, price_minor, price_currency, provider,
       provider_reference, report, client, created_at, paid_at)
      VALUES (@id, @building_id, @country, @snapshot_date, @email, @token_sha256, @status, @price_minor, @price_currency,
       @provider, @provider_reference, @report, @client, @created_at, @paid_at) RETURNING *`);
    this.selectOne = db.prepare<[string], OrderRow>('SELECT * FROM report_orders WHERE id = ?');
    this.selectRecent = db.prepare<[number], OrderRow>('SELECT * FROM report_orders ORDER BY created_at DESC, rowid DESC LIMIT ?');
    this.pay = db.prepare<[number, string | null, string], OrderRow>(
      "UPDATE report_orders SET status = 'paid', paid_at = ?, provider_reference = coalesce(?, provider_reference) WHERE id = ? AND status = 'pending' RETURNING *",
    );
  }

  /** Stores the order; the plaintext token exists once, in this answer. */
  create(order: NewReportOrder): { order: ReportOrder; token: string } {
    const { row, token } = newOrderRow(order, this.now());
    return { order: toOrder(this.insert.get(row)!), token };
  }

  /**
   * The order and, once paid, its report, when `token` is the order's; null for an unknown
   * order or a wrong token alike, so that a guess learns nothing.
   */
  read(orderId: string, token: string): { order: ReportOrder; report: string | null } | null {
    if (!isReportToken(token)) return null;
    return readOrder(this.selectOne.get(orderId), token);
  }

  get(orderId: string): ReportOrder {
    const order = this.find(orderId);
    if (!order) throw new LedgerError('not_found', `No report order ${orderId}.`);
    return order;
  }

  find(orderId: string): ReportOrder | null {
    const row = this.selectOne.get(orderId);
    return row ? toOrder(row) : null;
  }

  /** Marks a pending order paid; an order already paid is left as it is (webhooks repeat). */
  markPaid(orderId: string, providerReference: string | null): { order: ReportOrder; changed: boolean } {
    const row = this.pay.get(this.now(), providerReference, orderId);
    if (row) return { order: toOrder(row), changed: true };
    return { order: this.get(orderId), changed: false };
  }

  /** The latest `limit` orders, newest first (never their tokens). */
  list(limit = 1000): ReportOrder[] {
    return this.selectRecent.all(limit).map(toOrder);
  }
}
