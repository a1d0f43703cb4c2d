// Protecting the upstream over real sockets, counted at the simulator: the bound on calls in flight, an
// upstream 429 honoured (Retry-After or the configured cooldown), and the circuit breaker.
import { describe, expect, it } from 'vitest';
import { metricValue, missNumber, problemType, sleep, stacksPerTest, usageOf } from '../helpers/guard-stack.js';
import type { Stack } from '../helpers/stack.js';

const { start } = stacksPerTest();

const calls = (s: Stack) => s.simulator.controls.stats().searchCalls;
/** Caches one number with a 1 s freshness, so it is stale (and servable on error) shortly after. */
const SHORT_CACHE = {
  CACHE_TTL_SECONDS: '1',
  CACHE_NEGATIVE_TTL_SECONDS: '1',
  CACHE_STALE_WHILE_REVALIDATE_SECONDS: '0',
};

describe('UPSTREAM_MAX_CONCURRENCY', () => {
  it('never puts more than 4 of 24 concurrent misses in flight at the upstream, and answers them all', async () => {
    const s = await start({ UPSTREAM_MAX_CONCURRENCY: '4' }, 100);
    const crm = await s.login('crm');
    s.simulator.controls.resetStats();
    const statuses = await Promise.all(
      Array.from({ length: 24 }, (_, i) => s.search(missNumber(i), crm).then((r) => r.status)),
    );
    expect(statuses).toEqual(Array(24).fill(200));
    expect(s.simulator.controls.stats().maxSearchesInFlight).toBe(4);
    expect(calls(s)).toBe(24);
  });

  it('answers 503 upstream-busy when the queue is full', async () => {
    const s = await start({ UPSTREAM_MAX_CONCURRENCY: '1', UPSTREAM_MAX_QUEUE: '1', UPSTREAM_TIMEOUT_MS: '2000' }, 300);
    const crm = await s.login('crm');
    const responses = await Promise.all([0, 1, 2].map((i) => s.search(missNumber(i), crm)));
    // One runs, one waits for its slot and runs after it, one finds the queue full.
    expect(responses.map((r) => r.status).sort()).toEqual([200, 200, 503]);
    const busy = responses.find((r) => r.status === 503)!;
    expect(await problemType(busy)).toBe('upstream-busy');
    expect(busy.headers.get('retry-after')).toBe('1');
    expect(calls(s)).toBe(2);
    expect(s.simulator.controls.stats().maxSearchesInFlight).toBe(1);
  });
});

describe('an upstream 429', () => {
  it('with Retry-After: 3 gets exactly one call in those 3 s; misses get 503 upstream-rate-limited, stale entries are served', async () => {
    const s = await start(SHORT_CACHE);
    const crm = await s.login('crm');
    expect((await s.search(missNumber(0), crm)).status).toBe(200);
    await sleep(1_100);
    s.simulator.controls.setFaults({ rateLimitRate: 1, rateLimitRetryAfter: '3' });
    const before = calls(s);
    const first = await s.search(missNumber(1), crm);
    const started = Date.now();
    expect(first.status).toBe(503);
    expect(await problemType(first)).toBe('upstream-rate-limited');
    expect(first.headers.get('retry-after')).toBe('3');
    // Read at the start of the window: a busy machine may take the loop below past its end.
    expect((await usageOf(s)).cooldown.active).toBe(true);
    // Sequential misses, concurrent bursts and a stale entry, until just before the 3 s end.
    while (Date.now() - started < 2_700) {
      const burst = await Promise.all([2, 3, 4, 5].map((i) => s.search(missNumber(i), crm)));
      for (const r of burst) {
        expect(r.status).toBe(503);
        expect(Number(r.headers.get('retry-after'))).toBeLessThanOrEqual(3);
      }
      const stale = await s.search(missNumber(0), crm);
      expect(stale.status).toBe(200);
      expect(stale.headers.get('cache-status')).toMatch(/detail=stale-if-error/);
      await sleep(100);
    }
    expect(calls(s) - before).toBe(1);
    expect(s.simulator.controls.stats().rateLimitedCalls).toBe(1);
    s.simulator.controls.setFaults({ rateLimitRate: 0 });
    await sleep(Math.max(0, 3_050 - (Date.now() - started)));
    expect((await s.search(missNumber(1), crm)).status).toBe(200);
    expect(calls(s) - before).toBe(2);
    expect(await metricValue(s, 'callerid_gateway_upstream_cooldowns_total')).toBe(1);
  });

  it('without Retry-After waits UPSTREAM_COOLDOWN_SECONDS', async () => {
    const s = await start({ UPSTREAM_COOLDOWN_SECONDS: '2' });
    const crm = await s.login('crm');
    s.simulator.controls.setFaults({ rateLimitRate: 1, rateLimitRetryAfter: null });
    const first = await s.search(missNumber(1), crm);
    const started = Date.now();
    expect(first.status).toBe(503);
    expect(first.headers.get('retry-after')).toBe('2');
    while (Date.now() - started < 1_800) {
      expect((await s.search(missNumber(2), crm)).status).toBe(503);
      await sleep(100);
    }
    expect(calls(s)).toBe(1);
    s.simulator.controls.setFaults({ rateLimitRate: 0 });
    await sleep(Math.max(0, 2_050 - (Date.now() - started)));
    expect((await s.search(missNumber(2), crm)).status).toBe(200);
    expect(calls(s)).toBe(2);
  });
});

