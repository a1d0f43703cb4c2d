// The Durable Object behind the counter-store port on Workers: one named instance per counter key (an address's
// hash, the console total, a client's daily quota), so every isolate everywhere counts against one exact figure.
import { DurableObject } from 'cloudflare:workers';
import { systemClock } from '../../../base/clock.js';
import type { CounterDecision, CounterState } from '../../../shared-state/counter-store.js';
import type { CounterObjectRpc, DurableObjectState } from '../bindings.js';
import { createCounterWindow, type CounterWindow } from './counter-window.js';

// A class because the Workers runtime instantiates Durable Objects from an exported class.
export class CounterObject extends DurableObject implements CounterObjectRpc {
  private readonly window: CounterWindow;

  constructor(ctx: DurableObjectState, env: unknown) {
    super(ctx, env);
    this.window = createCounterWindow({ storage: ctx.storage, clock: systemClock });
  }

  consume(points: number, limit: number, windowMs: number): Promise<CounterDecision> {
    return this.window.consume(points, limit, windowMs);
  }

  add(points: number, windowMs: number): Promise<CounterState> {
    return this.window.add(points, windowMs);
  }

  get(): Promise<CounterState | null> {
    return this.window.get();
  }

  alarm(): Promise<void> {
    return this.window.alarm();
  }
}
