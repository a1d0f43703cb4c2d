// What belongs to the request being served on Workers: its execution context (so work started for it outlives
// its response through `ctx.waitUntil`), the upstream time it spent (for its Analytics Engine data point), and its
// server span, whose context the calls to Durable Objects made for it carry.
import { AsyncLocalStorage } from 'node:async_hooks';
import { waitUntil } from 'cloudflare:workers';
import type { RunInBackground } from '../../shared-state/background.js';
import type { Telemetry } from '../../observability/telemetry.js';
import { remoteSpan, traceHeaders, type TraceCarrier } from '../../observability/tracing/http-spans.js';
import type { Span } from '../../observability/tracing/span.js';
import type { Tracing } from '../../observability/tracing/tracing.js';
import type { ExecutionContext } from './bindings.js';

interface RequestScope {
  readonly ctx: ExecutionContext;
  /** Milliseconds spent in upstream calls made for this request. */
  upstreamMs: number;
  /** The request's server span, once the app started it. */
  span: Span | undefined;
}

export interface RequestScopes {
  /** Runs `handle` with `ctx` as the current request's context. */
  run<T>(ctx: ExecutionContext, handle: () => T): T;
  current(): RequestScope | undefined;
  /** The Workers RunInBackground: the current request's `ctx.waitUntil`. */
  background: RunInBackground;
  /** `telemetry` that also adds each upstream call's duration to the current request's scope. */
  timing(telemetry: Telemetry): Telemetry;
  /** `tracing` whose tracer also keeps each server span it starts as its request scope's span. */
  traced(tracing: Tracing): Tracing;
  /** The trace context of the current request's server span, for a Durable Object call; empty outside a request. */
  trace(): TraceCarrier;
}

const NO_TRACE: TraceCarrier = {};

/** No trace context: what a Durable Object call made outside any request carries. */
export const noTrace = (): TraceCarrier => NO_TRACE;

/** The trace context a request's caller sent, when valid: what a call made before its server span carries. */
export function callerTrace(headers: Headers): TraceCarrier {
  const caller = remoteSpan({
    traceparent: headers.get('traceparent') ?? '',
    tracestate: headers.get('tracestate') ?? '',
  });
  return caller === undefined ? NO_TRACE : traceHeaders(caller);
}

export function createRequestScopes(): RequestScopes {
  // nodejs_compat's AsyncLocalStorage follows the request through every await, including work it starts.
  const storage = new AsyncLocalStorage<RequestScope>();

  return {
    run: (ctx, handle) => storage.run({ ctx, upstreamMs: 0, span: undefined }, handle),
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
    traced: (tracing) => ({
      ...tracing,
      tracer: {
        ...tracing.tracer,
        startServerSpan(name, traceparent, tracestate) {
          const span = tracing.tracer.startServerSpan(name, traceparent, tracestate);
          const scope = storage.getStore();
          if (scope) scope.span = span;
          return span;
        },
      },
    }),
    trace() {
      const span = storage.getStore()?.span;
      return span === undefined ? noTrace() : traceHeaders(span);
    },
  };
}
