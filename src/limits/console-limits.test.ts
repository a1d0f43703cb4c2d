import { parseItem, parseList } from 'structured-headers';
import { describe, expect, it } from 'vitest';
import { createConsoleRateLimiter } from './console-limits.js';
import type { RateLimitHeaderFormat } from './headers.js';
import { silentLogger } from '../observability/logger.js';

const limiter = (perAddress: number, total: number, headerFormat: RateLimitHeaderFormat = 'draft-11') =>
  createConsoleRateLimiter({
    perAddress,
    total,
    windowSeconds: 60,
    onStoreError: 'memory',
    headerFormat,
    logger: silentLogger,
    clock: Date.now,
    keyOf: async (address: string) => `k:${address}`,
  });

describe('console rate limits (rate-limiter-flexible in memory)', () => {
  it('limits each address on its own and reports the scope', async () => {
    const l = limiter(2, 100);
    expect((await l.consume('a')).allowed).toBe(true);
    expect((await l.consume('a')).allowed).toBe(true);
    const third = await l.consume('a');
    expect(third).toMatchObject({
      allowed: false,
      scope: 'address',
      state: { policy: 'console-address', limit: 2, remaining: 0 },
    });
    expect(third.allowed ? 0 : third.retryAfterSeconds).toBeGreaterThan(0);
    expect((await l.consume('b')).allowed).toBe(true);
  });

  it('limits all addresses together with the total budget', async () => {
    const l = limiter(10, 2);
    await l.consume('a');
    await l.consume('b');
    expect(await l.consume('c')).toMatchObject({ allowed: false, scope: 'total', state: { policy: 'console-total' } });
  });

  it('peeks without counting and reports the policy closest to running out', async () => {
    const l = limiter(5, 3);
    expect(await l.peek('a')).toEqual({ policy: 'console-total', limit: 3, remaining: 3, resetSeconds: 60 });
    expect(await limiter(5, 30).peek('a')).toEqual({
      policy: 'console-address',
      limit: 5,
      remaining: 5,
      resetSeconds: 60,
    });
    await l.consume('a');
    await l.consume('b');
    expect(await l.peek('a')).toMatchObject({ policy: 'console-total', limit: 3, remaining: 1 });
    expect(await l.peek('a')).toMatchObject({ limit: 3, remaining: 1 });
  });

  it('writes the draft-11 fields as structured fields: the policies, and the one nearest to refusal', () => {
    const l = limiter(10, 300);
    const headers = l.fields.headers({ policy: 'console-address', limit: 10, remaining: 7, resetSeconds: 42 });
    expect(headers).toEqual({
      'ratelimit-policy': '"console-address";q=10;w=60, "console-total";q=300;w=60',
      ratelimit: '"console-address";r=7;t=42',
    });
    const policies = parseList(headers['ratelimit-policy']!);
    expect(policies.map(([name, params]) => [name, Object.fromEntries(params)])).toEqual([
      ['console-address', { q: 10, w: 60 }],
      ['console-total', { q: 300, w: 60 }],
    ]);
    const [name, params] = parseItem(headers['ratelimit']!);
    expect([name, Object.fromEntries(params)]).toEqual(['console-address', { r: 7, t: 42 }]);
  });

  it('keeps the draft-6 trio for RATELIMIT_HEADERS=draft-6, and both drafts together for `both`', () => {
    const state = { policy: 'console-total', limit: 3, remaining: 1, resetSeconds: 59 };
    expect(limiter(5, 3, 'draft-6').fields.headers(state)).toEqual({
      'ratelimit-limit': '3',
      'ratelimit-remaining': '1',
      'ratelimit-reset': '59',
      'ratelimit-policy': '5;w=60, 3;w=60',
    });
    expect(limiter(5, 3, 'both').fields.headers(state)).toEqual({
      'ratelimit-policy': '"console-address";q=5;w=60, "console-total";q=3;w=60',
      ratelimit: '"console-total";r=1;t=59',
      'ratelimit-limit': '3',
      'ratelimit-remaining': '1',
      'ratelimit-reset': '59',
    });
  });
});
