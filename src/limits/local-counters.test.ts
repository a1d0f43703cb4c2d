// Counting on this process (the hit path) and reconciling with the shared store in the background: two
// "replicas" sharing one store learn each other's counts, and a decision never waits for the store.
import { describe, expect, it } from 'vitest';
import { createLocalCounters } from './local-counters.js';
import type { CounterStore } from '../shared-state/counter-store.js';
import { createMemoryCounterStore } from '../shared-state/memory/memory-counter-store.js';

function replica(store: CounterStore, clock: () => number) {
  const background: Promise<unknown>[] = [];
  const counters = createLocalCounters({
    store,
    clock,
    background: (work) => void background.push(work),
    intervalMs: 250,
    // Deferred reconciliations run when the test says so.
    delay: () => Promise.resolve(),
  });
  return { counters, settle: () => Promise.all(background.splice(0)) };
}

describe('local counters', () => {
  it('decides synchronously and sends the counts to the store in the background', async () => {
    const time = { now: 60_000 };
    const clock = () => time.now;
    const store = createMemoryCounterStore({ clock });
    let storeCalls = 0;
    const counting: CounterStore = { ...store, add: (...args) => (storeCalls++, store.add(...args)) };
    const { counters, settle } = replica(counting, clock);
    for (let i = 0; i < 5; i++) expect(counters.take('k', 10, 120_000).allowed).toBe(true);
    expect(storeCalls).toBe(0);
    await settle();
    expect((await store.get('k'))?.count).toBe(5);
    expect(counters.peek('k')).toBe(5);
  });

  it('two replicas reconcile through the store and together stop at the limit', async () => {
    const time = { now: 60_000 };
    const clock = () => time.now;
    const store = createMemoryCounterStore({ clock });
    const a = replica(store, clock);
    const b = replica(store, clock);
    for (let i = 0; i < 4; i++) a.counters.take('rate', 10, 120_000);
    await a.settle();
    for (let i = 0; i < 4; i++) b.counters.take('rate', 10, 120_000);
    await b.settle();
    // b learned a's 4 when it reconciled: 8 known, two left.
    expect(b.counters.peek('rate')).toBe(8);
    expect(b.counters.take('rate', 10, 120_000).allowed).toBe(true);
    expect(b.counters.take('rate', 10, 120_000).allowed).toBe(true);
    expect(b.counters.take('rate', 10, 120_000)).toMatchObject({ allowed: false, count: 10 });
    await b.settle();
    // a learns the deployment's count at its next reconciliation.
    a.counters.take('rate', 20, 120_000);
    await a.settle();
    expect(a.counters.peek('rate')).toBe(11);
    expect((await store.get('rate'))?.count).toBe(11);
  });

  it('starts a new window at its reset and forgets the old one', async () => {
    const time = { now: 0 };
    const { counters, settle } = replica(createMemoryCounterStore({ clock: () => time.now }), () => time.now);
    expect(counters.take('w', 1, 1_000).allowed).toBe(true);
    expect(counters.take('w', 1, 1_000).allowed).toBe(false);
    time.now = 1_000;
    expect(counters.peek('w')).toBe(0);
    expect(counters.take('w', 1, 2_000).allowed).toBe(true);
    await settle();
  });

  it('keeps a count the store failed to take and sends it again', async () => {
    const time = { now: 0 };
    const store = createMemoryCounterStore({ clock: () => time.now });
    let down = true;
    const flaky: CounterStore = {
      ...store,
      add: (...args) => (down ? Promise.reject(new Error('down')) : store.add(...args)),
    };
    const { counters, settle } = replica(flaky, () => time.now);
    counters.take('f', 10, 60_000);
    counters.take('f', 10, 60_000);
    await settle();
    expect(counters.peek('f')).toBe(2);
    down = false;
    await counters.sync();
    expect((await store.get('f'))?.count).toBe(2);
  });
});
