// Two gateway instances built in one workerd from the same bindings, standing in for two isolates: the limits that
// guard the paid upstream and the login (quota, budget, per-client rate, failed-login throttle, an upstream 429's
// cooldown, the breaker's opening) are one count for the deployment, kept in the COUNTERS Durable Objects, not one
// per isolate.
import { reset, waitOnExecutionContext } from 'cloudflare:test';
import { beforeEach, describe, expect, it } from 'vitest';
import { rateLimitOf } from '../../../helpers/rate-limit-fields.js';
import { awayFromMinuteEnd } from '../../../helpers/minute-window.js';
import { isolate, simulator, type Isolate } from './control.js';
import { WORKERD_CLIENT } from './workerd-env.js';

// Fictional numbers of the simulator's directory, used by no other workerd test.
const MISSES = ['0113 496 0001', '0113 496 0002', '0113 496 0003', '0113 496 0004', '0113 496 0005'];
/** More of them, 0113 496 0100 onwards: one per search that must be a miss on both isolates. */
const miss = (i: number) => `0113 496 ${String(10_100 + i).slice(1)}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const problemTypeOf = async (res: Response) => ((await res.json()) as { type: string }).type;
const secondsToUtcMidnight = () => {
  const now = Date.now();
  const midnight = new Date(now);
  midnight.setUTCHours(24, 0, 0, 0);
  return Math.ceil((midnight.getTime() - now) / 1000);
};

async function login(via: Isolate, address: string, secret: string): Promise<Response> {
  const { res } = await via.request('/token/login', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'cf-connecting-ip': address },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: WORKERD_CLIENT.id,
      client_secret: secret,
    }),
  });
  await res.arrayBuffer();
  return res;
}

describe('two isolates of one Worker deployment, guarding the upstream and the login', () => {
  beforeEach(async () => {
    await reset();
    await simulator.reset();
  });

  it('count a daily upstream quota once across both: the miss after it is 429 quota-exhausted on either, cached numbers still 200', async () => {
    const quota = { CLIENT_UPSTREAM_QUOTAS: `${WORKERD_CLIENT.id}:3` };
    const [a, b] = [await isolate(quota), await isolate(quota)];
    const [ta, tb] = [await a.login(), await b.login()];
    expect((await a.search(MISSES[0]!, ta)).status).toBe(200);
    expect((await b.search(MISSES[1]!, tb)).status).toBe(200);
    expect((await a.search(MISSES[2]!, ta)).status).toBe(200);
    expect((await simulator.stats()).searchCalls).toBe(3);

    for (const [via, token] of [
      [b, tb],
      [a, ta],
    ] as const) {
      const refused = await via.search(MISSES[3]!, token);
      expect(refused.status).toBe(429);
      expect(Math.abs(Number(refused.headers.get('retry-after')) - secondsToUtcMidnight())).toBeLessThanOrEqual(5);
      expect(await problemTypeOf(refused)).toBe('/docs/problems#quota-exhausted');
    }
    // Numbers fetched through the other isolate are Cache API hits: free, and served although the quota is spent.
    for (const [via, token, what] of [
      [a, ta, MISSES[1]!],
      [b, tb, MISSES[0]!],
    ] as const) {
      const cached = await via.search(what, token);
      expect(cached.status).toBe(200);
      expect(cached.headers.get('cache-status')).toMatch(/; hit;/);
    }
    expect((await simulator.stats()).searchCalls).toBe(3);
  });

  it('count failed logins once across both: the attempt after the limit is 429 on either, the same client from another address still logs in', async () => {
    const limits = {
      LOGIN_FAILURES_PER_CLIENT: '3',
      LOGIN_FAILURES_PER_ADDRESS: '20',
      LOGIN_FAILURE_WINDOW_SECONDS: '600',
    };
    const [a, b] = [await isolate(limits), await isolate(limits)];
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await login(i % 2 === 0 ? a : b, '198.51.100.20', `wrong-${i}`)).status);
    expect(statuses).toEqual([401, 401, 401, 429, 429]);

    for (const via of [a, b]) {
      const right = await login(via, '198.51.100.20', WORKERD_CLIENT.secret);
      expect(right.status).toBe(429);
      expect(right.headers.get('content-type')).toBe('application/problem+json');
      expect(Number(right.headers.get('retry-after'))).toBeGreaterThan(590);
      expect(Number(right.headers.get('retry-after'))).toBeLessThanOrEqual(600);
    }
    expect((await login(b, '198.51.100.21', WORKERD_CLIENT.secret)).status).toBe(200);
    expect((await login(a, '198.51.100.22', WORKERD_CLIENT.secret)).status).toBe(200);
  });

  it('share an upstream 429 cooldown: a miss on the other isolate is 503 upstream-rate-limited without an upstream call', async () => {
    const [a, b] = [await isolate(), await isolate()];
    const [ta, tb] = [await a.login(), await b.login()];
    await simulator.faults({ rateLimitRate: 1, rateLimitRetryAfter: '30' });
    const met = await a.search(MISSES[4]!, ta);
    expect(met.status).toBe(503);
    expect(await problemTypeOf(met)).toBe('/docs/problems#upstream-rate-limited');
    expect((await simulator.stats()).searchCalls).toBe(1);

    const learned = await b.search(MISSES[3]!, tb);
    expect(learned.status).toBe(503);
    expect(await problemTypeOf(learned)).toBe('/docs/problems#upstream-rate-limited');
    const retryAfter = Number(learned.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(25);
    expect(retryAfter).toBeLessThanOrEqual(30);
    expect((await simulator.stats()).searchCalls).toBe(1);
    expect((await simulator.stats()).rateLimitedCalls).toBe(1);
  });

  it('open the breaker on both when one meets UPSTREAM_BREAKER_FAILURES failures: the other refuses 503 upstream-unavailable without an upstream call, and each makes its own trial after the open period', async () => {
    const breaker = { UPSTREAM_BREAKER_FAILURES: '2', UPSTREAM_BREAKER_OPEN_SECONDS: '2' };
    const [a, b] = [await isolate(breaker), await isolate(breaker)];
    const [ta, tb] = [await a.login(), await b.login()];
    await simulator.faults({ errorRate: 1 });
    // Answers taken without waiting on their contexts (each holds an isolate's metrics push for up to a second):
    // the opening is told to the deployment before the failing search is answered.
    const failed = [await a.answer(miss(0), ta), await a.answer(miss(1), ta)];
    const opened = Date.now();
    expect(failed.map(({ res }) => res.status)).toEqual([502, 502]);
    expect((await simulator.stats()).searchCalls).toBe(2);

    const refused = await b.search(miss(2), tb);
    expect(refused.status).toBe(503);
    expect(await problemTypeOf(refused)).toBe('/docs/problems#upstream-unavailable');
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(2);
    expect((await simulator.stats()).searchCalls).toBe(2);
    const usage = (await (
      await b.request('/admin/usage', { headers: { authorization: `Bearer ${tb}` } })
    ).res.json()) as {
      breaker: { state: string; consecutiveFailures: number };
    };
    // Learned from the other isolate: open, with none of its own failures.
    expect(usage.breaker).toMatchObject({ state: 'open', consecutiveFailures: 0 });

    await simulator.faults({ errorRate: 0 });
    for (const { ctx } of failed) await waitOnExecutionContext(ctx);
    await sleep(Math.max(0, 2_100 - (Date.now() - opened)));
    expect((await b.search(miss(2), tb)).status).toBe(200);
    expect((await a.search(miss(3), ta)).status).toBe(200);
    expect((await simulator.stats()).searchCalls).toBe(4);
  });

  it('count the daily budget once across both, a failed call not charged: the miss after it is 503 budget-exhausted on either, cached numbers still 200', async () => {
    const budget = { UPSTREAM_BUDGET_PER_DAY: '2' };
    const [a, b] = [await isolate(budget), await isolate(budget)];
    const [ta, tb] = [await a.login(), await b.login()];
    await simulator.faults({ errorRate: 1 });
    expect((await a.search(miss(10), ta)).status).toBe(502);
    await simulator.faults({ errorRate: 0 });
    expect((await b.search(miss(11), tb)).status).toBe(200);
    expect((await a.search(miss(12), ta)).status).toBe(200);

    for (const [via, token] of [
      [b, tb],
      [a, ta],
    ] as const) {
      const refused = await via.search(miss(13), token);
      expect(refused.status).toBe(503);
      expect(await problemTypeOf(refused)).toBe('/docs/problems#budget-exhausted');
      expect(Math.abs(Number(refused.headers.get('retry-after')) - secondsToUtcMidnight())).toBeLessThanOrEqual(5);
    }
    const cached = await b.search(miss(12), tb);
    expect(cached.status).toBe(200);
    expect(cached.headers.get('cache-status')).toMatch(/; hit;/);
    // The failed call and the two charged ones.
    expect((await simulator.stats()).searchCalls).toBe(3);
    const usage = (await (
      await a.request('/admin/usage', { headers: { authorization: `Bearer ${ta}` } })
    ).res.json()) as {
      budget: unknown;
    };
    expect(usage.budget).toEqual({ limit: 2, used: 2, remaining: 0 });
  });

  it("count a client's per-minute rate across both: an isolate refuses once the deployment's count is at the limit, past it by at most one reconciliation", async () => {
    const rate = { CLIENT_RATE_PER_MINUTE: '4' };
    const [a, b] = [await isolate(rate), await isolate(rate)];
    const [ta, tb] = [await a.login(), await b.login()];
    await awayFromMinuteEnd();
    const statuses = async (via: Isolate, token: string, n: number) => {
      const out: number[] = [];
      for (let i = 0; i < n; i++) out.push((await via.search(MISSES[0]!, token)).status);
      return out;
    };
    // Each search waits on its context, so its count has reached the object before the next search starts.
    expect(await statuses(a, ta, 3)).toEqual([200, 200, 200]);
    // One search of its own told this isolate the deployment's count (4): its second is refused.
    expect(await statuses(b, tb, 2)).toEqual([200, 429]);
    // This one last heard 3: one more passes, and its count then says 5.
    expect(await statuses(a, ta, 2)).toEqual([200, 429]);

    const refused = await b.search(MISSES[0]!, tb);
    expect(refused.status).toBe(429);
    expect(await problemTypeOf(refused)).toBe('/docs/problems#too-many-requests');
    expect(rateLimitOf(refused)).toMatchObject({ policy: 'client', quota: 4, remaining: 0 });
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect((await simulator.stats()).searchCalls).toBe(1);
  });
});
