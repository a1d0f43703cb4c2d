// A hung Redis (a redis-server of the test's own stopped with SIGSTOP: connections open, nothing answers) costs a
// request at most one REDIS_TIMEOUT_MS however the stores' commands interleave: when the first command times out,
// the commands already waiting fail at once instead of each waiting out its own timeout.
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/observability/logger.js';
import { createNodeRedis, type NodeRedis } from '../../../src/runtime/redis/client.js';
import { createRedisCounterStore } from '../../../src/runtime/redis/redis-counter-store.js';
import { startOwnRedis, type OwnRedis } from '../../helpers/own-redis.js';
import { checkRequirement, commandRequirement } from '../../helpers/requires.js';

const redisServer = checkRequirement(commandRequirement('redis-server', ['--version'], 'the redis-server command'));
const TIMEOUT_MS = 300;
/**
 * What the first request may take: under two timeouts, where waiting for each command's own timeout would cost two or
 * three. The other timeout's worth is what a loaded machine (a second suite beside this one) may add to one.
 */
const ONE_TIMEOUT_BOUND_MS = 2 * TIMEOUT_MS;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(!redisServer)('a hung Redis', () => {
  let redis: OwnRedis | undefined;
  let client: NodeRedis | undefined;
  afterEach(async () => {
    redis?.resume();
    await client?.close();
    await redis?.stop();
  });

  /** A client and a counter store (which bounds each command by its own timer too) on a Redis then stopped. */
  async function hung() {
    redis = await startOwnRedis();
    client = createNodeRedis(redis.url, silentLogger, { commandTimeoutMs: TIMEOUT_MS });
    expect(await client.ready(2000)).toBe(true);
    const counters = createRedisCounterStore({
      client: client.client,
      keyPrefix: `hung-${crypto.randomUUID()}`,
      timeoutMs: TIMEOUT_MS,
      clock: Date.now,
    });
    // Loads the scripts while Redis answers.
    await counters.consume('warm', 1, 10, 60_000);
    redis.pause();
    return { redis: client.client, counters };
  }

  it('costs a request one timeout when its next command goes out the moment its first one timed out', async () => {
    const { redis: commands, counters } = await hung();
    const started = performance.now();
    // The counter store's own timer and the client's fire together: the request's next command goes out between
    // them, before the client learns that Redis hangs.
    await expect(counters.consume('a', 1, 10, 60_000)).rejects.toThrow();
    await expect(commands.get('next')).rejects.toThrow();
    await expect(commands.set('after', '1')).rejects.toThrow();
    expect(performance.now() - started).toBeLessThan(ONE_TIMEOUT_BOUND_MS);
  });

  it('costs no request more than one timeout with commands of many requests interleaved', async () => {
    const { redis: commands, counters } = await hung();
    /** A miss: a count, a read, a write, one after the other. */
    const request = async (i: number) => {
      const started = performance.now();
      await counters.consume(`r${i}`, 1, 10, 60_000).catch(() => {});
      await commands.get(`lookup-${i}`).catch(() => {});
      await commands.set(`lookup-${i}`, 'x').catch(() => {});
      return performance.now() - started;
    };
    // Requests starting every 20 ms over two timeouts: some start before the first timeout, some while commands
    // sent before it are still waiting.
    const took = await Promise.all(
      Array.from({ length: 30 }, async (_, i) => {
        await sleep(i * 20);
        return request(i);
      }),
    );
    expect(Math.max(...took)).toBeLessThan(ONE_TIMEOUT_BOUND_MS);
    // The ones started after the first timeout did not wait for Redis at all (a wait is a whole timeout).
    expect(took.slice(-5).every((ms) => ms < TIMEOUT_MS / 2)).toBe(true);
  });
});
