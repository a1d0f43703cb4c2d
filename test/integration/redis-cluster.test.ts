// Two gateways on a Redis Cluster of three masters with a replica each (real redis-server processes of the test's
// own): one login and one upstream search per number with the keys spread over the shards, purges both obey, the
// console's total limit and a client quota exact across both, no cross-slot or redirection error, and a master
// killed under traffic: every answer 200, then sharing again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  fictional,
  onBoth,
  expectEveryAnswerThrough,
  expectPurgeObeyed,
  expectSharingAgain,
  settle,
  startHaDeployment,
  expectOneLogin,
  trafficWhile,
  untilRedisAnswers,
  type HaDeployment,
} from '../helpers/ha-deployment.js';
import { redisCli, startRedisCluster, type RedisClusterProcesses } from '../helpers/redis-cluster.mjs';
import { checkRequirement, commandRequirement } from '../helpers/requires.js';

const redisServer = checkRequirement(commandRequirement('redis-server', ['--version'], 'the redis-server command'));
const CONSOLE_TOTAL = 5;
const PBX_QUOTA = 3;
/** The gateways' REDIS_TIMEOUT_MS: what a failover may cost a search is bounded by it. */
const REDIS_TIMEOUT_MS = 500;
/** cluster-node-timeout: a killed master's replica takes over after this. */
const FAILOVER_AFTER_MS = 3000;

describe.skipIf(!redisServer)('two gateways on a Redis Cluster', () => {
  let cluster: RedisClusterProcesses | undefined;
  let d: HaDeployment | undefined;
  beforeAll(async () => {
    // A failover that takes longer than the three Redis timeouts a search may wait out: one that waited for it
    // would show.
    cluster = await startRedisCluster({ nodeTimeoutMs: FAILOVER_AFTER_MS });
    d = await startHaDeployment({
      REDIS_CLUSTER_NODES: cluster.seeds,
      REDIS_TIMEOUT_MS: String(REDIS_TIMEOUT_MS),
      CONSOLE_RATE_TOTAL: String(CONSOLE_TOTAL),
      CONSOLE_RATE_PER_ADDRESS: '1000',
      CLIENT_UPSTREAM_QUOTAS: `pbx:${PBX_QUOTA}`,
    });
    await untilRedisAnswers(d);
  }, 45_000);
  afterAll(async () => {
    await d?.close();
    await cluster?.stop();
  });

  /** The keys of this deployment on each master now. */
  async function keysByMaster(): Promise<Map<number, string[]>> {
    const found = new Map<number, string[]>();
    for (const { port } of await cluster!.masters()) {
      const text = await redisCli(port, '--scan', '--pattern', `${d!.prefix}:*`);
      found.set(port, text.split('\n').filter(Boolean));
    }
    return found;
  }

  it('logs in once and searches each number once for both, its keys spread over the shards, and both obey a purge', async () => {
    const numbers = Array.from({ length: 12 }, (_, i) => fictional(i));
    const answers = await onBoth(d!, numbers);
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    const stats = d!.replicas.simulator.controls.stats();
    expectOneLogin(d!);
    expect(stats.searchCalls).toBe(numbers.length);
    await settle(100);
    const lookupShards = [...(await keysByMaster()).values()].filter((keys) =>
      keys.some((k) => k.startsWith(`${d!.prefix}:lookup:`)),
    );
    expect(lookupShards.length).toBeGreaterThanOrEqual(2);

    await expectPurgeObeyed(d!, 0, numbers[0]!);
    expect((await d!.search(1, numbers[1]!)).age).toBeGreaterThanOrEqual(1);
    // A purge of everything: both fetch again.
    expect(await d!.purge(1)).toBe(200);
    await settle(150);
    for (const i of [0, 1]) expect((await d!.search(i, numbers[1]!)).age).toBe(0);
    expect(d!.replicas.simulator.controls.stats().searchByNumber[numbers[1]!]).toBe(2);
  });

  it("holds the console's total limit and a client's quota exactly across both", async () => {
    const consoleStatuses: number[] = [];
    for (let i = 0; i < CONSOLE_TOTAL + 3; i++) consoleStatuses.push(await d!.consoleSearch(i % 2, '020 7946 0001'));
    expect(consoleStatuses.filter((s) => s === 200)).toHaveLength(CONSOLE_TOTAL);
    expect(consoleStatuses.filter((s) => s === 429)).toHaveLength(3);

    const gateways = d!.replicas.replicas;
    const tokens = [await gateways[0]!.login('pbx'), await gateways[1]!.login('pbx')];
    const statuses: number[] = [];
    for (let i = 0; i < PBX_QUOTA + 3; i++) {
      const res = await gateways[i % 2]!.search(fictional(700 + i), tokens[i % 2]!);
      await res.arrayBuffer();
      statuses.push(res.status);
    }
    expect(statuses).toEqual([200, 200, 200, 429, 429, 429]);
    for (const logs of gateways.map((g) => g.logs)) {
      expect(JSON.stringify(logs)).not.toMatch(/CROSSSLOT|MOVED|ASK\b/);
      expect(logs.filter((l) => l.fields.event === 'shared_store_down')).toEqual([]);
    }
  });

  it('answers every request with 200 while a master is killed, then shares again', async () => {
    // The master holding the upstream token's keys.
    const byMaster = await keysByMaster();
    const [victim] = [...byMaster].find(([, keys]) => keys.some((k) => k.includes(':token:')))!;
    const answers = await trafficWhile(d!, async () => {
      await cluster!.kill(victim);
      await cluster!.failedOver(victim);
    });
    expectEveryAnswerThrough(answers, REDIS_TIMEOUT_MS);

    await expectSharingAgain(d!);
    expect((await cluster!.masters()).map((m) => m.port)).not.toContain(victim);
    // Each gateway says once that the master left, however often it looked for it meanwhile. A busy cluster may leave
    // a live node out of one topology answer during the failover (a replica whose link lags): such a node may be named
    // too, once, but only one of this cluster's that answers now.
    for (const logs of d!.replicas.replicas.map((r) => r.logs)) {
      const lost = logs.filter((l) => l.fields.event === 'redis_node_lost').map((l) => String(l.fields.node));
      expect(lost.filter((node) => node === `127.0.0.1:${victim}`)).toEqual([`127.0.0.1:${victim}`]);
      expect(new Set(lost).size).toBe(lost.length);
      for (const node of lost.filter((n) => n !== `127.0.0.1:${victim}`)) {
        const port = Number(node.split(':')[1]);
        expect(cluster!.ports).toContain(port);
        expect((await redisCli(port, 'ping')).trim()).toBe('PONG');
      }
    }
  }, 45_000);
});
