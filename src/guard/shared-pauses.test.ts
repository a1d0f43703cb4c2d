// Two cost guards ("replicas") on one counter store and a fake clock: an upstream 429 and an open breaker met
// by one replica pause the other too, learned beside the reservation a miss makes; per process without the store.
import { describe, expect, it } from 'vitest';
import type { GuardConfig } from '../config/config.js';
import { GatewayError } from '../base/errors.js';
import { createCostGuard } from './cost-guard.js';
import type { UpstreamAnswer } from '../upstream/search-client.js';
import { silentLogger } from '../observability/logger.js';
import { noopTelemetry } from '../observability/telemetry.js';
import { inProcess } from '../shared-state/background.js';
import type { CounterStore } from '../shared-state/counter-store.js';
import { createFallbackCounterStore } from '../shared-state/fallback-counter-store.js';
import { createMemoryCounterStore } from '../shared-state/memory/memory-counter-store.js';
import { createStoreHealth } from '../shared-state/store-health.js';
import { StoreUnavailableError } from '../shared-state/store-unavailable.js';
import { UpstreamRateLimitedError } from '../upstream/rate-limited.js';
import { guardConfig } from '../../test/helpers/guard-config.js';
import { rejection } from '../../test/helpers/recorders.js';

const T0 = Date.parse('2026-03-01T10:00:00Z');
const ANSWER: UpstreamAnswer = { body: '{"results":[]}', contentType: 'application/json' };
const CRM = { client: 'crm' };
const failed = () => Promise.reject(new GatewayError('upstream_error', 'the upstream answered 500'));

/** A memory store standing in for Redis, counting the reads the guards make of it. */
function countingStore(clock: () => number) {
  const inner = createMemoryCounterStore({ clock });
  const counts = { get: 0 };
  const store: CounterStore = {
    ...inner,
    kind: 'redis',
    get: (key) => {
      counts.get++;
      return inner.get(key);
    },
  };
  return { store, counts };
}

/**
 * `count` guards in front of one upstream; each shares pauses through `pausesOf()` (its own wrapper of the shared
 * store, as each process builds one), or pauses per process when that gives undefined.
 */
function deployment(
  count: number,
  pausesOf: (clock: () => number) => CounterStore | undefined,
  config: Partial<GuardConfig> = {},
) {
  const time = { now: T0 };
  const clock = () => time.now;
  let calls = 0;
  let next: () => Promise<UpstreamAnswer> = async () => ANSWER;
  const replicas = Array.from({ length: count }, () => {
    const counters = createMemoryCounterStore({ clock });
    const guard = createCostGuard({
      config: guardConfig({ breakerFailures: 3, breakerOpenSeconds: 10, ...config }),
      timeoutMs: 1_000,
      clients: ['crm'],
      counters,
      quotaCounters: counters,
      pauseCounters: pausesOf(clock),
      clock,
      telemetry: noopTelemetry,
      background: inProcess,
    });
    const load = guard.guardLoad(() => {
      calls++;
      return next();
    });
    return { guard, load: (what: string) => load(what, CRM) };
  });
  return {
    time,
    clock,
    replicas: replicas as [(typeof replicas)[0], (typeof replicas)[0]],
    calls: () => calls,
    answerWith: (f: () => Promise<UpstreamAnswer>) => (next = f),
  };
}

/** One memory store standing in for Redis, made on the deployment's clock at its first replica, counting its reads. */
function sharedStore() {
  let made: ReturnType<typeof countingStore> | undefined;
  return {
    of: (clock: () => number) => (made ??= countingStore(clock)).store,
    reads: () => made?.counts.get ?? 0,
  };
}

/** A meets a 429 and pauses; B, not told, still calls the upstream. */
async function expectPausedAlone(d: ReturnType<typeof deployment>): Promise<void> {
  const [a, b] = d.replicas;
  d.answerWith(() => Promise.reject(new UpstreamRateLimitedError(3_000)));
  await rejection(a.load('+1'));
  d.answerWith(async () => ANSWER);
  expect(await b.load('+2')).toBe(ANSWER);
  expect((await rejection(a.load('+3'))).code).toBe('upstream_rate_limited');
  expect(d.calls()).toBe(2);
}

