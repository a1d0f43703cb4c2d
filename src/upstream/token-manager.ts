// Custody of the upstream bearer token: lazy single-flight refresh, refresh ahead, backoff on failure; with a
// token store, one token and one refresh for the whole deployment (see shared-token.ts).

import { systemClock, type Clock } from '../clock.js';
import { GatewayError } from '../errors.js';
import { silentLogger, type Logger } from '../observability/logger.js';
import { noopTelemetry, type Telemetry, type TokenRefreshReason } from '../observability/telemetry.js';
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
  getToken(): Promise<string>;
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
}

const SAFETY_MARGIN_MAX_MS = 5_000;
const STORE_PROBE_INTERVAL_MS = 2_000;

export function createTokenManager(options: TokenManagerOptions): TokenManager {
  const clock = options.clock ?? systemClock;
  const random = options.random ?? Math.random;
  const telemetry = options.telemetry ?? noopTelemetry;
  const logger = options.logger ?? silentLogger;
  const initialBackoffMs = options.backoff?.initialMs ?? 1_000;
  const maxBackoffMs = options.backoff?.maxMs ?? 60_000;
  const refreshAheadMs = Math.max(0, options.refreshAheadSeconds * 1000);
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
  // A refresh that never settles (e.g. its I/O was cancelled with the request that started it, as
  // Workers may do) must not block every later caller: after this long it is abandoned. With a store,
  // waiting for another replica's login and the store's own commands come on top.
  const abandonAfterMs = options.timeoutMs + 5_000 + (shared ? storeWaitMs + 6 * storeTimeoutMs : 0);

  let current: HeldToken | null = null;
  let refresh: Refresh | null = null;
  let attempts = 0;
  let invalidated = false;
  /** The token an upstream 401 dropped, so the refresh after it asks the store for a newer one. */
  let dropped: { token: string; generation: number | null } | null = null;
  let consecutiveFailures = 0;
  let lastError: string | null = null;
  let retryAt: number | null = null;
  const rejoin: TokenRejoin | null = shared
    ? createTokenRejoin({
        source: shared,
        intervalMs: options.storeProbeIntervalMs ?? STORE_PROBE_INTERVAL_MS,
        background: options.background,
      })
    : null;

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

  function hold(token: SourcedToken): HeldToken {
    const lifetimeMs = token.expiresAt - token.obtainedAt;
    return {
      token: token.token,
      expiresAt: token.expiresAt,
      refreshAt: token.expiresAt - Math.min(refreshAheadMs, lifetimeMs * 0.1),
      usableUntil: token.expiresAt - Math.min(SAFETY_MARGIN_MAX_MS, lifetimeMs * 0.01),
      lifetimeMs,
      generation: token.generation,
    };
  }

  /** The deployment's token: newer than the one held or dropped here, and valid longer than the one held. */
  async function obtainShared(source: SharedTokenSource, now: number): Promise<HeldToken> {
    const newerThan = current?.generation ?? dropped?.generation ?? null;
    const validForMs = current === null ? 1 : Math.max(1, current.expiresAt - now + 1);
    const first = hold(await source.obtain({ newerThan, validForMs }));
    // The published token may be one this process already knows is of no use (the one a 401 dropped, or
    // one inside its safety margin): ask once for a newer one rather than send it.
    const useless = (held: HeldToken): boolean => clock() >= held.usableUntil || held.token === dropped?.token;
    if (!useless(first) || first.generation === null) return first;
    return hold(await source.obtain({ newerThan: first.generation, validForMs }));
  }

  function startRefresh(reason: TokenRefreshReason, now: number): Refresh {
    const mine = ++attempts;
    const promise = (async (): Promise<HeldToken> => {
      try {
        const held = shared ? await obtainShared(shared, now) : hold({ ...(await endpoint.login()), generation: null });
        const { expiresAt, lifetimeMs, generation } = held;
        if (mine === attempts) {
          current = held;
          // The store just failed this refresh: ask it again only after a while.
          if (generation === null) rejoin?.fellBack(clock());
          invalidated = false;
          dropped = null;
          consecutiveFailures = 0;
          lastError = null;
          retryAt = null;
          refresh = null;
        }
        telemetry.tokenRefresh('ok', reason);
        const source = generation === null ? 'own' : 'shared';
        logger.info(
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
        return held;
      } catch (err) {
        const failure = err instanceof RefreshFailure ? err : new RefreshFailure('network', 'token refresh failed');
        const failedAt = clock();
        if (mine === attempts) {
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
    const started: Refresh = { promise, startedAt: now, attempt: mine };
    refresh = started;
    return started;
  }

  /**
   * On its own token while the store may answer again: the deployment's token, when the store has one, replaces
   * the own one here; when it has none the own one is offered, so the other replicas take it at their own
   * question. Either way one token again, with no login.
   */
  function askToRejoin(source: TokenRejoin, held: HeldToken, now: number): void {
    const own = { token: held.token, expiresAt: held.expiresAt, obtainedAt: held.expiresAt - held.lifetimeMs };
    source.ask(
      now,
      own,
      (token) => clock() < hold(token).usableUntil,
      (found) => {
        // A refresh or a 401 meanwhile decided for itself.
        if (current !== held || refresh !== null) return;
        current = hold(found);
        const how = found.token === held.token ? 'offered' : 'adopted';
        logger.info(
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

  function pendingRefresh(now: number): Refresh | null {
    if (refresh !== null && now - refresh.startedAt > abandonAfterMs) {
      logger.warn(
        { event: 'upstream_token_refresh_abandoned', startedAt: new Date(refresh.startedAt).toISOString() },
        'upstream token refresh never settled; starting another',
      );
      refresh = null;
    }
    return refresh;
  }

  return {
    peek() {
      const now = clock();
      const held = current;
      if (!usable(held, now) || now >= held.refreshAt) return undefined;
      // The miss path takes the held token here rather than through getToken: a replica on its own token must
      // still ask the store (in the background, at most every few seconds) whether it may rejoin the deployment's.
      if (rejoin !== null && held.generation === null && refresh === null) askToRejoin(rejoin, held, now);
      return held.token;
    },

    async getToken() {
      const now = clock();
      const held = current;
      if (usable(held, now)) {
        if (now >= held.refreshAt && pendingRefresh(now) === null && !inBackoff(now)) {
          const ahead = startRefresh('ahead', now);
          options.background?.(ahead.promise);
        } else if (rejoin !== null && held.generation === null && refresh === null) {
          askToRejoin(rejoin, held, now);
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
        const { generation } = current;
        dropped = { token, generation };
        current = null;
        invalidated = true;
        logger.info({ event: 'upstream_token_invalidated', generation }, 'upstream refused the token; dropped it');
        // Only if the deployment still holds this very token: N replicas seeing one 401 cause one refresh.
        if (shared !== null && generation !== null) shared.drop(generation);
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
