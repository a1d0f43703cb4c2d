// The events services report for metrics; a no-op by default so every service runs without a registry.
// Every argument comes from a closed set: no number, address, token or secret can reach a label.
import type { TransportFailure } from '../base/upstream-http.js';

/** Methods counted by name; any other is `other` (a label set an outsider cannot grow). */
export const HTTP_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;
/** The route label of a request no route matched (404, 405): never the raw path. */
export const UNMATCHED_ROUTE = 'unmatched';

export type UpstreamEndpoint = 'token' | 'search';
export type UpstreamOutcome =
  'ok' | 'unauthorized' | 'client_error' | 'server_error' | 'timeout' | 'network' | 'malformed' | 'rate_limited';
/** The metric outcome of a failed exchange: an answer too large or encoded is an unusable one. */
export const transportOutcome = (kind: TransportFailure): UpstreamOutcome =>
  kind === 'too_large' || kind === 'encoded' ? 'malformed' : kind;
export type TokenRefreshResult = 'ok' | 'error';
export type TokenRefreshReason = 'cold' | 'ahead' | 'expired' | 'unauthorized';
export type CacheResult = 'hit' | 'miss' | 'stale' | 'coalesced' | 'stale_if_error' | 'shared';
export type RateLimitScope = 'address' | 'total';
export type ConsoleRefusal = 'mobile' | 'rate_limited' | 'not_allowed';
/** Which piece of shared state a store holds; a closed set, used as a metric label. */
export type SharedStoreName = 'token' | 'lookup' | 'counter';
/** What one search is counted under, per caller: the cache's result, or which guard refused it. */
export type SearchCountResult =
  CacheResult | 'rate_limited' | 'quota_exhausted' | 'budget_exhausted' | 'upstream_refused' | 'error';
/** Which daily limit refused an upstream call. */
export type QuotaScope = 'quota' | 'budget';
/** Which document of an identity provider a fetch was for. */
export type KeySetDocument = 'discovery' | 'jwks';
/** How a fetch of an identity provider's document ended. */
export type KeySetFetchOutcome =
  | 'ok'
  | 'timeout'
  | 'network'
  | 'http_error'
  | 'too_large'
  | 'too_many_keys'
  | 'malformed'
  | 'wrong_issuer'
  | 'insecure_url';
/**
 * A caller as a metric label: a registered client id or `console`, never anything a request made up
 * (the guard checks against GATEWAY_CLIENTS before it reports).
 */
export type CallerLabel = string;

export interface Telemetry {
  upstreamCall(endpoint: UpstreamEndpoint, outcome: UpstreamOutcome, seconds: number): void;
  tokenRefresh(result: TokenRefreshResult, reason: TokenRefreshReason): void;
  cacheLookup(result: CacheResult): void;
  consoleRefused(reason: ConsoleRefusal): void;
  /** A shared store (token, lookup tier, counters) answers (true) or not (false); called on transitions. */
  sharedStore(store: SharedStoreName, up: boolean): void;
  /** One operation fell back to per-process state because its shared store failed. */
  sharedStoreFallback(store: SharedStoreName): void;
  /** One search answered (or refused) for a caller. */
  clientSearch(client: CallerLabel, result: SearchCountResult): void;
  /** One upstream search call made on a caller's behalf (whatever its outcome). */
  clientUpstreamCall(client: CallerLabel): void;
  /** An upstream call refused by a caller's daily quota or the deployment's budget. */
  quotaRejected(client: CallerLabel, scope: QuotaScope): void;
  /** The circuit breaker opened (consecutive failures, or a failed trial). */
  breakerOpened(): void;
  /** The upstream answered 429 and the gateway stopped calling it for a while. */
  upstreamCooldown(): void;
  /** One fetch of a trusted issuer's document; `issuer` is its place in the clients file's `issuers`. */
  keySetFetch(issuer: string, document: KeySetDocument, outcome: KeySetFetchOutcome): void;
}

export const noopTelemetry: Telemetry = {
  upstreamCall() {},
  tokenRefresh() {},
  cacheLookup() {},
  consoleRefused() {},
  sharedStore() {},
  sharedStoreFallback() {},
  clientSearch() {},
  clientUpstreamCall() {},
  quotaRejected() {},
  breakerOpened() {},
  upstreamCooldown() {},
  keySetFetch() {},
};
