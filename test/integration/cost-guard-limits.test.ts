// The cost guard over real sockets with the simulator, counted at the simulator: per-client rate, daily quotas,
// the daily budget shared with the console, /admin/usage and the per-client metrics.
import { describe, expect, it } from 'vitest';
import { rateLimitOf } from '../helpers/rate-limit-fields.js';
import { consoleSearch } from '../helpers/console-client.js';
import {
  awayFromMinuteEnd,
  metricValue,
  missNumber,
  problemType,
  secondsToMidnight,
  sleep,
  stacksPerTest,
  usageOf,
} from '../helpers/guard-stack.js';

const { start } = stacksPerTest();

describe('per-client rate (CLIENT_RATE_PER_MINUTE)', () => {
  it('counts every answer, cache hits on the Node door included, then answers 429 with RateLimit-* and Retry-After', async () => {
    const s = await start({ CLIENT_RATE_PER_MINUTE: '3' });
    const crm = await s.login('crm');
    await awayFromMinuteEnd();
    const remaining: (number | null)[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await s.search('020 7946 0001', crm);
      expect(res.status).toBe(200);
      expect(res.headers.get('ratelimit-policy')).toBe('"client";q=3;w=60');
      remaining.push(rateLimitOf(res)?.remaining ?? null);
      if (i > 0) expect(res.headers.get('cache-status')).toMatch(/; hit;/);
    }
    expect(remaining).toEqual([2, 1, 0]);
    const limited = await s.search('020 7946 0001', crm);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('content-type')).toBe('application/problem+json');
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(rateLimitOf(limited)).toMatchObject({ policy: 'client', quota: 3, remaining: 0, reset: retryAfter });
    expect(await problemType(limited)).toBe('too-many-requests');
    // Another client has its own rate; the simulator saw one call.
    expect((await s.search('020 7946 0001', await s.login('pbx'))).status).toBe(200);
    expect(s.simulator.controls.stats().searchCalls).toBe(1);
    expect(await metricValue(s, 'callerid_gateway_client_searches_total{client="crm",result="rate_limited"}')).toBe(1);
    expect(await metricValue(s, 'callerid_gateway_client_searches_total{client="crm",result="hit"}')).toBe(2);
  });
});

