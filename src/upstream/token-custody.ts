// What the token manager keeps (the held token, the refresh in flight, the failures) and the rules on a held token.
import type { Clock } from '../base/clock.js';
import { GatewayError } from '../base/errors.js';
import type { Logger } from '../observability/logger.js';
import type { Telemetry, TokenRefreshReason } from '../observability/telemetry.js';
import type { SpanContext } from '../observability/tracing/trace-context.js';
import type { Tracer } from '../observability/tracing/tracer.js';
import type { SharedTokenSource, SourcedToken } from './shared-token.js';
import type { TokenEndpoint } from './token-endpoint.js';
import type { TokenRejoin } from './token-rejoin.js';

export interface HeldToken {
  token: string;
  expiresAt: number;
  /** From here on callers still get this token, and one background refresh starts. */
  refreshAt: number;
  /** After this the token is treated as expired, so it never expires while a search is in flight. */
  usableUntil: number;
  lifetimeMs: number;
  /** The store's number for it; null when this process obtained it on its own. */
  generation: number | null;
}

export interface Refresh {
  promise: Promise<HeldToken>;
  startedAt: number;
  attempt: number;
  /** The context of its upstream login's recorded client span, once begun: what the searches waiting on it link to. */
  login: { context?: SpanContext | undefined };
}

const SAFETY_MARGIN_MAX_MS = 5_000;

/** What custody works with, fixed when the manager is made. */
export interface Custody {
  clock: Clock;
  random: () => number;
  telemetry: Telemetry;
  logger: Logger;
  endpoint: TokenEndpoint;
  /** A search that waits on a login another one started gets a `token wait` span linked to that login. */
  tracer: Tracer;
  /** The deployment's token through the store; null without one. */
  shared: SharedTokenSource | null;
  /** Asks the store, while on an own token, whether it answers again; null without a store. */
  rejoin: TokenRejoin | null;
  background: ((work: Promise<unknown>) => void) | undefined;
  initialBackoffMs: number;
  maxBackoffMs: number;
  refreshAheadMs: number;
  /**
   * A refresh that never settles (e.g. its I/O was cancelled with the request that started it, as Workers may do)
   * must not block every later caller: after this long it is abandoned.
   */
  abandonAfterMs: number;
  state: CustodyState;
}

/** What changes: the held token, the refresh in flight, and the failures since the last success. */
interface CustodyState {
  current: HeldToken | null;
  refresh: Refresh | null;
  /** The number of the newest refresh; an older one that settles late changes nothing. */
  attempts: number;
  invalidated: boolean;
  /** The token an upstream 401 dropped, so the refresh after it asks the store for a newer one. */
  dropped: { token: string; generation: number | null } | null;
  consecutiveFailures: number;
  lastError: string | null;
  retryAt: number | null;
}

export const emptyCustodyState = (): CustodyState => ({
  current: null,
  refresh: null,
  attempts: 0,
  invalidated: false,
  dropped: null,
  consecutiveFailures: 0,
  lastError: null,
  retryAt: null,
});

export const usable = (held: HeldToken | null, now: number): held is HeldToken =>
  held !== null && now < held.usableUntil;
export const inBackoff = ({ state }: Custody, now: number): boolean => state.retryAt !== null && now < state.retryAt;

export function unavailable({ state }: Custody, now: number, cause?: unknown): GatewayError {
  const headers: Record<string, string> = {};
  if (state.retryAt !== null && state.retryAt > now) {
    headers['retry-after'] = String(Math.ceil((state.retryAt - now) / 1000));
  }
  return new GatewayError('token_unavailable', 'the upstream token could not be obtained', { headers, cause });
}

export function reasonNow({ state }: Custody, now: number): TokenRefreshReason {
  if (state.current === null) return state.invalidated ? 'unauthorized' : 'cold';
  return usable(state.current, now) ? 'ahead' : 'expired';
}

/** A token as custody holds it: when to refresh it ahead, and until when to hand it out. */
export function hold(custody: Custody, token: SourcedToken): HeldToken {
  const lifetimeMs = token.expiresAt - token.obtainedAt;
  return {
    token: token.token,
    expiresAt: token.expiresAt,
    refreshAt: token.expiresAt - Math.min(custody.refreshAheadMs, lifetimeMs * 0.1),
    usableUntil: token.expiresAt - Math.min(SAFETY_MARGIN_MAX_MS, lifetimeMs * 0.01),
    lifetimeMs,
    generation: token.generation,
  };
}
