// The limits' RateLimiterRedis in a real Redis: a limit shared by two limiters (two replicas), a foreign or
// malformed value in one key treated as absent and overwritten (never a store failure), a count given back to
// nothing deleting its key, and keys under REDIS_KEY_PREFIX.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLimit } from '../../../src/limits/limit.js';
import { createRedisLimiters } from '../../../src/runtime/redis/redis-limiters.js';
import { checkRequirement, tcpRequirement } from '../../helpers/requires.js';

const redisUp = checkRequirement(await tcpRequirement('127.0.0.1', 6379, 'Redis at 127.0.0.1:6379'));

describe.skipIf(!redisUp)('limits on RateLimiterRedis (127.0.0.1:6379)', () => {
  const prefix = `t-${randomUUID()}`;
  const client = new Redis('redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
  // The limiter refuses to wait for a connection (rejectIfRedisNotReady): connected first.
  beforeAll(() => client.ping());
  afterAll(async () => {
    const keys = await client.keys(`${prefix}:*`);
    if (keys.length > 0) await client.del(...keys);
    client.disconnect();
  });
  const failures: unknown[] = [];
  const limit = (points: number) =>
    createLimit({
      spec: { keyPrefix: 'unit', points, durationSeconds: 60 },
      shared: createRedisLimiters({ client, keyPrefix: prefix }),
      mode: 'closed',
      clock: Date.now,
      onStoreError: (err) => failures.push(err),
    });

  it('counts one limit across two limiters, refusing past it', async () => {
    const [a, b] = [limit(3), limit(3)];
    expect((await a.consume('k1')).allowed).toBe(true);
    expect((await b.consume('k1')).allowed).toBe(true);
    expect(await a.consume('k1')).toMatchObject({ allowed: true, count: 3 });
    expect((await b.consume('k1')).allowed).toBe(false);
    const ttl = await client.pttl(`${prefix}:ctr:unit:k1`);
    expect(ttl).toBeGreaterThan(55_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
    expect(failures).toEqual([]);
  });

  it('treats a malformed or foreign value as absent and overwrites it, without a store failure', async () => {
    const l = limit(5);
    await client.set(`${prefix}:ctr:unit:text`, 'not a count', 'PX', 60_000);
    await client.set(`${prefix}:ctr:unit:fraction`, '2.5', 'PX', 60_000);
    await client.hset(`${prefix}:ctr:unit:hash`, 'a', '1');
    await client.pexpire(`${prefix}:ctr:unit:hash`, 60_000);
    for (const key of ['text', 'fraction', 'hash']) {
      expect(await l.consume(key)).toMatchObject({ allowed: true, count: 1 });
      expect(await client.get(`${prefix}:ctr:unit:${key}`)).toBe('1');
    }
    expect(failures).toEqual([]);
  });

  it('deletes a key given back to nothing', async () => {
    const l = limit(5);
    await l.consume('refund');
    await l.consume('refund');
    await l.reward('refund');
    expect(await client.get(`${prefix}:ctr:unit:refund`)).toBe('1');
    await l.reward('refund');
    expect(await client.exists(`${prefix}:ctr:unit:refund`)).toBe(0);
    expect(await l.get('refund')).toBeNull();
    expect(failures).toEqual([]);
  });
});
