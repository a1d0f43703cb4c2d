// The tracer when the app's host registered an OpenTelemetry SDK (its zero-code instrumentation on Node, or its own
// provider with `@hono/otel` in front of the app): the gateway's spans are made through `@opentelemetry/api`, as
// children of the host's active span, and go out through the host's processors and exporter.
import {
  context,
  createContextKey,
  propagation,
  ProxyTracerProvider,
  SpanKind as ApiSpanKind,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Context,
  type Span as ApiSpan,
  type SpanContext as ApiSpanContext,
  type Tracer as ApiTracer,
  type TracerProvider,
} from '@opentelemetry/api';
import type { AttributeValue, Span, SpanKind, SpanLink, SpanStatus } from './span.js';
import type { SpanContext } from './trace-context.js';
import type { Tracer } from './tracer.js';

/** The instrumentation scope the host's exporter names the gateway's spans by. */
const SCOPE = 'callerid-gateway';

/** What an API without a registered SDK delegates to: compared with, never used. */
const NO_PROVIDER = new ProxyTracerProvider().getDelegate();

/**
 * The provider a host registered with `@opentelemetry/api` (`trace.setGlobalTracerProvider`, which NodeSDK and
 * `NodeTracerProvider.register()` call), or undefined when none is: then the gateway's own lean tracer serves.
 */
export function hostTracerProvider(): TracerProvider | undefined {
  const registered = trace.getTracerProvider();
  const delegate = registered instanceof ProxyTracerProvider ? registered.getDelegate() : registered;
  return delegate === NO_PROVIDER ? undefined : registered;
}

/**
 * The SDK's own key for "make no span here" (`suppressTracing` of `@opentelemetry/core`; a context key is
 * `Symbol.for` of its description, so this is the same key): the host's instrumentation of a call the gateway traces
 * itself then adds no span of its own (one that would hold the telephone number in `url.full`) and no second
 * `traceparent`.
 */
const SUPPRESS_TRACING = createContextKey('OpenTelemetry SDK Context Key SUPPRESS_TRACING');

/** Runs `call` with the host's instrumentation told to leave it alone. */
export const untracedByHost = <T>(call: () => T): T =>
  context.with(context.active().setValue(SUPPRESS_TRACING, true), call);

const KINDS: Record<SpanKind, ApiSpanKind> = {
  internal: ApiSpanKind.INTERNAL,
  server: ApiSpanKind.SERVER,
  client: ApiSpanKind.CLIENT,
};

const RANDOM_FLAG = 2;

const contextOf = (api: ApiSpanContext): SpanContext => ({
  traceId: api.traceId,
  spanId: api.spanId,
  sampled: (api.traceFlags & TraceFlags.SAMPLED) === TraceFlags.SAMPLED,
  random: (api.traceFlags & RANDOM_FLAG) === RANDOM_FLAG,
  traceState: api.traceState?.serialize() || undefined,
});

const apiContextOf = (own: SpanContext, isRemote: boolean): ApiSpanContext => ({
  traceId: own.traceId,
  spanId: own.spanId,
  traceFlags: (own.sampled ? TraceFlags.SAMPLED : TraceFlags.NONE) | (own.random ? RANDOM_FLAG : 0),
  isRemote,
});

/** A span of the host's SDK as the gateway's code holds one; its header fields written by the host's propagator. */
class HostSpan implements Span {
  readonly context: SpanContext;
  readonly recording: boolean;

  constructor(
    readonly span: ApiSpan,
    /** The API context with this span active: its children's parent. */
    readonly active: Context,
  ) {
    this.context = contextOf(span.spanContext());
    this.recording = span.isRecording();
  }

  get carried(): Readonly<Record<string, string>> {
    const carrier: Record<string, string> = {};
    propagation.inject(this.active, carrier);
    return carrier;
  }

  setAttribute(key: string, value: AttributeValue): void {
    this.span.setAttribute(key, value);
  }

  addLink(link: SpanLink): void {
    this.span.addLink({ context: apiContextOf(link.context, true), attributes: link.attributes });
  }

  setStatus(status: SpanStatus): void {
    if (status.code === 'error') this.span.setStatus({ code: SpanStatusCode.ERROR, message: status.message });
    else if (status.code === 'ok') this.span.setStatus({ code: SpanStatusCode.OK });
  }

  end(): void {
    this.span.end();
  }
}

/** The API context a span of the gateway's starts under: its own parent's, a remote caller's, else the active one. */
function parentContext(parent: Span | undefined): Context {
  if (parent instanceof HostSpan) return parent.active;
  const active = context.active();
  if (parent?.context === undefined) return active;
  return trace.setSpanContext(active, apiContextOf(parent.context, parent.remote === true));
}

function started(
  tracer: ApiTracer,
  name: string,
  kind: SpanKind,
  parent: Context,
  attributes?: Record<string, AttributeValue>,
): Span {
  const span = tracer.startSpan(name, { kind: KINDS[kind], attributes }, parent);
  return new HostSpan(span, trace.setSpan(parent, span));
}

/**
 * The gateway's tracer over the host's `provider`. A server span is the child of the host's active span (its HTTP
 * instrumentation's, `@hono/otel`'s); with none active, of the caller's context as the host's propagator reads it.
 * The host's sampler decides.
 */
export function createHostTracer(provider: TracerProvider): Tracer {
  const tracer = provider.getTracer(SCOPE);
  return {
    enabled: true,
    startServerSpan(name, traceparent, tracestate) {
      const active = context.active();
      const parent =
        trace.getSpan(active) === undefined
          ? propagation.extract(active, { traceparent: traceparent ?? undefined, tracestate: tracestate ?? undefined })
          : active;
      return started(tracer, name, 'server', parent);
    },
    startSpan: (name, parent, options) =>
      started(tracer, name, options?.kind ?? 'internal', parentContext(parent), options?.attributes),
  };
}
