// Three gateway replicas on loopback sockets in front of one simulator and one Redis: one upstream search per
// number for the deployment, purges every replica obeys, no number in Redis, and Redis killed and restarted
// under traffic (a redis-server of the test's own).
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { SimulatorServer } from '../../src/simulator/server.js';
import { startOwnRedis, type OwnRedis } from '../helpers/own-redis.js';
import type { CapturedLog } from '../helpers/recorders.js';
import { startReplicas as startGateways } from '../helpers/replicas.js';
import { checkRequirement, commandRequirement, tcpRequirement } from '../helpers/requires.js';

const sharedRedis = checkRequirement(await tcpRequirement('127.0.0.1', 6379, 'Redis at 127.0.0.1:6379'));
const redisServer = checkRequirement(commandRequirement('redis-server', ['--version'], 'the redis-server command'));
const LISTED = [
  '+442079460001',
  '+442079460002',
  '+442079460003',
  '+441134960004',
  '+441614960001',
  '+447700900001',
  '+61255501234',
];
const UNLISTED = ['+442079460999', '+442079460998'];

interface Replicas {
  simulator: SimulatorServer;
  logs: CapturedLog[][];
  prefix: string;
  search(replica: number, number: string): Promise<{ status: number; cacheStatus: string; age: number; ms: number }>;
  purge(replica: number, number?: string): Promise<number>;
  close(): Promise<void>;
}

const running: Replicas[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((r) => r.close()));
});

/** Three replicas on one Redis under a prefix of their own, with one crm and one ops token (tokens are stateless). */
async function startReplicas(redisUrl: string, env: Record<string, string> = {}): Promise<Replicas> {
  const prefix = `t-${randomUUID()}`;
  const started = await startGateways(3, { env: { REDIS_URL: redisUrl, REDIS_KEY_PREFIX: prefix, ...env } });
  const gateways = started.replicas;
  const [token, admin] = [await gateways[0]!.login('crm'), await gateways[0]!.login('ops')];
  const replicas: Replicas = {
    simulator: started.simulator,
    logs: gateways.map((g) => g.logs),
    prefix,
    async search(replica, number) {
      const t0 = performance.now();
      const res = await gateways[replica]!.search(number, token);
      await res.text();
      return {
        status: res.status,
        cacheStatus: res.headers.get('cache-status') ?? '',
        age: Number(res.headers.get('age')),
        ms: performance.now() - t0,
      };
    },
    purge: (replica, number) => gateways[replica]!.purge(admin, number),
    close: () => started.close(),
  };
  running.push(replicas);
  return replicas;
}

/** Every replica asked for every number, all at the same time. */
const everywhereAtOnce = (r: Replicas, numbers: readonly string[]) =>
  Promise.all(numbers.flatMap((n) => [0, 1, 2].map(async (i) => ({ n, i, ...(await r.search(i, n)) }))));

const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(!sharedRedis)('three replicas sharing one Redis (127.0.0.1:6379)', () => {
  it('makes one upstream search per number when every replica is asked for it at once', async () => {
    const r = await startReplicas('redis://127.0.0.1:6379');
    const numbers = [...LISTED, ...UNLISTED];
    const answers = await everywhereAtOnce(r, numbers);
    expect(answers.every((a) => a.status === 200)).toBe(true);
    const stats = r.simulator.controls.stats();
    expect(stats.searchCalls).toBe(numbers.length);
    for (const n of numbers) {
      expect(stats.searchByNumber[n]).toBe(1);
      const forN = answers.filter((a) => a.n === n).map((a) => a.cacheStatus.replace(/; ttl=\d+/, ''));
      expect(forN.filter((s) => s.includes('fwd=miss'))).toHaveLength(1);
      expect(forN.filter((s) => s === 'callerid-gateway; hit; detail=shared')).toHaveLength(2);
    }
    // Asked again: every replica answers from its own memory.
    const again = await everywhereAtOnce(r, numbers);
    expect(again.every((a) => /^callerid-gateway; hit; ttl=\d+$/.test(a.cacheStatus))).toBe(true);
    expect(r.simulator.controls.stats().searchCalls).toBe(numbers.length);
  });

  it('keeps no phone number in Redis keys or values', async () => {
    const r = await startReplicas('redis://127.0.0.1:6379');
    await everywhereAtOnce(r, [...LISTED, ...UNLISTED]);
    await settle(100);
    const raw = new Redis('redis://127.0.0.1:6379', { lazyConnect: true });
    await raw.connect();
    try {
      const keys = await raw.keys(`${r.prefix}*`);
      expect(keys.filter((k) => k.startsWith(`${r.prefix}:lookup:`))).toHaveLength(LISTED.length + UNLISTED.length);
      const values = await Promise.all(
        keys.map(async (k) => ((await raw.type(k)) === 'string' ? ((await raw.get(k)) ?? '') : '')),
      );
      const stored = `${keys.join('\n')}\n${values.join('\n')}`;
      for (const n of [...LISTED, ...UNLISTED]) {
        const digits = n.slice(1);
        // International digits, national significant digits, and the last 8 digits as any display might show them.
        for (const form of [digits, digits.slice(2), digits.slice(-8)]) expect(stored).not.toContain(form);
      }
      expect(stored).not.toMatch(/Hartley|displayName|results/);
    } finally {
      raw.disconnect();
    }
  });

  it('obeys a purge made on one replica on every replica: nobody answers the old copy', async () => {
    const r = await startReplicas('redis://127.0.0.1:6379');
    const [one, all] = [LISTED[0]!, LISTED[1]!];
    await everywhereAtOnce(r, [one, all]);
    // Old copies are at least a second old, so one answered after the purge would show Age >= 1.
    await settle(1100);
    expect((await r.search(2, one)).age).toBeGreaterThanOrEqual(1);

    expect(await r.purge(1, one)).toBe(200);
    // The other replicas hear of a purge through Redis pub/sub: within milliseconds, not before the admin's answer.
    await settle(150);
    const afterOne = await everywhereAtOnce(r, [one]);
    for (const a of afterOne) {
      expect(a.age).toBe(0);
      expect(a.cacheStatus).not.toMatch(/^callerid-gateway; hit; ttl=\d+$/);
    }
    expect(r.simulator.controls.stats().searchByNumber[one]).toBe(2);
    // The other number was not purged: still old local hits.
    expect((await r.search(0, all)).age).toBeGreaterThanOrEqual(1);

    expect(await r.purge(2)).toBe(200);
    await settle(150);
    const afterAll = await everywhereAtOnce(r, [all]);
    for (const a of afterAll) expect(a.age).toBe(0);
    expect(r.simulator.controls.stats().searchByNumber[all]).toBe(2);
  });
});