describe('daily upstream quotas (CLIENT_UPSTREAM_QUOTA_PER_DAY, CLIENT_UPSTREAM_QUOTAS)', () => {
  it('lets a client cause its quota of upstream calls, then answers misses 429 quota-exhausted until UTC midnight while serving cached answers', async () => {
    const s = await start({ CLIENT_UPSTREAM_QUOTA_PER_DAY: '2', CLIENT_UPSTREAM_QUOTAS: 'pbx:3' });
    const crm = await s.login('crm');
    expect((await s.search(missNumber(1), crm)).status).toBe(200);
    expect((await s.search(missNumber(2), crm)).status).toBe(200);
    const refused = await s.search(missNumber(3), crm);
    expect(refused.status).toBe(429);
    expect(await problemType(refused)).toBe('quota-exhausted');
    expect(Math.abs(Number(refused.headers.get('retry-after')) - secondsToMidnight())).toBeLessThanOrEqual(2);
    // Cached answers cost nothing and are still served.
    const cached = await s.search(missNumber(1), crm);
    expect(cached.status).toBe(200);
    expect(cached.headers.get('cache-status')).toMatch(/; hit;/);
    // The override gives pbx three calls of its own.
    const pbx = await s.login('pbx');
    for (const i of [4, 5, 6]) expect((await s.search(missNumber(i), pbx)).status).toBe(200);
    expect((await s.search(missNumber(7), pbx)).status).toBe(429);
    expect(s.simulator.controls.stats().searchCalls).toBe(5);
    expect(await metricValue(s, 'callerid_gateway_quota_rejections_total{client="crm",scope="quota"}')).toBe(1);
    expect(await metricValue(s, 'callerid_gateway_client_upstream_calls_total{client="pbx"}')).toBe(3);
    expect(await metricValue(s, 'callerid_gateway_client_upstream_quota_used{client="crm"}')).toBe(2);
    expect(await metricValue(s, 'callerid_gateway_client_upstream_quota_limit{client="crm"}')).toBe(2);
  });

  it('does not charge a failed upstream call', async () => {
    const s = await start({ CLIENT_UPSTREAM_QUOTA_PER_DAY: '1' });
    const crm = await s.login('crm');
    s.simulator.controls.setFaults({ errorRate: 1 });
    expect((await s.search(missNumber(1), crm)).status).toBe(502);
    s.simulator.controls.setFaults({ errorRate: 0 });
    expect((await s.search(missNumber(2), crm)).status).toBe(200);
    expect((await s.search(missNumber(3), crm)).status).toBe(429);
    expect(s.simulator.controls.stats().searchCalls).toBe(2);
  });

  it('lets a concurrent burst cause exactly the quota of upstream calls', async () => {
    const s = await start({ CLIENT_UPSTREAM_QUOTA_PER_DAY: '5' }, 50);
    const crm = await s.login('crm');
    const statuses = await Promise.all(
      Array.from({ length: 20 }, (_, i) => s.search(missNumber(i), crm).then((r) => r.status)),
    );
    expect(statuses.filter((x) => x === 200)).toHaveLength(5);
    expect(statuses.filter((x) => x === 429)).toHaveLength(15);
    expect(s.simulator.controls.stats().searchCalls).toBe(5);
  });

  it('serves a stale entry instead of refusing a client whose quota is spent', async () => {
    const s = await start({
      CLIENT_UPSTREAM_QUOTA_PER_DAY: '1',
      CACHE_TTL_SECONDS: '1',
      CACHE_NEGATIVE_TTL_SECONDS: '1',
      CACHE_STALE_WHILE_REVALIDATE_SECONDS: '0',
    });
    const crm = await s.login('crm');
    expect((await s.search(missNumber(1), crm)).status).toBe(200);
    await sleep(1_100);
    const stale = await s.search(missNumber(1), crm);
    expect(stale.status).toBe(200);
    expect(stale.headers.get('cache-status')).toMatch(/fwd=stale; .*detail=stale-if-error/);
    expect(s.simulator.controls.stats().searchCalls).toBe(1);
  });

  it('charges a coalesced miss once, to the caller that started it', async () => {
    const s = await start({ CLIENT_UPSTREAM_QUOTAS: 'crm:1,pbx:1' }, 100);
    const [crm, pbx] = [await s.login('crm'), await s.login('pbx')];
    const first = s.search(missNumber(1), crm);
    await sleep(20);
    const joined = await s.search(missNumber(1), pbx);
    expect(joined.status).toBe(200);
    expect(joined.headers.get('cache-status')).toMatch(/collapsed/);
    expect((await first).status).toBe(200);
    // crm's quota is spent; pbx's is not: joining crm's load cost pbx nothing.
    expect((await s.search(missNumber(2), crm)).status).toBe(429);
    expect((await s.search(missNumber(3), pbx)).status).toBe(200);
    const usage = await usageOf(s);
    expect(usage.clients.find((c) => c.id === 'crm')).toMatchObject({ upstreamCalls: 1, remaining: 0 });
    expect(usage.clients.find((c) => c.id === 'pbx')).toMatchObject({ upstreamCalls: 1, remaining: 0 });
    expect(s.simulator.controls.stats().searchCalls).toBe(2);
  });
});

