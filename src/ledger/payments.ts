/**
 * How a building report is paid for. A provider decides at checkout whether the order is paid
 * at once (the built-in provider for self-hosting, at the configured price, which may be 0) or
 * stays pending until the provider confirms payment through the signed webhook.
 *
 * The webhook's signature is `sha256=<hex>` of HMAC-SHA256 over the raw body with the configured
 * secret, compared in constant time.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export interface PaymentProvider {
  readonly name: string;
  /** Whether an order is paid when made, and the provider's reference for it. */
  checkout(order: { orderAmountMinor: number; currency: string }): { paid: boolean; reference: string | null };
}

export const builtinProvider: PaymentProvider = {
  name: 'builtin',
  checkout: () => ({ paid: true, reference: null }),
};

export const webhookProvider: PaymentProvider = {
  name: 'webhook',
  checkout: () => ({ paid: false, reference: null }),
};

export function paymentProvider(name: 'builtin' | 'webhook'): PaymentProvider {
  return name === 'builtin' ? builtinProvider : webhookProvider;
}

/** The X-Edifice-Signature value of `body` under `secret`. */
export function signWebhook(secret: string, body: Uint8Array | string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** True when `header` is the signature of `body` under `secret`. */
export function verifyWebhook(secret: string | null, body: Uint8Array, header: string | undefined): boolean {
  if (secret === null || header === undefined) return false;
  const expected = Buffer.from(signWebhook(secret, body), 'utf8');
  const given = Buffer.from(header.trim(), 'utf8');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
