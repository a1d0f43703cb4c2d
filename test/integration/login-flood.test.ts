// A flood of failed logins with a new invented client id each, from one address, against a gateway counting in a
// real Redis of the test's own: the address budget is checked first, a refused attempt creates no per-client
// counter, so memory and keys stay bounded whatever the number of ids invented.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Agent, fetch as undiciFetch } from 'undici';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { startOwnRedis, type OwnRedis } from '../helpers/own-redis.js';
import { checkRequirement, commandRequirement } from '../helpers/requires.js';
import { countingLogger } from '../helpers/recorders.js';
import { startStack, type Stack } from '../helpers/stack.js';

const redisServer = checkRequirement(commandRequirement('redis-server', ['--version'], 'the redis-server command'));
const ATTEMPTS = 24_000;
const MiB = 1024 * 1024;
// A full collection before each reading, so the heap shows what is kept, not garbage not yet collected.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

describe.skipIf(!redisServer)('a failed-login flood with invented client ids', () => {
  let redis: OwnRedis | undefined;
  let stack: Stack | undefined;
  const agent = new Agent({ connections: 32 });
  afterAll(async () => {
    await agent.close();
    await stack?.close();
    await redis?.stop();
  });

  const logged = new Map<string, number>();

  it(`grows memory by under 10 MiB and leaves under 100 keys after ${ATTEMPTS} attempts from one address`, async () => {
    redis = await startOwnRedis();
    stack = await startStack({
      env: { REDIS_URL: redis.url, TRUST_PROXY_HOPS: '1', LOGIN_FAILURES_PER_ADDRESS: '20' },
      // Log lines counted, not kept: the heap then measures the gateway, not the test's own capture.
      gateway: { logger: countingLogger(logged) },
    });
    const url = `${stack.gateway.url}/token/login`;
    const attempt = async (i: number) => {
      const res = await undiciFetch(url, {
        dispatcher: agent,
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': '198.51.100.66' },
        body: `grant_type=client_credentials&client_id=invented-${i}&client_secret=guess-${i}`,
      });
      await res.arrayBuffer();
      return res.status;
    };
    // Warm-up: the first attempts open the budgets and fill the JIT, then the baseline is taken.
    for (let i = 0; i < 200; i++) await attempt(i);
    gc();
    const before = process.memoryUsage();
    const statuses = new Map<number, number>();
    for (let start = 200; start < ATTEMPTS; start += 32) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(32, ATTEMPTS - start) }, (_, k) => attempt(start + k)),
      );
      for (const s of batch) statuses.set(s, (statuses.get(s) ?? 0) + 1);
    }
    gc();
    const after = process.memoryUsage();
    expect([...statuses.keys()]).toEqual([429]);
    // Every attempt is in the access log; the secrets checked (and logged as failed) are the address's budget.
    expect(logged.get('request')).toBe(ATTEMPTS);
    expect(logged.get('login failed')).toBe(20);
    // The heap after a full collection: what the gateway (in this process) kept of the flood.
    const grown = after.heapUsed - before.heapUsed;
    expect(grown).toBeLessThan(10 * MiB);
    const client = new Redis(redis.url);
    try {
      const keys = await client.keys('*login-fail*');
      expect(keys.length).toBeLessThan(100);
      expect(await client.dbsize()).toBeLessThan(100);
    } finally {
      client.disconnect();
    }
  }, 120_000);
});
