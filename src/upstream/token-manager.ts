// Custody of the upstream bearer token: lazy single-flight refresh, refresh ahead, backoff on failure; with a
// token store, one token and one refresh for the whole deployment (see shared-token.ts).

import { systemClock, type Clock } from '../base/clock.js';
import { GatewayError } from '../base/errors.js';
import { silentLogger, type Logger } from '../observability/logger.js';
import { noopTelemetry, type Telemetry, type TokenRefreshReason } from '../observability/telemetry.js';
import type { Span } from '../observability/tracing/span.js';
import type { SpanContext } from '../observability/tracing/trace-context.js';
import { disabledTracer, type Tracer } from '../observability/tracing/tracer.js';
import { createStoreHealth, type StoreHealth } from '../shared-state/store-health.js';
import type { TokenStore } from '../shared-state/token-store.js';
import { createSharedTokenSource, type SharedTokenSource, type SourcedToken } from './shared-token.js';
import { createTokenRejoin, type TokenRejoin } from './token-rejoin.js';
import { createTokenEndpoint, RefreshFailure, type TokenEndpointConfig } from './token-endpoint.js';

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

interface HeldToken {
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

interface Refresh {
  promise: Promise<HeldToken>;
  startedAt: number;
  attempt: number;
  /** The context of its upstream login's recorded client span, once begun: what the searches waiting on it link to. */
  login: { context?: SpanContext | undefined };
}

const SAFETY_MARGIN_MAX_MS = 5_000;
const STORE_PROBE_INTERVAL_MS = 2_000;

/** What custody works with, fixed when the manager is made. */
interface Custody {
  clock: Clock;
  random: () => number;
  telemetry: Telemetry;
  logger: Logger;
  endpoint: ReturnType<typeof createTokenEndpoint>;
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
    state: {
      current: null,
      refresh: null,
      attempts: 0,
      invalidated: false,
      dropped: null,
      consecutiveFailures: 0,
      lastError: null,
      retryAt: null,
    },
  };
}

const usable = (held: HeldToken | null, now: number): held is HeldToken => held !== null && now < held.usableUntil;
const inBackoff = ({ state }: Custody, now: number): boolean => state.retryAt !== null && now < state.retryAt;

function unavailable({ state }: Custody, now: number, cause?: unknown): GatewayError {
  const headers: Record<string, string> = {};
  if (state.retryAt !== null && state.retryAt > now) {
    headers['retry-after'] = String(Math.ceil((state.retryAt - now) / 1000));
  }
  return new GatewayError('token_unavailable', 'the upstream token could not be obtained', { headers, cause });
}

function reasonNow({ state }: Custody, now: number): TokenRefreshReason {
  if (state.current === null) return state.invalidated ? 'unauthorized' : 'cold';
  return usable(state.current, now) ? 'ahead' : 'expired';
}

