// Quotas and the budget shared by two gateways through a real Redis (a unique REDIS_KEY_PREFIX each test),
// counted at one simulator both gateways call; and LIMITS_ON_STORE_ERROR when the Redis goes away.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { missNumber, problemType, stacksPerTest, usageOf } from '../helpers/guard-stack.js';
import { startOwnRedis, type OwnRedis } from '../helpers/own-redis.js';
import { checkRequirement, commandRequirement, tcpRequirement } from '../helpers/requires.js';
import { startStack, type Stack } from '../helpers/stack.js';

const sharedRedis = checkRequirement(await tcpRequirement('127.0.0.1', 6379, 'Redis at 127.0.0.1:6379'));
const redisServer = checkRequirement(commandRequirement('redis-server', ['--version'], 'the redis-server command'));

const { twoGateways, stacks, cleanups } = stacksPerTest();

describe.skipIf(!sharedRedis)('quotas and budget shared through Redis (127.0.0.1:6379)', () => {
  const redisEnv = () => ({ REDIS_URL: 'redis://127.0.0.1:6379', REDIS_KEY_PREFIX: `t-${randomUUID()}` });

  it("holds a client's quota across two gateways", async () => {
    const [a, b] = await twoGateways({ ...redisEnv(), CLIENT_UPSTREAM_QUOTA_PER_DAY: '3' });
    const [ta, tb] = [await a.login('crm'), await b.login('crm')];
    const statuses: number[] = [];
    for (const [i, [gw, token]] of [
      [a, ta],
      [b, tb],
      [a, ta],
      [b, tb],
      [a, ta],
    ].entries()) {
      statuses.push((await (gw as Stack).search(missNumber(i), token as string)).status);
    }
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    expect(a.simulator.controls.stats().searchCalls).toBe(3);
    // Either gateway reports the deployment's figures.
    expect((await usageOf(b)).clients.find((c) => c.id === 'crm')).toMatchObject({
      upstreamCalls: 3,
      quota: 3,
      remaining: 0,
    });
    expect((await usageOf(a)).store).toBe('redis');
  });

  it('lets a concurrent burst on two gateways cause exactly the quota of upstream calls', async () => {
    const [a, b] = await twoGateways({ ...redisEnv(), CLIENT_UPSTREAM_QUOTA_PER_DAY: '7' });
    const [ta, tb] = [await a.login('pbx'), await b.login('pbx')];
    const statuses = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        (i % 2 ? a.search(missNumber(i), ta) : b.search(missNumber(i), tb)).then((r) => r.status),
      ),
    );
    expect(statuses.filter((x) => x === 200)).toHaveLength(7);
    expect(a.simulator.controls.stats().searchCalls).toBe(7);
  });

  it('holds the budget across gateways, the console counted with the API', async () => {
    const [a, b] = await twoGateways({ ...redisEnv(), UPSTREAM_BUDGET_PER_DAY: '2', CONSOLE_PROVIDER: 'swissdir' });
    const consoleRes = await fetch(
      `${a.gateway.url}/console/v2/contacts/search?what=${encodeURIComponent(missNumber(1))}`,
      {
        headers: {
          'user-agent':
            'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36',
          'sec-ch-ua-mobile': '?0',
        },
      },
    );
    expect(consoleRes.status).toBe(200);
    expect((await b.search(missNumber(2), await b.login('crm'))).status).toBe(200);
    const refused = await a.search(missNumber(3), await a.login('pbx'));
    expect(refused.status).toBe(503);
    expect(await problemType(refused)).toBe('budget-exhausted');
    expect(a.simulator.controls.stats().searchCalls).toBe(2);
  });
});

/** A Redis of this test's own, stopped after the test whatever happens. */
async function ownRedis(): Promise<OwnRedis> {
  const redis = await startOwnRedis();
  cleanups.push(() => redis.stop());
  return redis;
}

describe.skipIf(!redisServer)('LIMITS_ON_STORE_ERROR when Redis goes away', () => {
  it('closed: misses 503 while cached answers are served; memory: counts on this gateway; neither answers 5xx for a hit', async () => {
    const redis = await ownRedis();
    const closed = await startStack({
      env: {
        REDIS_URL: redis.url,
        REDIS_KEY_PREFIX: 'closed',
        LIMITS_ON_STORE_ERROR: 'closed',
        CLIENT_UPSTREAM_QUOTA_PER_DAY: '100',
      },
    });
    stacks.push(closed);
    const memory = await startStack({
      env: {
        REDIS_URL: redis.url,
        REDIS_KEY_PREFIX: 'memory',
        LIMITS_ON_STORE_ERROR: 'memory',
        CLIENT_UPSTREAM_QUOTA_PER_DAY: '2',
      },
    });
    stacks.push(memory);
    const [tc, tm] = [await closed.login('crm'), await memory.login('crm')];
    expect((await closed.search(missNumber(0), tc)).status).toBe(200);
    expect((await memory.search(missNumber(0), tm)).status).toBe(200);

    await redis.stop();

    const refused = await closed.search(missNumber(1), tc);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('10');
    expect((await closed.search(missNumber(0), tc)).status).toBe(200);
    // memory: this gateway counts from the outage on (a fresh day's count of its own).
    const statuses: number[] = [];
    for (const i of [1, 2, 3]) statuses.push((await memory.search(missNumber(i), tm)).status);
    expect(statuses).toEqual([200, 200, 429]);
    expect(memory.simulator.controls.stats().searchCalls).toBe(3);
    for (const s of [closed, memory]) {
      const down = s.logs.filter((l) => l.fields.event === 'shared_store_down' && l.fields.store === 'counter');
      expect(down).toHaveLength(1);
    }
  });
});
