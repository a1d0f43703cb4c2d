// Two gateway instances built in one workerd from the same bindings, standing in for two isolates of one
// deployment: what docs/workers.md promises: one deployment, one truth, end to end through the app.
import { abortAllDurableObjects, reset, waitOnExecutionContext } from 'cloudflare:test';
import { beforeEach, describe, expect, it } from 'vitest';
import { rateLimitOf } from '../../../helpers/rate-limit-fields.js';
import type { AnalyticsEngineDataPoint } from '../../../../src/runtime/workers/bindings.js';
import { DESKTOPS } from '../../../helpers/user-agents.js';
import { isolate, simulator } from './control.js';

const NUMBERS = ['020 7946 0001', '020 7946 0002', '020 7946 0003', '0161 496 0001'];
const DESKTOP = { 'user-agent': DESKTOPS.chromeLinux, 'sec-ch-ua-mobile': '?0' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const upstreamCallsFor = async (e164: string) => (await simulator.stats()).searchByNumber[e164] ?? 0;

describe('two isolates of one Worker deployment', () => {
  beforeEach(async () => {
    await reset();
    await simulator.reset();
  });

  it('make one upstream token login for 200 concurrent searches split over both', async () => {
    const [a, b] = [await isolate(), await isolate()];
    const [ta, tb] = [await a.login(), await b.login()];
    await simulator.faults({ tokenLatencyMs: 100 });
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        i % 2 === 0 ? a.search(NUMBERS[Math.floor(i / 2) % 4]!, ta) : b.search(NUMBERS[Math.floor(i / 2) % 4]!, tb),
      ),
    );
    expect(answers.map((r) => r.status)).toEqual(Array(200).fill(200));
    expect((await simulator.stats()).tokenCalls).toBe(1);
  });

  it('do not log in again after the token object restarted, while the stored token is fresh', async () => {
    const a = await isolate();
    expect((await a.search(NUMBERS[0]!, await a.login())).status).toBe(200);
    expect((await simulator.stats()).tokenCalls).toBe(1);
    await abortAllDurableObjects();
    const fresh = await isolate();
    expect((await fresh.search(NUMBERS[1]!, await fresh.login())).status).toBe(200);
    expect((await simulator.stats()).tokenCalls).toBe(1);
  });

  it('make one login attempt while the token endpoint fails, and neither logs in on its own', async () => {
    const [a, b] = [await isolate(), await isolate()];
    const [ta, tb] = [await a.login(), await b.login()];
    await simulator.faults({ tokenErrorRate: 1 });
    const answers = await Promise.all([
      a.search(NUMBERS[0]!, ta),
      b.search(NUMBERS[1]!, tb),
      a.search(NUMBERS[2]!, ta),
      b.search(NUMBERS[3]!, tb),
    ]);
    expect(answers.map((r) => r.status)).toEqual([503, 503, 503, 503]);
    // The object's back-off answers the others with the same failure: the failing endpoint is asked once.
    expect((await simulator.stats()).tokenCalls).toBe(1);
  });

  it('count the console total limit once across both', async () => {
    const limits = { CONSOLE_RATE_TOTAL: '3', CONSOLE_RATE_PER_ADDRESS: '100' };
    const [a, b] = [await isolate(limits), await isolate(limits)];
    const consoleSearch = async (via: typeof a, address: string) =>
      (
        await via.request(`/console/v2/contacts/search?what=${encodeURIComponent(NUMBERS[0]!)}`, {
          headers: { ...DESKTOP, 'cf-connecting-ip': address },
        })
      ).res;
    expect((await consoleSearch(a, '198.51.100.1')).status).toBe(200);
    expect((await consoleSearch(b, '198.51.100.2')).status).toBe(200);
    expect((await consoleSearch(a, '198.51.100.3')).status).toBe(200);
    const refused = await consoleSearch(b, '198.51.100.4');
    expect(refused.status).toBe(429);
    expect(rateLimitOf(refused)).toMatchObject({ policy: 'console-total', remaining: 0 });
  });

  it('answer a number fetched through one from the Cache API through the other, with a true Age', async () => {
    const [a, b] = [await isolate(), await isolate()];
    const first = await a.search(NUMBERS[2]!, await a.login());
    expect(first.headers.get('cache-status')).toContain('fwd=miss');
    const tb = await b.login();
    await sleep(2_100);
    const second = await b.search(NUMBERS[2]!, tb);
    expect(second.status).toBe(200);
    expect(second.headers.get('cache-status')).toMatch(/; hit; ttl=\d+/);
    const age = Number(second.headers.get('age'));
    expect(age).toBeGreaterThanOrEqual(2);
    expect(age).toBeLessThanOrEqual(3);
    expect(await second.text()).toBe(await first.text());
    expect(await upstreamCallsFor('+442079460003')).toBe(1);
  });

  it('purge a number from the Cache API of this data centre and say that this is the reach', async () => {
    const [a, b] = [await isolate(), await isolate()];
    const ta = await a.login();
    expect((await a.search(NUMBERS[1]!, ta)).status).toBe(200);
    const { res } = await a.request(`/admin/cache/${encodeURIComponent(NUMBERS[1]!)}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${ta}` },
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ number: '+442079460002', purged: 1, reach: 'data-centre' });
    const again = await b.search(NUMBERS[1]!, await b.login());
    expect(again.headers.get('cache-status')).toContain('fwd=miss');
    expect(await upstreamCallsFor('+442079460002')).toBe(2);
  });

  it('finish a stale-while-revalidate refresh after its response, kept alive by ctx.waitUntil', async () => {
    const a = await isolate({ CACHE_TTL_SECONDS: '1', CACHE_STALE_WHILE_REVALIDATE_SECONDS: '60' });
    const token = await a.login();
    expect((await a.search(NUMBERS[3]!, token)).status).toBe(200);
    await sleep(1_100);
    await simulator.faults({ latencyMs: 400 });
    const { res, ctx } = await a.request(`/v2/contacts/search?what=${encodeURIComponent(NUMBERS[3]!)}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.headers.get('cache-status')).toContain('detail=stale-while-revalidate');
    // Only work handed to ctx.waitUntil keeps this waiting until the refresh has stored the new answer.
    await waitOnExecutionContext(ctx);
    const after = await a.search(NUMBERS[3]!, token);
    expect(after.headers.get('cache-status')).toMatch(/; hit; ttl=\d+/);
    expect(await upstreamCallsFor('+441614960001')).toBe(2);
  });

  it('write one Analytics Engine data point per request, without the number or the address', async () => {
    const points: AnalyticsEngineDataPoint[] = [];
    const a = await isolate({ ANALYTICS: { writeDataPoint: (p: AnalyticsEngineDataPoint) => points.push(p) } });
    const token = await a.login();
    // workerd's clock moves only across I/O: an upstream that answers within the same tick would read as 0 ms.
    await simulator.faults({ latencyMs: 20 });
    const { res, ctx } = await a.request(`/v2/contacts/search?what=${encodeURIComponent(NUMBERS[0]!)}`, {
      headers: { authorization: `Bearer ${token}`, 'cf-connecting-ip': '203.0.113.77' },
    });
    expect(res.status).toBe(200);
    await waitOnExecutionContext(ctx);
    expect(points).toHaveLength(2);
    const search = points[1]!;
    expect(search.indexes).toEqual(['/v2/contacts/search']);
    expect(search.blobs).toEqual(['/v2/contacts/search', 'GET', '200', 'miss', 'api']);
    // Duration, then the upstream time this request spent (its token login and its search).
    expect(search.doubles![1]).toBeGreaterThan(0);
    expect(search.doubles![0]).toBeGreaterThanOrEqual(search.doubles![1]!);
    const written = JSON.stringify(points);
    for (const secret of ['7946', '+44', '203.0.113.77', token]) expect(written).not.toContain(secret);
  });
});
