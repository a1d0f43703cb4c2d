// A refresh of the upstream token: started once for all callers, through the store or a login, settled into custody.
import type { GatewayError } from '../base/errors.js';
import type { TokenRefreshReason } from '../observability/telemetry.js';
import type { Span } from '../observability/tracing/span.js';
import type { SharedTokenSource } from './shared-token.js';
import { hold, unavailable, type Custody, type HeldToken, type Refresh } from './token-custody.js';
import { RefreshFailure } from './token-endpoint.js';

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

export function startRefresh(custody: Custody, reason: TokenRefreshReason, now: number, span?: Span): Refresh {
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

/** The refresh in flight, unless it has run past `abandonAfterMs` (then it is dropped, and null). */
export function pendingRefresh(custody: Custody, now: number): Refresh | null {
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
