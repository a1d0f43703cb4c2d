// A hung Redis (SIGSTOP: the connections stay open, nothing answers) costs a miss at most one timeout, and then
// nothing while it stays hung: every shared store skips it for a while after a failure and tries again later.
// Real redis-server of the test's own, a real gateway and simulator on loopback.
import { afterAll, describe, expect, it } from 'vitest';
import { startOwnRedis, type OwnRedis } from '../helpers/own-redis.js';
import { checkRequirement, commandRequirement } from '../helpers/requires.js';
import { startStack, type Stack } from '../helpers/stack.js';

const redisServer = checkRequirement(commandRequirement('redis-server', ['--version'], 'the redis-server command'));
const TIMEOUT_MS = 250;
const number = (i: number) => `+44207946${String(1000 + i).padStart(4, '0')}`;

describe.skipIf(!redisServer)('a hung Redis', () => {
  let redis: OwnRedis | undefined;
  let stack: Stack | undefined;
  afterAll(async () => {
    redis?.resume();
    await stack?.close();
    await redis?.stop();
  });

  it('costs a miss at most one timeout, the misses after it about as long as without Redis, and sharing resumes', async () => {
    redis = await startOwnRedis();
    stack = await startStack({ env: { REDIS_URL: redis.url, REDIS_TIMEOUT_MS: String(TIMEOUT_MS) } });
    const token = await stack.login('crm');
    expect((await stack.search(number(0), token)).status).toBe(200);

    redis.pause();
    const took: number[] = [];
    for (let i = 1; i <= 20; i++) {
      const started = performance.now();
      const res = await stack.search(number(i), token);
      took.push(performance.now() - started);
      expect(res.status).toBe(200);
    }
    const sorted = [...took].sort((a, b) => a - b);
    const p50 = sorted[Math.floor(sorted.length / 2)]!;
    expect(p50).toBeLessThan(100);
    // None waits on more than one timeout (the first command; every store on the client then skips Redis until a
    // background PING answers), plus a margin for the busy machine.
    expect(sorted.at(-1)!).toBeLessThan(TIMEOUT_MS + 250);
    expect(stack.logs.some((l) => l.fields.event === 'shared_store_down')).toBe(true);

    // The purge channel too: a purge while Redis hangs answers at once that it reached this replica only.
    const admin = await stack.login('ops');
    for (const path of [`/admin/cache/${encodeURIComponent(number(1))}`, '/admin/cache']) {
      const started = performance.now();
      const res = await fetch(`${stack.gateway.url}${path}`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${admin}` },
      });
      await res.arrayBuffer();
      expect(res.status).toBe(503);
      expect(performance.now() - started).toBeLessThan(TIMEOUT_MS + 250);
    }

    redis.resume();
    let resumed = false;
    for (let i = 0; i < 40 && !resumed; i++) {
      await new Promise((r) => setTimeout(r, 100));
      await stack.search(number(100 + i), token);
      resumed = stack.logs.some((l) => l.fields.event === 'shared_store_up' && l.fields.store === 'lookup');
    }
    expect(resumed).toBe(true);
  }, 30_000);
});
