// Three gateway replicas sharing one Redis (a redis-server of the test's own) in front of one simulator: one
// upstream token for all, one refresh per revocation, their own token while Redis is down, sharing again after.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startOwnRedis, type OwnRedis } from '../helpers/own-redis.js';
import { startReplicas, type Replica, type Replicas } from '../helpers/replicas.js';
import { checkRequirement, commandRequirement } from '../helpers/requires.js';

const hasRedisServer = checkRequirement(commandRequirement('redis-server', ['--version'], 'the redis-server command'));
const REDIS_TIMEOUT_MS = 500;
/**
 * Where Redis stays up: long enough that a loaded machine's slow answer is never taken for an outage (each replica
 * would then log in on its own, as it should when Redis is down).
 */
const SHARING_REDIS_TIMEOUT_MS = 2000;
/** What a request may take beyond the Redis timeout: two loopback searches, a login, the gateway itself. */
const MARGIN_MS = 300;

/** Distinct fictional UK numbers (Ofcom's drama ranges), so every search misses the cache and reaches the upstream. */
const RANGES = ['020 7946 0', '0161 496 0', '0113 496 0'];
let numbered = 0;
const nextNumber = (): string => {
  const i = numbered++ % 3000;
  return `${RANGES[Math.floor(i / 1000)]}${String(i % 1000).padStart(3, '0')}`;
};

const events = (replica: Replica, event: string) => replica.logs.filter((l) => l.fields.event === event);

async function withRedis<T>(url: string, work: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    return await work(redis);
  } finally {
    redis.disconnect();
  }
}

/** Every key and value under `prefix`, as text. */
const redisContents = (url: string, prefix: string) =>
  withRedis(url, async (redis) => {
    // The token's keys only: the lookup tier keeps its answers under the same prefix (`{prefix}:lookup:*`).
    const keys = await redis.keys(`${prefix}:token:*`);
    const values = await Promise.all(
      keys.map(async (k) => ((await redis.type(k)) === 'hash' ? redis.hgetall(k) : redis.get(k))),
    );
    return { keys, text: JSON.stringify([keys, values]) };
  });

/** One search per entry of `on` (replica indexes), all at once; each gets a new number. */
async function burst(deployment: Replicas, token: string, on: number[]): Promise<number[]> {
  return Promise.all(
    on.map(async (i) => {
      const res = await deployment.replicas[i]!.search(nextNumber(), token);
      await res.arrayBuffer();
      return res.status;
    }),
  );
}

const spread = (n: number) => Array.from({ length: n }, (_, i) => i % 3);

