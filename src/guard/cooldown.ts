// An upstream 429 honoured: no upstream search call until its Retry-After (or UPSTREAM_COOLDOWN_SECONDS), whichever
// replica met it.
import type { Clock } from '../clock.js';

export interface Cooldown {
  /** Starts (or extends) the wait after a 429; `retryAfterMs` null: the configured default. */
  start(retryAfterMs: number | null): void;
  /** Another replica met a 429: wait at least `ms` from now too (not counted as a cooldown of this process). */
  learn(ms: number): void;
  /** Ms left (0: the upstream may be called). */
  remainingMs(): number;
}

export function createCooldown(options: {
  defaultMs: number;
  /** No pause outlives this (UPSTREAM_COOLDOWN_MAX_SECONDS), however it was learnt: a 429 or a shared window. */
  maxMs: number;
  clock: Clock;
  onStart?: () => void;
}): Cooldown {
  const { clock } = options;
  let until = 0;
  const bounded = (ms: number) => (Number.isFinite(ms) ? Math.min(Math.max(0, ms), options.maxMs) : options.defaultMs);
  return {
    start(retryAfterMs) {
      // Several calls in flight may all come back 429: the latest end wins, never an earlier one.
      until = Math.max(until, clock() + bounded(retryAfterMs ?? options.defaultMs));
      options.onStart?.();
    },
    learn(ms) {
      until = Math.max(until, clock() + bounded(ms));
    },
    remainingMs: () => Math.max(0, until - clock()),
  };
}
