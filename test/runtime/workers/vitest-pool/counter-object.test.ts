// The counter Durable Objects through the Workers counter store, in real workerd: exact counts across isolates
// under concurrency, points taken back, closed windows forgotten by the storage alarm.
import { reset, runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { beforeEach, describe, expect, it } from 'vitest';
import { createWorkerCounterStore } from '../../../../src/runtime/workers/workers-counter-store.js';
import type { CounterObjectRpc } from '../../../../src/runtime/workers/bindings.js';
import type { DurableObjectNamespace } from '../../../../src/runtime/workers/bindings.js';
import { StoreUnavailableError } from '../../../../src/shared-state/store-unavailable.js';
import { counterObjects } from './control.js';

const store = () => createWorkerCounterStore({ namespace: counterObjects, timeoutMs: 2_000 });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('counter Durable Objects', () => {
  beforeEach(async () => {
    await reset();
  });

  it('allows exactly the limit of 200 concurrent consumes split over two isolates', async () => {
    const [a, b] = [store(), store()];
    const decisions = await Promise.all(
      Array.from({ length: 200 }, (_, i) => (i % 2 === 0 ? a : b).consume('console:total', 1, 50, 60_000)),
    );
    expect(decisions.filter((d) => d.allowed)).toHaveLength(50);
    expect(new Set(decisions.map((d) => d.resetAt)).size).toBe(1);
    expect(await b.get('console:total')).toMatchObject({ count: 50 });
  });

  it('counts each key on its own and refuses without counting', async () => {
    const s = store();
    expect(await s.consume('addr:one', 3, 4, 60_000)).toMatchObject({ allowed: true, count: 3 });
    expect(await s.consume('addr:one', 2, 4, 60_000)).toMatchObject({ allowed: false, count: 3 });
    expect(await s.consume('addr:two', 4, 4, 60_000)).toMatchObject({ allowed: true, count: 4 });
    expect(await s.get('addr:never')).toBeNull();
  });

  it('takes points back with a negative add, never below zero', async () => {
    const s = store();
    await s.consume('quota:crm', 2, 10, 60_000);
    expect(await s.add('quota:crm', -1, 60_000)).toMatchObject({ count: 1 });
    expect(await s.add('quota:crm', -5, 60_000)).toMatchObject({ count: 0 });
  });

  it('starts a new window after the old one closed, and its alarm forgets the closed one', async () => {
    const s = store();
    // A window long enough that the second consume lands inside it on a loaded machine too.
    const first = await s.consume('short', 1, 1, 1_000);
    expect(first.allowed).toBe(true);
    expect((await s.consume('short', 1, 1, 1_000)).allowed).toBe(false);
    await sleep(Math.max(0, first.resetAt - Date.now()) + 50);
    expect(await s.get('short')).toBeNull();
    const stub = counterObjects.get(counterObjects.idFromName('short'));
    // The alarm set for the window's end has usually fired by now; run it if it has not.
    await runDurableObjectAlarm(stub);
    expect(await runInDurableObject(stub, (_instance, state) => state.storage.get('w'))).toBeUndefined();
    const next = await s.consume('short', 1, 1, 1_000);
    expect(next.allowed).toBe(true);
    expect(next.resetAt).toBeGreaterThan(first.resetAt);
  });

  it('is StoreUnavailableError within its deadline when the object does not answer', async () => {
    const silent = {
      idFromName: () => ({}),
      get: () => ({
        consume: () => new Promise(() => {}),
        add: () => new Promise(() => {}),
        get: () => new Promise(() => {}),
      }),
    } as unknown as DurableObjectNamespace<CounterObjectRpc>;
    const unreachable = createWorkerCounterStore({ namespace: silent, timeoutMs: 100 });
    await expect(unreachable.consume('k', 1, 1, 1_000)).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(unreachable.get('k')).rejects.toBeInstanceOf(StoreUnavailableError);
  });
});
