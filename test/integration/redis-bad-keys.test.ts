// One bad key is that key's problem: two gateways on one Redis (127.0.0.1:6379, a key prefix of their own) keep
// answering and sharing when every key they wrote is replaced by a foreign value (another type, no TTL, text), and
// a purged answer written back into Redis by someone with write access is not served again.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fictional, onBoth, settle, startHaDeployment, type HaDeployment } from '../helpers/ha-deployment.js';
import { checkRequirement, tcpRequirement } from '../helpers/requires.js';

const URL = 'redis://127.0.0.1:6379';
const sharedRedis = checkRequirement(await tcpRequirement('127.0.0.1', 6379, 'Redis at 127.0.0.1:6379'));

describe.skipIf(!sharedRedis)('foreign values in Redis (127.0.0.1:6379)', () => {
  let d: HaDeployment | undefined;
  let raw: Redis | undefined;
  beforeAll(async () => {
    // What is asked here is what a foreign value does, not how fast Redis answers: a command is given 2 s, so a
    // machine busy with a second suite does not turn a purge into "Redis did not answer" (503).
    d = await startHaDeployment({ REDIS_URL: URL, CLIENT_UPSTREAM_QUOTA_PER_DAY: '1000', REDIS_TIMEOUT_MS: '2000' });
    raw = new Redis(URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await raw.connect();
  });
  afterAll(async () => {
    if (raw && d) {
      const keys = await raw.keys(`${d.prefix}:*`);
      if (keys.length > 0) await raw.unlink(...keys);
    }
    raw?.disconnect();
    await d?.close();
  });

  it('treats every key turned foreign as absent and overwrites it: no store counted down, sharing goes on', async () => {
    await onBoth(d!, [fictional(1), fictional(2)]);
    await d!.consoleSearch(0, '020 7946 0001');
    await settle(100);
    const keys = await raw!.keys(`${d!.prefix}:*`);
    // The token, its generation, the answers, the purge counter, the client's rate and quota counters.
    expect(keys.length).toBeGreaterThanOrEqual(5);
    for (const [i, key] of keys.entries()) {
      await raw!.del(key);
      if (i % 3 === 0) await raw!.set(key, 'not ours');
      else if (i % 3 === 1) await raw!.hset(key, 'foreign', '1.5');
      else await raw!.rpush(key, 'x');
    }

    const answers = await onBoth(d!, [fictional(1), fictional(3), fictional(4)]);
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    expect(await d!.consoleSearch(1, '020 7946 0001')).toBe(200);
    for (const logs of d!.replicas.replicas.map((r) => r.logs))
      expect(logs.filter((l) => l.fields.event === 'shared_store_down')).toEqual([]);
    // Still shared: a new number fetched by one replica is a shared hit on the other, one upstream call for both.
    d!.replicas.simulator.controls.resetStats();
    await d!.search(0, fictional(5));
    await settle(50);
    expect((await d!.search(1, fictional(5))).cacheStatus).toContain('detail=shared');
    expect(d!.replicas.simulator.controls.stats().searchCalls).toBe(1);
  });

  it('does not serve a purged answer written back into Redis', async () => {
    const number = fictional(10);
    await d!.search(0, number);
    await settle(50);
    const before = new Set(await raw!.keys(`${d!.prefix}:lookup:*`));
    const values = new Map<string, string>();
    for (const key of before) values.set(key, (await raw!.get(key).catch(() => null)) ?? '');
    expect(await d!.purge(0, number)).toBe(200);
    // Written back: every answer as it was before the purge, with its TTL.
    for (const [key, value] of values) if (value !== '') await raw!.set(key, value, 'PX', 60_000);
    d!.replicas.simulator.controls.resetStats();
    const again = await d!.search(1, number);
    expect(again.status).toBe(200);
    expect(again.cacheStatus).not.toContain('detail=shared');
    expect(d!.replicas.simulator.controls.stats().searchByNumber[number]).toBe(1);
  });
});
