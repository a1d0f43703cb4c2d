// A shared limit in `memory` mode while its store is down: it goes on from the count the store last answered (its
// own takes and other processes'), never from zero, and what it took meanwhile still counts once the store is back.
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import RateLimiterMemory from 'rate-limiter-flexible/lib/RateLimiterMemory.js';
import { describe, expect, it } from 'vitest';
import { createLimit, type LimitSpec, type SharedLimiters } from './limit.js';

const SPEC: LimitSpec = { keyPrefix: 'login-fail:pair', points: 5, durationSeconds: 600 };
// The shared store skips a failed store for a second: each step moves past it.
const PAST_RETRY_MS = 1_001;

/** One store for every process of the deployment, which can stop answering (and forget everything, as a restart). */
function sharedStore() {
  const state = {
    down: false,
    limiter: new RateLimiterMemory({ points: SPEC.points, duration: SPEC.durationSeconds }),
  };
  const failing = new Proxy({} as RateLimiterAbstract, {
    get(_target, name) {
      const real = Reflect.get(state.limiter, name) as unknown;
      if (typeof real !== 'function') return real;
      return (...args: unknown[]) =>
        state.down
          ? Promise.reject(new Error('Command timed out'))
          : (real as (...a: unknown[]) => unknown).apply(state.limiter, args);
    },
  });
  const shared: SharedLimiters = { kind: 'redis', create: () => failing };
  return {
    state,
    shared,
    restart() {
      state.limiter = new RateLimiterMemory({ points: SPEC.points, duration: SPEC.durationSeconds });
    },
  };
}

function processOf(shared: SharedLimiters) {
  const time = { now: Date.now() };
  const limit = createLimit({ spec: SPEC, shared, mode: 'memory', clock: () => time.now });
  const allowed = async (times: number) => {
    let n = 0;
    for (let i = 0; i < times; i++) if ((await limit.consume('k')).allowed) n++;
    return n;
  };
  return { time, limit, allowed };
}

describe('a shared limit counting on this process while its store is down', () => {
  it('goes on from the count the store last answered, not from zero', async () => {
    const store = sharedStore();
    const p = processOf(store.shared);
    expect(await p.allowed(3)).toBe(3);
    store.state.down = true;
    expect(await p.allowed(10)).toBe(2);
  });

  it('goes on from the count another process took, as the store last answered it', async () => {
    const store = sharedStore();
    const [a, b] = [processOf(store.shared), processOf(store.shared)];
    expect(await a.allowed(4)).toBe(4);
    expect(await b.allowed(1)).toBe(1);
    store.state.down = true;
    expect(await b.allowed(10)).toBe(0);
  });

  it('still counts what it took while the store was down once the store answers again, even emptied', async () => {
    const store = sharedStore();
    const p = processOf(store.shared);
    store.state.down = true;
    expect(await p.allowed(3)).toBe(3);
    store.restart();
    store.state.down = false;
    p.time.now += PAST_RETRY_MS;
    expect(await p.allowed(10)).toBe(2);
  });

  it('takes a reward back on both counts, so a right secret leaves no trace', async () => {
    const store = sharedStore();
    const p = processOf(store.shared);
    expect(await p.allowed(5)).toBe(5);
    for (let i = 0; i < 5; i++) await p.limit.reward('k');
    store.state.down = true;
    expect(await p.allowed(10)).toBe(5);
  });

  it('counts for a window of its own a key the store never answered for', async () => {
    const store = sharedStore();
    store.state.down = true;
    const p = processOf(store.shared);
    expect(await p.allowed(10)).toBe(5);
    p.time.now += SPEC.durationSeconds * 1000;
    expect(await p.allowed(10)).toBe(5);
  });
});
