// A shared counter store with its store-error mode applied: while the shared store (Redis, a Durable Object)
// cannot answer, a limit counts on this process (`memory`), stops counting (`open`) or refuses (`closed`),
// and goes back to the shared store by itself once it answers again.
import type { Clock } from '../base/clock.js';
import type { CounterState, CounterStore } from './counter-store.js';
import { createMemoryCounterStore } from './memory/memory-counter-store.js';
import type { StoreHealth } from './store-health.js';
import { StoreUnavailableError } from './store-unavailable.js';

/**
 * - `memory`: count in a memory store on this process while the shared one is down (a limit then holds per
 *   replica, at worst N replicas times the limit; counts taken meanwhile are not replayed into the shared store);
 * - `open`: do not count, everything passes (availability first);
 * - `closed`: reject with StoreUnavailableError, the caller refuses (cost control first).
 */
export type CounterStoreErrorMode = 'memory' | 'open' | 'closed';

export interface FallbackCounterStoreOptions {
  shared: CounterStore;
  mode: CounterStoreErrorMode;
  /** One per shared store, shared by every wrapper of it: one log line and one metric move per transition. */
  health: StoreHealth;
  clock: Clock;
  /** Told of each operation the shared store failed, after the mode decided (callers log it in their own words). */
  onStoreError?: (err: StoreUnavailableError) => void;
  /** While down, the shared store is tried again at most this often; operations in between fall back at once. */
  retryAfterMs?: number;
}

const DEFAULT_RETRY_AFTER_MS = 1_000;

export function createFallbackCounterStore(options: FallbackCounterStoreOptions): CounterStore {
  const { shared, mode, health, clock } = options;
  const retryAfterMs = options.retryAfterMs ?? DEFAULT_RETRY_AFTER_MS;
  const local = createMemoryCounterStore({ clock });
  // The shared store is skipped until then: a Redis that accepts and hangs would cost every request its timeout.
  let skipUntil = 0;

  async function attempt<T>(
    op: (store: CounterStore) => Promise<T>,
    fallback: (err: StoreUnavailableError) => Promise<T>,
  ): Promise<T> {
    if (clock() < skipUntil)
      return fallback(new StoreUnavailableError('counter', 'shared counter store is down; retrying shortly'));
    try {
      const result = await op(shared);
      skipUntil = 0;
      health.up();
      return result;
    } catch (err) {
      const failure =
        err instanceof StoreUnavailableError
          ? err
          : new StoreUnavailableError('counter', 'shared counter store failed', { cause: err });
      skipUntil = clock() + retryAfterMs;
      health.down(failure);
      return fallback(failure);
    }
  }

  function degraded<T>(inMemory: () => Promise<T>, notCounted: () => T): (err: StoreUnavailableError) => Promise<T> {
    return async (err) => {
      options.onStoreError?.(err);
      if (mode === 'closed') throw err;
      return mode === 'memory' ? inMemory() : notCounted();
    };
  }

  const uncounted = (windowMs: number): CounterState => ({ count: 0, resetAt: clock() + windowMs });

  return {
    kind: shared.kind,
    consume: (key, points, limit, windowMs) =>
      attempt(
        (s) => s.consume(key, points, limit, windowMs),
        degraded(
          () => local.consume(key, points, limit, windowMs),
          () => ({ allowed: true, ...uncounted(windowMs) }),
        ),
      ),
    add: (key, points, windowMs) =>
      attempt(
        (s) => s.add(key, points, windowMs),
        degraded(
          () => local.add(key, points, windowMs),
          () => uncounted(windowMs),
        ),
      ),
    get: (key) =>
      attempt(
        (s) => s.get(key),
        degraded(
          () => local.get(key),
          () => null,
        ),
      ),
  };
}