/** `callerid_gateway_shared_store_up{store="…"}` as the replica's /metrics shows it. */
async function storeUp(replica: Replica, store: string): Promise<number> {
  const text = await (await fetch(`${replica.gateway.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`callerid_gateway_shared_store_up{store="${store}"} `));
  return line === undefined ? Number.NaN : Number(line.split(' ').at(-1));
}

describe.skipIf(!hasRedisServer)('three replicas sharing the upstream token through Redis', () => {
  let redis: OwnRedis;
  let deployment: Replicas | undefined;
  beforeAll(async () => {
    redis = await startOwnRedis();
  });
  afterEach(async () => {
    await deployment?.close();
    deployment = undefined;
  });
  afterAll(async () => {
    await redis?.stop();
  });

  const start = (prefix: string) =>
    startReplicas(3, {
      env: { REDIS_URL: redis.url, REDIS_KEY_PREFIX: prefix, REDIS_TIMEOUT_MS: String(SHARING_REDIS_TIMEOUT_MS) },
    });

  it('logs in to the upstream once for 60 concurrent searches spread over three replicas', async () => {
    const prefix = `t-${randomUUID()}`;
    deployment = await start(prefix);
    const token = await deployment.replicas[0]!.login();
    const statuses = await burst(deployment, token, spread(60));
    expect(statuses).toEqual(Array(60).fill(200));

    const stats = deployment.simulator.controls.stats();
    expect(stats.tokenCalls).toBe(1);
    expect(stats.searchCalls).toBe(60);
    // All three replicas sent the one token.
    expect(new Set(stats.authorizationsSeen).size).toBe(1);
    const upstreamToken = stats.authorizationsSeen[0]!.replace(/^Bearer /, '');
    for (const r of deployment.replicas)
      expect(events(r, 'upstream_token_refreshed').map((l) => l.fields.source)).toEqual(['shared']);

    // Redis holds the token sealed, under a hashed client id.
    const { keys, text } = await redisContents(redis.url, prefix);
    // Two token keys; the counter store's keys (`:ctr:`, the cost guard's counts) live beside them.
    expect(keys.filter((k) => !k.startsWith(`${prefix}:ctr:`))).toHaveLength(2);
    expect(text).not.toContain(upstreamToken);
    expect(text).not.toContain('gateway-under-test');
  });

  it('refreshes once when an early revocation is seen by all three replicas', async () => {
    deployment = await start(`t-${randomUUID()}`);
    const token = await deployment.replicas[0]!.login();
    expect(await burst(deployment, token, spread(3))).toEqual([200, 200, 200]);
    expect(deployment.simulator.controls.stats().tokenCalls).toBe(1);

    deployment.simulator.controls.resetStats();
    deployment.simulator.controls.revokeAllTokens();
    const statuses = await burst(deployment, token, spread(30));
    expect(statuses).toEqual(Array(30).fill(200));
    expect(deployment.simulator.controls.stats().tokenCalls).toBe(1);
    // Every replica met the 401 and dropped its copy; one of them refreshed for all.
    for (const r of deployment.replicas) expect(events(r, 'upstream_token_invalidated')).toHaveLength(1);
  });
});

describe.skipIf(!hasRedisServer)('three replicas when their Redis goes away and comes back', () => {
  let redis: OwnRedis;
  let deployment: Replicas | undefined;
  afterAll(async () => {
    await deployment?.close();
    await redis?.stop();
  });

  it('answers every search while Redis is down, each replica on its own token, and shares one token again within seconds of Redis coming back', async ({
    annotate,
  }) => {
    redis = await startOwnRedis();
    const prefix = `t-${randomUUID()}`;
    deployment = await startReplicas(3, {
      env: { REDIS_URL: redis.url, REDIS_KEY_PREFIX: prefix, REDIS_TIMEOUT_MS: String(REDIS_TIMEOUT_MS) },
    });
    const { simulator, replicas } = deployment;
    const token = await replicas[0]!.login();
    expect(await burst(deployment, token, spread(3))).toEqual([200, 200, 200]);
    expect(simulator.controls.stats().tokenCalls).toBe(1);

    // Traffic on every replica; Redis is killed in the middle of it, then the upstream revokes the token.
    const results: Array<{ status: number; ms: number; redisUp: boolean }> = [];
    let running = true;
    let redisUp = true;
    const workers = replicas.flatMap((replica) =>
      [0, 1].map(async () => {
        while (running) {
          const [started, up] = [performance.now(), redisUp];
          const res = await replica.search(nextNumber(), token);
          await res.arrayBuffer();
          // Up: begun and answered before Redis stopped.
          results.push({ status: res.status, ms: performance.now() - started, redisUp: up && redisUp });
        }
      }),
    );
    const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
    /** At least `ms`, and on until `count` searches answered `up` (a loaded machine answers fewer in a window). */
    const trafficFor = async (ms: number, up: boolean, count: number) => {
      await pause(ms);
      for (let i = 0; i < 200 && results.filter((r) => r.redisUp === up).length < count; i++) await pause(50);
    };
    await trafficFor(300, true, 12);
    redisUp = false;
    await redis.stop();
    await pause(300);
    simulator.controls.resetStats();
    simulator.controls.revokeAllTokens();
    await trafficFor(800, false, 12);
    running = false;
    await Promise.all(workers);

    // Traffic ran before and during the outage, two searches a worker at least.
    expect(results.filter((r) => r.redisUp).length).toBeGreaterThanOrEqual(12);
    expect(results.filter((r) => !r.redisUp).length).toBeGreaterThanOrEqual(12);
    expect(results.filter((r) => r.status !== 200)).toEqual([]);
    // The outage adds at most the Redis timeout to a search: bounded against the slowest search of the same traffic
    // before it (what this machine's load adds right now; a few milliseconds on a quiet one).
    const slowestBefore = Math.max(...results.filter((r) => r.redisUp).map((r) => r.ms));
    const slowestDuring = Math.max(...results.filter((r) => !r.redisUp).map((r) => r.ms)); // or across its start
    expect(slowestDuring).toBeLessThan(REDIS_TIMEOUT_MS + MARGIN_MS + slowestBefore);
    // Each replica logged in on its own, once, and said once that the token store is down.
    expect(simulator.controls.stats().tokenCalls).toBe(3);
    for (const r of replicas) {
      expect(events(r, 'shared_store_down').filter((l) => l.fields.store === 'token')).toHaveLength(1);
      expect(events(r, 'upstream_token_refreshed').map((l) => l.fields.source)).toEqual(['shared', 'own']);
    }

    // Redis back on the same port, empty; the gateways are not restarted.
    const readyBefore = replicas.map((r) => events(r, 'redis_ready').length);
    redis = await startOwnRedis(redis.port);
    for (let i = 0; i < 100 && replicas.some((r, j) => events(r, 'redis_ready').length <= readyBefore[j]!); i++)
      await pause(50);
    for (const [j, r] of replicas.entries()) expect(events(r, 'redis_ready').length).toBeGreaterThan(readyBefore[j]!);

    // Without a refresh or a revocation: within a few seconds every replica sends one token again (the first to ask
    // Redis offered its own, the others took it) and says the token store is up; no login for it.
    simulator.controls.resetStats();
    const backAt = performance.now();
    const oneToken = async () => {
      const before = simulator.controls.stats().authorizationsSeen.length;
      expect(await burst(deployment!, token, spread(6))).toEqual(Array(6).fill(200));
      const seen = new Set(simulator.controls.stats().authorizationsSeen.slice(before));
      const gauges = await Promise.all(replicas.map((r) => storeUp(r, 'token')));
      return seen.size === 1 && gauges.every((g) => g === 1);
    };
    while (!(await oneToken()) && performance.now() - backAt < 8_000) await pause(100);
    const rejoinMs = performance.now() - backAt;
    expect(rejoinMs).toBeLessThan(5_000);
    // Every replica now sends it, on every search.
    const before = simulator.controls.stats().authorizationsSeen.length;
    expect(await burst(deployment, token, spread(30))).toEqual(Array(30).fill(200));
    expect(new Set(simulator.controls.stats().authorizationsSeen.slice(before)).size).toBe(1);
    expect(simulator.controls.stats().tokenCalls).toBe(0);
    for (const r of replicas) {
      expect(events(r, 'shared_store_up').filter((l) => l.fields.store === 'token')).toHaveLength(1);
      expect(events(r, 'upstream_token_rejoined')).toHaveLength(1);
      expect(await storeUp(r, 'token')).toBe(1);
    }
    expect(replicas.flatMap((r) => events(r, 'upstream_token_rejoined').map((l) => l.fields.how)).sort()).toEqual([
      'adopted',
      'adopted',
      'offered',
    ]);
    // The figure goes with the test's result (reporters that keep annotations show it), not onto the run's stdout.
    await annotate(`token store rejoined by all three replicas ${Math.round(rejoinMs)} ms after Redis answered again`);

    // The next refresh (another revocation) goes through Redis again: one login for the three.
    simulator.controls.resetStats();
    simulator.controls.revokeAllTokens();
    expect(await burst(deployment, token, spread(30))).toEqual(Array(30).fill(200));
    expect(simulator.controls.stats().tokenCalls).toBe(1);
    expect((await redisContents(redis.url, prefix)).keys.filter((k) => !k.startsWith(`${prefix}:ctr:`))).toHaveLength(
      2,
    );
    for (const r of replicas) {
      expect(events(r, 'shared_store_up').filter((l) => l.fields.store === 'token')).toHaveLength(1);
      expect(events(r, 'upstream_token_refreshed').map((l) => l.fields.source)).toEqual(['shared', 'own', 'shared']);
    }
  });
});
