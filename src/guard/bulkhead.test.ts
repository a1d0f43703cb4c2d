// The bound on upstream calls in flight: a queue of bounded length, each waiter until its deadline, shared fairly
// between callers (a freed slot to the waiting caller with the fewest in flight; a full queue makes room for a
// caller under its share).
import { describe, expect, it } from 'vitest';
import { createBulkhead, type Release } from './bulkhead.js';

describe('bulkhead', () => {
  it('never lets more than the bound run, and hands freed slots to waiters in order', async () => {
    const bulkhead = createBulkhead({ max: 2, maxQueue: 10, clock: Date.now });
    const deadline = Date.now() + 5_000;
    const order: number[] = [];
    const held: Release[] = [];
    const waiting = [0, 1, 2, 3, 4].map(async (i) => {
      const slot = await bulkhead.acquire('crm', deadline);
      if (typeof slot !== 'function') throw new Error(String(slot));
      order.push(i);
      held.push(slot);
    });
    await new Promise((r) => setTimeout(r, 5));
    expect(bulkhead.inFlight).toBe(2);
    expect(bulkhead.queued).toBe(3);
    expect(order).toEqual([0, 1]);
    while (order.length < 5) {
      held.shift()!();
      await new Promise((r) => setTimeout(r, 1));
      expect(bulkhead.inFlight).toBeLessThanOrEqual(2);
    }
    await Promise.all(waiting);
    expect(order).toEqual([0, 1, 2, 3, 4]);
    held.forEach((r) => r());
    expect(bulkhead.inFlight).toBe(0);
  });

  it('refuses at once when the queue is full, and a waiter whose deadline passes', async () => {
    const bulkhead = createBulkhead({ max: 1, maxQueue: 1, clock: Date.now });
    const first = await bulkhead.acquire('crm', Date.now() + 1_000);
    expect(typeof first).toBe('function');
    const queued = bulkhead.acquire('crm', Date.now() + 30);
    expect(await bulkhead.acquire('crm', Date.now() + 1_000)).toBe('full');
    expect(await queued).toBe('timeout');
    expect(bulkhead.queued).toBe(0);
    (first as Release)();
    expect(bulkhead.inFlight).toBe(0);
  });

  it('gives a freed slot to the waiting caller with the fewest calls in flight, whatever the flood before it', async () => {
    const bulkhead = createBulkhead({ max: 4, maxQueue: 100, clock: Date.now });
    const deadline = Date.now() + 5_000;
    const granted: string[] = [];
    const held: Release[] = [];
    const ask = async (caller: string) => {
      const slot = await bulkhead.acquire(caller, deadline);
      if (typeof slot !== 'function') return slot;
      granted.push(caller);
      held.push(slot);
      return 'granted';
    };
    // The flooding caller takes every slot and queues 20 more; then two others ask once each.
    const flood = Array.from({ length: 24 }, () => ask('batch'));
    const others = [ask('pbx'), ask('console')];
    await new Promise((r) => setTimeout(r, 5));
    expect(granted).toEqual(['batch', 'batch', 'batch', 'batch']);
    // The first two slots freed go to the two single searches, in the order they came.
    held.shift()!();
    held.shift()!();
    await new Promise((r) => setTimeout(r, 1));
    expect(granted.slice(4)).toEqual(['pbx', 'console']);
    expect(await Promise.all(others)).toEqual(['granted', 'granted']);
    while (held.length > 0) {
      held.shift()!();
      await new Promise((r) => setTimeout(r, 1));
    }
    expect(await Promise.all(flood)).toEqual(Array.from({ length: 24 }, () => 'granted'));
    expect(bulkhead.inFlight).toBe(0);
  });

  it('makes room in a full queue for a caller under its share, refusing the newest waiter of the caller with the most', async () => {
    const bulkhead = createBulkhead({ max: 1, maxQueue: 4, clock: Date.now });
    const deadline = Date.now() + 5_000;
    const running = await bulkhead.acquire('batch', deadline);
    const flood = Array.from({ length: 4 }, () => bulkhead.acquire('batch', deadline));
    // The queue is full of one caller's waiters: a fifth of its own is refused ...
    expect(await bulkhead.acquire('batch', deadline)).toBe('full');
    // ... another caller takes the place of the flood's newest waiter.
    const single = bulkhead.acquire('pbx', deadline);
    expect(await flood[3]).toBe('full');
    expect(bulkhead.queued).toBe(4);
    (running as Release)();
    const slot = await single;
    expect(typeof slot).toBe('function');
    (slot as Release)();
    for (const waiter of flood.slice(0, 3)) {
      const r = await waiter;
      expect(typeof r).toBe('function');
      (r as Release)();
    }
    expect(bulkhead.inFlight).toBe(0);
    expect(bulkhead.queued).toBe(0);
  });
});