describe.skipIf(!redisServer)('three replicas when Redis goes away and comes back', () => {
  let redis: OwnRedis | undefined;
  afterAll(async () => {
    await redis?.stop();
  });

  it('answers every request with 200 within REDIS_TIMEOUT_MS plus a margin while Redis is killed, and shares again once it is back', async () => {
    const TIMEOUT_MS = 200;
    const MARGIN_MS = 300;
    redis = await startOwnRedis();
    const r = await startReplicas(redis.url, { REDIS_TIMEOUT_MS: String(TIMEOUT_MS) });
    await everywhereAtOnce(r, LISTED);

    // Traffic: cached numbers and fresh misses (which go to the tier), round robin over the replicas.
    const answers: Array<{ status: number; ms: number; redisUp: boolean }> = [];
    let stop = false;
    let redisUp = true;
    let k = 0;
    const traffic = Promise.all(
      Array.from({ length: 6 }, async () => {
        while (!stop) {
          const i = k++;
          const number =
            Math.floor(i / 3) % 2 === 0
              ? `+442079460${String(500 + (i % 400)).padStart(3, '0')}`
              : LISTED[i % LISTED.length]!;
          const up = redisUp;
          const answer = await r.search(i % 3, number);
          // Up: begun and answered before Redis stopped.
          answers.push({ ...answer, redisUp: up && redisUp });
        }
      }),
    );
    await settle(300);
    const { port } = redis;
    redisUp = false;
    await redis.stop();
    await settle(1200);
    stop = true;
    await traffic;
    const [before, during] = [answers.filter((a) => a.redisUp), answers.filter((a) => !a.redisUp)];
    // Traffic ran before and during the outage (a loaded machine serves fewer in the window).
    expect(before.length).toBeGreaterThan(6);
    expect(during.length).toBeGreaterThan(6);
    expect(answers.filter((a) => a.status !== 200)).toEqual([]);
    // The outage adds at most the Redis timeout to an answer: bounded against the slowest answer of the same traffic
    // before it (what this machine's load adds right now; a few milliseconds on a quiet one).
    const slowestBefore = Math.max(...before.map((a) => a.ms));
    expect(Math.max(...during.map((a) => a.ms))).toBeLessThan(TIMEOUT_MS + MARGIN_MS + slowestBefore);
    for (const logs of r.logs) {
      const down = logs.filter((l) => l.fields.event === 'shared_store_down' && l.fields.store === 'lookup');
      expect(down).toHaveLength(1);
      expect(JSON.stringify(logs)).not.toMatch(/4420794|020 ?7946/);
    }

    // Back on the same port: a number fetched by one replica is served by another, without restarting anything.
    redis = await startOwnRedis(port);
    let resumed = false;
    for (let i = 0; i < 60 && !resumed; i++) {
      await settle(200);
      const number = `+4420794607${String(i).padStart(2, '0')}`;
      await r.search(0, number);
      await settle(20);
      resumed = (await r.search(1, number)).cacheStatus.includes('detail=shared');
    }
    expect(resumed).toBe(true);
    for (const logs of r.logs.slice(0, 2))
      expect(logs.some((l) => l.fields.event === 'shared_store_up' && l.fields.store === 'lookup')).toBe(true);
    r.simulator.controls.resetStats();
    await everywhereAtOnce(r, ['+442079460888']);
    expect(r.simulator.controls.stats().searchCalls).toBe(1);
  });
});
