// The Worker's one /metrics in real workerd: two gateways built from the same bindings stand in for two isolates
// that push their counts through ctx.waitUntil to the one METRICS Durable Object; a push sent again (same isolate id
// and sequence number), directly or by an isolate whose push got no answer in time, is counted once.
import { abortAllDurableObjects, reset, waitOnExecutionContext } from 'cloudflare:test';
import { beforeEach, describe, expect, it } from 'vitest';
import { FAMILIES } from '../../../../src/observability/metric-families.js';
import type {
  DurableObjectId,
  DurableObjectNamespace,
  MetricsBatch,
  MetricsObjectRpc,
} from '../../../../src/runtime/workers/bindings.js';
import { METRICS_OBJECT } from '../../../../src/runtime/workers/settings.js';
import { sampleOf } from '../../../helpers/metric-sample.js';
import { isolate, metricsObjects, METRICS_TOKEN, simulator } from './control.js';

const NUMBERS = ['020 7946 0001', '020 7946 0002', '020 7946 0003', '0161 496 0001'];
const SEARCH = ['/v2/contacts/search', 'GET', '200'];
const SEARCH_200 = `${FAMILIES.httpRequests.name}{route="/v2/contacts/search",method="GET",status="200"}`;
const LOGIN_200 = `${FAMILIES.httpRequests.name}{route="/token/login",method="POST",status="200"}`;
const SEARCH_200_DURATIONS = `${FAMILIES.httpDuration.name}_count{route="/v2/contacts/search",method="GET",status="200"}`;
const withToken = { METRICS_TOKEN };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const deploymentObject = () => metricsObjects.get(metricsObjects.idFromName(METRICS_OBJECT));

/**
 * The METRICS namespace with the answer to its first push lost on the way back: the real object receives and counts
 * that push, and the isolate hears nothing before DURABLE_OBJECT_TIMEOUT_MS (the answer comes `lateMs` later).
 * `sent` lists the sequence number of every push, in order.
 */
function firstAnswerLost(lateMs: number): { namespace: DurableObjectNamespace<MetricsObjectRpc>; sent: number[] } {
  const sent: number[] = [];
  const namespace: DurableObjectNamespace<MetricsObjectRpc> = {
    idFromName: (name: string) => metricsObjects.idFromName(name),
    get: (id: DurableObjectId) => {
      const real = metricsObjects.get(id);
      return {
        async push(batch) {
          sent.push(batch.seq);
          const answer = await real.push(batch);
          if (sent.length === 1) await sleep(lateMs);
          return answer;
        },
        render: () => real.render(),
      };
    },
  };
  return { namespace, sent };
}

describe('one /metrics for two isolates of one Worker deployment', () => {
  beforeEach(async () => {
    await reset();
    await simulator.reset();
  });

  it('count N searches split unevenly over both exactly N times, pushed through their ctx.waitUntil only', async () => {
    const [a, b] = [await isolate(withToken), await isolate(withToken)];
    const [ta, tb] = [await a.login(), await b.login()];
    const n = 30;
    // A third of them through one, two thirds through the other: one isolate's count alone cannot make n.
    const answers = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        i % 3 === 0 ? a.search(NUMBERS[i % 4]!, ta) : b.search(NUMBERS[i % 4]!, tb),
      ),
    );
    expect(answers.map((r) => r.status)).toEqual(Array(n).fill(200));
    // Each search waited on its own context; all of them together include every push their isolate scheduled.
    // A third isolate that served no search reads only what the object was sent by the two.
    const scraper = await isolate(withToken);
    const text = await scraper.scrape();
    expect(sampleOf(text, SEARCH_200)).toBe(n);
    expect(sampleOf(text, SEARCH_200_DURATIONS)).toBe(n);
    expect(sampleOf(await a.scrape(), SEARCH_200)).toBe(n);
  });

  it('count a retried push once: the same isolate id and sequence number sent twice over RPC, then after a restart', async () => {
    const batch = (seq: number, n: number): MetricsBatch => ({
      isolate: 'isolate-retrying',
      seq,
      intervalMs: 1_000,
      counters: [[FAMILIES.httpRequests.name, SEARCH, n]],
      histograms: [],
      gauges: [],
    });
    expect(await deploymentObject().push(batch(1, 7))).toEqual({ seq: 1 });
    expect(await deploymentObject().push(batch(1, 7))).toEqual({ seq: 1 });
    expect(sampleOf(await deploymentObject().render(), SEARCH_200)).toBe(7);
    // The scrape wrote the totals and the isolate's last number: a restarted object refuses the retry as well.
    await abortAllDurableObjects();
    expect(await deploymentObject().push(batch(1, 7))).toEqual({ seq: 1 });
    expect(await deploymentObject().push(batch(2, 5))).toEqual({ seq: 2 });
    const scraper = await isolate(withToken);
    expect(sampleOf(await scraper.scrape(), SEARCH_200)).toBe(12);
  });

  it('count once the push an isolate sends again after its answer came too late, and its own scrape has its newest count', async () => {
    const metrics = firstAnswerLost(1_000);
    const a = await isolate({ ...withToken, METRICS: metrics.namespace, DURABLE_OBJECT_TIMEOUT_MS: '200' });
    const token = await a.login();
    // The push with the login in it (the first) is counted by the object, but its answer misses the deadline: the
    // isolate keeps that batch, to send it again unchanged before anything newer.
    await a.gateway.metrics!.flush();
    expect(metrics.sent).toEqual([1]);
    const { res, ctx } = await a.answer(NUMBERS[1]!, token);
    expect(res.status).toBe(200);
    // Scraped before this search's push is due: the scrape sends the kept batch again, then the search.
    const own = await a.scrape();
    expect(sampleOf(own, SEARCH_200)).toBe(1);
    expect(sampleOf(own, LOGIN_200)).toBe(1);
    expect(metrics.sent.slice(0, 3)).toEqual([1, 1, 2]);
    await waitOnExecutionContext(ctx);
    const text = await (await isolate(withToken)).scrape();
    expect(sampleOf(text, SEARCH_200)).toBe(1);
    expect(sampleOf(text, LOGIN_200)).toBe(1);
  });
});
