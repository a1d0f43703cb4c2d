// Custody of the upstream bearer token: lazy single-flight refresh, refresh ahead, backoff on failure.

import { systemClock, type Clock } from '../clock.js';
import { GatewayError } from '../errors.js';
import { silentLogger, type Logger } from '../observability/logger.js';
import { noopTelemetry, type Telemetry, type TokenRefreshReason, type UpstreamOutcome } from '../observability/telemetry.js';
import { transportOutcome, UpstreamTransportError, type UpstreamHttp } from './http.js';
import { parseTokenResponse, type ExpiresInUnit } from './token-response.js';

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
  getToken(): Promise<string>;
  /** After an upstream 401: drops `token` only if it is still the current one. */
  invalidate(token: string): void;
  status(): TokenStatus;
}

export interface TokenManagerOptions {
  http: UpstreamHttp;
  authUrl: string;
  clientId: string;
  clientSecret: string;
  timeoutMs: number;
  expiresInUnit: ExpiresInUnit;
  refreshAheadSeconds: number;
  backoff?: { initialMs: number; maxMs: number };
  clock?: Clock;
  random?: () => number;
  telemetry?: Telemetry;
  logger?: Logger;
}

interface HeldToken {
  token: string;
  expiresAt: number;
  /** From here on callers still get this token, and one background refresh starts. */
  refreshAt: number;
  /** After this the token is treated as expired, so it never expires while a search is in flight. */
  usableUntil: number;
}

interface Refresh {
  promise: Promise<HeldToken>;
  startedAt: number;
  generation: number;
}

const SAFETY_MARGIN_MAX_MS = 5_000;

class RefreshFailure extends Error {
  constructor(
    readonly outcome: UpstreamOutcome,
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'RefreshFailure';
  }
}

