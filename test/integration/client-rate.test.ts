// The per-client rate: decided on this process at once (the hit path cannot wait), reconciled with its
// rate-limiter-flexible limiter in the background; two replicas sharing a RateLimiterRedis learn each other's counts.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { parseItem } from 'structured-headers';
import { afterAll, describe, expect, it } from 'vitest';
import { createClientRate } from '../../src/limits/client-rate.js';
import { createRedisLimiters } from '../../src/runtime/redis/redis-limiters.js';
import { checkRequirement, tcpRequirement } from '../helpers/requires.js';

const redisUp = checkRequirement(await tcpRequirement('127.0.0.1', 6379, 'Redis at 127.0.0.1:6379'));

function backgroundQueue() {
  const work: Promise<unknown>[] = [];
  return { background: (p: Promise<unknown>) => void work.push(p), settle: () => Promise.all(work.splice(0)) };
}

describe('client rate', () => {
  it('counts per client per clock minute, synchronously, and names its policy in the fields', () => {
    const time = { now: Date.parse('2026-03-01T10:00:45Z') };
    const clock = () => time.now;
    const rate = createClientRate({ perMinute: 2, clock, headerFormat: 'draft-11', ...backgroundQueue() });
    expect(rate.take('crm')).toEqual({
      allowed: true,
      state: { policy: 'client', limit: 2, remaining: 1, resetSeconds: 15 },
    });
    expect(rate.take('crm').allowed).toBe(true);
    expect(rate.allows('crm')).toBe(false);
    const refused = rate.take('crm');
    expect(refused).toEqual({ allowed: false, state: { policy: 'client', limit: 2, remaining: 0, resetSeconds: 15 } });
    expect(rate.take('pbx').allowed).toBe(true);
    const headers = rate.fields.headers(refused.state);
    expect(headers['ratelimit-policy']).toBe('"client";q=2;w=60');
    const [name, params] = parseItem(headers['ratelimit']!);
    expect([name, params.get('r'), params.get('t')]).toEqual(['client', 0, 15]);
    time.now = Date.parse('2026-03-01T10:01:00Z');
    expect(rate.allows('crm')).toBe(true);
    expect(rate.take('crm').state).toMatchObject({ remaining: 1, resetSeconds: 60 });
  });
});

describe.skipIf(!redisUp)('client rate on RateLimiterRedis (127.0.0.1:6379)', () => {
  const prefix = `t-${randomUUID()}`;
  const client = new Redis('redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
  afterAll(async () => {
    const keys = await client.keys(`${prefix}:*`);
    if (keys.length > 0) await client.del(...keys);
    client.disconnect();
  });

  it('two replicas learn each other’s counts from the shared limiter and refuse together', async () => {
    await client.ping();
    const shared = createRedisLimiters({ client, keyPrefix: prefix });
    const replica = () => {
      const queue = backgroundQueue();
      const rate = createClientRate({ perMinute: 10, clock: Date.now, headerFormat: 'draft-11', shared, ...queue });
      return { rate, settle: queue.settle };
    };
    const a = replica();
    const b = replica();
    for (let i = 0; i < 6; i++) expect(a.rate.take('crm').allowed).toBe(true);
    await a.rate.sync();
    // b has counted nothing itself: its next reconciliation brings a's six.
    expect(b.rate.take('crm').state.remaining).toBe(9);
    await b.rate.sync();
    expect(b.rate.take('crm').state.remaining).toBe(2);
    for (let i = 0; i < 2; i++) expect(b.rate.take('crm').allowed).toBe(true);
    expect(b.rate.take('crm').allowed).toBe(false);
    const keys = await client.keys(`${prefix}:*`);
    expect(keys).toHaveLength(1);
    expect(Number(await client.get(keys[0]!))).toBe(7);
  });
});
