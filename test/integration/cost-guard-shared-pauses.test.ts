// Two gateways sharing a real Redis in front of one simulator, over sockets: an upstream 429 met by one pauses
// both (one search call in the Retry-After for the deployment), a breaker opened by one opens both, and with
// Redis down each gateway pauses on its own again.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { metricValue, missNumber, problemType, sleep, stacksPerTest, usageOf } from '../helpers/guard-stack.js';
import { startOwnRedis } from '../helpers/own-redis.js';
import { checkRequirement, commandRequirement, tcpRequirement } from '../helpers/requires.js';
import type { Stack } from '../helpers/stack.js';

const sharedRedis = checkRequirement(await tcpRequirement('127.0.0.1', 6379, 'Redis at 127.0.0.1:6379'));
const redisServer = checkRequirement(commandRequirement('redis-server', ['--version'], 'the redis-server command'));

const { twoGateways, cleanups } = stacksPerTest();

const searchCalls = (s: Stack) => s.simulator.controls.stats().searchCalls;
let numbered = 100;
/** A number neither gateway has asked for yet: a miss on both. */
const fresh = () => missNumber(numbered++);

/** Both gateways with their upstream token already (a token request is not a search). */
async function warmed(env: Record<string, string>): Promise<{ a: Stack; b: Stack; ta: string; tb: string }> {
  const [a, b] = await twoGateways(env);
  const [ta, tb] = [await a.login('crm'), await b.login('crm')];
  expect((await a.search(fresh(), ta)).status).toBe(200);
  expect((await b.search(fresh(), tb)).status).toBe(200);
  return { a, b, ta, tb };
}