export function createTokenManager(options: TokenManagerOptions): TokenManager {
  const clock = options.clock ?? systemClock;
  const random = options.random ?? Math.random;
  const telemetry = options.telemetry ?? noopTelemetry;
  const logger = options.logger ?? silentLogger;
  const initialBackoffMs = options.backoff?.initialMs ?? 1_000;
  const maxBackoffMs = options.backoff?.maxMs ?? 60_000;
  const tokenUrl = `${options.authUrl.replace(/\/+$/, '')}/token/login`;
  const refreshAheadMs = Math.max(0, options.refreshAheadSeconds * 1000);
  // A refresh that never settles (e.g. its I/O was cancelled with the request that started it, as
  // Workers may do) must not block every later caller: after this long it is abandoned.
  const abandonAfterMs = options.timeoutMs + 5_000;

  let current: HeldToken | null = null;
  let refresh: Refresh | null = null;
  let generation = 0;
  let invalidated = false;
  let consecutiveFailures = 0;
  let lastError: string | null = null;
  let retryAt: number | null = null;

  const usable = (held: HeldToken | null, now: number): held is HeldToken => held !== null && now < held.usableUntil;
  const inBackoff = (now: number): boolean => retryAt !== null && now < retryAt;

  function unavailable(now: number, cause?: unknown): GatewayError {
    const headers: Record<string, string> = {};
    if (retryAt !== null && retryAt > now) headers['retry-after'] = String(Math.ceil((retryAt - now) / 1000));
    return new GatewayError('token_unavailable', 'the upstream token could not be obtained', { headers, cause });
  }

  function reasonNow(now: number): TokenRefreshReason {
    if (current === null) return invalidated ? 'unauthorized' : 'cold';
    return usable(current, now) ? 'ahead' : 'expired';
  }

  async function fetchToken(): Promise<{ accessToken: string; lifetimeMs: number }> {
    const started = clock();
    const record = (outcome: UpstreamOutcome): void => telemetry.upstreamCall('token', outcome, (clock() - started) / 1000);
    let res;
    try {
      res = await options.http.request({
        method: 'POST',
        url: tokenUrl,
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: options.clientId,
          client_secret: options.clientSecret,
        }).toString(),
        timeoutMs: options.timeoutMs,
      });
    } catch (err) {
      const kind = err instanceof UpstreamTransportError ? err.kind : 'network';
      const outcome = transportOutcome(kind);
      record(outcome);
      const reason = { timeout: 'token endpoint timed out', network: 'token endpoint unreachable', too_large: 'token endpoint answered too large a body' }[kind];
      throw new RefreshFailure(outcome, reason);
    }
    if (res.status !== 200) {
      const outcome = statusOutcome(res.status);
      record(outcome);
      throw new RefreshFailure(outcome, `token endpoint answered ${res.status}`, res.status);
    }
    try {
      const parsed = parseTokenResponse(res.body, options.expiresInUnit);
      record('ok');
      return parsed;
    } catch (err) {
      record('malformed');
      throw new RefreshFailure('malformed', err instanceof Error ? err.message : 'malformed token response', res.status);
    }
  }

  function startRefresh(reason: TokenRefreshReason, now: number): Refresh {
    const mine = ++generation;
    const promise = (async (): Promise<HeldToken> => {
      try {
        const { accessToken, lifetimeMs } = await fetchToken();
        // Lifetime counts from when we asked, not when the answer arrived: the upstream's clock
        // started no later than that.
        const expiresAt = now + lifetimeMs;
        const held: HeldToken = {
          token: accessToken,
          expiresAt,
          refreshAt: expiresAt - Math.min(refreshAheadMs, lifetimeMs * 0.1),
          usableUntil: expiresAt - Math.min(SAFETY_MARGIN_MAX_MS, lifetimeMs * 0.01),
        };
        if (mine === generation) {
          current = held;
          invalidated = false;
          consecutiveFailures = 0;
          lastError = null;
          retryAt = null;
          refresh = null;
        }
        telemetry.tokenRefresh('ok', reason);
        logger.info({ event: 'upstream_token_refreshed', reason, expiresAt: new Date(expiresAt).toISOString(), lifetimeMs }, 'upstream token refreshed');
        return held;
      } catch (err) {
        const failure = err instanceof RefreshFailure ? err : new RefreshFailure('network', 'token refresh failed');
        const failedAt = clock();
        if (mine === generation) {
          consecutiveFailures += 1;
          lastError = failure.message;
          // Full jitter: replicas that failed together do not all come back together.
          const cap = Math.min(maxBackoffMs, initialBackoffMs * 2 ** (consecutiveFailures - 1));
          retryAt = failedAt + Math.floor(Math.min(Math.max(random(), 0), 1) * cap);
          refresh = null;
        }
        telemetry.tokenRefresh('error', reason);
        const level = failure.outcome === 'unauthorized' ? 'error' : 'warn';
        logger[level](
          {
            event: 'upstream_token_refresh_failed',
            reason,
            kind: failure.outcome,
            status: failure.status ?? null,
            error: failure.message,
            consecutiveFailures,
            retryAt: retryAt === null ? null : new Date(retryAt).toISOString(),
          },
          'upstream token refresh failed',
        );
        throw unavailable(failedAt, failure);
      }
    })();
    // Background refreshes have no awaiting caller; their failure is already recorded above.
    promise.catch(() => {});
    const started: Refresh = { promise, startedAt: now, generation: mine };
    refresh = started;
    return started;
  }

  function pendingRefresh(now: number): Refresh | null {
    if (refresh !== null && now - refresh.startedAt > abandonAfterMs) {
      logger.warn({ event: 'upstream_token_refresh_abandoned', startedAt: new Date(refresh.startedAt).toISOString() }, 'upstream token refresh never settled; starting another');
      refresh = null;
    }
    return refresh;
  }

  return {
    async getToken() {
      const now = clock();
      const held = current;
      if (usable(held, now)) {
        if (now >= held.refreshAt && pendingRefresh(now) === null && !inBackoff(now)) {
          startRefresh('ahead', now);
        }
        return held.token;
      }
      let pending = pendingRefresh(now);
      if (pending === null) {
        // A person is waiting: while the endpoint is failing, answer at once instead of hammering it.
        if (inBackoff(now)) throw unavailable(now);
        pending = startRefresh(reasonNow(now), now);
      }
      const fresh = await pending.promise;
      const after = clock();
      if (!usable(fresh, after)) throw unavailable(after);
      return fresh.token;
    },

    invalidate(token) {
      if (current !== null && current.token === token) {
        current = null;
        invalidated = true;
        logger.info({ event: 'upstream_token_invalidated' }, 'upstream refused the token; dropped it');
      }
    },

    status() {
      const now = clock();
      return {
        hasToken: usable(current, now),
        expiresAt: current?.expiresAt ?? null,
        lastError,
        consecutiveFailures,
        retryAt: inBackoff(now) ? retryAt : null,
      };
    },
  };
}

function statusOutcome(status: number): UpstreamOutcome {
  if (status === 401 || status === 403) return 'unauthorized';
  if (status >= 400 && status < 500) return 'client_error';
  return 'server_error';
}
