import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { consoleSearch, DESKTOP_HEADERS } from '../helpers/console-client.js';
import { startOwnRedis, type OwnRedis } from '../helpers/own-redis.js';
import { monitorRedis } from '../helpers/redis-monitor.js';
import { checkRequirement, commandRequirement, tcpRequirement } from '../helpers/requires.js';
import { startStack, type Stack } from '../helpers/stack.js';

const NUMBER = '020 7946 0001';
const sharedRedis = checkRequirement(await tcpRequirement('127.0.0.1', 6379, 'Redis at 127.0.0.1:6379'));
const redisServer = checkRequirement(commandRequirement('redis-server', ['--version'], 'the redis-server command'));

const stacks: Stack[] = [];
const start = async (env: Record<string, string>) => {
  const stack = await startStack({ env: { CONSOLE_PROVIDER: 'swissdir', ...env } });
  stacks.push(stack);
  return stack;
};
afterEach(async () => {
  await Promise.all(stacks.splice(0).map((s) => s.close()));
});

describe.skipIf(!sharedRedis)('console rate limits in Redis (127.0.0.1:6379)', () => {
  it('shares one limit between two gateway instances', async () => {
    const env = {
      REDIS_URL: 'redis://127.0.0.1:6379',
      REDIS_KEY_PREFIX: `test-${randomUUID()}`,
      CONSOLE_RATE_PER_ADDRESS: '4',
    };
    const [a, b] = [await start(env), await start(env)];
    const statuses: number[] = [];
    for (const gw of [a, b, a, b, a, b]) statuses.push((await consoleSearch(gw.gateway.url, NUMBER)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
    expect(a.logs.filter((l) => String(l.fields.event).startsWith('rate_limit_store'))).toEqual([]);
    // Redis holds a keyed hash of the client address, never the address itself.
    const keys = await redisKeys(`${env.REDIS_KEY_PREFIX}:ctr:console-rl:*`);
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.join(' ')).not.toMatch(/127\.0\.0\.1|::1|localhost/);
  });

  it('shares the total budget between instances', async () => {
    const env = {
      REDIS_URL: 'redis://127.0.0.1:6379',
      REDIS_KEY_PREFIX: `test-${randomUUID()}`,
      CONSOLE_RATE_PER_ADDRESS: '100',
      CONSOLE_RATE_TOTAL: '3',
      TRUST_PROXY_HOPS: '1',
      // A Redis slower than its timeout on a loaded machine would hand the counts to each instance's memory: sharing
      // is what this tests, so no answer here is taken for an outage.
      REDIS_TIMEOUT_MS: '3000',
    };
    const [a, b] = [await start(env), await start(env)];
    const statuses: number[] = [];
    let i = 0;
    for (const gw of [a, b, a, b])
      statuses.push((await consoleSearch(gw.gateway.url, NUMBER, { 'x-forwarded-for': `198.51.100.${++i}` })).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
  });
});

/** The keys under a pattern in a test Redis (KEYS is fine there). */
async function redisKeys(pattern: string, url = 'redis://127.0.0.1:6379'): Promise<string[]> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await client.connect();
    return await client.keys(pattern);
  } finally {
    client.disconnect();
  }
}

