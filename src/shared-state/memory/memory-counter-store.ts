// The counter store of one process (Node without REDIS_URL, tests, and the fallback while a shared store is down).
import type { Clock } from '../../base/clock.js';
import type { CounterState, CounterStore } from '../counter-store.js';

interface Window {
  count: number;
  resetAt: number;
}

/** Expired windows are swept every this many writes, so keys an outsider invents (addresses) do not pile up. */
const SWEEP_EVERY = 1_000;

export function createMemoryCounterStore(options: { clock: Clock }): CounterStore {
  const { clock } = options;
  const windows = new Map<string, Window>();
  let writes = 0;

  function open(key: string, windowMs: number, now: number): Window {
    if (++writes % SWEEP_EVERY === 0) {
      for (const [k, w] of windows) if (w.resetAt <= now) windows.delete(k);
    }
    let w = windows.get(key);
    if (w === undefined || w.resetAt <= now) {
      w = { count: 0, resetAt: now + windowMs };
      windows.set(key, w);
    }
    return w;
  }

  const stateOf = (w: Window): CounterState => ({ count: w.count, resetAt: w.resetAt });

  return {
    kind: 'memory',
    async consume(key, points, limit, windowMs) {
      const w = open(key, windowMs, clock());
      if (w.count + points > limit) return { allowed: false, ...stateOf(w) };
      w.count += points;
      return { allowed: true, ...stateOf(w) };
    },
    async add(key, points, windowMs) {
      const w = open(key, windowMs, clock());
      w.count = Math.max(0, w.count + points);
      // Given back to nothing: the key is dropped, so keys an outsider invents do not pile up.
      if (w.count === 0 && points < 0) windows.delete(key);
      return stateOf(w);
    },
    async get(key) {
      const w = windows.get(key);
      return w === undefined || w.resetAt <= clock() ? null : stateOf(w);
    },
  };
}
