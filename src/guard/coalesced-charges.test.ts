// Coalesced misses through the real cache and lookup service: one upstream call charged to the caller who
// started it, and a joiner never refused by the starter's spent quota.
import { describe, expect, it } from 'vitest';
import { createCostGuard } from './cost-guard.js';
import { createLookupCache } from '../lookup/lookup-cache.js';
import { createLookupService } from '../lookup/lookup-service.js';
import { noopTelemetry } from '../observability/telemetry.js';
import { inProcess } from '../shared-state/background.js';
import type { CounterStore } from '../shared-state/counter-store.js';
import { createMemoryCounterStore } from '../shared-state/memory/memory-counter-store.js';
import { guardConfig } from '../../test/helpers/guard-config.js';
import { rejection } from '../../test/helpers/recorders.js';

function setup() {
  const clock = Date.now;
  const memory = createMemoryCounterStore({ clock });
  // A store that answers after a few ms, like Redis: long enough for a second caller to join the load.
  const slow: CounterStore = {
    ...memory,
    consume: async (...args) => (await new Promise((r) => setTimeout(r, 20)), memory.consume(...args)),
  };
  const guard = createCostGuard({
    config: guardConfig({
      quotas: new Map([
        ['crm', 1],
        ['pbx', 5],
      ]),
    }),
    timeoutMs: 1_000,
    clients: ['crm', 'pbx'],
    counters: memory,
    quotaCounters: slow,
    clock,
    telemetry: noopTelemetry,
    background: inProcess,
  });
  const upstream: string[] = [];
  const cache = createLookupCache({
    load: guard.guardLoad(
      async (e164) => (upstream.push(e164), { body: '{"results":[{"id":1}]}', contentType: 'application/json' }),
    ),
    clock,
    maxBytes: 1_000_000,
    ttlSeconds: 60,
    negativeTtlSeconds: 60,
    staleWhileRevalidateSeconds: 0,
    staleIfErrorSeconds: 0,
    resultsPath: 'results',
  });
  const lookup = createLookupService({ cache, othersFailure: guard.othersFailure });
  return { guard, lookup, upstream };
}

describe('coalesced misses and quotas', () => {
  it('charges one call to the starter, none to the joiner', async () => {
    const { guard, lookup, upstream } = setup();
    const [a, b] = await Promise.all([
      lookup.lookup('+442079460001', { client: 'crm' }),
      lookup.lookup('+442079460001', { client: 'pbx' }),
    ]);
    expect(a.cache).toBe('miss');
    expect(b.cache).toBe('coalesced');
    expect(upstream).toHaveLength(1);
    const usage = await guard.usage();
    expect(usage.clients.find((c) => c.id === 'crm')?.upstreamCalls).toBe(1);
    expect(usage.clients.find((c) => c.id === 'pbx')?.upstreamCalls).toBe(0);
  });

  it("retries a joiner refused by the starter's spent quota as its own load", async () => {
    const { guard, lookup, upstream } = setup();
    await lookup.lookup('+442079460001', { client: 'crm' });
    const [starter, joiner] = await Promise.allSettled([
      lookup.lookup('+442079460002', { client: 'crm' }),
      lookup.lookup('+442079460002', { client: 'pbx' }),
    ]);
    expect(starter.status).toBe('rejected');
    expect((await rejection(Promise.reject((starter as PromiseRejectedResult).reason))).code).toBe('quota_exhausted');
    expect(joiner.status).toBe('fulfilled');
    expect(upstream).toEqual(['+442079460001', '+442079460002']);
    const usage = await guard.usage();
    expect(usage.clients.find((c) => c.id === 'pbx')?.upstreamCalls).toBe(1);
  });
});
