// What belongs to the request being served on Workers: its execution context (so work started for it outlives
// its response through `ctx.waitUntil`) and the upstream time it spent (for its Analytics Engine data point).
import { AsyncLocalStorage } from 'node:async_hooks';
import { waitUntil } from 'cloudflare:workers';
import type { RunInBackground } from '../../shared-state/background.js';
import type { Telemetry } from '../../observability/telemetry.js';
import type { ExecutionContext } from './bindings.js';

interface RequestScope {
  readonly ctx: ExecutionContext;
  /** Milliseconds spent in upstream calls made for this request. */
  upstreamMs: number;
}

export interface RequestScopes {
  /** Runs `handle` with `ctx` as the current request's context. */
  run<T>(ctx: ExecutionContext, handle: () => T): T;
  current(): RequestScope | undefined;
  /** The Workers RunInBackground: the current request's `ctx.waitUntil`. */
  background: RunInBackground;
  /** `telemetry` that also adds each upstream call's duration to the current request's scope. */
  timing(telemetry: Telemetry): Telemetry;
}

export function createRequestScopes(): RequestScopes {
  // nodejs_compat's AsyncLocalStorage follows the request through every await, including work it starts.
  const storage = new AsyncLocalStorage<RequestScope>();

  return {
    run: (ctx, handle) => storage.run({ ctx, upstreamMs: 0 }, handle),
    current: () => storage.getStore(),
    background(work) {
      // Its failure is recorded where it happened; an unhandled rejection would only add noise.
      const settled = work.then(
        () => undefined,
        () => undefined,
      );
      const scope = storage.getStore();
      // Outside any scope (work started by a Durable Object call or a timer): the runtime's own current request.
      if (scope) scope.ctx.waitUntil(settled);
      else waitUntil(settled);
    },
    timing(telemetry) {
      return {
        ...telemetry,
        upstreamCall(endpoint, outcome, seconds) {
          telemetry.upstreamCall(endpoint, outcome, seconds);
          const scope = storage.getStore();
          if (scope) scope.upstreamMs += seconds * 1000;
        },
      };
    },
  };
}