describe.skipIf(!redisServer)('console rate limits when Redis goes away', () => {
  let redis: OwnRedis | undefined;
  afterAll(async () => {
    await redis?.stop();
  });

  it('keeps answering per LIMITS_ON_STORE_ERROR and logs it without the address', async () => {
    redis = await startOwnRedis();
    const base = { REDIS_URL: redis.url, CONSOLE_RATE_PER_ADDRESS: '3' };
    const memory = await start({ ...base, REDIS_KEY_PREFIX: 'memory', LIMITS_ON_STORE_ERROR: 'memory' });
    const open = await start({ ...base, REDIS_KEY_PREFIX: 'open', LIMITS_ON_STORE_ERROR: 'open' });
    const closed = await start({ ...base, REDIS_KEY_PREFIX: 'closed', LIMITS_ON_STORE_ERROR: 'closed' });
    for (const s of [memory, open, closed]) expect((await consoleSearch(s.gateway.url, NUMBER)).status).toBe(200);

    await redis.stop();

    const timed = async (s: Stack) => {
      const started = Date.now();
      const res = await consoleSearch(s.gateway.url, NUMBER);
      expect(Date.now() - started).toBeLessThan(1500);
      return res;
    };
    // memory: counted on this replica from the count Redis last gave (1 of 3), so the upstream stays protected.
    const memoryStatuses: number[] = [];
    for (let i = 0; i < 4; i++) memoryStatuses.push((await timed(memory)).status);
    expect(memoryStatuses).toEqual([200, 200, 429, 429]);
    // open: not counted at all.
    for (let i = 0; i < 5; i++) expect((await timed(open)).status).toBe(200);
    // closed: refused with 503 and a hint when to retry.
    const refused = await timed(closed);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('10');
    expect(refused.headers.get('content-type')).toBe('application/problem+json');
    // Pages still load in every mode.
    for (const s of [memory, open, closed]) expect((await fetch(`${s.gateway.url}/console`)).status).toBe(200);

    expect(memory.logs.some((l) => l.fields.event === 'rate_limit_store_fallback' && l.level === 'warn')).toBe(true);
    expect(open.logs.some((l) => l.fields.event === 'rate_limit_store_error' && l.fields.mode === 'open')).toBe(true);
    expect(closed.logs.some((l) => l.fields.event === 'rate_limit_store_error' && l.fields.mode === 'closed')).toBe(
      true,
    );
    for (const s of [memory, open, closed]) {
      const lines = s.logs.filter((l) => String(l.fields.event).startsWith('rate_limit_store'));
      expect(lines.length).toBeGreaterThan(0);
      // One line per kind per 30 s, and never the client address (127.0.0.1).
      expect(lines.length).toBeLessThanOrEqual(2);
      expect(JSON.stringify(lines)).not.toContain('127.0.0.1');
    }
  });
});

describe.skipIf(!redisServer)('console rate limits when Redis comes back', () => {
  let redis: OwnRedis | undefined;
  afterAll(async () => {
    await redis?.stop();
  });

  it('counts in Redis again once it answers, without a restart of the gateway', async () => {
    redis = await startOwnRedis();
    const prefix = `back-${randomUUID()}`;
    const gw = await start({
      REDIS_URL: redis.url,
      REDIS_KEY_PREFIX: prefix,
      LIMITS_ON_STORE_ERROR: 'closed',
    });
    expect((await consoleSearch(gw.gateway.url, NUMBER)).status).toBe(200);

    const { port } = redis;
    await redis.stop();
    expect((await consoleSearch(gw.gateway.url, NUMBER)).status).toBe(503);

    redis = await startOwnRedis(port);
    let status = 0;
    for (let i = 0; i < 50 && status !== 200; i++) {
      await new Promise((r) => setTimeout(r, 200));
      status = (await consoleSearch(gw.gateway.url, NUMBER)).status;
    }
    expect(status).toBe(200);
    expect((await redisKeys(`${prefix}:ctr:console-rl:*`, redis.url)).length).toBeGreaterThan(0);
  });
});

describe.skipIf(!redisServer)('console requests that are not a search', () => {
  let redis: OwnRedis | undefined;
  const cleanups: (() => void)[] = [];
  afterAll(async () => {
    cleanups.forEach((f) => f());
    await redis?.stop();
  });

  it('touch no shared store: the page, assets, 404s and other methods ask the limiter nothing in Redis', async () => {
    redis = await startOwnRedis();
    const prefix = `console-probe-${randomUUID()}`;
    const s = await start({ REDIS_URL: redis.url, REDIS_KEY_PREFIX: prefix });
    // MONITOR sees every command the gateway sends; the limiter's keys all begin with this.
    const limiterKeys = `${prefix}:ctr:console-rl:`;
    const monitor = await monitorRedis(redis.url);
    cleanups.push(() => monitor.close());
    const limiterCommands = () => monitor.commands.filter((args) => args.join(' ').includes(limiterKeys)).length;
    const paths = ['/console', '/console/app.js', '/console/nothing-here', '/console/v2/other', '/console/admin'];
    for (let i = 0; i < 8; i++) {
      for (const path of paths) await fetch(`${s.gateway.url}${path}`, { headers: DESKTOP_HEADERS });
    }
    await new Promise((r) => setTimeout(r, 100));
    expect(limiterCommands()).toBe(0);
    // The control: a search does ask the limiter in Redis.
    expect((await consoleSearch(s.gateway.url, NUMBER)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 100));
    expect(limiterCommands()).toBeGreaterThan(0);
  });
});
