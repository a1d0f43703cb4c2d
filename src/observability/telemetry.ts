// The events services report for metrics; a no-op by default so every service runs without a registry.
// Every argument comes from a closed set: no number, address, token or secret can reach a label.
import type { SharedStoreName } from '../shared-state/store-unavailable.js';

export type UpstreamEndpoint = 'token' | 'search';
export type UpstreamOutcome = 'ok' | 'unauthorized' | 'client_error' | 'server_error' | 'timeout' | 'network' | 'malformed';
export type TokenRefreshResult = 'ok' | 'error';
export type TokenRefreshReason = 'cold' | 'ahead' | 'expired' | 'unauthorized';
export type CacheResult = 'hit' | 'miss' | 'stale' | 'coalesced' | 'stale_if_error' | 'shared';
export type RateLimitScope = 'address' | 'total';
export type ConsoleRefusal = 'mobile' | 'rate_limited' | 'not_allowed';
export type { SharedStoreName };

export interface Telemetry {
  upstreamCall(endpoint: UpstreamEndpoint, outcome: UpstreamOutcome, seconds: number): void;
  tokenRefresh(result: TokenRefreshResult, reason: TokenRefreshReason): void;
  cacheLookup(result: CacheResult): void;
  rateLimited(scope: RateLimitScope): void;
  consoleRefused(reason: ConsoleRefusal): void;
  /** A shared store (token, lookup tier, counters) answers (true) or not (false); called on transitions. */
  sharedStore(store: SharedStoreName, up: boolean): void;
  /** One operation fell back to per-process state because its shared store failed. */
  sharedStoreFallback(store: SharedStoreName): void;
}

export const noopTelemetry: Telemetry = {
  upstreamCall() {},
  tokenRefresh() {},
  cacheLookup() {},
  rateLimited() {},
  consoleRefused() {},
  sharedStore() {},
  sharedStoreFallback() {},
};