describe('an upstream 429 met by one replica', () => {
  it('refuses misses on the other replica for the rest of its Retry-After, with no upstream call, then calls again', async () => {
    const shared = sharedStore();
    const d = deployment(2, shared.of);
    const [a, b] = d.replicas;
    d.answerWith(() => Promise.reject(new UpstreamRateLimitedError(3_000)));
    expect((await rejection(a.load('+1'))).headers['retry-after']).toBe('3');
    d.answerWith(async () => ANSWER);
    d.time.now = T0 + 1_200;
    const refused = await rejection(b.load('+2'));
    expect(refused.code).toBe('upstream_rate_limited');
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('2');
    // B now knows: its next misses are refused without asking the store.
    const reads = shared.reads();
    await rejection(b.load('+3'));
    expect(shared.reads()).toBe(reads);
    expect(d.calls()).toBe(1);
    expect((await b.guard.usage()).cooldown).toEqual({ active: true, retryAfterSeconds: 2 });
    d.time.now = T0 + 3_000;
    expect(await b.load('+2')).toBe(ANSWER);
    expect(await a.load('+4')).toBe(ANSWER);
    expect(d.calls()).toBe(3);
  });

  it('is learned by one store read that concurrent misses share', async () => {
    const shared = sharedStore();
    const d = deployment(1, shared.of);
    await Promise.all(Array.from({ length: 10 }, (_, i) => d.replicas[0].load(`+${i}`)));
    // A read is two keys (cooldown, breaker); the ten misses at once share the first.
    expect(shared.reads()).toBe(2);
    expect(d.calls()).toBe(10);
  });

  it('pauses only the replica that met it when no store is shared', async () => {
    const d = deployment(2, () => undefined);
    await expectPausedAlone(d);
  });

  it('pauses per process while the shared store is down, and together again once it answers', async () => {
    let down = true;
    const refused = () => Promise.reject(new StoreUnavailableError('counter', 'connection refused'));
    const health = createStoreHealth({
      store: 'counter',
      kind: 'redis',
      logger: silentLogger,
      telemetry: noopTelemetry,
    });
    let shared: CounterStore | undefined;
    const d = deployment(2, (clock) => {
      const redis = (shared ??= createMemoryCounterStore({ clock }));
      const flaky: CounterStore = {
        kind: 'redis',
        consume: (...args) => (down ? refused() : redis.consume(...args)),
        add: (...args) => (down ? refused() : redis.add(...args)),
        get: (...args) => (down ? refused() : redis.get(...args)),
      };
      return createFallbackCounterStore({ shared: flaky, mode: 'memory', health, clock });
    });
    await expectPausedAlone(d);
    expect(health.isUp).toBe(false);

    const [a, b] = d.replicas;
    down = false;
    d.time.now += 3_000;
    d.answerWith(() => Promise.reject(new UpstreamRateLimitedError(5_000)));
    await rejection(a.load('+4'));
    d.answerWith(async () => ANSWER);
    expect((await rejection(b.load('+5'))).headers['retry-after']).toBe('5');
    expect(d.calls()).toBe(3);
    expect(health.isUp).toBe(true);
  });
});

describe('a breaker opened by one replica', () => {
  it('opens every replica for the open period; after it each makes one trial of its own, and a failed trial opens all again', async () => {
    const shared = sharedStore();
    const d = deployment(2, shared.of);
    const [a, b] = d.replicas;
    d.answerWith(failed);
    for (let i = 0; i < 3; i++) expect((await rejection(a.load(`+${i}`))).code).toBe('upstream_error');
    d.time.now += 1_000;
    const refused = await rejection(b.load('+9'));
    expect(refused.code).toBe('upstream_unavailable');
    expect(refused.headers['retry-after']).toBe('9');
    expect((await b.guard.usage()).breaker.state).toBe('open');
    expect(d.calls()).toBe(3);

    // The open period is over: A's trial fails and opens it again, for B too, before B's trial.
    d.time.now += 9_000;
    expect((await rejection(a.load('+9'))).code).toBe('upstream_error');
    expect((await rejection(b.load('+9'))).code).toBe('upstream_unavailable');
    expect(d.calls()).toBe(4);

    // Then the upstream recovers: each replica's own trial closes its breaker, and it stays closed.
    d.time.now += 10_000;
    d.answerWith(async () => ANSWER);
    expect(await a.load('+9')).toBe(ANSWER);
    expect(await a.load('+8')).toBe(ANSWER);
    expect(await b.load('+9')).toBe(ANSWER);
    expect(d.calls()).toBe(7);
    expect((await a.guard.usage()).breaker.state).toBe('closed');
    expect((await b.guard.usage()).breaker.state).toBe('closed');
  });
});