describe('UPSTREAM_COOLDOWN_MAX_SECONDS', () => {
  it('caps a Retry-After of a thousand years to the maximum, then calls the upstream again', async () => {
    const s = await start({ UPSTREAM_COOLDOWN_MAX_SECONDS: '2', UPSTREAM_COOLDOWN_SECONDS: '1' });
    const crm = await s.login('crm');
    s.simulator.controls.setFaults({ rateLimitRate: 1, rateLimitRetryAfter: '31536000000' });
    const first = await s.search(missNumber(1), crm);
    const started = Date.now();
    expect(first.status).toBe(503);
    expect(first.headers.get('retry-after')).toBe('2');
    const during = await s.search(missNumber(2), crm);
    expect(during.status).toBe(503);
    expect(Number(during.headers.get('retry-after'))).toBeLessThanOrEqual(2);
    expect((await usageOf(s)).cooldown.retryAfterSeconds).toBeLessThanOrEqual(2);
    s.simulator.controls.setFaults({ rateLimitRate: 0 });
    await sleep(Math.max(0, 2_050 - (Date.now() - started)));
    expect((await s.search(missNumber(2), crm)).status).toBe(200);
  });

  it('takes an unreadable Retry-After (400 digits) as none: UPSTREAM_COOLDOWN_SECONDS, a finite integer', async () => {
    const s = await start({ UPSTREAM_COOLDOWN_SECONDS: '1' });
    const crm = await s.login('crm');
    s.simulator.controls.setFaults({ rateLimitRate: 1, rateLimitRetryAfter: '9'.repeat(400) });
    const first = await s.search(missNumber(1), crm);
    expect(first.status).toBe(503);
    expect(first.headers.get('retry-after')).toBe('1');
    s.simulator.controls.setFaults({ rateLimitRate: 0 });
    await sleep(1_050);
    expect((await s.search(missNumber(1), crm)).status).toBe(200);
  });

  it('caps an HTTP-date far in the future the same way', async () => {
    const s = await start({ UPSTREAM_COOLDOWN_MAX_SECONDS: '2', UPSTREAM_COOLDOWN_SECONDS: '1' });
    const crm = await s.login('crm');
    s.simulator.controls.setFaults({ rateLimitRate: 1, rateLimitRetryAfter: 'Fri, 31 Dec 9999 23:59:59 GMT' });
    const first = await s.search(missNumber(1), crm);
    expect(first.status).toBe(503);
    expect(first.headers.get('retry-after')).toBe('2');
  });
});

describe('circuit breaker', () => {
  it('lets a failing upstream get UPSTREAM_BREAKER_FAILURES calls, then none while open, then one trial that closes it', async () => {
    const s = await start({ ...SHORT_CACHE, UPSTREAM_BREAKER_FAILURES: '3', UPSTREAM_BREAKER_OPEN_SECONDS: '2' }, 100);
    const crm = await s.login('crm');
    expect((await s.search(missNumber(0), crm)).status).toBe(200);
    await sleep(1_100);
    s.simulator.controls.setFaults({ errorRate: 1 });
    const before = calls(s);
    const statuses: number[] = [];
    for (let i = 1; i <= 10; i++) statuses.push((await s.search(missNumber(i), crm)).status);
    expect(statuses).toEqual([502, 502, 502, 503, 503, 503, 503, 503, 503, 503]);
    expect(calls(s) - before).toBe(3);
    const refused = await s.search(missNumber(11), crm);
    expect(await problemType(refused)).toBe('upstream-unavailable');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(2);
    // A stale entry is served while it is open.
    const stale = await s.search(missNumber(0), crm);
    expect(stale.status).toBe(200);
    expect(stale.headers.get('cache-status')).toMatch(/detail=stale-if-error/);
    expect((await usageOf(s)).breaker.state).toBe('open');
    expect(await metricValue(s, 'callerid_gateway_upstream_breaker_state{state="open"}')).toBe(1);
    expect(await metricValue(s, 'callerid_gateway_upstream_breaker_opens_total')).toBe(1);

    await sleep(2_000);
    s.simulator.controls.setFaults({ errorRate: 0 });
    // Five misses at once after the open period: one trial reaches the upstream, the others wait for it.
    const trial = await Promise.all(
      [12, 13, 14, 15, 16].map((i) => s.search(missNumber(i), crm).then((r) => r.status)),
    );
    expect(trial.filter((x) => x === 200)).toHaveLength(1);
    expect(trial.filter((x) => x === 503)).toHaveLength(4);
    expect(calls(s) - before).toBe(4);
    expect((await s.search(missNumber(17), crm)).status).toBe(200);
    expect(calls(s) - before).toBe(5);
    expect((await usageOf(s)).breaker.state).toBe('closed');
  });
});
