// The counter store in a real Redis: atomic consume (a burst cannot overshoot, a refusal counts nothing), the
// window's expiry, refunds, keys under REDIS_KEY_PREFIX, and every command bounded by REDIS_TIMEOUT_MS.
import { randomUUID } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisCounterStore } from '../../../src/runtime/redis/redis-counter-store.js';
import { StoreUnavailableError } from '../../../src/shared-state/store-unavailable.js';
import { checkRequirement, tcpRequirement } from '../../helpers/requires.js';

const redisUp = checkRequirement(await tcpRequirement('127.0.0.1', 6379, 'Redis at 127.0.0.1:6379'));

describe.skipIf(!redisUp)('redis counter store (127.0.0.1:6379)', () => {
  const prefix = `t-${randomUUID()}`;
  let client: Redis;
  let other: Redis;
  beforeAll(async () => {
    client = new Redis('redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
    other = new Redis('redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
  });
  afterAll(async () => {
    const keys = await client.keys(`${prefix}:*`);
    if (keys.length > 0) await client.del(...keys);
    client.disconnect();
    other.disconnect();
  });
  const store = (c: Redis = client) =>
    createRedisCounterStore({ client: c, keyPrefix: prefix, timeoutMs: 250, clock: Date.now });

  it('refuses without counting when count + points would pass the limit', async () => {
    const s = store();
    expect(await s.consume('a', 2, 3, 60_000)).toMatchObject({ allowed: true, count: 2 });
    expect(await s.consume('a', 2, 3, 60_000)).toMatchObject({ allowed: false, count: 2 });
    expect(await s.consume('a', 1, 3, 60_000)).toMatchObject({ allowed: true, count: 3 });
    expect(await client.get(`${prefix}:ctr:a`)).toBe('3');
  });

  it('treats a malformed or foreign value in one key as absent and overwrites it, never failing the store', async () => {
    const s = store();
    await client.set(`${prefix}:ctr:junk`, 'not a number', 'PX', 60_000);
    await client.set(`${prefix}:ctr:half`, '2.5', 'PX', 60_000);
    await client.hset(`${prefix}:ctr:hash`, 'f', 'v');
    await client.pexpire(`${prefix}:ctr:hash`, 60_000);
    expect(await s.get('junk')).toBeNull();
    expect(await s.consume('junk', 1, 3, 60_000)).toMatchObject({ allowed: true, count: 1 });
    expect(await client.get(`${prefix}:ctr:junk`)).toBe('1');
    expect(await s.add('half', 2, 60_000)).toMatchObject({ count: 2 });
    expect(await s.consume('hash', 1, 3, 60_000)).toMatchObject({ allowed: true, count: 1 });
    expect(await client.type(`${prefix}:ctr:hash`)).toBe('string');
    // The other keys were never affected.
    expect(await s.consume('a-fresh-key', 1, 3, 60_000)).toMatchObject({ allowed: true, count: 1 });
  });

  it('lets a concurrent burst from two clients (two replicas) take exactly the limit', async () => {
    const [a, b] = [store(client), store(other)];
    const results = await Promise.all(
      Array.from({ length: 60 }, (_, i) => (i % 2 ? a : b).consume('burst', 1, 10, 60_000)),
    );
    expect(results.filter((r) => r.allowed)).toHaveLength(10);
    expect((await a.get('burst'))?.count).toBe(10);
  });

  it('opens the window with the first count: PEXPIRE set, resetAt reported, gone after it', async () => {
    const s = store();
    const before = Date.now();
    const first = await s.consume('w', 1, 5, 300);
    const ttl = await client.pttl(`${prefix}:ctr:w`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(300);
    expect(first.resetAt).toBeGreaterThanOrEqual(before);
    expect(first.resetAt).toBeLessThanOrEqual(Date.now() + 300);
    // Later counts keep the window's end.
    await s.consume('w', 1, 5, 60_000);
    expect(await client.pttl(`${prefix}:ctr:w`)).toBeLessThanOrEqual(300);
    await new Promise((r) => setTimeout(r, 350));
    expect(await s.get('w')).toBeNull();
    expect(await s.consume('w', 1, 5, 60_000)).toMatchObject({ allowed: true, count: 1 });
  });

  it('adds and refunds without a limit, keeping the window, and drops a key given back to zero', async () => {
    const s = store();
    expect(await s.add('r', 3, 60_000)).toMatchObject({ count: 3 });
    expect(await s.add('r', -1, 60_000)).toMatchObject({ count: 2 });
    expect(await client.pttl(`${prefix}:ctr:r`)).toBeGreaterThan(0);
    expect(await s.add('r', -5, 60_000)).toMatchObject({ count: 0 });
    // Nothing is kept for a key with nothing counted: keys an outsider invents do not pile up.
    expect(await client.exists(`${prefix}:ctr:r`)).toBe(0);
    expect(await s.get('r')).toBeNull();
    expect(await s.get('never-written')).toBeNull();
  });
});

describe('redis counter store when Redis does not answer', () => {
  let server: Server;
  const sockets: Socket[] = [];
  let port = 0;
  beforeAll(async () => {
    // Accepts connections and never answers: a hung Redis.
    server = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  afterAll(async () => {
    sockets.forEach((s) => s.destroy());
    await new Promise((resolve) => server.close(resolve));
  });

  it('fails every command with StoreUnavailableError within REDIS_TIMEOUT_MS', async () => {
    const client = new Redis({ host: '127.0.0.1', port, enableReadyCheck: false, maxRetriesPerRequest: 0 });
    try {
      const s = createRedisCounterStore({ client, keyPrefix: 'hung', timeoutMs: 100, clock: Date.now });
      for (const op of [() => s.consume('k', 1, 1, 1_000), () => s.add('k', 1, 1_000), () => s.get('k')]) {
        const started = Date.now();
        await expect(op()).rejects.toBeInstanceOf(StoreUnavailableError);
        expect(Date.now() - started).toBeLessThan(400);
      }
    } finally {
      client.disconnect();
    }
  });
});
