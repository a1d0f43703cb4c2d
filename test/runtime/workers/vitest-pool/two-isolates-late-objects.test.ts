// Two isolates whose counter Durable Objects answer later than DURABLE_OBJECT_TIMEOUT_MS (LateCounterObject over real
// RPC, late-objects.js): each isolate answers within its deadline and counts on its own (LIMITS_ON_STORE_ERROR), and
// the deployment's /metrics says the counter store is down.
import { reset, waitOnExecutionContext } from 'cloudflare:test';
import { beforeEach, describe, expect, it } from 'vitest';
import { FAMILIES } from '../../../../src/observability/metric-families.js';
import { sampleOf } from '../../../helpers/metric-sample.js';
import { isolate, lateCounterObjects, METRICS_TOKEN, simulator, type Isolate } from './control.js';
import { WORKERD_CLIENT } from './workerd-env.js';

// Fictional numbers of the simulator's directory, 0113 496 0200 onwards, used by no other workerd test.
const miss = (i: number) => `0113 496 ${String(10_200 + i).slice(1)}`;
/** The isolates' deadline for an object, far below the 3 s the late objects take. */
const TIMEOUT_MS = 100;
const lateCounters = { COUNTERS: lateCounterObjects, DURABLE_OBJECT_TIMEOUT_MS: String(TIMEOUT_MS), METRICS_TOKEN };
const problemTypeOf = async (res: Response) => ((await res.json()) as { type: string }).type;

/** A search's status and how long its answer took (its background work waited on after the clock stops). */
async function timedSearch(via: Isolate, what: string, token: string): Promise<{ status: number; ms: number }> {
  const started = Date.now();
  const { res, ctx } = await via.answer(what, token);
  const ms = Date.now() - started;
  await res.arrayBuffer();
  await waitOnExecutionContext(ctx);
  return { status: res.status, ms };
}

describe('two isolates of one Worker deployment whose counter objects answer too late', () => {
  beforeEach(async () => {
    await reset();
    await simulator.reset();
  });

  it('count a daily quota on each isolate alone (LIMITS_ON_STORE_ERROR=memory), every answer within the deadline, the store reported down', async () => {
    const env = { ...lateCounters, CLIENT_UPSTREAM_QUOTAS: `${WORKERD_CLIENT.id}:2` };
    const [a, b] = [await isolate(env), await isolate(env)];
    const [ta, tb] = [await a.login(), await b.login()];
    const answers: { status: number; ms: number }[] = [];
    let i = 0;
    for (const [via, token] of [
      [a, ta],
      [a, ta],
      [a, ta],
      [b, tb],
      [b, tb],
      [b, tb],
    ] as const) {
      answers.push(await timedSearch(via, miss(i++), token));
    }
    // Each isolate's own count of 2: the deployment pays twice its quota while the objects do not answer.
    expect(answers.map((x) => x.status)).toEqual([200, 200, 429, 200, 200, 429]);
    expect((await simulator.stats()).searchCalls).toBe(4);
    // Never the object's 3 s (a loaded machine adds to the deadline, never the object's whole wait): the objects were
    // asked (a search that did waited out the deadline), and a search within a second of a failure does not ask again.
    for (const { ms } of answers) expect(ms).toBeLessThan(2_500);
    expect(Math.max(...answers.map((x) => x.ms))).toBeGreaterThanOrEqual(TIMEOUT_MS);

    const text = await a.scrape();
    expect(sampleOf(text, `${FAMILIES.sharedStoreUp.name}{store="counter"}`)).toBe(0);
    expect(sampleOf(text, `${FAMILIES.sharedStoreFallbacks.name}{store="counter"}`)).toBeGreaterThan(0);
    expect(sampleOf(text, `${FAMILIES.sharedStoreUp.name}{store="token"}`)).toBe(1);
  });

  it('refuse misses 503 within the deadline and serve cached numbers with LIMITS_ON_STORE_ERROR=closed', async () => {
    const env = { ...lateCounters, LIMITS_ON_STORE_ERROR: 'closed' };
    const a = await isolate(env);
    const b = await isolate();
    // Cached in the Cache API by an isolate whose objects answer.
    expect((await b.search(miss(20), await b.login())).status).toBe(200);
    const ta = await a.login();

    const refused = await a.answer(miss(21), ta);
    expect(refused.res.status).toBe(503);
    expect(await problemTypeOf(refused.res)).toBe('/docs/problems#unavailable');
    await waitOnExecutionContext(refused.ctx);
    const cached = await timedSearch(a, miss(20), ta);
    expect(cached.status).toBe(200);
    expect(cached.ms).toBeLessThan(2_500);
    expect((await simulator.stats()).searchCalls).toBe(1);
  });
});
