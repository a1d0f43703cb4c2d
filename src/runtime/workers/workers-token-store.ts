// The token-store port on Workers: every isolate asks the one upstream-token Durable Object of its client id,
// which logs in on its own side (it holds the credentials), so `obtain` is never called here. Each call carries the
// trace context of the request it is made for; a refresh, that of the span the login's goes under.
import { traceHeaders, type TraceCarrier } from '../../observability/tracing/http-spans.js';
import type { TokenStore } from '../../shared-state/token-store.js';
import { RefreshFailure } from '../../upstream/token-endpoint.js';
import { callDurableObject } from './durable-object-call.js';
import { noTrace } from './request-scope.js';
import type { UpstreamTokenObjectRpc } from './bindings.js';
import type { DurableObjectNamespace } from './bindings.js';

export interface WorkerTokenStoreOptions {
  namespace: DurableObjectNamespace<UpstreamTokenObjectRpc>;
  clientId: string;
  /** Deadline of a read or a drop. */
  timeoutMs: number;
  /** A refresh may include the object's own login, which has the upstream's deadline on top. */
  upstreamTimeoutMs: number;
  /** The current request's trace context (request-scope.ts); default none. */
  trace?: () => TraceCarrier;
}

export function createWorkerTokenStore(options: WorkerTokenStoreOptions): TokenStore {
  const { namespace, clientId, timeoutMs, trace = noTrace } = options;
  // The id may be kept; a stub belongs to the request that made it, so each call makes its own.
  const id = namespace.idFromName(clientId);
  const object = (): UpstreamTokenObjectRpc => namespace.get(id);

  return {
    kind: 'durable-object',
    read: () => callDurableObject('token', timeoutMs, () => object().read(clientId, trace())),
    async refresh(_obtain, wanted) {
      const { newerThan, validForMs, span } = wanted;
      const result = await callDurableObject('token', timeoutMs + options.upstreamTimeoutMs, () =>
        object().refresh(clientId, { newerThan, validForMs }, span === undefined ? trace() : traceHeaders(span)),
      );
      if (!result.ok) throw new RefreshFailure(result.outcome, result.message, result.status ?? undefined);
      return result.token;
    },
    // Only the token's fields cross the RPC boundary.
    offer: ({ token, expiresAt, obtainedAt }) =>
      callDurableObject('token', timeoutMs, () => object().offer(clientId, { token, expiresAt, obtainedAt }, trace())),
    dropIfCurrent: (generation) =>
      callDurableObject('token', timeoutMs, () => object().dropIfCurrent(clientId, generation, trace())),
  };
}
