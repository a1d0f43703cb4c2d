import { describe, expect, it } from 'vitest';
import { noopTelemetry } from '../../src/observability/telemetry.js';
import { silentLogger } from '../../src/observability/logger.js';
import { createConsoleRateLimiter, rateLimitHeaders } from '../../src/rate-limit/console-limiter.js';
import { createMemoryCounterStore } from '../../src/shared-state/memory/counter-store.js';

const limiter = (perAddress: number, total: number) =>
  createConsoleRateLimiter({
    perAddress,
    total,
    windowSeconds: 60,
    onStoreError: 'memory',
    keyPrefix: 'unit',
    counters: createMemoryCounterStore({ clock: Date.now }),
    logger: silentLogger,
    telemetry: noopTelemetry,
    clock: Date.now,
    keyOf: async (address) => `k:${address}`,
  });

describe('console rate limiter (memory)', () => {
  it('limits each address on its own and reports the scope', async () => {
    const l = limiter(2, 100);
    expect((await l.consume('a')).allowed).toBe(true);
    expect((await l.consume('a')).allowed).toBe(true);
    const third = await l.consume('a');
    expect(third).toMatchObject({ allowed: false, scope: 'address', state: { limit: 2, remaining: 0 } });
    expect(third.allowed ? 0 : third.retryAfterSeconds).toBeGreaterThan(0);
    expect((await l.consume('b')).allowed).toBe(true);
  });

  it('limits all addresses together with the total budget', async () => {
    const l = limiter(10, 2);
    await l.consume('a');
    await l.consume('b');
    expect(await l.consume('c')).toMatchObject({ allowed: false, scope: 'total' });
  });

  it('peeks without counting and reports the policy closest to running out', async () => {
    const l = limiter(5, 3);
    expect(await l.peek('a')).toEqual({ limit: 3, remaining: 3, resetSeconds: 60 });
    expect(await limiter(5, 30).peek('a')).toEqual({ limit: 5, remaining: 5, resetSeconds: 60 });
    await l.consume('a');
    await l.consume('b');
    expect(await l.peek('a')).toMatchObject({ limit: 3, remaining: 1 });
    expect(await l.peek('a')).toMatchObject({ limit: 3, remaining: 1 });
    expect(rateLimitHeaders({ limit: 3, remaining: 1, resetSeconds: 59 }, l.policy)).toEqual({
      'ratelimit-limit': '3',
      'ratelimit-remaining': '1',
      'ratelimit-reset': '59',
      'ratelimit-policy': '5;w=60, 3;w=60',
    });
  });
});
