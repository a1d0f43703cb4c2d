// The counter-store port on Workers: each key is counted by its own Durable Object (exact across every isolate and
// data centre); a slow or failing object is StoreUnavailableError, so the caller falls back to its own count. Each
// call carries the trace context of the request it is made for.
import type { TraceCarrier } from '../../observability/tracing/http-spans.js';
import type { CounterStore } from '../../shared-state/counter-store.js';
import { callDurableObject } from './durable-object-call.js';
import { noTrace } from './request-scope.js';
import type { CounterObjectRpc } from './bindings.js';
import type { DurableObjectNamespace } from './bindings.js';

export function createWorkerCounterStore(options: {
  namespace: DurableObjectNamespace<CounterObjectRpc>;
  timeoutMs: number;
  /** The current request's trace context (request-scope.ts); default none. */
  trace?: () => TraceCarrier;
}): CounterStore {
  const { namespace, timeoutMs, trace = noTrace } = options;
  // A stub belongs to the request that made it, so each call makes its own.
  const object = (key: string): CounterObjectRpc => namespace.get(namespace.idFromName(key));
  return {
    kind: 'durable-object',
    consume: (key, points, limit, windowMs) =>
      callDurableObject('counter', timeoutMs, () => object(key).consume(points, limit, windowMs, trace())),
    add: (key, points, windowMs) =>
      callDurableObject('counter', timeoutMs, () => object(key).add(points, windowMs, trace())),
    get: (key) => callDurableObject('counter', timeoutMs, () => object(key).get(trace())),
  };
}
