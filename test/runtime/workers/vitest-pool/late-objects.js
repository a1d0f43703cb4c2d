// A test-only Worker of Durable Objects that answer too late: the counter-store RPC surface (CounterObjectRpc) of
// an object that takes LATE_MS over every call, bound to the tests as LATE_COUNTERS (vitest.workers.config.ts), so
// a gateway built with COUNTERS = LATE_COUNTERS meets a real object, over real RPC, that misses its deadline.
import { DurableObject } from 'cloudflare:workers';

/** Far beyond any DURABLE_OBJECT_TIMEOUT_MS the tests set, short enough not to outlive a test by much. */
const LATE_MS = 3_000;
const late = (answer) => new Promise((resolve) => setTimeout(() => resolve(answer()), LATE_MS));

export class LateCounterObject extends DurableObject {
  // The answers of an empty counter: by the time they arrive, the caller has counted on its own.
  consume(points, limit, windowMs) {
    return late(() => ({
      allowed: points <= limit,
      count: points <= limit ? points : 0,
      resetAt: Date.now() + windowMs,
    }));
  }

  add(points, windowMs) {
    return late(() => ({ count: Math.max(0, points), resetAt: Date.now() + windowMs }));
  }

  get() {
    return late(() => null);
  }
}

export default {
  fetch: () => new Response('late objects only', { status: 404 }),
};
