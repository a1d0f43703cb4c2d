// The console's anonymous rate limits: per client address and a total budget, on the counter-store port
// (memory per process, Redis across replicas, Durable Objects on Workers).
import type { Clock } from '../clock.js';
import { GatewayError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import type { RateLimitScope, Telemetry } from '../observability/telemetry.js';
import type { CounterState, CounterStore } from '../shared-state/counter-store.js';
import { createFallbackCounterStore, type CounterStoreErrorMode } from '../shared-state/fallback-counter-store.js';
import { createStoreHealth, type StoreHealth } from '../shared-state/store-health.js';

/**
 * What the limits do when the shared counter store cannot be reached:
 * - `memory`: count on this replica only, so the upstream stays protected, at worst by N replicas times the limit;
 * - `open`: do not count, every request passes (availability first);
 * - `closed`: refuse console searches with 503 (cost control first).
 */
export type StoreErrorMode = CounterStoreErrorMode;

export interface RateLimitState {
  limit: number;
  remaining: number;
  /** Seconds until the window of this policy starts afresh. */
  resetSeconds: number;
}

export type ConsumeOutcome =
  | { allowed: true; state: RateLimitState }
  | { allowed: false; scope: RateLimitScope; retryAfterSeconds: number; state: RateLimitState };

export interface ConsoleRateLimiter {
  /** Counts one console search; throws GatewayError('unavailable') when the store is down in `closed` mode. */
  consume(address: string | undefined): Promise<ConsumeOutcome>;
  /** The state without counting, for the page and the other console responses. */
  peek(address: string | undefined): Promise<RateLimitState>;
  /** RateLimit-Policy value, e.g. `10;w=60, 300;w=60`. */
  readonly policy: string;
}

export interface ConsoleRateLimiterOptions {
  perAddress: number;
  total: number;
  windowSeconds: number;
  onStoreError: StoreErrorMode;
  /** Prefix of the counter keys (CONSOLE_RATE_KEY_PREFIX), so several deployments can share one store. */
  keyPrefix: string;
  /** The counter store: a memory one (per process or isolate) is used as is; a shared one gets `onStoreError` applied. */
  counters: CounterStore;
  /** The shared counter store's health, shared with its other users (one log line per transition). */
  health?: StoreHealth | undefined;
  logger: Logger;
  telemetry: Telemetry;
  clock: Clock;
  /**
   * The store key for an address: a keyed hash, so neither memory nor a shared store holds client
   * addresses in clear. Every replica sharing a store must use the same key.
   */
  keyOf: (address: string) => Promise<string>;
}

const LOG_EVERY_MS = 30_000;
const TOTAL_KEY = 'all';
const UNKNOWN_ADDRESS = 'unknown';

export function createConsoleRateLimiter(options: ConsoleRateLimiterOptions): ConsoleRateLimiter {
  const { perAddress, total, windowSeconds, onStoreError, logger, telemetry, clock } = options;
  const windowMs = windowSeconds * 1000;
  const lastLogged = new Map<string, number>();

  /** One line per kind of event per 30 s: an outage must not flood the logs. Never the address. */
  function logOnce(kind: string, fields: Record<string, unknown>, msg: string): void {
    const now = clock();
    if (now - (lastLogged.get(kind) ?? -Infinity) < LOG_EVERY_MS) return;
    lastLogged.set(kind, now);
    logger.warn({ event: kind, store: options.counters.kind, mode: onStoreError, ...fields }, msg);
  }

  const counters =
    options.counters.kind === 'memory'
      ? options.counters
      : createFallbackCounterStore({
          shared: options.counters,
          mode: onStoreError,
          health:
            options.health ?? createStoreHealth({ store: 'counter', kind: options.counters.kind, logger, telemetry }),
          clock,
          onStoreError(err) {
            if (onStoreError === 'memory') {
              logOnce(
                'rate_limit_store_fallback',
                {},
                'console rate limits: shared store unreachable, counting in memory on this replica',
              );
            } else {
              const reason = err.message.slice(0, 200);
              logOnce(
                'rate_limit_store_error',
                { reason },
                `console rate limits: shared store unreachable, failing ${onStoreError}`,
              );
            }
          },
        });

  const full = (limit: number): RateLimitState => ({ limit, remaining: limit, resetSeconds: windowSeconds });
  const stateOf = (counted: CounterState | null, limit: number): RateLimitState =>
    counted === null
      ? full(limit)
      : {
          limit,
          remaining: Math.max(0, limit - counted.count),
          resetSeconds: Math.max(0, Math.ceil((counted.resetAt - clock()) / 1000)),
        };

  /** The policy closest to running out is the one a client needs to know about. */
  const tighter = (a: RateLimitState, t: RateLimitState): RateLimitState => (t.remaining < a.remaining ? t : a);

  type Step = { ok: true; state: RateLimitState } | { ok: false; state: RateLimitState; retryAfterSeconds: number };

  async function take(key: string, limit: number): Promise<Step> {
    let decision;
    try {
      decision = await counters.consume(key, 1, limit, windowMs);
    } catch (err) {
      // Only `closed` lets a store error through (the other modes answered from memory or without counting).
      throw new GatewayError(
        'unavailable',
        'The console is paused because its rate limits cannot be checked right now. Try again shortly.',
        {
          headers: { 'retry-after': '10' },
          cause: err,
        },
      );
    }
    const state = stateOf(decision, limit);
    if (decision.allowed) return { ok: true, state };
    return { ok: false, state, retryAfterSeconds: Math.max(1, state.resetSeconds) };
  }

  async function look(key: string, limit: number): Promise<RateLimitState> {
    try {
      return stateOf(await counters.get(key), limit);
    } catch {
      // Reporting must not fail a page load; in closed mode the search itself will refuse.
      return { limit, remaining: 0, resetSeconds: windowSeconds };
    }
  }

  const addressKey = async (address: string | undefined): Promise<string> =>
    `${options.keyPrefix}:addr:${address === undefined ? UNKNOWN_ADDRESS : await options.keyOf(address)}`;
  const totalKey = `${options.keyPrefix}:total:${TOTAL_KEY}`;

  return {
    policy: `${perAddress};w=${windowSeconds}, ${total};w=${windowSeconds}`,

    async consume(address) {
      // The address is checked first, so one client over its own limit cannot also drain the total budget.
      const a = await take(await addressKey(address), perAddress);
      if (!a.ok) {
        return {
          allowed: false,
          scope: 'address',
          retryAfterSeconds: a.retryAfterSeconds,
          state: { ...a.state, resetSeconds: a.retryAfterSeconds },
        };
      }
      const t = await take(totalKey, total);
      if (!t.ok) {
        return {
          allowed: false,
          scope: 'total',
          retryAfterSeconds: t.retryAfterSeconds,
          state: { ...t.state, resetSeconds: t.retryAfterSeconds },
        };
      }
      return { allowed: true, state: tighter(a.state, t.state) };
    },

    async peek(address) {
      const [a, t] = await Promise.all([look(await addressKey(address), perAddress), look(totalKey, total)]);
      return tighter(a, t);
    },
  };
}

/** The RateLimit-* headers (draft-ietf-httpapi-ratelimit-headers) for one state. */
export function rateLimitHeaders(state: RateLimitState, policy: string): Record<string, string> {
  return {
    'ratelimit-limit': String(state.limit),
    'ratelimit-remaining': String(state.remaining),
    'ratelimit-reset': String(state.resetSeconds),
    'ratelimit-policy': policy,
  };
}
