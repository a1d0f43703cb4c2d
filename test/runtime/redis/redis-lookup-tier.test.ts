// The Redis lookup tier against a real Redis: sealed values under keyed hashes, retention, leases, purge fan-out,
// and a Redis of the test's own taken away for the failure cases.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/observability/logger.js';
import { createNodeRedis, type NodeRedis } from '../../../src/runtime/redis/client.js';
import { createRedisLookupTier, type RedisLookupTier } from '../../../src/runtime/redis/redis-lookup-tier.js';
import { TIER_ENTRY_VERSION, type TierEntry } from '../../../src/shared-state/lookup-tier.js';
import { StoreUnavailableError } from '../../../src/shared-state/store-unavailable.js';
import { startOwnRedis, type OwnRedis } from '../../helpers/own-redis.js';
import { checkRequirement, commandRequirement, tcpRequirement } from '../../helpers/requires.js';

const sharedRedis = checkRequirement(await tcpRequirement('127.0.0.1', 6379, 'Redis at 127.0.0.1:6379'));
const redisServer = checkRequirement(commandRequirement('redis-server', ['--version'], 'the redis-server command'));
const URL = 'redis://127.0.0.1:6379';
const SECRET = 'test-signing-key-of-at-least-32-bytes!';
const HASH = 'a3f1c9e07b5d42e8a3f1c9e07b5d42e8';
const NUMBER = '+442079460001';

const open: Array<{ tier: RedisLookupTier; redis: NodeRedis }> = [];
afterEach(() => {
  for (const { tier, redis } of open.splice(0)) {
    tier.close();
    void redis.close();
  }
});

async function tierAt(url: string, prefix: string, extra: { secret?: string; maxEntryBytes?: number } = {}) {
  // A timeout no loaded machine reaches: a PING taken for a lost connection would announce a missed purge (null).
  const redis = createNodeRedis(url, silentLogger, { commandTimeoutMs: 2000 });
  await redis.ready(2000);
  const tier = createRedisLookupTier({
    client: redis.client,
    subscriber: redis.duplicate({ autoResubscribe: false }),
    keyPrefix: prefix,
    secret: extra.secret ?? SECRET,
    clock: Date.now,
    maxEntryBytes: extra.maxEntryBytes ?? 256 * 1024,
    maxRetentionMs: 86_400_000,
    pingIntervalMs: 200,
    logger: silentLogger,
  });
  await tier.ready(2000);
  open.push({ tier, redis });
  return tier;
}

function entry(
  now = Date.now(),
  body = `{"query":{"what":"${NUMBER}"},"total":1,"results":[{"displayName":"Hartley Zoë","phones":[{"e164":"${NUMBER}","display":"020 7946 0001"}]}]}`,
): TierEntry {
  return {
    v: TIER_ENTRY_VERSION,
    body,
    contentType: 'application/json',
    storedAt: now,
    ttlSeconds: 600,
    freshUntil: now + 600_000,
    revalidateUntil: now + 630_000,
    staleIfErrorUntil: now + 4_200_000,
    listed: true,
  };
}

async function rawClient(url = URL): Promise<Redis> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await client.connect();
  return client;
}

const until = async (check: () => boolean, ms = 2000) => {
  for (const started = Date.now(); !check() && Date.now() - started < ms;) await new Promise((r) => setTimeout(r, 10));
};

