// A shared limit's counts as this process knows them: for each key, the count the shared store last answered or this
// process's own takes since, whichever is more. What a limit counts on while its shared store cannot answer, so a
// stall does not open a fresh window: a key counted full stays full, and one counted 3 of 5 allows 2 more, not 5.
import { LRUCache } from 'lru-cache';
import type { Clock } from '../base/clock.js';
import type { CounterState } from '../shared-state/counter-store.js';

interface FallbackCounts {
  /**
   * The shared store counted `points` on `key` and answered `state`; returns this process's count before, which the
   * shared count may not hold (takes counted here while the store was down).
   */
  seen(key: string, points: number, state: CounterState): number;
  /** Counts `points` here (the store is down) and returns the new state; a new key opens a window of its own. */
  add(key: string, points: number): CounterState;
  /** The key's count here, or null when its window is not open. */
  get(key: string): CounterState | null;
  /** Gives `points` back; a key given back to nothing is forgotten. */
  reward(key: string, points: number): void;
}

interface FallbackCountsOptions {
  windowMs: number;
  /** Keys remembered; past it the least recently used is forgotten (and falls back from zero). */
  maxKeys: number;
  clock: Clock;
}

export function createFallbackCounts(options: FallbackCountsOptions): FallbackCounts {
  const { clock, windowMs } = options;
  // Synchronous reads and writes: answers arriving together cannot both read a count before either wrote it.
  const entries = new LRUCache<string, CounterState>({ max: options.maxKeys });
  const current = (key: string): CounterState | undefined => {
    const state = entries.get(key);
    return state !== undefined && state.resetAt > clock() ? state : undefined;
  };

  return {
    seen(key, points, state) {
      const before = current(key)?.count ?? 0;
      entries.set(key, { count: Math.max(before + points, state.count), resetAt: state.resetAt });
      return before;
    },
    add(key, points) {
      const state = current(key) ?? { count: 0, resetAt: clock() + windowMs };
      const next = { count: state.count + points, resetAt: state.resetAt };
      entries.set(key, next);
      return { ...next };
    },
    get(key) {
      const state = current(key);
      return state === undefined ? null : { ...state };
    },
    reward(key, points) {
      const state = current(key);
      if (state === undefined) return;
      if (state.count - points <= 0) entries.delete(key);
      else entries.set(key, { count: state.count - points, resetAt: state.resetAt });
    },
  };
}
