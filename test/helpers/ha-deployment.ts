// Two gateways sharing a highly available Redis (Sentinel or Cluster) in front of one simulator: what the
// Sentinel and Cluster tests ask of them alike (sharing, purges, traffic through a failover, sharing again).
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { consoleSearch } from './console-client.js';
import { startReplicas, type Replicas } from './replicas.js';

export interface Answer {
  status: number;
  ms: number;
  /** Set by {@link trafficWhile}: the search began before the fault did. */
  beforeFault?: boolean;
  cacheStatus: string;
  age: number;
}

export interface HaDeployment {
  replicas: Replicas;
  prefix: string;
  search(replica: number, number: string): Promise<Answer>;
  /** DELETE /admin/cache(/number) on one replica; its status. */
  purge(replica: number, number?: string): Promise<number>;
  /** One console search from a new client address on one replica; its status. */
  consoleSearch(replica: number, number: string): Promise<number>;
  close(): Promise<void>;
}

export const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Fictional UK numbers (Ofcom's drama range 020 7946 0xxx), distinct per `i` below 1000. */
export const fictional = (i: number) => `+442079460${String(i % 1000).padStart(3, '0')}`;

/** Fictional numbers of another drama range (0161 496 0xxx), which {@link trafficWhile} never asks for. */
const untouched = (i: number) => `+441614960${String(i % 1000).padStart(3, '0')}`;

export async function startHaDeployment(env: Record<string, string>): Promise<HaDeployment> {
  const prefix = `t-${randomUUID()}`;
  const replicas = await startReplicas(2, {
    env: { REDIS_KEY_PREFIX: prefix, CONSOLE_PROVIDER: 'swissdir', TRUST_PROXY_HOPS: '1', ...env },
  });
  const gateways = replicas.replicas;
  const [token, admin] = [await gateways[0]!.login('crm'), await gateways[1]!.login('ops')];
  let address = 0;
  return {
    replicas,
    prefix,
    async search(replica, number) {
      const t0 = performance.now();
      const res = await gateways[replica]!.search(number, token);
      await res.arrayBuffer();
      return {
        status: res.status,
        ms: performance.now() - t0,
        cacheStatus: res.headers.get('cache-status') ?? '',
        age: Number(res.headers.get('age')),
      };
    },
    purge: (replica, number) => gateways[replica]!.purge(admin, number),
    async consoleSearch(replica, number) {
      address++;
      const res = await consoleSearch(gateways[replica]!.gateway.url, number, {
        'x-forwarded-for': `198.51.100.${address % 250}`,
      });
      return res.status;
    },
    close: () => replicas.close(),
  };
}

/** The token and shared-store events each replica logged: what a second upstream login is read against. */
const tokenStory = (d: HaDeployment): string =>
  JSON.stringify(
    d.replicas.replicas.map((r) =>
      r.logs
        .filter((l) => /^(upstream_token_|shared_store_)/.test(String(l.fields.event)))
        .map((l) => ({ event: l.fields.event, store: l.fields.store, reason: l.fields.reason })),
    ),
  );

/**
 * One upstream login for both replicas. A replica that finds the shared store slower than REDIS_TIMEOUT_MS (a command
 * stalled on a busy machine) logs in itself, as the design degrades, and logs `shared_store_down`: two logins then,
 * and its log says why. Any other count, or a second login without that, fails with what each replica logged.
 */
export function expectOneLogin(d: HaDeployment): void {
  const { tokenCalls } = d.replicas.simulator.controls.stats();
  if (tokenCalls === 1) return;
  const story = tokenStory(d);
  expect(tokenCalls, story).toBe(2);
  expect(story, 'a second login though no replica found the shared store too slow').toContain('shared_store_down');
}

/**
 * What the readiness probe purges: a fictional number of a third drama range (0113 496 0xxx) no test asks for. The
 * purge's message reaches the other replica a moment later; a purge of everything could then drop a fresh answer a
 * test counts on and have its number fetched twice. This one drops nothing a test asks for.
 */
const PROBE_NUMBER = '+441134960999';

/**
 * A gateway waits 2 s for Redis as it starts, then serves on its own and joins once Redis answers. A machine busy with
 * a second suite can take longer to bring a deployment's connections up: a deployment that should share starts its
 * tests once both replicas have had a purge of one number (which Redis must answer) go through, at most 20 s after
 * their start.
 */
export async function untilRedisAnswers(d: HaDeployment): Promise<void> {
  for (const replica of [0, 1]) {
    for (const until = Date.now() + 20_000; (await d.purge(replica, PROBE_NUMBER)) !== 200; await settle(200))
      if (Date.now() > until) throw new Error('a replica did not reach Redis within 20 s of its start');
  }
}

/** Every number on both replicas at once: the simulator should see one search per number. */
export const onBoth = (d: HaDeployment, numbers: readonly string[]) =>
  Promise.all(numbers.flatMap((n) => [0, 1].map((i) => d.search(i, n))));

/**
 * Searches on both replicas, four at a time (fresh numbers and repeats), while `during` runs and for `afterMs`
 * after it: every answer with its time.
 */
export async function trafficWhile(d: HaDeployment, during: () => Promise<void>, afterMs = 500): Promise<Answer[]> {
  const answers: Answer[] = [];
  let stop = false;
  let faulted = false;
  let k = 0;
  const traffic = Promise.all(
    Array.from({ length: 4 }, async () => {
      while (!stop) {
        const i = k++;
        const beforeFault = !faulted;
        const answer = await d.search(i % 2, fictional(i % 3 === 0 ? 900 + (i % 20) : 300 + i));
        answers.push({ ...answer, beforeFault });
      }
    }),
  );
  await settle(400);
  faulted = true;
  await during();
  await settle(afterMs);
  stop = true;
  await traffic;
  return answers;
}

/**
 * Polls until a number fetched by one replica is a shared hit on the other (sharing resumed); then, for a
 * burst of fresh numbers on both replicas at once, the upstream search calls the simulator saw. Its numbers are
 * of a range of their own, from `from` on: neither replica has a local copy of them.
 */
async function sharingAgain(d: HaDeployment, from: number, timeoutMs = 15_000) {
  let resumed = false;
  let i = from;
  for (const until = Date.now() + timeoutMs; !resumed && Date.now() < until; i++) {
    await d.search(0, untouched(i));
    resumed = (await d.search(1, untouched(i))).cacheStatus.includes('detail=shared');
    if (!resumed) await settle(200);
  }
  const numbers = Array.from({ length: 10 }, (_, j) => untouched(i + 1 + j));
  const logged = d.replicas.replicas.map((r) => r.logs.length);
  d.replicas.simulator.controls.resetStats();
  const answers = await onBoth(d, numbers);
  const burstLogs = d.replicas.replicas.flatMap((r, k) => r.logs.slice(logged[k]));
  return {
    resumed,
    numbers,
    answers,
    searchCalls: d.replicas.simulator.controls.stats().searchCalls,
    /** A replica found the shared store slower than REDIS_TIMEOUT_MS during the burst, and fell back. */
    fellBack: burstLogs.some((l) => l.fields.event === 'shared_store_down'),
    next: i + 1 + numbers.length,
  };
}

/**
 * What a failover may cost the callers: nothing but the per-process fallback (every answer 200, none slow). Slow is
 * bounded against the slowest answer of the same traffic before the fault (what the machine's load costs alone): a
 * miss may wait out one Redis timeout for each command it awaits in turn (the shared answer, the lease that
 * coalesces the upstream call, its counts), never a failover's length.
 */
export function expectEveryAnswerThrough(answers: Answer[], redisTimeoutMs: number): void {
  expect(answers.length).toBeGreaterThan(20);
  expect(answers.filter((a) => a.status !== 200)).toEqual([]);
  const before = answers.filter((a) => a.beforeFault === true);
  expect(before.length).toBeGreaterThan(0);
  const slowestBefore = Math.max(...before.map((a) => a.ms));
  const slowestAfter = Math.max(...answers.filter((a) => a.beforeFault !== true).map((a) => a.ms));
  expect(slowestAfter).toBeLessThan(slowestBefore + 3 * redisTimeoutMs + MARGIN_MS);
}

/** What a loaded machine may add to the three timeouts. */
const MARGIN_MS = 250;

/** After a failover: sharing resumed by itself, one upstream call per number for both replicas again. */
export async function expectSharingAgain(d: HaDeployment): Promise<void> {
  let again = await sharingAgain(d, 0);
  // A burst that met a command slower than REDIS_TIMEOUT_MS (a busy machine just after a failover) falls back as the
  // design degrades, and its replica says so (`shared_store_down`): only such a burst is tried again, on fresh
  // numbers, at most twice. Extra upstream calls without that fail at once.
  for (let tries = 0; tries < 2 && again.searchCalls !== again.numbers.length && again.fellBack; tries++)
    again = await sharingAgain(d, again.next);
  expect(again.resumed).toBe(true);
  expect(again.answers.every((a) => a.status === 200)).toBe(true);
  expect(again.searchCalls, again.fellBack ? 'a replica fell back in each of three bursts' : '').toBe(
    again.numbers.length,
  );
  // And purges reach both again (on a Cluster the subscription may have moved to another node).
  await expectPurgeObeyed(d, 1, again.numbers[0]!);
}

/**
 * A purge of `number` (which both replicas hold) made on replica `by`: both fetch it again, one upstream call for
 * the two. The copies are first let age a second, so one answered after the purge would show `Age` >= 1.
 */
export async function expectPurgeObeyed(d: HaDeployment, by: number, number: string): Promise<void> {
  await settle(1100);
  const before = d.replicas.simulator.controls.stats().searchByNumber[number] ?? 0;
  expect(await d.purge(by, number)).toBe(200);
  await settle(150);
  for (const i of [0, 1]) expect((await d.search(i, number)).age).toBe(0);
  expect(d.replicas.simulator.controls.stats().searchByNumber[number]).toBe(before + 1);
}
