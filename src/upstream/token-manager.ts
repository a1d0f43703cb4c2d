// The upstream token manager (single-flight refresh, refresh ahead, backoff): its interface, its build, its operations.

import { systemClock, type Clock } from '../base/clock.js';
import { silentLogger, type Logger } from '../observability/logger.js';
import { noopTelemetry, type Telemetry } from '../observability/telemetry.js';
import type { Span } from '../observability/tracing/span.js';
import { disabledTracer } from '../observability/tracing/tracer.js';
import { createStoreHealth, type StoreHealth } from '../shared-state/store-health.js';
import type { TokenStore } from '../shared-state/token-store.js';
import { maybeRejoin } from './custody-rejoin.js';
import { createSharedTokenSource, type SharedTokenSource } from './shared-token.js';
import {
  emptyCustodyState,
  inBackoff,
  reasonNow,
  unavailable,
  usable,
  type Custody,
  type HeldToken,
  type Refresh,
} from './token-custody.js';
import { createTokenEndpoint, type TokenEndpointConfig } from './token-endpoint.js';
import { pendingRefresh, startRefresh } from './token-refresh.js';
import { createTokenRejoin } from './token-rejoin.js';

export interface TokenStatus {
  hasToken: boolean;
  /** Expiry of the held token, even when already past (so a gauge can show it going negative). */
  expiresAt: number | null;
  lastError: string | null;
  consecutiveFailures: number;
  retryAt: number | null;
}

export interface TokenManager {
  /** A token not known to be expired; refreshes (single-flight) when needed. Rejects with GatewayError('token_unavailable', ...). */
  getToken(span?: Span): Promise<string>;
  /** The held token when it can be used now and no refresh is due, synchronously (a search's fast path); else undefined. */
  peek?(): string | undefined;
  /** After an upstream 401: drops `token` only if it is still the current one. */
  invalidate(token: string): void;
  status(): TokenStatus;
}

export interface TokenManagerOptions extends TokenEndpointConfig {
  refreshAheadSeconds: number;
  /** Keeps a refresh ahead of expiry alive after the response that started it (Workers: ctx.waitUntil). */
  background?: (work: Promise<unknown>) => void;
  backoff?: { initialMs: number; maxMs: number };
  clock?: Clock;
  random?: () => number;
  telemetry?: Telemetry;
  logger?: Logger;
  /** The deployment's token store (Redis, a Durable Object). Absent: this process logs in on its own. */
  store?: TokenStore;
  /** Says when the store stops and starts answering; default one built on `logger` and `telemetry`. */
  storeHealth?: StoreHealth;
  /** A store command's bound (REDIS_TIMEOUT_MS); default 250. */
  storeTimeoutMs?: number;
  /** How long to wait for another replica's login before logging in itself; default `timeoutMs`. */
  storeWaitMs?: number;
  /** While on its own token (the store was down), asks the store at most this often whether it answers again; default 2000. */
  storeProbeIntervalMs?: number;
}

const STORE_PROBE_INTERVAL_MS = 2_000;

export function createTokenManager(options: TokenManagerOptions): TokenManager {
  const custody = custodyOf(options);
  return {
    peek: () => peek(custody),
    getToken: (span) => getToken(custody, span),
    invalidate: (token) => invalidate(custody, token),
    status: () => status(custody),
  };
}