describe('daily budget (UPSTREAM_BUDGET_PER_DAY)', () => {
  it('gives the console its own daily upstream quota (console:N in CLIENT_UPSTREAM_QUOTAS): past it console misses answer 429, its cached answers and the clients go on', async () => {
    const s = await start({ CLIENT_UPSTREAM_QUOTAS: 'console:2', CONSOLE_PROVIDER: 'swissdir' });
    expect((await consoleSearch(s.gateway.url, missNumber(1))).status).toBe(200);
    expect((await consoleSearch(s.gateway.url, missNumber(2))).status).toBe(200);
    const refused = await consoleSearch(s.gateway.url, missNumber(3));
    expect(refused.status).toBe(429);
    expect(await problemType(refused)).toBe('quota-exhausted');
    expect(Math.abs(Number(refused.headers.get('retry-after')) - secondsToMidnight())).toBeLessThanOrEqual(2);
    // What the console already fetched it still answers; a client's own searches are not the console's quota.
    expect((await consoleSearch(s.gateway.url, missNumber(1))).status).toBe(200);
    expect(s.simulator.controls.stats().searchCalls).toBe(2);
    expect((await s.search(missNumber(3), await s.login('crm'))).status).toBe(200);
    expect(s.simulator.controls.stats().searchCalls).toBe(3);
    const usage = await usageOf(s);
    expect(usage.clients.find((c) => c.id === 'console')).toMatchObject({ upstreamCalls: 2, quota: 2, remaining: 0 });
    expect(await metricValue(s, 'callerid_gateway_quota_rejections_total{client="console",scope="quota"}')).toBe(1);
  });

  it("counts the console's searches with the API's and answers misses 503 budget-exhausted once spent", async () => {
    const s = await start({ UPSTREAM_BUDGET_PER_DAY: '3', CONSOLE_PROVIDER: 'swissdir' });
    const crm = await s.login('crm');
    expect((await consoleSearch(s.gateway.url, missNumber(1))).status).toBe(200);
    expect((await consoleSearch(s.gateway.url, missNumber(2))).status).toBe(200);
    expect((await s.search(missNumber(3), crm)).status).toBe(200);
    const refused = await s.search(missNumber(4), crm);
    expect(refused.status).toBe(503);
    expect(await problemType(refused)).toBe('budget-exhausted');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    const consoleRefused = await consoleSearch(s.gateway.url, missNumber(5));
    expect(consoleRefused.status).toBe(503);
    // Cached answers still served, to both.
    expect((await s.search(missNumber(1), crm)).status).toBe(200);
    expect((await consoleSearch(s.gateway.url, missNumber(3))).status).toBe(200);
    expect(s.simulator.controls.stats().searchCalls).toBe(3);
    const usage = await usageOf(s);
    expect(usage.budget).toEqual({ limit: 3, used: 3, remaining: 0 });
    expect(usage.clients.find((c) => c.id === 'console')).toMatchObject({ upstreamCalls: 2, searches: 4 });
    expect(usage.clients.find((c) => c.id === 'crm')).toMatchObject({ upstreamCalls: 1, searches: 3 });
    expect(await metricValue(s, 'callerid_gateway_client_upstream_calls_total{client="console"}')).toBe(2);
  });
});

describe('GET /admin/usage', () => {
  it('answers admins only: 401 without a token, 403 for other clients', async () => {
    const s = await start({ CLIENT_UPSTREAM_QUOTA_PER_DAY: '10' });
    expect((await fetch(`${s.gateway.url}/admin/usage`)).status).toBe(401);
    const forbidden = await fetch(`${s.gateway.url}/admin/usage`, {
      headers: { authorization: `Bearer ${await s.login('crm')}` },
    });
    expect(forbidden.status).toBe(403);
    await s.search(missNumber(1), await s.login('pbx'));
    const usage = await usageOf(s);
    expect(usage.day).toBe(new Date().toISOString().slice(0, 10));
    expect(usage.clients.map((c) => c.id)).toEqual(['crm', 'pbx', 'ops', 'console']);
    expect(usage.clients.find((c) => c.id === 'pbx')).toEqual({
      id: 'pbx',
      searches: 1,
      upstreamCalls: 1,
      quota: 10,
      remaining: 9,
    });
    expect(usage.budget).toEqual({ limit: null, used: 1, remaining: null });
    expect(usage.breaker).toEqual({ state: 'closed', consecutiveFailures: 0, retryInMs: 0, retryAfterSeconds: 0 });
    expect(usage.cooldown).toEqual({ active: false, retryAfterSeconds: 0 });
    expect(usage.concurrency).toEqual({ limit: 32, inFlight: 0, queued: 0 });
    expect(usage.store).toBe('memory');
  });
});
