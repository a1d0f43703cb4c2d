// The bound on upstream calls in flight: a FIFO queue of bounded length, each waiter until its deadline.
import { describe, expect, it } from 'vitest';
import { createBulkhead, type Release } from '../../src/guard/bulkhead.js';

describe('bulkhead', () => {
  it('never lets more than the bound run, and hands freed slots to waiters in order', async () => {
    const bulkhead = createBulkhead({ max: 2, maxQueue: 10, clock: Date.now });
    const deadline = Date.now() + 5_000;
    const order: number[] = [];
    const held: Release[] = [];
    const waiting = [0, 1, 2, 3, 4].map(async (i) => {
      const slot = await bulkhead.acquire(deadline);
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
    const first = await bulkhead.acquire(Date.now() + 1_000);
    expect(typeof first).toBe('function');
    const queued = bulkhead.acquire(Date.now() + 30);
    expect(await bulkhead.acquire(Date.now() + 1_000)).toBe('full');
    expect(await queued).toBe('timeout');
    expect(bulkhead.queued).toBe(0);
    (first as Release)();
    expect(bulkhead.inFlight).toBe(0);
  });
});
