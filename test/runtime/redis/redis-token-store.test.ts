// The Redis token store against a real Redis (127.0.0.1:6379, a key prefix of its own per test): the lease,
// the generation, drop-if-current, the sealed value, and Redis that does not answer.
import { randomUUID } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/observability/logger.js';
import { createNodeRedis, type NodeRedis } from '../../../src/runtime/redis/client.js';
import { createRedisTokenStore, type RedisTokenStoreOptions } from '../../../src/runtime/redis/redis-token-store.js';
import { StoreUnavailableError } from '../../../src/shared-state/store-unavailable.js';
import type { ObtainedToken } from '../../../src/shared-state/token-store.js';
import { freePort } from '../../helpers/free-port.js';
import { checkRequirement, tcpRequirement } from '../../helpers/requires.js';

const URL = 'redis://127.0.0.1:6379';
const hasRedis = checkRequirement(await tcpRequirement('127.0.0.1', 6379, 'Redis at 127.0.0.1:6379'));
const SECRET = 'test-signing-key-of-at-least-32-bytes!';
const CLIENT_ID = 'upstream-client-id-7';

const clients: NodeRedis[] = [];
async function connect(url = URL, commandTimeoutMs = 250): Promise<NodeRedis> {
  const redis = createNodeRedis(url, silentLogger, { commandTimeoutMs, connectTimeoutMs: 500 });
  clients.push(redis);
  await redis.ready(2000);
  return redis;
}
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
});

/** A store as one replica builds it; replicas of one deployment share the prefix. */
async function replica(prefix: string, overrides: Partial<RedisTokenStoreOptions> = {}) {
  const redis = await connect();
  const store = createRedisTokenStore({
    client: redis.client,
    keyPrefix: prefix,
    clientId: CLIENT_ID,
    secret: SECRET,
    timeoutMs: 250,
    leaseMs: 2_000,
    pollMs: 10,
    ...overrides,
  });
  return { store, redis: redis.client };
}

/** An upstream login that counts its calls and takes `ms`. */
function upstream(ms = 0) {
  let calls = 0;
  const obtain = async (): Promise<ObtainedToken> => {
    const n = ++calls;
    const obtainedAt = Date.now();
    if (ms > 0) await new Promise((r) => setTimeout(r, ms));
    return { token: `upstream-token-${n}-${randomUUID()}`, obtainedAt, expiresAt: obtainedAt + 3_600_000 };
  };
  return { obtain, calls: () => calls };
}

const ANY = { newerThan: null, validForMs: 1, waitMs: 2_000 };