describe.skipIf(!sharedRedis)('Redis lookup tier (127.0.0.1:6379)', () => {
  it('returns what was stored, and Redis holds no number and no body in clear, only under the keyed hash', async () => {
    const prefix = `t-${randomUUID()}`;
    const tier = await tierAt(URL, prefix);
    const stored = entry();
    await tier.set(HASH, stored);
    expect(await tier.get(HASH)).toEqual(stored);
    const raw = await rawClient();
    try {
      const keys = await raw.keys(`${prefix}:lookup:*`);
      expect(keys).toEqual([tier.keysOf(HASH).entry]);
      const value = (await raw.get(keys[0]!))!;
      const everything = `${keys.join(' ')} ${value}`;
      for (const digits of ['442079460001', '2079460001', '7946 0001', 'Hartley'])
        expect(everything).not.toContain(digits);
      expect(JSON.parse(value)).toMatchObject({ v: TIER_ENTRY_VERSION });
    } finally {
      raw.disconnect();
    }
  });

  it('keeps an entry until its later stale window ends (PX), then Redis forgets it', async () => {
    const prefix = `t-${randomUUID()}`;
    const tier = await tierAt(URL, prefix);
    const now = Date.now();
    await tier.set(HASH, entry(now));
    const raw = await rawClient();
    try {
      const pttl = await raw.pttl(tier.keysOf(HASH).entry);
      expect(pttl).toBeGreaterThan(4_200_000 - 5_000);
      expect(pttl).toBeLessThanOrEqual(4_200_000);
    } finally {
      raw.disconnect();
    }
    // Nothing left to retain: not written at all.
    await tier.set('b'.repeat(32), { ...entry(now - 10_000_000) });
    expect(await tier.get('b'.repeat(32))).toBeUndefined();
  });

  it('ignores a value of another format version and one sealed under another secret', async () => {
    const prefix = `t-${randomUUID()}`;
    const tier = await tierAt(URL, prefix);
    const other = await tierAt(URL, prefix, { secret: 'another-signing-key-of-at-least-32-bytes' });
    await other.set(HASH, entry());
    expect(await tier.get(HASH)).toBeUndefined();
    await tier.set(HASH, entry());
    const raw = await rawClient();
    try {
      const key = tier.keysOf(HASH).entry;
      const value = JSON.parse((await raw.get(key))!) as { v: number };
      await raw.set(key, JSON.stringify({ ...value, v: TIER_ENTRY_VERSION + 1 }), 'PX', 60_000);
      expect(await tier.get(HASH)).toBeUndefined();
      // A value copied under another key does not open either (sealed with its key).
      await raw.set(tier.keysOf('c'.repeat(32)).entry, JSON.stringify(value), 'PX', 60_000);
      expect(await tier.get('c'.repeat(32))).toBeUndefined();
    } finally {
      raw.disconnect();
    }
  });

  it('does not write an entry above the configured size', async () => {
    const tier = await tierAt(URL, `t-${randomUUID()}`, { maxEntryBytes: 2048 });
    await tier.set(HASH, entry(Date.now(), `{"results":[{"n":"${'x'.repeat(4000)}"}]}`));
    expect(await tier.get(HASH)).toBeUndefined();
    await tier.set(HASH, entry());
    expect(await tier.get(HASH)).toBeDefined();
  });

  it('grants a fill lease to one process at a time, and only its holder gives it back', async () => {
    const prefix = `t-${randomUUID()}`;
    const [a, b] = [await tierAt(URL, prefix), await tierAt(URL, prefix)];
    expect(await a.lease(HASH, 5000)).toBe(true);
    expect(await b.lease(HASH, 5000)).toBe(false);
    await b.release(HASH);
    expect(await b.lease(HASH, 5000)).toBe(false);
    await a.release(HASH);
    expect(await b.lease(HASH, 50)).toBe(true);
    await new Promise((r) => setTimeout(r, 80));
    expect(await a.lease(HASH, 5000)).toBe(true);
  });

  it('tells every replica about a purge, by keyed hash or everything, and a clear removes only this prefix', async () => {
    const prefix = `t-${randomUUID()}`;
    const [a, b] = [await tierAt(URL, prefix), await tierAt(URL, prefix)];
    const neighbour = await tierAt(URL, `t-${randomUUID()}`);
    const heard: Array<string | null> = [];
    b.onPurge((key) => heard.push(key));
    await a.set(HASH, entry());
    await a.set('d'.repeat(32), entry());
    await neighbour.set(HASH, entry());
    await a.delete(HASH);
    await until(() => heard.length >= 1);
    expect(heard).toEqual([HASH]);
    expect(await b.get(HASH)).toBeUndefined();
    expect(await b.get('d'.repeat(32))).toBeDefined();
    await a.clear();
    await until(() => heard.length >= 2);
    expect(heard).toEqual([HASH, null]);
    expect(await b.get('d'.repeat(32))).toBeUndefined();
    expect(await neighbour.get(HASH)).toBeDefined();
  });

  it('does not serve a purged value written back into Redis by someone with write access', async () => {
    const prefix = `t-${randomUUID()}`;
    const [a, b] = [await tierAt(URL, prefix), await tierAt(URL, prefix)];
    await a.set(HASH, entry());
    const raw = await rawClient();
    try {
      const key = a.keysOf(HASH).entry;
      const old = (await raw.get(key))!;
      await b.delete(HASH);
      await raw.set(key, old, 'PX', 60_000);
      expect(await a.get(HASH)).toBeUndefined();
      expect(await b.get(HASH)).toBeUndefined();
      // A fill after the purge is served again, to both.
      await a.set(HASH, entry());
      expect(await b.get(HASH)).toBeDefined();
      // And a purge-all: the old generation's value written back under the new generation's key does not open.
      const before = (await raw.get(a.keysOf(HASH).entry))!;
      await a.clear();
      await until(() => b.keysOf(HASH).entry !== key);
      await raw.set(b.keysOf(HASH).entry, before, 'PX', 60_000);
      expect(await b.get(HASH)).toBeUndefined();
    } finally {
      raw.disconnect();
    }
  });

  it('purges everything without walking the keyspace: the old entries are left to their TTL and not read', async () => {
    const prefix = `t-${randomUUID()}`;
    const tier = await tierAt(URL, prefix);
    await tier.set(HASH, entry());
    const old = tier.keysOf(HASH).entry;
    await tier.clear();
    expect(tier.keysOf(HASH).entry).not.toBe(old);
    expect(await tier.get(HASH)).toBeUndefined();
    const raw = await rawClient();
    try {
      expect(await raw.exists(old)).toBe(1);
      expect(await raw.pttl(old)).toBeGreaterThan(0);
    } finally {
      raw.disconnect();
    }
  });

  it('treats a foreign value under any of its keys as absent and overwrites it, never as Redis being down', async () => {
    const prefix = `t-${randomUUID()}`;
    const tier = await tierAt(URL, prefix);
    const keys = tier.keysOf(HASH);
    const raw = await rawClient();
    try {
      await raw.hset(keys.entry, 'x', '1');
      await raw.rpush(keys.lease, 'not a lease');
      await raw.set(keys.purged, 'not a number');
      expect(await tier.get(HASH)).toBeUndefined();
      expect(await tier.lease(HASH, 5000)).toBe(true);
      await tier.release(HASH);
      const stored = entry();
      await tier.set(HASH, stored);
      expect(await tier.get(HASH)).toEqual(stored);
      await raw.set(`${prefix}:lookup-purges`, 'garbage');
      await tier.delete(HASH);
      expect(await raw.type(`${prefix}:lookup-purges`)).toBe('hash');
      expect(await tier.get(HASH)).toBeUndefined();
    } finally {
      raw.disconnect();
    }
  });

  it('tells its listeners that purges may have been missed when its subscription comes back', async () => {
    const prefix = `t-${randomUUID()}`;
    const redis = createNodeRedis(URL, silentLogger, { commandTimeoutMs: 250 });
    await redis.ready(2000);
    const subscriber = redis.duplicate({ autoResubscribe: false });
    const tier = createRedisLookupTier({
      client: redis.client,
      subscriber,
      keyPrefix: prefix,
      secret: SECRET,
      clock: Date.now,
      maxEntryBytes: 4096,
      maxRetentionMs: 86_400_000,
      logger: silentLogger,
    });
    open.push({ tier, redis });
    await tier.ready(2000);
    const heard: Array<string | null> = [];
    tier.onPurge((key) => heard.push(key));
    subscriber.disconnect(true);
    await until(() => heard.length >= 1, 5000);
    expect(heard).toEqual([null]);
    // And it hears purges again afterwards.
    await tier.delete(HASH);
    await until(() => heard.length >= 2);
    expect(heard).toEqual([null, HASH]);
  });
});

describe.skipIf(!redisServer)('Redis lookup tier when Redis goes away', () => {
  let own: OwnRedis | undefined;
  afterAll(async () => {
    await own?.stop();
  });

  it('fails fast with StoreUnavailableError while Redis is down, and answers again once it is back', async () => {
    own = await startOwnRedis();
    const tier = await tierAt(own.url, `t-${randomUUID()}`);
    await tier.set(HASH, entry());
    const { port } = own;
    await own.stop();
    const started = Date.now();
    await expect(tier.get(HASH)).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(tier.lease(HASH, 1000)).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(Date.now() - started).toBeLessThan(600);
    own = await startOwnRedis(port);
    let back = false;
    for (let i = 0; i < 50 && !back; i++) {
      await new Promise((r) => setTimeout(r, 100));
      back = await tier.get(HASH).then(
        () => true,
        () => false,
      );
    }
    expect(back).toBe(true);
  });
});
