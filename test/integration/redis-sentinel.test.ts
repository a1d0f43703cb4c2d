// Two gateways on a Redis primary with a replica behind three Sentinels (real redis-server processes of the test's
// own): one login and one upstream search per number for both, purges both obey, and the primary killed under
// traffic: every answer 200 and none slow, then sharing again on the promoted replica, which holds the state.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  fictional,
  onBoth,
  expectEveryAnswerThrough,
  expectPurgeObeyed,
  expectSharingAgain,
  untilRedisAnswers,
  startHaDeployment,
  expectOneLogin,
  trafficWhile,
  type HaDeployment,
} from '../helpers/ha-deployment.js';
import { redisCli } from '../helpers/redis-cluster.mjs';
import { MASTER_NAME, startRedisSentinels, type SentinelProcesses } from '../helpers/redis-sentinel.js';
import { checkRequirement, commandRequirement } from '../helpers/requires.js';

const redisServer = checkRequirement(commandRequirement('redis-server', ['--version'], 'the redis-server command'));
/** The gateways' REDIS_TIMEOUT_MS: what a failover may cost a search is bounded by it. */
const REDIS_TIMEOUT_MS = 500;

describe.skipIf(!redisServer)('two gateways on Redis behind Sentinels', () => {
  let sentinel: SentinelProcesses | undefined;
  let d: HaDeployment | undefined;
  beforeAll(async () => {
    sentinel = await startRedisSentinels();
    d = await startHaDeployment({
      REDIS_SENTINELS: sentinel.sentinels,
      REDIS_SENTINEL_MASTER: MASTER_NAME,
      REDIS_TIMEOUT_MS: String(REDIS_TIMEOUT_MS),
    });
    await untilRedisAnswers(d);
  }, 40_000);
  afterAll(async () => {
    await d?.close();
    await sentinel?.stop();
  });

  it('logs in once and searches each number once for both, and both obey a purge made on either', async () => {
    const numbers = Array.from({ length: 8 }, (_, i) => fictional(i));
    const answers = await onBoth(d!, numbers);
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    const stats = d!.replicas.simulator.controls.stats();
    expectOneLogin(d!);
    expect(stats.searchCalls).toBe(numbers.length);

    await expectPurgeObeyed(d!, 1, numbers[0]!);
    expect((await d!.search(0, numbers[1]!)).age).toBeGreaterThanOrEqual(1);
  });

  it('answers every request (200, none slowed by more than a Redis timeout per command) while the primary is killed, then shares again on the promoted replica', async () => {
    const answers = await trafficWhile(d!, async () => {
      await sentinel!.killMaster();
      await sentinel!.promoted();
    });
    expectEveryAnswerThrough(answers, REDIS_TIMEOUT_MS);

    await expectSharingAgain(d!);
    // The promoted replica holds the shared state: the token and the answers.
    const keys = (await redisCli(sentinel!.replicaPort, '--scan', '--pattern', `${d!.prefix}:*`)).split('\n');
    expect(keys.some((k) => k.startsWith(`${d!.prefix}:token:`))).toBe(true);
    expect(keys.filter((k) => k.startsWith(`${d!.prefix}:lookup:`)).length).toBeGreaterThanOrEqual(10);
    for (const logs of d!.replicas.replicas.map((r) => r.logs))
      expect(logs.some((l) => l.fields.event === 'shared_store_up')).toBe(true);
  }, 45_000);
});

describe.skipIf(!redisServer)('two gateways behind Sentinels that want a password', () => {
  const PASSWORD = 'sentinel-password-for-the-test-7c2a';
  let sentinel: SentinelProcesses | undefined;
  beforeAll(async () => {
    sentinel = await startRedisSentinels({ password: PASSWORD });
  }, 40_000);
  afterAll(async () => {
    await sentinel?.stop();
  });
  const behindSentinels = (env: Record<string, string>) =>
    startHaDeployment({
      REDIS_SENTINELS: sentinel!.sentinels,
      REDIS_SENTINEL_MASTER: MASTER_NAME,
      REDIS_TIMEOUT_MS: String(REDIS_TIMEOUT_MS),
      ...env,
    });

  it('share one login and one search per number with REDIS_SENTINEL_PASSWORD', async () => {
    const d = await behindSentinels({ REDIS_SENTINEL_PASSWORD: PASSWORD });
    try {
      const numbers = Array.from({ length: 5 }, (_, i) => fictional(100 + i));
      const answers = await onBoth(d, numbers);
      expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
      const stats = d.replicas.simulator.controls.stats();
      expectOneLogin(d);
      expect(stats.searchCalls).toBe(numbers.length);
    } finally {
      await d.close();
    }
  });

  it('answers Basic searches on its own without the password, holds gateway tokens back, and logs none', async () => {
    const d = await behindSentinels({});
    try {
      const replicas = d.replicas.replicas;
      // It cannot check a gateway token against the deployment's revocations: 503 (problem+json), not served.
      for (const r of replicas) {
        const held = await r.search(fictional(199), await r.login());
        expect([held.status, held.headers.get('retry-after')]).toEqual([503, '1']);
        await held.arrayBuffer();
      }
      const numbers = Array.from({ length: 5 }, (_, i) => fictional(200 + i));
      const statuses = await Promise.all(
        numbers.flatMap((n) =>
          replicas.map(async (r) => {
            const res = await r.searchBasic(n);
            await res.arrayBuffer();
            return res.status;
          }),
        ),
      );
      expect(statuses).toEqual(statuses.map(() => 200));
      // The Sentinels refuse to name the primary: nothing is shared, each gateway logs in and searches for itself.
      expect(d.replicas.simulator.controls.stats().tokenCalls).toBe(2);
      expect(JSON.stringify(d.replicas.replicas.flatMap((r) => r.logs))).not.toContain(PASSWORD);
      // Each says why, once: the Sentinels refused the (missing) password.
      for (const logs of d.replicas.replicas.map((r) => r.logs))
        expect(
          logs.filter((l) => String(l.fields.event).startsWith('redis_')).map((l) => [l.fields.event, l.fields.cause]),
        ).toEqual([['redis_unavailable_at_start', 'sentinel_password_refused']]);
    } finally {
      await d.close();
    }
  });
});
