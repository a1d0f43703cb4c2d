// What a counter Durable Object does: one key's count in its current window, exact because the object handles
// one call at a time, persisted, and forgotten by an alarm once the window has closed.
import type { Clock } from '../../../base/clock.js';
import type { CounterDecision, CounterState } from '../../../shared-state/counter-store.js';
import type { DurableObjectStorage } from '../bindings.js';

export interface CounterWindow {
  consume(points: number, limit: number, windowMs: number): Promise<CounterDecision>;
  add(points: number, windowMs: number): Promise<CounterState>;
  get(): Promise<CounterState | null>;
  /** The storage alarm: drops a closed window so the object holds nothing until its key is counted again. */
  alarm(): Promise<void>;
}

const WINDOW_KEY = 'w';

export function createCounterWindow(options: { storage: DurableObjectStorage; clock: Clock }): CounterWindow {
  const { storage, clock } = options;
  // Kept in memory as well: the object is the only writer, so storage is read once per instance life.
  let cached: CounterState | null | undefined;

  async function current(now: number): Promise<CounterState | null> {
    if (cached === undefined) cached = (await storage.get<CounterState>(WINDOW_KEY)) ?? null;
    return cached !== null && cached.resetAt > now ? cached : null;
  }

  async function open(windowMs: number, now: number): Promise<CounterState> {
    const w = await current(now);
    if (w !== null) return w;
    const fresh = { count: 0, resetAt: now + windowMs };
    await storage.setAlarm(fresh.resetAt);
    return fresh;
  }

  async function save(w: CounterState): Promise<CounterState> {
    cached = w;
    await storage.put(WINDOW_KEY, w);
    return { count: w.count, resetAt: w.resetAt };
  }

  return {
    async consume(points, limit, windowMs) {
      const w = await open(windowMs, clock());
      if (w.count + points > limit) return { allowed: false, count: w.count, resetAt: w.resetAt };
      return { allowed: true, ...(await save({ count: w.count + points, resetAt: w.resetAt })) };
    },
    async add(points, windowMs) {
      const w = await open(windowMs, clock());
      const count = Math.max(0, w.count + points);
      if (count === 0 && points < 0) {
        // Given back to nothing: the object keeps nothing for this key (an outsider's invented keys cost nothing).
        cached = null;
        await storage.delete(WINDOW_KEY);
        return { count: 0, resetAt: w.resetAt };
      }
      return save({ count, resetAt: w.resetAt });
    },
    async get() {
      const w = await current(clock());
      return w === null ? null : { count: w.count, resetAt: w.resetAt };
    },
    async alarm() {
      const w = await current(clock());
      if (w !== null) {
        await storage.setAlarm(w.resetAt);
        return;
      }
      cached = null;
      await storage.deleteAll();
    },
  };
}
