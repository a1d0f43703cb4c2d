// The counter-store port on Workers: each key is counted by its own Durable Object (exact across every isolate and
// data centre); a slow or failing object is StoreUnavailableError, so the caller falls back to its own count.
import type { CounterStore } from '../../shared-state/counter-store.js';
import { callDurableObject } from './durable-object-call.js';
import type { CounterObjectRpc } from './bindings.js';
import type { DurableObjectNamespace } from './bindings.js';

export function createWorkerCounterStore(options: {
  namespace: DurableObjectNamespace<CounterObjectRpc>;
  timeoutMs: number;
}): CounterStore {
  const { namespace, timeoutMs } = options;
  // A stub belongs to the request that made it, so each call makes its own.
  const object = (key: string): CounterObjectRpc => namespace.get(namespace.idFromName(key));
  return {
    kind: 'durable-object',
    consume: (key, points, limit, windowMs) =>
      callDurableObject('counter', timeoutMs, () => object(key).consume(points, limit, windowMs)),
    add: (key, points, windowMs) => callDurableObject('counter', timeoutMs, () => object(key).add(points, windowMs)),
    get: (key) => callDurableObject('counter', timeoutMs, () => object(key).get()),
  };
}
