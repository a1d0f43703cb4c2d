// The console's anonymous rate limits: per client address and a total budget, two limits called in turn (the
// address first, so one client over its own limit cannot also drain the total).
import type { Clock } from '../base/clock.js';
import { GatewayError } from '../base/errors.js';
import type { Logger } from '../observability/logger.js';
import type { RateLimitScope } from '../observability/telemetry.js';
import type { CounterStoreErrorMode } from '../shared-state/fallback-counter-store.js';
import type { StoreHealth } from '../shared-state/store-health.js';
import {
  createRateLimitFields,
  type RateLimitFields,
  type RateLimitHeaderFormat,
  type RateLimitState,
} from './headers.js';
import { createLimit, type Limit, type SharedLimiters } from './limit.js';

/**
 * What the limits do when the shared store cannot be reached:
 * - `memory`: count on this replica only, so the upstream stays protected, at worst by N replicas times the limit;
 * - `open`: do not count, every request passes (availability first);
 * - `closed`: refuse console searches with 503 (cost control first).
 */
type StoreErrorMode = CounterStoreErrorMode;

export type ConsumeOutcome =
  | { allowed: true; state: RateLimitState }
  | { allowed: false; scope: RateLimitScope; retryAfterSeconds: number; state: RateLimitState };

export interface ConsoleRateLimiter {
  /** Counts one console search; throws GatewayError('unavailable') when the store is down in `closed` mode. */
  consume(address: string | undefined): Promise<ConsumeOutcome>;
  /** The state without counting, for the page and the other console responses. */
  peek(address: string | undefined): Promise<RateLimitState>;
  /** The RateLimit header fields of the console's two policies. */
  readonly fields: RateLimitFields;
}

export interface ConsoleRateLimiterOptions {
  perAddress: number;
  total: number;
  windowSeconds: number;
  /** LIMITS_ON_STORE_ERROR: what the limits do while the shared store is down. */
  onStoreError: StoreErrorMode;
  /** The runtime's shared limiter store; absent, the limits hold per process. */
  shared?: SharedLimiters | undefined;
  /** The shared store's health, shared with its other users (one log line per transition). */
  health?: StoreHealth | undefined;
  headerFormat: RateLimitHeaderFormat;
  logger: Logger;
  clock: Clock;
  /**
   * The store key for an address: a keyed hash, so neither memory nor a shared store holds client
   * addresses in clear. Every replica sharing a store must use the same key.
   */
  keyOf: (address: string) => Promise<string>;
}

const LOG_EVERY_MS = 30_000;
const TOTAL_KEY = 'all';
/** The limits' keys, inside the store's own namespace (REDIS_KEY_PREFIX on Node, the COUNTERS objects on Workers). */
const KEY_PREFIX = 'console-rl';
const UNKNOWN_ADDRESS = 'unknown';
const CONSOLE_POLICIES = { address: 'console-address', total: 'console-total' } as const;

export function createConsoleRateLimiter(options: ConsoleRateLimiterOptions): ConsoleRateLimiter {
  const { perAddress, total, windowSeconds, onStoreError, logger, clock } = options;
  const lastLogged = new Map<string, number>();

  /** One line per kind of event per 30 s: an outage must not flood the logs. Never the address. */
  function logOnce(kind: string, fields: Record<string, unknown>, msg: string): void {
    const now = clock();
    if (now - (lastLogged.get(kind) ?? -Infinity) < LOG_EVERY_MS) return;
    lastLogged.set(kind, now);
    logger.warn({ event: kind, store: options.shared?.kind, mode: onStoreError, ...fields }, msg);
  }

  const limitOf = (scope: RateLimitScope, points: number): Limit =>
    createLimit({
      spec: {
        keyPrefix: `${KEY_PREFIX}:${scope === 'address' ? 'addr' : 'total'}`,
        points,
        durationSeconds: windowSeconds,
      },
      shared: options.shared,
      mode: onStoreError,
      health: options.health,
      clock,
      onStoreError(err) {
        if (onStoreError === 'memory') {
          logOnce(
            'rate_limit_store_fallback',
            {},
            'console rate limits: shared store unreachable, counting in memory on this replica',
          );
        } else {
          logOnce(
            'rate_limit_store_error',
            { reason: err.message.slice(0, 200) },
            `console rate limits: shared store unreachable, failing ${onStoreError}`,
          );
        }
      },
    });
  const limits = { address: limitOf('address', perAddress), total: limitOf('total', total) };
  const fields = createRateLimitFields(
    [
      { name: CONSOLE_POLICIES.address, quota: perAddress, windowSeconds },
      { name: CONSOLE_POLICIES.total, quota: total, windowSeconds },
    ],
    options.headerFormat,
  );

  const stateOf = (scope: RateLimitScope, count: number, resetAt: number): RateLimitState => {
    const limit = limits[scope].spec.points;
    return {
      policy: CONSOLE_POLICIES[scope],
      limit,
      remaining: Math.max(0, limit - count),
      resetSeconds: Math.max(0, Math.ceil((resetAt - clock()) / 1000)),
    };
  };

  type Step =
    | { ok: true; state: RateLimitState }
    | { ok: false; scope: RateLimitScope; state: RateLimitState; retryAfterSeconds: number };

  async function take(scope: RateLimitScope, key: string): Promise<Step> {
    let decision;
    try {
      decision = await limits[scope].consume(key);
    } catch (err) {
      // Only `closed` lets a store error through (the other modes answered from memory or without counting).
      throw new GatewayError(
        'unavailable',
        'The console is paused because its rate limits cannot be checked right now. Try again shortly.',
        { headers: { 'retry-after': '10' }, cause: err },
      );
    }
    const state = stateOf(scope, decision.count, decision.resetAt);
    if (decision.allowed) return { ok: true, state };
    const retryAfterSeconds = Math.max(1, state.resetSeconds);
    return { ok: false, scope, retryAfterSeconds, state: { ...state, resetSeconds: retryAfterSeconds } };
  }

  async function look(scope: RateLimitScope, key: string): Promise<RateLimitState> {
    const found = await limits[scope].get(key);
    return found === null
      ? {
          policy: CONSOLE_POLICIES[scope],
          limit: limits[scope].spec.points,
          remaining: limits[scope].spec.points,
          resetSeconds: windowSeconds,
        }
      : stateOf(scope, found.count, found.resetAt);
  }

  const addressKey = async (address: string | undefined): Promise<string> =>
    address === undefined ? UNKNOWN_ADDRESS : await options.keyOf(address);

  return {
    fields,

    async consume(address) {
      const a = await take('address', await addressKey(address));
      if (!a.ok) return { allowed: false, scope: a.scope, retryAfterSeconds: a.retryAfterSeconds, state: a.state };
      const t = await take('total', TOTAL_KEY);
      if (!t.ok) return { allowed: false, scope: t.scope, retryAfterSeconds: t.retryAfterSeconds, state: t.state };
      return { allowed: true, state: fields.nearest(a.state, t.state) };
    },

    async peek(address) {
      const [a, t] = await Promise.all([look('address', await addressKey(address)), look('total', TOTAL_KEY)]);
      return fields.nearest(a, t);
    },
  };
}