function custodyOf(options: TokenManagerOptions): Custody {
  const clock = options.clock ?? systemClock;
  const telemetry = options.telemetry ?? noopTelemetry;
  const logger = options.logger ?? silentLogger;
  const endpoint = createTokenEndpoint({ ...options, clock, telemetry });
  const storeTimeoutMs = options.storeTimeoutMs ?? 250;
  const storeWaitMs = options.storeWaitMs ?? options.timeoutMs;
  const shared: SharedTokenSource | null = options.store
    ? createSharedTokenSource({
        store: options.store,
        health:
          options.storeHealth ?? createStoreHealth({ store: 'token', kind: options.store.kind, logger, telemetry }),
        ownObtain: endpoint.login,
        storeTimeoutMs,
        waitMs: storeWaitMs,
      })
    : null;
  return {
    clock,
    random: options.random ?? Math.random,
    telemetry,
    logger,
    endpoint,
    tracer: options.tracer ?? disabledTracer,
    shared,
    rejoin: shared
      ? createTokenRejoin({
          source: shared,
          intervalMs: options.storeProbeIntervalMs ?? STORE_PROBE_INTERVAL_MS,
          background: options.background,
        })
      : null,
    background: options.background,
    initialBackoffMs: options.backoff?.initialMs ?? 1_000,
    maxBackoffMs: options.backoff?.maxMs ?? 60_000,
    refreshAheadMs: Math.max(0, options.refreshAheadSeconds * 1000),
    // With a store, waiting for another replica's login and the store's own commands come on top.
    abandonAfterMs: options.timeoutMs + 5_000 + (shared ? storeWaitMs + 6 * storeTimeoutMs : 0),
    state: emptyCustodyState(),
  };
}

function peek(custody: Custody): string | undefined {
  const now = custody.clock();
  const held = custody.state.current;
  if (!usable(held, now) || now >= held.refreshAt) return undefined;
  // The miss path takes the held token here rather than through getToken, so it asks about rejoining here too.
  maybeRejoin(custody, held, now);
  return held.token;
}

/** A wait on a refresh another search started, under `span` when recorded, linked to that refresh's login. */
function waitSpan(custody: Custody, refresh: Refresh, span: Span | undefined): Span | undefined {
  if (span?.recording !== true) return undefined;
  const wait = custody.tracer.startSpan('token wait', span);
  if (refresh.login.context !== undefined) wait.addLink({ context: refresh.login.context });
  return wait;
}

/** `span`: the request that needs the token; a login it starts goes under it. */
async function getToken(custody: Custody, span?: Span): Promise<string> {
  const now = custody.clock();
  const held = custody.state.current;
  if (usable(held, now)) {
    if (now >= held.refreshAt && pendingRefresh(custody, now) === null && !inBackoff(custody, now)) {
      const ahead = startRefresh(custody, 'ahead', now, span);
      custody.background?.(ahead.promise);
    } else {
      maybeRejoin(custody, held, now);
    }
    return held.token;
  }
  let pending = pendingRefresh(custody, now);
  let wait: Span | undefined;
  if (pending === null) {
    // A person is waiting: while the endpoint is failing, answer at once instead of hammering it.
    if (inBackoff(custody, now)) throw unavailable(custody, now);
    pending = startRefresh(custody, reasonNow(custody, now), now, span);
  } else wait = waitSpan(custody, pending, span);
  let fresh: HeldToken;
  try {
    fresh = await pending.promise;
  } finally {
    wait?.end();
  }
  const after = custody.clock();
  if (!usable(fresh, after)) throw unavailable(custody, after);
  return fresh.token;
}

function invalidate(custody: Custody, token: string): void {
  const { state } = custody;
  if (state.current === null || state.current.token !== token) return;
  const { generation } = state.current;
  state.dropped = { token, generation };
  state.current = null;
  state.invalidated = true;
  custody.logger.info({ event: 'upstream_token_invalidated', generation }, 'upstream refused the token; dropped it');
  // Only if the deployment still holds this very token: N replicas seeing one 401 cause one refresh.
  if (custody.shared !== null && generation !== null) custody.shared.drop(generation);
}

function status(custody: Custody): TokenStatus {
  const { state } = custody;
  const now = custody.clock();
  return {
    hasToken: usable(state.current, now),
    expiresAt: state.current?.expiresAt ?? null,
    lastError: state.lastError,
    consecutiveFailures: state.consecutiveFailures,
    retryAt: inBackoff(custody, now) ? state.retryAt : null,
  };
}
