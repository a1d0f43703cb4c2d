// The console's anonymous rate limits: per client address and a total budget, in memory or in Redis.
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Clock } from '../clock.js';
import { GatewayError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import type { RateLimitScope, Telemetry } from '../observability/telemetry.js';

/**
 * What the store does when Redis cannot be reached:
 * - `memory`: count on this replica only (rate-limiter-flexible's insurance limiter), so the upstream
 *   stays protected, at worst by N replicas times the limit;
 * - `open`: do not count, every request passes (availability first);
 * - `closed`: refuse console searches with 503 (cost control first).
 */
export type StoreErrorMode = 'memory' | 'open' | 'closed';

/** An ioredis client (created by the Node runtime); the core only hands it to RateLimiterRedis. */
export interface RateLimitRedisClient {
  readonly status: string;
}

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
  keyPrefix: string;
  /** Absent: memory per process (Node without REDIS_URL) or per isolate (Workers). */
  redis?: RateLimitRedisClient | undefined;
  logger: Logger;
  telemetry: Telemetry;
  clock: Clock;
  /**
   * The store key for an address: a keyed hash, so neither memory nor a shared Redis holds client
   * addresses in clear. Every replica sharing a Redis must use the same key.
   */
  keyOf: (address: string) => Promise<string>;
}

const LOG_EVERY_MS = 30_000;
const TOTAL_KEY = 'all';
const UNKNOWN_ADDRESS = 'unknown';

export function createConsoleRateLimiter(options: ConsoleRateLimiterOptions): ConsoleRateLimiter {
  const { perAddress, total, windowSeconds, onStoreError, redis, logger, telemetry, clock } = options;
  const lastLogged = new Map<string, number>();

  /** One line per kind of event per 30 s: an outage must not flood the logs. Never the address. */
  function logOnce(kind: string, fields: Record<string, unknown>, msg: string): void {
    const now = clock();
    if (now - (lastLogged.get(kind) ?? -Infinity) < LOG_EVERY_MS) return;
    lastLogged.set(kind, now);
    logger.warn({ event: kind, store: 'redis', mode: onStoreError, ...fields }, msg);
  }

  function counter(name: string, points: number): RateLimiterAbstract {
    const base = { keyPrefix: `${options.keyPrefix}:${name}`, points, duration: windowSeconds };
    if (!redis) return new RateLimiterMemory(base);
    let insuranceLimiter: RateLimiterMemory | undefined;
    if (onStoreError === 'memory') {
      insuranceLimiter = new RateLimiterMemory(base);
      // The insurance limiter is only asked when Redis failed: that is the moment to say so.
      for (const method of ['consume', 'get'] as const) {
        const original = insuranceLimiter[method].bind(insuranceLimiter) as (...args: unknown[]) => Promise<RateLimiterRes | null>;
        (insuranceLimiter as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
          logOnce('rate_limit_store_fallback', {}, 'console rate limits: Redis unreachable, counting in memory on this replica');
          return original(...args);
        };
      }
    }
    return new RateLimiterRedis({ ...base, storeClient: redis, rejectIfRedisNotReady: true, insuranceLimiter });
  }

  const byAddress = counter('addr', perAddress);
  const overall = counter('total', total);

  const stateOf = (res: RateLimiterRes | null, limit: number): RateLimitState =>
    res === null
      ? { limit, remaining: limit, resetSeconds: windowSeconds }
      : { limit, remaining: Math.max(0, res.remainingPoints), resetSeconds: Math.max(0, Math.ceil(res.msBeforeNext / 1000)) };

  /** The policy closest to running out is the one a client needs to know about. */
  const tighter = (a: RateLimitState, t: RateLimitState): RateLimitState => (t.remaining < a.remaining ? t : a);

  /** A store error (never a limit decision): the configured mode decides; returns the state to report. */
  function storeFailed(err: unknown, limit: number): RateLimitState {
    const reason = err instanceof Error ? err.message.slice(0, 200) : 'unknown';
    logOnce('rate_limit_store_error', { reason }, `console rate limits: Redis unreachable, failing ${onStoreError === 'closed' ? 'closed' : 'open'}`);
    if (onStoreError === 'closed') {
      throw new GatewayError('unavailable', 'The console is paused because its rate limits cannot be checked right now. Try again shortly.', {
        headers: { 'retry-after': '10' },
        cause: err,
      });
    }
    return { limit, remaining: limit, resetSeconds: windowSeconds };
  }

  type Step = { ok: true; state: RateLimitState } | { ok: false; state: RateLimitState; retryAfterSeconds: number };

  async function take(limiter: RateLimiterAbstract, key: string, limit: number): Promise<Step> {
    try {
      return { ok: true, state: stateOf(await limiter.consume(key), limit) };
    } catch (err) {
      if (err instanceof RateLimiterRes) {
        const state = stateOf(err, limit);
        return { ok: false, state, retryAfterSeconds: Math.max(1, state.resetSeconds) };
      }
      return { ok: true, state: storeFailed(err, limit) };
    }
  }

  async function look(limiter: RateLimiterAbstract, key: string, limit: number): Promise<RateLimitState> {
    try {
      return stateOf(await limiter.get(key), limit);
    } catch {
      // Reporting must not fail a page load; in closed mode the search itself will refuse.
      return onStoreError === 'closed' ? { limit, remaining: 0, resetSeconds: windowSeconds } : { limit, remaining: limit, resetSeconds: windowSeconds };
    }
  }

  const keyFor = (address: string | undefined): Promise<string> =>
    address === undefined ? Promise.resolve(UNKNOWN_ADDRESS) : options.keyOf(address);

  return {
    policy: `${perAddress};w=${windowSeconds}, ${total};w=${windowSeconds}`,

    async consume(address) {
      // The address is checked first, so one client over its own limit cannot also drain the total budget.
      const a = await take(byAddress, await keyFor(address), perAddress);
      if (!a.ok) {
        telemetry.rateLimited('address');
        return { allowed: false, scope: 'address', retryAfterSeconds: a.retryAfterSeconds, state: { ...a.state, resetSeconds: a.retryAfterSeconds } };
      }
      const t = await take(overall, TOTAL_KEY, total);
      if (!t.ok) {
        telemetry.rateLimited('total');
        return { allowed: false, scope: 'total', retryAfterSeconds: t.retryAfterSeconds, state: { ...t.state, resetSeconds: t.retryAfterSeconds } };
      }
      return { allowed: true, state: tighter(a.state, t.state) };
    },

    async peek(address) {
      const [a, t] = await Promise.all([look(byAddress, await keyFor(address), perAddress), look(overall, TOTAL_KEY, total)]);
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
