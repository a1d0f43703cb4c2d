// CLIENT_RATE_PER_MINUTE: searches per registered client per clock minute, every answer counting (cache hits
// on the Node hit path too). Counted on this process and reconciled in the background: never a network round
// trip per search.
import type { Clock } from '../clock.js';
import type { RateLimitState } from '../rate-limit/console-limiter.js';
import type { LocalCounters } from './local-counters.js';

export interface RateDecision {
  allowed: boolean;
  state: RateLimitState;
}

export interface ClientRate {
  /** Counts one search of `client` (a refusal counts nothing); synchronous. */
  take(client: string): RateDecision;
  /** Whether a `take` now would be allowed, counting nothing. */
  allows(client: string): boolean;
  /** RateLimit-Policy value, e.g. `600;w=60`. */
  readonly policy: string;
}

const MINUTE_MS = 60_000;

export function createClientRate(options: { perMinute: number; counters: LocalCounters; clock: Clock }): ClientRate {
  const { perMinute, counters, clock } = options;
  // Clock-aligned windows: every replica agrees on where a minute starts without asking the store.
  const keyOf = (client: string, now: number) => `rate:${client}:${Math.floor(now / MINUTE_MS)}`;
  return {
    policy: `${perMinute};w=60`,
    allows: (client) => counters.peek(keyOf(client, clock())) < perMinute,
    take(client) {
      const now = clock();
      const resetAt = (Math.floor(now / MINUTE_MS) + 1) * MINUTE_MS;
      const d = counters.take(keyOf(client, now), perMinute, resetAt);
      const resetSeconds = Math.max(1, Math.ceil((d.resetAt - now) / 1000));
      return {
        allowed: d.allowed,
        state: { limit: perMinute, remaining: Math.max(0, perMinute - d.count), resetSeconds },
      };
    },
  };
}
