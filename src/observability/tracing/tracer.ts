// The tracer one app creates (no module state): starts the server span of a request from the caller's header
// fields, and spans under it. Off, it records nothing and mints no id: it only passes the caller's context on.
import { shouldSample, type SamplerConfig } from './sampler.js';
import { PropagatingSpan, RecordingSpan, type Attributes, type Span, type SpanKind, type SpanSink } from './span.js';
import { incomingContext, type SpanContext } from './trace-context.js';
import { newSpanId, newTraceId } from './trace-ids.js';

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
}

export interface Tracer {
  readonly enabled: boolean;
  /**
   * A request's server span: the caller's trace continued when its `traceparent` is valid (its `tracestate` kept),
   * a new trace otherwise. Header values as the request carries them (repeated fields joined with ", ").
   */
  startServerSpan(
    name: string,
    traceparent: string | null | undefined,
    tracestate: string | null | undefined,
    options?: SpanOptions,
  ): Span;
  /** A span under `parent`, recorded when the parent is; with no parent, the first span of a new trace. */
  startSpan(name: string, parent: Span | undefined, options?: SpanOptions): Span;
}

const NO_CONTEXT = new PropagatingSpan(undefined);

/** Tracing off: no span recorded, no id drawn; a caller's valid context passes through to the upstream as it came. */
export const disabledTracer: Tracer = {
  enabled: false,
  startServerSpan(_name, traceparent, tracestate) {
    if (traceparent === null || traceparent === undefined) return NO_CONTEXT;
    const context = incomingContext(traceparent, tracestate);
    return context === undefined ? NO_CONTEXT : new PropagatingSpan(context);
  },
  startSpan: (_name, parent) => parent ?? NO_CONTEXT,
};

function started(
  sink: SpanSink,
  name: string,
  context: SpanContext,
  parentSpanId: string | undefined,
  options?: SpanOptions,
) {
  const span = new RecordingSpan(sink, name, options?.kind ?? 'internal', context, parentSpanId);
  for (const [key, value] of Object.entries(options?.attributes ?? {})) span.setAttribute(key, value);
  return span;
}

/** A span of its own under a caller's or a parent's context; the sampler decides only without a local parent. */
function firstSpan(
  sink: SpanSink,
  sampler: SamplerConfig,
  name: string,
  parent: SpanContext | undefined,
  options?: SpanOptions,
): Span {
  const traceId = parent?.traceId ?? newTraceId();
  const sampled = shouldSample(sampler, traceId, parent?.sampled);
  const context: SpanContext = { traceId, spanId: newSpanId(), sampled, traceState: parent?.traceState };
  return sampled ? started(sink, name, context, parent?.spanId, options) : new PropagatingSpan(context);
}

/** The tracer of an app with tracing on: `sink` receives every recorded span as it ends. */
export function createTracer(sampler: SamplerConfig, sink: SpanSink): Tracer {
  return {
    enabled: true,
    startServerSpan: (name, traceparent, tracestate, options) =>
      firstSpan(sink, sampler, name, incomingContext(traceparent, tracestate), { kind: 'server', ...options }),
    startSpan(name, parent, options) {
      if (parent === undefined || parent.context === undefined)
        return firstSpan(sink, sampler, name, undefined, options);
      if (!parent.recording) return parent;
      const context: SpanContext = { ...parent.context, spanId: newSpanId() };
      return started(sink, name, context, parent.context.spanId, options);
    },
  };
}