function hold(custody: Custody, token: SourcedToken): HeldToken {
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

/**
 * The deployment's token: newer than the one held or dropped here, and valid longer than the one held. `span`: the
 * request's, which a login made for it goes under; `started` is told the span of a login made here.
 */
async function obtainShared(
  custody: Custody,
  source: SharedTokenSource,
  now: number,
  span: Span | undefined,
  started: (login: Span) => void,
): Promise<HeldToken> {
  const { current, dropped } = custody.state;
  const newerThan = current?.generation ?? dropped?.generation ?? null;
  const validForMs = current === null ? 1 : Math.max(1, current.expiresAt - now + 1);
  const first = hold(custody, await source.obtain({ newerThan, validForMs }, span, started));
  // The published token may be one this process already knows is of no use (the one a 401 dropped, or
  // one inside its safety margin): ask once for a newer one rather than send it.
  const useless = (held: HeldToken): boolean =>
    custody.clock() >= held.usableUntil || held.token === custody.state.dropped?.token;
  if (!useless(first) || first.generation === null) return first;
  return hold(custody, await source.obtain({ newerThan: first.generation, validForMs }, span, started));
}

function startRefresh(custody: Custody, reason: TokenRefreshReason, now: number, span?: Span): Refresh {
  const mine = ++custody.state.attempts;
  const login: Refresh['login'] = {};
  const promise = refreshOnce(custody, reason, now, mine, span, (loginSpan) => {
    if (loginSpan.recording) login.context = loginSpan.context;
  });
  // Background refreshes have no awaiting caller; their failure is already recorded by refreshFailed.
  promise.catch(() => {});
  const started: Refresh = { promise, startedAt: now, attempt: mine, login };
  custody.state.refresh = started;
  return started;
}

async function refreshOnce(
  custody: Custody,
  reason: TokenRefreshReason,
  now: number,
  mine: number,
  span: Span | undefined,
  loginStarted: (login: Span) => void,
) {
  let held: HeldToken;
  try {
    held = custody.shared
      ? await obtainShared(custody, custody.shared, now, span, loginStarted)
      : hold(custody, { ...(await custody.endpoint.login(span, loginStarted)), generation: null });
  } catch (err) {
    throw refreshFailed(custody, reason, mine, err);
  }
  refreshSucceeded(custody, reason, mine, held);
  return held;
}

function refreshSucceeded(custody: Custody, reason: TokenRefreshReason, mine: number, held: HeldToken): void {
  const { state } = custody;
  const { expiresAt, lifetimeMs, generation } = held;
  if (mine === state.attempts) {
    state.current = held;
    // The store just failed this refresh: ask it again only after a while.
    if (generation === null) custody.rejoin?.fellBack(custody.clock());
    state.invalidated = false;
    state.dropped = null;
    state.consecutiveFailures = 0;
    state.lastError = null;
    state.retryAt = null;
    state.refresh = null;
  }
  custody.telemetry.tokenRefresh('ok', reason);
  const source = generation === null ? 'own' : 'shared';
  custody.logger.info(
    {
      event: 'upstream_token_refreshed',
      reason,
      source,
      generation,
      expiresAt: new Date(expiresAt).toISOString(),
      lifetimeMs,
    },
    'upstream token refreshed',
  );
}

/** Records a failed refresh and its backoff; returns what the callers waiting on it get. */
function refreshFailed(custody: Custody, reason: TokenRefreshReason, mine: number, err: unknown): GatewayError {
  const { state } = custody;
  const failure = err instanceof RefreshFailure ? err : new RefreshFailure('network', 'token refresh failed');
  const failedAt = custody.clock();
  if (mine === state.attempts) {
    state.consecutiveFailures += 1;
    state.lastError = failure.message;
    // Full jitter: replicas that failed together do not all come back together.
    const cap = Math.min(custody.maxBackoffMs, custody.initialBackoffMs * 2 ** (state.consecutiveFailures - 1));
    state.retryAt = failedAt + Math.floor(Math.min(Math.max(custody.random(), 0), 1) * cap);
    state.refresh = null;
  }
  custody.telemetry.tokenRefresh('error', reason);
  const level = failure.outcome === 'unauthorized' ? 'error' : 'warn';
  custody.logger[level](
    {
      event: 'upstream_token_refresh_failed',
      reason,
      kind: failure.outcome,
      status: failure.status ?? null,
      error: failure.message,
      consecutiveFailures: state.consecutiveFailures,
      retryAt: state.retryAt === null ? null : new Date(state.retryAt).toISOString(),
    },
    'upstream token refresh failed',
  );
  return unavailable(custody, failedAt, failure);
}

/**
 * On its own token while the store may answer again: the deployment's token, when the store has one, replaces
 * the own one here; when it has none the own one is offered, so the other replicas take it at their own
 * question. Either way one token again, with no login.
 */
function askToRejoin(custody: Custody, source: TokenRejoin, held: HeldToken, now: number): void {
  const own = { token: held.token, expiresAt: held.expiresAt, obtainedAt: held.expiresAt - held.lifetimeMs };
  source.ask(
    now,
    own,
    (token) => custody.clock() < hold(custody, token).usableUntil,
    (found) => {
      // A refresh or a 401 meanwhile decided for itself.
      if (custody.state.current !== held || custody.state.refresh !== null) return;
      custody.state.current = hold(custody, found);
      const how = found.token === held.token ? 'offered' : 'adopted';
      custody.logger.info(
        {
          event: 'upstream_token_rejoined',
          how,
          generation: found.generation,
          expiresAt: new Date(found.expiresAt).toISOString(),
        },
        how === 'offered'
          ? "token store answers again; published this replica's token for the deployment"
          : "token store answers again; using the deployment's token",
      );
    },
  );
}

function pendingRefresh(custody: Custody, now: number): Refresh | null {
  const { state } = custody;
  if (state.refresh !== null && now - state.refresh.startedAt > custody.abandonAfterMs) {
    custody.logger.warn(
      { event: 'upstream_token_refresh_abandoned', startedAt: new Date(state.refresh.startedAt).toISOString() },
      'upstream token refresh never settled; starting another',
    );
    state.refresh = null;
  }
  return state.refresh;
}

/** A replica on its own token asks the store (in the background, at most every few seconds) whether it may rejoin. */
function maybeRejoin(custody: Custody, held: HeldToken, now: number): void {
  if (custody.rejoin !== null && held.generation === null && custody.state.refresh === null) {
    askToRejoin(custody, custody.rejoin, held, now);
  }
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
