/** The ledger's public surface. */
export {
  BUSY_TIMEOUT_MS,
  Ledger,
  type AuthResult,
  type DemoKey,
  type LedgerOptions,
  type LimitsResult,
  type UsageDay,
  type WorkspaceSummary,
} from './ledger.ts';
export { LedgerError, LedgerUnavailableError, asUnavailable, isLedgerUnavailable, type LedgerErrorCode } from './errors.ts';
export { bearerToken, parseKey, KEY_PREFIX, type KeyInfo, type KeyStatus } from './keys.ts';
export {
  FREE_REOPEN_MS,
  WELCOME_CREDITS,
  WELCOME_VALID_MS,
  type ChargeOutcome,
  type ChargePage,
  type ChargeResult,
  type Grant,
  type GrantKind,
} from './credits.ts';
export { PLANS, type PlanName, type Member, type Workspace } from './workspaces.ts';
export { WindowLimiter, clientBucket, RING_MAX, type LimitDecision, type RateLimiter, type WindowLimiterOptions } from './limits.ts';
export { DEMO_KEY_FILE, DEMO_CREDITS } from './demo.ts';
export { type Clock, DAY_MS, utcDay } from './clock.ts';
export { type CountryDemand, type CountryRequest } from './country-requests.ts';
export { REMOVAL_STATUSES, type ApprovedRemovals, type NewRemovalRequest, type RemovalRequest, type RemovalStatus } from './removals.ts';
export { isReportToken, REPORT_TOKEN_PREFIX, type NewReportOrder, type OrderStatus, type ReportOrder } from './reports.ts';
export { paymentProvider, signWebhook, verifyWebhook, type PaymentProvider } from './payments.ts';
export { ledgerLocation, openLedgerEngine, SqliteLedgerEngine, type LedgerEngine, type LedgerLocation } from './engine.ts';
export { PgLedger, type PgLedgerOptions } from './pg-ledger.ts';
export { RedisLimits, type AsyncLimiter, type QuotaDecision, type RedisLimitsOptions } from './redis-limits.ts';
