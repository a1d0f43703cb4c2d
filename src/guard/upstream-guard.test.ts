// The guarded upstream load on a fake clock: an upstream 429 honoured, the breaker, quotas charged only for
// calls that succeeded, and a bounded number of calls in flight.
import { describe, expect, it } from 'vitest';
import { createCostGuard } from './cost-guard.js';
import type { GuardConfig } from '../config/config.js';
import { GatewayError } from '../base/errors.js';
import type { UpstreamAnswer } from '../upstream/search-client.js';
import { noopTelemetry } from '../observability/telemetry.js';
import { inProcess } from '../shared-state/background.js';
import { createMemoryCounterStore } from '../shared-state/memory/memory-counter-store.js';
import { UpstreamRateLimitedError } from '../upstream/rate-limited.js';
import { guardConfig } from '../../test/helpers/guard-config.js';
import { rejection } from '../../test/helpers/recorders.js';

const CONFIG: GuardConfig = guardConfig({ breakerFailures: 3 });
const ANSWER: UpstreamAnswer = { body: '{"results":[]}', contentType: 'application/json' };
const CRM = { client: 'crm' };

function setup(config: Partial<GuardConfig> = {}) {
  const time = { now: Date.parse('2026-03-01T10:00:00Z') };
  const clock = () => time.now;
  const store = createMemoryCounterStore({ clock });
  const guard = createCostGuard({
    config: { ...CONFIG, ...config },
    timeoutMs: 1_000,
    clients: ['crm', 'pbx'],
    counters: store,
    quotaCounters: store,
    clock,
    telemetry: noopTelemetry,
    background: inProcess,
  });
  let calls = 0;
  let next: () => Promise<UpstreamAnswer> = async () => ANSWER;
  const load = guard.guardLoad(() => {
    calls++;
    return next();
  });
  return { time, guard, load, calls: () => calls, answerWith: (f: () => Promise<UpstreamAnswer>) => (next = f) };
}

describe('guarded upstream load', () => {
  it('after a 429 with Retry-After: 3 makes no call for 3 s, answering 503 upstream-rate-limited, then calls again', async () => {
    const { time, load, calls, answerWith } = setup();
    answerWith(() => Promise.reject(new UpstreamRateLimitedError(3_000)));
    const first = await rejection(load('+1', CRM));
    expect(first.code).toBe('upstream_rate_limited');
    expect(first.status).toBe(503);
    expect(first.headers['retry-after']).toBe('3');
    answerWith(async () => ANSWER);
    time.now += 1_500;
    const during = await rejection(load('+2', CRM));
    expect(during.headers['retry-after']).toBe('2');
    time.now += 1_499;
    await rejection(load('+3', CRM));
    expect(calls()).toBe(1);
    time.now += 1;
    expect(await load('+4', CRM)).toBe(ANSWER);
    expect(calls()).toBe(2);
  });

  it('without Retry-After waits UPSTREAM_COOLDOWN_SECONDS', async () => {
    const { time, load, calls, answerWith } = setup({ cooldownSeconds: 7 });
    answerWith(() => Promise.reject(new UpstreamRateLimitedError(null)));
    expect((await rejection(load('+1', CRM))).headers['retry-after']).toBe('7');
    time.now += 6_999;
    await rejection(load('+1', CRM));
    expect(calls()).toBe(1);
    time.now += 1;
    await rejection(load('+1', CRM));
    expect(calls()).toBe(2);
  });

  it('opens the breaker after N failures: no call while open, one trial after, closed by its success', async () => {
    const { time, load, calls, answerWith, guard } = setup({ breakerFailures: 3, breakerOpenSeconds: 10 });
    answerWith(() => Promise.reject(new GatewayError('upstream_error', 'the upstream answered 500')));
    for (let i = 0; i < 3; i++) expect((await rejection(load(`+${i}`, CRM))).code).toBe('upstream_error');
    for (let i = 0; i < 5; i++) {
      const refused = await rejection(load('+9', CRM));
      expect(refused.code).toBe('upstream_unavailable');
      expect(refused.headers['retry-after']).toBe('10');
    }
    expect(calls()).toBe(3);
    expect((await guard.usage()).breaker).toMatchObject({ state: 'open', retryAfterSeconds: 10 });
    time.now += 10_000;
    answerWith(async () => ANSWER);
    expect(await load('+9', CRM)).toBe(ANSWER);
    expect(calls()).toBe(4);
    expect((await guard.usage()).breaker.state).toBe('closed');
  });

  it('charges only calls that succeeded; refusals and failures leave the quota as it was', async () => {
    const { load, answerWith, guard } = setup({ quotaPerDay: 2 });
    answerWith(() => Promise.reject(new GatewayError('upstream_timeout', 'no answer')));
    await rejection(load('+1', CRM));
    answerWith(async () => ANSWER);
    await load('+1', CRM);
    await load('+2', CRM);
    const refused = await rejection(load('+3', CRM));
    expect(refused.code).toBe('quota_exhausted');
    const usage = await guard.usage();
    expect(usage.clients.find((c) => c.id === 'crm')).toMatchObject({ upstreamCalls: 2, quota: 2, remaining: 0 });
    expect(usage.clients.find((c) => c.id === 'pbx')).toMatchObject({ upstreamCalls: 0, quota: 2, remaining: 2 });
    // The console has a quota of its own (console:N in CLIENT_UPSTREAM_QUOTAS, 1000 unless given), not the clients' default.
    expect(usage.clients.find((c) => c.id === 'console')).toMatchObject({
      upstreamCalls: 0,
      quota: 1000,
      remaining: 1000,
    });
  });

  it('keeps at most UPSTREAM_MAX_CONCURRENCY calls in flight and refuses past the queue with 503 upstream-busy', async () => {
    const { load, answerWith, guard } = setup({ maxConcurrency: 2, maxQueue: 3 });
    let inFlight = 0;
    let most = 0;
    const gates: (() => void)[] = [];
    answerWith(async () => {
      most = Math.max(most, ++inFlight);
      await new Promise<void>((resolve) => gates.push(resolve));
      inFlight--;
      return ANSWER;
    });
    const loads = Array.from({ length: 6 }, (_, i) =>
      load(`+${i}`, CRM).then(
        () => 'ok',
        (e: GatewayError) => e.code,
      ),
    );
    await new Promise((r) => setTimeout(r, 5));
    expect(guard.status()).toMatchObject({ inFlight: 2, queued: 3 });
    while (gates.length > 0 || inFlight > 0) {
      gates.splice(0).forEach((open) => open());
      await new Promise((r) => setTimeout(r, 1));
    }
    expect((await Promise.all(loads)).sort()).toEqual(['ok', 'ok', 'ok', 'ok', 'ok', 'upstream_busy']);
    expect(most).toBe(2);
  });
});
