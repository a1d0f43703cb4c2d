// A shared counter store's store-error modes: memory, open and closed while it is down, one health transition
// per outage, and the shared store used again by itself once it answers.
import { describe, expect, it } from 'vitest';
import { noopTelemetry } from '../observability/telemetry.js';
import type { CounterStore } from './counter-store.js';
import { createFallbackCounterStore, type CounterStoreErrorMode } from './fallback-counter-store.js';
import { createMemoryCounterStore } from './memory/memory-counter-store.js';
import { createStoreHealth } from './store-health.js';
import { StoreUnavailableError } from './store-unavailable.js';
import { captureLogger } from '../../test/helpers/recorders.js';

function setup(mode: CounterStoreErrorMode) {
  const time = { now: 0 };
  const clock = () => time.now;
  const real = createMemoryCounterStore({ clock });
  const state = { down: false, calls: 0 };
  const guarded =
    <A extends unknown[], R>(f: (...a: A) => Promise<R>) =>
    (...a: A): Promise<R> => {
      state.calls++;
      return state.down
        ? Promise.reject(new StoreUnavailableError('counter', 'redis did not answer within 250 ms'))
        : f(...a);
    };
  const shared: CounterStore = {
    kind: 'redis',
    consume: guarded(real.consume),
    add: guarded(real.add),
    get: guarded(real.get),
  };
  const logger = captureLogger();
  const metric: boolean[] = [];
  const health = createStoreHealth({
    store: 'counter',
    kind: 'redis',
    logger,
    telemetry: { ...noopTelemetry, sharedStore: (_s, up) => void metric.push(up) },
  });
  const errors: string[] = [];
  const store = createFallbackCounterStore({
    shared,
    mode,
    health,
    clock,
    retryAfterMs: 1_000,
    onStoreError: (e) => void errors.push(e.message),
  });
  return { time, real, state, store, logger, metric, errors };
}

describe('fallback counter store', () => {
  it('memory: counts on this process while the shared store is down, then counts in the shared one again', async () => {
    const { time, real, state, store, logger, metric } = setup('memory');
    expect((await store.consume('k', 1, 3, 60_000)).allowed).toBe(true);
    state.down = true;
    const during = [];
    for (let i = 0; i < 4; i++) during.push((await store.consume('k', 1, 3, 60_000)).allowed);
    expect(during).toEqual([true, true, true, false]);
    // One log line and one metric move for the whole outage, not one per operation.
    expect(logger.lines.filter((l) => l.fields.event === 'shared_store_down')).toHaveLength(1);
    // Down: the shared store is asked once, then skipped until the retry interval passed.
    expect(state.calls).toBe(2);
    state.down = false;
    time.now += 1_000;
    expect(await store.consume('k', 1, 3, 60_000)).toMatchObject({ allowed: true, count: 2 });
    expect((await real.get('k'))?.count).toBe(2);
    expect(logger.lines.filter((l) => l.fields.event === 'shared_store_up')).toHaveLength(1);
    expect(metric).toEqual([true, false, true]);
  });

  it('open: counts nothing while down and lets everything through', async () => {
    const { state, store, errors } = setup('open');
    state.down = true;
    for (let i = 0; i < 5; i++)
      expect(await store.consume('k', 1, 1, 60_000)).toMatchObject({ allowed: true, count: 0 });
    expect(await store.add('k', 1, 60_000)).toMatchObject({ count: 0 });
    expect(await store.get('k')).toBeNull();
    expect(errors.length).toBeGreaterThan(0);
  });

  it('closed: rejects with StoreUnavailableError while down', async () => {
    const { state, store } = setup('closed');
    state.down = true;
    await expect(store.consume('k', 1, 1, 60_000)).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(store.get('k')).rejects.toBeInstanceOf(StoreUnavailableError);
  });
});
