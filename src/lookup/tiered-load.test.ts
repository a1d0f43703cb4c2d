// Two lookup caches on one memory tier stand for two replicas: answers, windows, fill leases, purges and tier
// failures across the shared tier, on a fake clock (real timers only for the short lease waits).
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../base/errors.js';
import { createLookupCache, type LookupCacheOptions } from './lookup-cache.js';
import { createLookupService } from './lookup-service.js';
import type { SharedTierOptions } from './tiered-load.js';
import type { LookupTier } from '../shared-state/lookup-tier.js';
import { createMemoryLookupTier } from '../shared-state/memory/memory-lookup-tier.js';
import { createStoreHealth } from '../shared-state/store-health.js';
import { StoreUnavailableError } from '../shared-state/store-unavailable.js';
import { captureLogger } from '../../test/helpers/recorders.js';
import { cacheTelemetry, listed, scriptedUpstream, unlisted, WINDOWS } from '../../test/helpers/scripted-upstream.js';

const T0 = 1_700_000_000_000;
const NUMBER = '+442079460001';
const CALLER = { client: 'crm' };

/** Lets queued callbacks and background writes run. */
const settle = (ms = 0) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A tier whose calls can be counted, failed, or left hanging, in front of a real memory tier. */
function faultyTier(inner: LookupTier) {
  const state = { mode: 'ok' as 'ok' | 'fail' | 'hang', calls: [] as string[] };
  const wrap =
    <A extends unknown[], R>(name: string, f: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> => {
      state.calls.push(name);
      if (state.mode === 'fail') return Promise.reject(new StoreUnavailableError('lookup', 'connection refused'));
      if (state.mode === 'hang') return new Promise<R>(() => {});
      return f(...args);
    };
  const tier: LookupTier = {
    kind: 'memory',
    get: wrap('get', inner.get),
    set: wrap('set', inner.set),
    delete: wrap('delete', inner.delete),
    clear: wrap('clear', inner.clear),
    lease: wrap('lease', inner.lease),
    release: wrap('release', inner.release),
    onPurge: (listener) => inner.onPurge(listener),
  };
  return { tier, state };
}

function deployment() {
  const time = { now: T0 };
  const clock = () => time.now;
  const shared = createMemoryLookupTier({ clock });

  function replica(overrides: Partial<SharedTierOptions> = {}, cacheOverrides: Partial<LookupCacheOptions> = {}) {
    const upstream = scriptedUpstream();
    const { telemetry, results, storeEvents } = cacheTelemetry();
    const logger = captureLogger();
    const faulty = faultyTier(shared);
    const cache = createLookupCache({
      load: upstream.load,
      clock,
      ...WINDOWS,
      shared: {
        tier: faulty.tier,
        keyOf: async (e164) => `k${e164.replace(/\D/g, '').split('').reverse().join('')}`,
        health: createStoreHealth({ store: 'lookup', kind: 'memory', logger, telemetry }),
        background: (work) => void work.catch(() => {}),
        timeoutMs: 50,
        fillWaitMs: 2000,
        leaseMs: 5000,
        pollMs: 5,
        ...overrides,
      },
      ...cacheOverrides,
    });
    return {
      cache,
      service: createLookupService({ cache, telemetry }),
      calls: upstream.calls,
      pending: upstream.pending,
      results,
      storeEvents,
      logs: logger.lines,
      tier: faulty.state,
      setMode: upstream.setMode,
      setBody: upstream.setBody,
    };
  }

  return { shared, replica, advance: (seconds: number) => void (time.now += seconds * 1000) };
}

describe('lookup cache with a shared tier', () => {
  it("answers a number another replica fetched from the shared tier, with that answer's true Age and ttl", async () => {
    const d = deployment();
    const [a, b] = [d.replica(), d.replica()];
    expect((await a.service.lookup(NUMBER, CALLER)).cacheStatus).toBe(
      'callerid-gateway; fwd=miss; fwd-status=200; stored; ttl=600',
    );
    await settle();
    d.advance(100);
    const fromTier = await b.service.lookup(NUMBER, CALLER);
    expect(fromTier.body).toBe(listed(NUMBER));
    expect(fromTier.cacheStatus).toBe('callerid-gateway; hit; ttl=500; detail=shared');
    expect(fromTier.ageSeconds).toBe(100);
    expect(b.calls).toEqual([]);
    expect(b.results).toEqual(['shared']);
    // Kept locally with the same timestamps: the next answer is a plain hit, also on the hit path.
    d.advance(10);
    expect((await b.service.lookup(NUMBER, CALLER)).cacheStatus).toBe('callerid-gateway; hit; ttl=490');
    expect(b.service.lookupFresh(NUMBER)).toMatchObject({
      ageSeconds: 110,
      cacheStatus: 'callerid-gateway; hit; ttl=490',
    });
  });

  it('keeps the hit path in memory: a fresh local answer never calls the tier', async () => {
    const d = deployment();
    const a = d.replica();
    expect(a.service.lookupFresh(NUMBER)).toBeUndefined();
    expect(a.tier.calls).toEqual([]);
    await a.service.lookup(NUMBER, CALLER);
    await settle();
    const before = a.tier.calls.length;
    for (let i = 0; i < 5; i++) {
      a.service.lookupFresh(NUMBER);
      await a.service.lookup(NUMBER, CALLER);
    }
    expect(a.tier.calls.length).toBe(before);
  });

  it('carries the negative TTL of a "no listing" answer across the tier', async () => {
    const d = deployment();
    const [a, b] = [d.replica(), d.replica()];
    a.setBody(unlisted);
    await a.service.lookup(NUMBER, CALLER);
    await settle();
    d.advance(20);
    expect((await b.service.lookup(NUMBER, CALLER)).cacheStatus).toBe('callerid-gateway; hit; ttl=40; detail=shared');
    d.advance(41);
    expect((await b.service.lookup(NUMBER, CALLER)).cacheStatus).toBe(
      'callerid-gateway; fwd=stale; ttl=-1; detail=stale-while-revalidate',
    );
  });

  it("serves the tier's stale copy at once to a replica without one, and its background refresh updates every replica", async () => {
    const d = deployment();
    const [a, b] = [d.replica(), d.replica()];
    await a.service.lookup(NUMBER, CALLER);
    await settle();
    d.advance(610);
    b.setBody((e164) => listed(e164, 'Hartley Zoë (moved)'));
    const stale = await b.service.lookup(NUMBER, CALLER);
    expect(stale.body).toBe(listed(NUMBER));
    expect(stale.cacheStatus).toBe('callerid-gateway; fwd=stale; ttl=-10; detail=stale-while-revalidate');
    expect(stale.ageSeconds).toBe(610);
    await settle(20);
    expect(b.calls).toEqual([NUMBER]);
    // A's own copy is stale too: it answers it at once and its refresh finds B's answer in the tier, not the upstream.
    expect((await a.service.lookup(NUMBER, CALLER)).cacheStatus).toContain('detail=stale-while-revalidate');
    await settle(20);
    const refreshed = await a.service.lookup(NUMBER, CALLER);
    expect(refreshed.body).toContain('(moved)');
    expect(refreshed.cacheStatus).toBe('callerid-gateway; hit; ttl=600');
    expect(a.calls).toEqual([NUMBER]);
  });

  it("answers the tier's copy marked stale-if-error when this replica's upstream call fails", async () => {
    const d = deployment();
    const [a, b] = [d.replica(), d.replica()];
    await a.service.lookup(NUMBER, CALLER);
    await settle();
    d.advance(600 + 1800);
    b.setMode('fail');
    const answer = await b.service.lookup(NUMBER, CALLER);
    expect(answer.body).toBe(listed(NUMBER));
    expect(answer.cacheStatus).toBe('callerid-gateway; fwd=stale; ttl=-1800; detail=stale-if-error');
    expect(answer.ageSeconds).toBe(2400);
    expect(b.calls).toEqual([NUMBER]);
    d.advance(1801);
    await expect(b.service.lookup(NUMBER, CALLER)).rejects.toMatchObject({ code: 'upstream_error' });
  });

  it('makes one upstream call for concurrent misses of one number on two replicas', async () => {
    const d = deployment();
    const [a, b] = [d.replica(), d.replica()];
    a.setMode('defer');
    b.setMode('defer');
    const lookups = [
      ...Array.from({ length: 5 }, () => a.service.lookup(NUMBER, CALLER)),
      ...Array.from({ length: 5 }, () => b.service.lookup(NUMBER, CALLER)),
    ];
    await settle(30);
    expect(a.calls.length + b.calls.length).toBe(1);
    const filler = a.calls.length === 1 ? a : b;
    filler.pending[0]!.resolve({ body: listed(NUMBER), contentType: 'application/json' });
    const answers = await Promise.all(lookups);
    expect(new Set(answers.map((x) => x.body))).toEqual(new Set([listed(NUMBER)]));
    const waiter = filler === a ? answers.slice(5) : answers.slice(0, 5);
    for (const w of waiter) expect(w.cacheStatus).toBe('callerid-gateway; hit; ttl=600; detail=shared');
    expect(a.calls.length + b.calls.length).toBe(1);
  });

  it('calls the upstream itself when the lease holder has not filled the tier within the wait', async () => {
    const d = deployment();
    const a = d.replica();
    const b = d.replica({ fillWaitMs: 60 });
    a.setMode('defer');
    const slow = a.service.lookup(NUMBER, CALLER);
    await settle(5);
    const started = performance.now();
    const own = await b.service.lookup(NUMBER, CALLER);
    expect(performance.now() - started).toBeGreaterThanOrEqual(55);
    expect(own.cacheStatus).toBe('callerid-gateway; fwd=miss; fwd-status=200; stored; ttl=600');
    expect(b.calls).toEqual([NUMBER]);
    a.pending[0]!.resolve({ body: listed(NUMBER), contentType: 'application/json' });
    await slow;
  });

  it('takes the lease over at once when the holder fails, instead of waiting the whole wait', async () => {
    const d = deployment();
    const a = d.replica();
    const b = d.replica({ fillWaitMs: 5000 });
    a.setMode('defer');
    const failing = a.service.lookup(NUMBER, CALLER).catch((err: unknown) => err);
    await settle(5);
    const started = performance.now();
    const waiting = b.service.lookup(NUMBER, CALLER);
    await settle(20);
    a.pending[0]!.reject(new GatewayError('upstream_error', 'the upstream answered 500'));
    expect(await failing).toMatchObject({ code: 'upstream_error' });
    expect((await waiting).cacheStatus).toContain('fwd=miss');
    expect(performance.now() - started).toBeLessThan(1000);
    expect(b.calls).toEqual([NUMBER]);
  });

  it('goes on alone when the tier fails, says so once, and shares again when it answers', async () => {
    const d = deployment();
    const [a, b] = [d.replica(), d.replica()];
    a.tier.mode = 'fail';
    for (const n of ['+442079460001', '+442079460002', '+442079460003'])
      expect((await a.service.lookup(n, CALLER)).cacheStatus).toContain('fwd=miss');
    expect(a.calls).toHaveLength(3);
    expect(a.logs.filter((l) => l.fields.event === 'shared_store_down')).toHaveLength(1);
    expect(a.storeEvents.filter((e) => e === 'lookup down')).toHaveLength(1);
    expect(a.storeEvents.filter((e) => e === 'lookup fallback').length).toBeGreaterThanOrEqual(3);
    // After the first failed call the tier is skipped for a second (retryMs), then asked again.
    expect(a.tier.calls).toEqual(['get']);
    a.tier.mode = 'ok';
    d.advance(1);
    await a.service.lookup('+442079460004', CALLER);
    await settle();
    expect(a.logs.filter((l) => l.fields.event === 'shared_store_up')).toHaveLength(1);
    expect((await b.service.lookup('+442079460004', CALLER)).cacheStatus).toContain('detail=shared');
    expect(b.calls).toEqual([]);
  });

  it('asks a hung tier once, then skips it for a second: later misses do not wait on it', async () => {
    const d = deployment();
    const a = d.replica({ timeoutMs: 40 });
    a.tier.mode = 'hang';
    expect((await a.service.lookup('+442079460001', CALLER)).cacheStatus).toContain('fwd=miss');
    const calls = a.tier.calls.length;
    const started = performance.now();
    for (const n of ['+442079460002', '+442079460003', '+442079460004'])
      expect((await a.service.lookup(n, CALLER)).cacheStatus).toContain('fwd=miss');
    expect(performance.now() - started).toBeLessThan(40);
    expect(a.tier.calls.length).toBe(calls);
    d.advance(1);
    await a.service.lookup('+442079460005', CALLER);
    expect(a.tier.calls.length).toBe(calls + 1);
  });

  it('does not wait on a tier that hangs for longer than its timeout', async () => {
    const d = deployment();
    const a = d.replica({ timeoutMs: 40 });
    a.tier.mode = 'hang';
    const started = performance.now();
    expect((await a.service.lookup(NUMBER, CALLER)).cacheStatus).toContain('fwd=miss');
    expect(performance.now() - started).toBeLessThan(200);
    expect(a.logs.filter((l) => l.fields.event === 'shared_store_down')).toHaveLength(1);
  });

  it('purges a number on every replica and in the tier', async () => {
    const d = deployment();
    const [a, b] = [d.replica(), d.replica()];
    await a.service.lookup(NUMBER, CALLER);
    await settle();
    await b.service.lookup(NUMBER, CALLER);
    expect(b.service.lookupFresh(NUMBER)).toBeDefined();
    expect(await a.cache.purge(NUMBER)).toEqual({ purged: 1, shared: true });
    expect(b.service.lookupFresh(NUMBER)).toBeUndefined();
    expect(b.cache.entries).toBe(0);
    expect((await b.service.lookup(NUMBER, CALLER)).cacheStatus).toContain('fwd=miss');
    expect(b.calls).toEqual([NUMBER]);
  });

  it('purges everything on every replica, and keeps no answer of a load that a purge overtook', async () => {
    const d = deployment();
    const [a, b] = [d.replica(), d.replica()];
    await a.service.lookup(NUMBER, CALLER);
    await b.service.lookup('+442079460002', CALLER);
    await settle();
    b.setMode('defer');
    const inFlight = b.service.lookup('+442079460003', CALLER);
    await settle(5);
    expect(await a.cache.purgeAll()).toEqual({ purged: 1, shared: true });
    expect(b.cache.entries).toBe(0);
    b.pending[0]!.resolve({ body: listed('+442079460003'), contentType: 'application/json' });
    await inFlight;
    expect(b.service.lookupFresh('+442079460003')).toBeUndefined();
  });

  it('purges the one-number load in flight on another replica', async () => {
    const d = deployment();
    const [a, b] = [d.replica(), d.replica()];
    b.setMode('defer');
    const inFlight = b.service.lookup(NUMBER, CALLER);
    await settle(5);
    await a.cache.purge(NUMBER);
    b.pending[0]!.resolve({ body: listed(NUMBER), contentType: 'application/json' });
    await inFlight;
    expect(b.service.lookupFresh(NUMBER)).toBeUndefined();
  });

  it('reports a purge the tier did not take, after purging locally', async () => {
    const d = deployment();
    const a = d.replica();
    await a.service.lookup(NUMBER, CALLER);
    a.tier.mode = 'fail';
    expect(await a.cache.purge(NUMBER)).toEqual({ purged: 1, shared: false });
    expect(await a.cache.purgeAll()).toEqual({ purged: 0, shared: false });
  });

  it('ignores an entry the tier holds under another format version', async () => {
    const d = deployment();
    const a = d.replica();
    await d.shared.set(`k${NUMBER.replace(/\D/g, '').split('').reverse().join('')}`, {
      v: 2 as 1,
      body: listed(NUMBER, 'from another release'),
      contentType: 'application/json',
      storedAt: T0,
      ttlSeconds: 600,
      freshUntil: T0 + 600_000,
      revalidateUntil: T0 + 630_000,
      staleIfErrorUntil: T0 + 4_200_000,
      listed: true,
    });
    expect((await a.service.lookup(NUMBER, CALLER)).body).toBe(listed(NUMBER));
    expect(a.calls).toEqual([NUMBER]);
  });
});