describe.skipIf(!sharedRedis)('upstream pauses shared by two gateways through Redis (127.0.0.1:6379)', () => {
  const redisEnv = () => ({ REDIS_URL: 'redis://127.0.0.1:6379', REDIS_KEY_PREFIX: `t-${randomUUID()}` });

  it('never keeps the shared cooldown longer than UPSTREAM_COOLDOWN_MAX_SECONDS, whatever Retry-After said', async () => {
    const env = { ...redisEnv(), UPSTREAM_COOLDOWN_MAX_SECONDS: '2', UPSTREAM_COOLDOWN_SECONDS: '1' };
    const { a, b, ta, tb } = await warmed(env);
    a.simulator.controls.setFaults({ rateLimitRate: 1, rateLimitRetryAfter: '31536000000' });
    const first = await a.search(fresh(), ta);
    const started = Date.now();
    expect(first.headers.get('retry-after')).toBe('2');
    const redis = new Redis('redis://127.0.0.1:6379');
    try {
      const keys = await redis.keys(`${env.REDIS_KEY_PREFIX}*upstream-pause:cooldown*`);
      expect(keys.length).toBe(1);
      const ttl = await redis.pttl(keys[0]!);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(2_000);
    } finally {
      redis.disconnect();
    }
    expect(Number((await b.search(fresh(), tb)).headers.get('retry-after'))).toBeLessThanOrEqual(2);
    a.simulator.controls.setFaults({ rateLimitRate: 0 });
    await sleep(Math.max(0, 2_100 - (Date.now() - started)));
    expect((await b.search(fresh(), tb)).status).toBe(200);
  });

  it('gives an upstream answering 429 with Retry-After: 3 exactly one search call from both gateways in those 3 s', async () => {
    const { a, b, ta, tb } = await warmed(redisEnv());
    a.simulator.controls.setFaults({ rateLimitRate: 1, rateLimitRetryAfter: '3' });
    const before = searchCalls(a);
    const first = await a.search(fresh(), ta);
    const started = Date.now();
    expect(first.status).toBe(503);
    expect(first.headers.get('retry-after')).toBe('3');

    // The other gateway never asked the upstream: its first miss is already refused.
    const other = await b.search(fresh(), tb);
    expect(other.status).toBe(503);
    expect(await problemType(other)).toBe('upstream-rate-limited');
    expect(Number(other.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(other.headers.get('retry-after'))).toBeLessThanOrEqual(3);
    expect((await usageOf(b)).cooldown.active).toBe(true);
    // Misses on both, sequential and in bursts, until half a second before the 3 s end: a burst sent later could be
    // answered after it on a busy machine, when a search may rightly go upstream again.
    while (Date.now() - started < 2_500) {
      const burst = await Promise.all([a, b, a, b].map((s, i) => s.search(fresh(), i % 2 ? tb : ta)));
      for (const r of burst) {
        expect(r.status).toBe(503);
        expect(await problemType(r)).toBe('upstream-rate-limited');
        expect(Number(r.headers.get('retry-after'))).toBeLessThanOrEqual(3);
      }
      await sleep(100);
    }
    expect(searchCalls(a) - before).toBe(1);
    expect(a.simulator.controls.stats().rateLimitedCalls).toBe(1);
    // Only the gateway that met the 429 counts a cooldown of its own.
    expect(await metricValue(a, 'callerid_gateway_upstream_cooldowns_total')).toBe(1);
    expect(await metricValue(b, 'callerid_gateway_upstream_cooldowns_total')).toBe(0);

    a.simulator.controls.setFaults({ rateLimitRate: 0 });
    await sleep(Math.max(0, 3_100 - (Date.now() - started)));
    expect((await b.search(fresh(), tb)).status).toBe(200);
    expect((await a.search(fresh(), ta)).status).toBe(200);
    expect(searchCalls(a) - before).toBe(3);
  });

  it('opens the breaker on both gateways when one meets UPSTREAM_BREAKER_FAILURES failures; each then makes one trial', async () => {
    const { a, b, ta, tb } = await warmed({
      ...redisEnv(),
      UPSTREAM_BREAKER_FAILURES: '2',
      UPSTREAM_BREAKER_OPEN_SECONDS: '2',
    });
    a.simulator.controls.setFaults({ errorRate: 1 });
    const before = searchCalls(a);
    expect([(await a.search(fresh(), ta)).status, (await a.search(fresh(), ta)).status]).toEqual([502, 502]);
    const opened = Date.now();
    const refused = await b.search(fresh(), tb);
    expect(refused.status).toBe(503);
    expect(await problemType(refused)).toBe('upstream-unavailable');
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(2);
    expect((await usageOf(b)).breaker.state).toBe('open');
    expect(await metricValue(b, 'callerid_gateway_upstream_breaker_state{state="open"}')).toBe(1);
    expect(searchCalls(a) - before).toBe(2);

    a.simulator.controls.setFaults({ errorRate: 0 });
    await sleep(Math.max(0, 2_100 - (Date.now() - opened)));
    expect((await b.search(fresh(), tb)).status).toBe(200);
    expect((await a.search(fresh(), ta)).status).toBe(200);
    expect(searchCalls(a) - before).toBe(4);
    expect((await usageOf(b)).breaker.state).toBe('closed');
  });
});

describe.skipIf(!redisServer)('upstream pauses when Redis is down', () => {
  it('falls back to a pause per gateway: each pays the upstream its own 429, and no 5xx beyond the 503s', async () => {
    const redis = await startOwnRedis();
    cleanups.push(() => redis.stop());
    const { a, b, ta, tb } = await warmed({
      REDIS_URL: redis.url,
      REDIS_KEY_PREFIX: `t-${randomUUID()}`,
      REDIS_TIMEOUT_MS: '200',
    });
    await redis.stop();
    a.simulator.controls.setFaults({ rateLimitRate: 1, rateLimitRetryAfter: '3' });
    const before = searchCalls(a);
    const statuses: number[] = [];
    for (const [s, t] of [
      [a, ta],
      [b, tb],
      [a, ta],
      [b, tb],
    ] as const) {
      const res = await s.search(fresh(), t);
      statuses.push(res.status);
      expect(await problemType(res)).toBe('upstream-rate-limited');
    }
    expect(statuses).toEqual([503, 503, 503, 503]);
    // One 429 each, then each refuses on its own.
    expect(searchCalls(a) - before).toBe(2);
    for (const s of [a, b])
      expect(s.logs.filter((l) => l.fields.event === 'shared_store_down' && l.fields.store === 'counter')).toHaveLength(
        1,
      );
  });
});