describe.skipIf(!hasRedis)('Redis token store (real Redis)', () => {
  it('gives three replicas refreshing at once one login, under a lease that is given back', async () => {
    const prefix = `t-${randomUUID()}`;
    const replicas = await Promise.all([replica(prefix), replica(prefix), replica(prefix)]);
    const up = upstream(100);
    const got = await Promise.all(
      replicas.flatMap(({ store }) => [store.refresh(up.obtain, ANY), store.refresh(up.obtain, ANY)]),
    );
    expect(up.calls()).toBe(1);
    expect(new Set(got.map((t) => t.token)).size).toBe(1);
    expect(new Set(got.map((t) => t.generation)).size).toBe(1);
    const [{ store, redis }] = replicas;
    await new Promise((r) => setTimeout(r, 20));
    expect(await redis.exists(store.keys.lease)).toBe(0);
    expect(await store.read()).toMatchObject({ token: got[0]!.token, generation: got[0]!.generation });
  });

  it('holds the lease exclusively while one replica logs in; the others wait for its token', async () => {
    const prefix = `t-${randomUUID()}`;
    const [a, b] = await Promise.all([replica(prefix), replica(prefix)]);
    const up = upstream(200);
    const first = a.store.refresh(up.obtain, ANY);
    await new Promise((r) => setTimeout(r, 50));
    const leaseId = await a.redis.get(a.store.keys.lease);
    expect(leaseId).toMatch(/^[0-9a-f-]{36}$/);
    expect(await b.redis.set(b.store.keys.lease, 'intruder', 'PX', 1_000, 'NX')).toBeNull();
    const second = b.store.refresh(up.obtain, ANY);
    expect((await first).token).toBe((await second).token);
    expect(up.calls()).toBe(1);
  });

  it('gives back only its own lease: one that expired and was taken by another stays', async () => {
    const prefix = `t-${randomUUID()}`;
    const a = await replica(prefix, { leaseMs: 50 });
    const up = upstream(150);
    const refreshing = a.store.refresh(up.obtain, ANY);
    await new Promise((r) => setTimeout(r, 80));
    // A's lease expired; another replica holds the lease now.
    expect(await a.redis.set(a.store.keys.lease, 'another-holder', 'PX', 5_000, 'NX')).toBe('OK');
    await refreshing;
    await new Promise((r) => setTimeout(r, 20));
    expect(await a.redis.get(a.store.keys.lease)).toBe('another-holder');
  });

  it('numbers every published token with a higher generation', async () => {
    const { store } = await replica(`t-${randomUUID()}`);
    const up = upstream();
    const g1 = await store.refresh(up.obtain, ANY);
    expect(await store.refresh(up.obtain, { ...ANY, newerThan: null })).toEqual(g1);
    const g2 = await store.refresh(up.obtain, { ...ANY, newerThan: g1.generation });
    const g3 = await store.refresh(up.obtain, { ...ANY, newerThan: g2.generation });
    expect(g2.generation).toBeGreaterThan(g1.generation);
    expect(g3.generation).toBeGreaterThan(g2.generation);
    expect(up.calls()).toBe(3);
  });

  it('drops the published token only while its generation is current', async () => {
    const { store } = await replica(`t-${randomUUID()}`);
    const up = upstream();
    const g1 = await store.refresh(up.obtain, ANY);
    const g2 = await store.refresh(up.obtain, { ...ANY, newerThan: g1.generation });
    expect(await store.dropIfCurrent(g1.generation)).toBe(false);
    expect(await store.read()).toMatchObject({ token: g2.token });
    expect(await store.dropIfCurrent(g2.generation)).toBe(true);
    expect(await store.read()).toBeNull();
    expect(await store.dropIfCurrent(g2.generation)).toBe(false);
  });

  it('treats foreign values under its keys as absent and overwrites them, never as Redis being down', async () => {
    const { store, redis } = await replica(`t-${randomUUID()}`);
    const { keys } = store as ReturnType<typeof createRedisTokenStore>;
    await redis.set(keys.value, 'not a hash');
    await redis.hset(keys.generation, 'x', 'y');
    // A lease without a TTL is not one of ours: it would block every refresh for good.
    await redis.set(keys.lease, 'forever');
    expect(await store.read()).toBeNull();
    expect(await store.dropIfCurrent(1)).toBe(false);
    const up = upstream();
    const published = await store.refresh(up.obtain, { ...ANY, waitMs: 100 });
    expect(up.calls()).toBe(1);
    expect(published.generation).toBeGreaterThanOrEqual(Date.now() - 60_000);
    expect(await store.read()).toMatchObject({ token: published.token });
    expect(await redis.exists(keys.lease)).toBe(0);
  });

  it('keeps neither the token nor the client id in clear in Redis, and expires the value with the token', async () => {
    const prefix = `t-${randomUUID()}`;
    const { store, redis } = await replica(prefix);
    const token = await store.refresh(upstream().obtain, ANY);
    const keys = await redis.keys(`${prefix}*`);
    expect(keys.sort()).toEqual([store.keys.generation, store.keys.value].sort());
    const everything = JSON.stringify([
      keys,
      await redis.hgetall(store.keys.value),
      await redis.get(store.keys.generation),
    ]);
    expect(everything).not.toContain(token.token);
    expect(everything).not.toContain('upstream-token');
    expect(everything).not.toContain(CLIENT_ID);
    expect(await redis.hget(store.keys.value, 'v')).toBe('1');
    const ttl = await redis.pttl(store.keys.value);
    expect(ttl).toBeGreaterThan(3_500_000);
    expect(ttl).toBeLessThanOrEqual(3_600_000);
  });

  it('ignores a value of another format version, and one sealed under another secret', async () => {
    const prefix = `t-${randomUUID()}`;
    const { store, redis } = await replica(prefix);
    const up = upstream();
    const published = await store.refresh(up.obtain, ANY);
    await redis.hset(store.keys.value, 'v', '2');
    expect(await store.read()).toBeNull();
    const next = await store.refresh(up.obtain, ANY);
    expect(next.generation).toBeGreaterThan(published.generation);
    expect(up.calls()).toBe(2);

    const other = await replica(prefix, { secret: 'another-signing-key-of-at-least-32-bytes' });
    expect(await other.store.read()).toBeNull();
  });

  it('logs in itself, rather than fail, when the lease holder does not publish within the wait', async () => {
    const prefix = `t-${randomUUID()}`;
    const { store, redis } = await replica(prefix);
    await redis.set(store.keys.lease, 'a-replica-that-died', 'PX', 10_000);
    const up = upstream();
    const started = Date.now();
    const token = await store.refresh(up.obtain, { ...ANY, waitMs: 100 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(100);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(up.calls()).toBe(1);
    expect(await store.read()).toMatchObject({ token: token.token });
  });

  it('publishes an offered token only when none is published and no lease is held, numbered like a login', async () => {
    const prefix = `t-${randomUUID()}`;
    const [a, b] = await Promise.all([replica(prefix), replica(prefix)]);
    const up = upstream();
    const own = await up.obtain();
    const offered = await a.store.offer(own);
    expect(offered).toMatchObject({ token: own.token, expiresAt: own.expiresAt });
    expect(await b.store.read()).toEqual(offered);
    // B's own token is not published over A's: B gets A's.
    const bOwn = await up.obtain();
    expect(await b.store.offer(bOwn)).toEqual(offered);
    // Sealed and expiring like any published token.
    expect(JSON.stringify(await a.redis.hgetall(a.store.keys.value))).not.toContain(own.token);
    expect(await a.redis.pttl(a.store.keys.value)).toBeGreaterThan(3_500_000);
    // It is the current generation: a 401 on it drops it, and the next login is numbered after it.
    expect(await b.store.dropIfCurrent(offered!.generation)).toBe(true);
    const next = await b.store.refresh(up.obtain, { ...ANY, newerThan: offered!.generation });
    expect(next.generation).toBeGreaterThan(offered!.generation);
  });

  it('publishes no offer while another replica holds the lease, nor over a value it cannot open', async () => {
    const prefix = `t-${randomUUID()}`;
    const { store, redis } = await replica(prefix);
    const up = upstream();
    await redis.set(store.keys.lease, 'a-replica-logging-in', 'PX', 10_000);
    expect(await store.offer(await up.obtain())).toBeNull();
    expect(await redis.exists(store.keys.value)).toBe(0);
    await redis.del(store.keys.lease);

    const published = await store.offer(await up.obtain());
    const other = await replica(prefix, { secret: 'another-signing-key-of-at-least-32-bytes' });
    expect(await other.store.offer(await up.obtain())).toBeNull();
    expect(await store.read()).toEqual(published);
    expect(up.calls()).toBe(3);
  });

  it('passes the upstream login failure through as is and gives the lease back', async () => {
    const { store, redis } = await replica(`t-${randomUUID()}`);
    const refused = new Error('token endpoint answered 500');
    await expect(store.refresh(() => Promise.reject(refused), ANY)).rejects.toBe(refused);
    await new Promise((r) => setTimeout(r, 20));
    expect(await redis.exists(store.keys.lease)).toBe(0);
  });
});

describe('Redis token store when Redis does not answer', () => {
  let silent: Server | undefined;
  const sockets: Socket[] = [];
  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => (silent ? silent.close(r) : r(undefined)));
  });

  it('fails with StoreUnavailableError at once when nothing listens, without logging in', async () => {
    const port = await freePort();
    const redis = createNodeRedis(`redis://127.0.0.1:${port}`, silentLogger, { commandTimeoutMs: 250 });
    clients.push(redis);
    const store = createRedisTokenStore({
      client: redis.client,
      keyPrefix: 'x',
      clientId: CLIENT_ID,
      secret: SECRET,
      timeoutMs: 250,
      leaseMs: 1_000,
    });
    const up = upstream();
    const started = Date.now();
    await expect(store.refresh(up.obtain, ANY)).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(store.dropIfCurrent(1)).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(
      store.offer({ token: 'own', obtainedAt: Date.now(), expiresAt: Date.now() + 60_000 }),
    ).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(Date.now() - started).toBeLessThan(250);
    expect(up.calls()).toBe(0);
  });

  it('fails with StoreUnavailableError within the command timeout when Redis is connected but stops answering', async () => {
    // Answers the client's ready check (INFO) with an empty reply, then nothing ever again: a hung Redis.
    silent = createServer((socket) => {
      sockets.push(socket);
      socket.on('data', (chunk) => {
        for (const [command] of chunk.toString().matchAll(/SETINFO|\binfo\b/gi))
          socket.write(command === 'SETINFO' ? '+OK\r\n' : '$0\r\n\r\n');
      });
    });
    await new Promise<void>((r) => silent!.listen(0, '127.0.0.1', r));
    const { port } = silent.address() as { port: number };
    const redis = createNodeRedis(`redis://127.0.0.1:${port}`, silentLogger, { commandTimeoutMs: 100 });
    clients.push(redis);
    expect(await redis.ready(1_000)).toBe(true);
    const store = createRedisTokenStore({
      client: redis.client,
      keyPrefix: 'x',
      clientId: CLIENT_ID,
      secret: SECRET,
      timeoutMs: 100,
      leaseMs: 1_000,
    });
    const started = Date.now();
    await expect(store.read()).rejects.toBeInstanceOf(StoreUnavailableError);
    // Waited for the timeout (not refused at once), and no longer.
    expect(Date.now() - started).toBeGreaterThanOrEqual(90);
    expect(Date.now() - started).toBeLessThan(300);
  });
});
