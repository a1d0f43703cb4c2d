// The Durable Object behind the counter-store port on Workers: one named instance per counter key (an address's
// hash, the console total, a client's daily quota), so every isolate everywhere counts against one exact figure.
import { DurableObject } from 'cloudflare:workers';
import { systemClock } from '../../clock.js';
import type { CounterDecision, CounterState } from '../../shared-state/counter-store.js';
import type { DurableObjectState } from '../workers-bindings.js';
import { createCounterWindow, type CounterWindow } from './counter-window.js';

/** The RPC surface isolates call (through worker-counter-store.ts). */
export interface CounterObjectRpc {
  consume(points: number, limit: number, windowMs: number): Promise<CounterDecision>;
  add(points: number, windowMs: number): Promise<CounterState>;
  get(): Promise<CounterState | null>;
}

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
