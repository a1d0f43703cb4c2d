// The tracer one app creates (no module state): starts the server span of a request from the caller's header
// fields, and spans under it. Off, it records nothing and mints no id: it only passes the caller's context on.
import {
  callerSampleBudget,
  recordsEveryTrace,
  samplerOf,
  type CallerSampleBudget,
  type SampleDecision,
  type SamplerConfig,
} from './sampler.js';
import { PropagatingSpan, RecordingSpan, type Attributes, type Span, type SpanKind, type SpanSink } from './span.js';
import { incomingContext, parseTraceparent, parseTracestate, type SpanContext } from './trace-context.js';
import { RandomIds } from './trace-ids.js';

interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
}

export interface Tracer {
  readonly enabled: boolean;
  /**
   * A request's server span: the caller's trace continued when its `traceparent` is valid (its `tracestate` kept),
   * a new trace otherwise. Header values as the request carries them (repeated fields joined with ", ").
   */
  startServerSpan(name: string, traceparent: string | null | undefined, tracestate: string | null | undefined): Span;
  /** A span under `parent`, recorded when the parent is; with no parent, the first span of a new trace. */
  startSpan(name: string, parent: Span | undefined, options?: SpanOptions): Span;
}

const NO_CONTEXT = new PropagatingSpan(undefined);

// The most characters of a caller's field sent on as it came: the `tracestate` length every vendor keeps (section
// 3.3.1.5), and room for a later version's longer `traceparent`.
const MAX_CARRIED = 512;

/** A caller's `tracestate` as tracing off sends it on: as it came within MAX_CARRIED, past it cut as section 3.3.1.5 says. */
function carriedState(tracestate: string | null | undefined): string | undefined {
  if (tracestate === null || tracestate === undefined || tracestate.length <= MAX_CARRIED)
    return tracestate ?? undefined;
  return parseTracestate(tracestate);
}

/**
 * Tracing off: no span recorded, no id drawn. A caller's valid `traceparent` goes on to the upstream byte for byte,
 * its `tracestate` with it as it came (see carriedState), whatever its flags or members: the gateway is no
 * participant in the trace. An invalid or oversized `traceparent` goes nowhere, and its `tracestate` neither.
 */
export const disabledTracer: Tracer = {
  enabled: false,
  startServerSpan(_name, traceparent, tracestate) {
    if (traceparent === null || traceparent === undefined || traceparent.length > MAX_CARRIED) return NO_CONTEXT;
    const parent = parseTraceparent(traceparent);
    if (parent === undefined) return NO_CONTEXT;
    const { traceId, spanId, sampled, random } = parent;
    const state = carriedState(tracestate);
    const carried: Readonly<Record<string, string>> =
      state === undefined ? { traceparent } : { traceparent, tracestate: state };
    return new PropagatingSpan({ traceId, spanId, sampled, random, traceState: undefined }, false, carried);
  },
  startSpan: (_name, parent) => parent ?? NO_CONTEXT,
};

/** What every span of one tracer is made with. */
interface TracerParts {
  readonly ids: RandomIds;
  readonly sink: SpanSink;
  readonly sample: SampleDecision;
  /** The sampler records every new trace whatever its id: a caller's context adds nothing to record. */
  readonly recordsAll: boolean;
  readonly callers: CallerSampleBudget;
}

function started(
  parts: TracerParts,
  name: string,
  context: SpanContext,
  parentSpanId: string | undefined,
  options: SpanOptions | undefined,
): Span {
  const span = new RecordingSpan(parts.sink, name, options?.kind ?? 'internal', context, parentSpanId);
  if (options?.attributes !== undefined)
    for (const [key, value] of Object.entries(options.attributes)) span.setAttribute(key, value);
  return span;
}

/**
 * Whether a trace is recorded. A caller's context (its sampled flag, or a trace id it chose to fall in the ratio)
 * records only within the callers' budget, unless the sampler records every trace anyway; past the budget the ratio
 * decides as for a trace of the gateway's own, on an id the gateway draws.
 */
function decide(parts: TracerParts, traceId: string, parent: SpanContext | undefined): boolean {
  const sampled = parts.sample(traceId, parent?.sampled);
  if (!sampled || parent === undefined || parts.recordsAll) return sampled;
  if (parts.callers.take(parts.sink.now())) return true;
  return parts.sample(parts.ids.traceId(), undefined);
}

/** A span of its own under a caller's context or none; the sampler decides only without a local parent. */
function firstSpan(parts: TracerParts, name: string, parent: SpanContext | undefined, options?: SpanOptions): Span {
  const traceId = parent?.traceId ?? parts.ids.traceId();
  const sampled = decide(parts, traceId, parent);
  // Contexts are built field by field on this path: an object spread cost more than the rest of a span.
  // A trace the gateway starts has a random id: its random flag is set (Trace Context Level 2).
  const random = parent?.random ?? true;
  const context: SpanContext = { traceId, spanId: parts.ids.spanId(), sampled, random, traceState: parent?.traceState };
  return sampled ? started(parts, name, context, parent?.spanId, options) : new PropagatingSpan(context);
}

const SERVER: SpanOptions = { kind: 'server' };

/**
 * The tracer of an app with tracing on: `sink` receives every recorded span as it ends; `callers` bounds the traces
 * callers' contexts start recording.
 */
export function createTracer(
  sampler: SamplerConfig,
  sink: SpanSink,
  callers: CallerSampleBudget = callerSampleBudget(sampler.callerPerSecond),
): Tracer {
  const parts: TracerParts = {
    ids: new RandomIds(),
    sink,
    sample: samplerOf(sampler),
    recordsAll: recordsEveryTrace(sampler),
    callers,
  };
  return {
    enabled: true,
    startServerSpan: (name, traceparent, tracestate) =>
      firstSpan(parts, name, incomingContext(traceparent, tracestate), SERVER),
    startSpan(name, parent, options) {
      const context = parent?.context;
      if (parent === undefined || context === undefined) return firstSpan(parts, name, undefined, options);
      if (parent.remote === true) return firstSpan(parts, name, context, options);
      if (!parent.recording) return parent;
      const { traceId, sampled, random, traceState } = context;
      return started(
        parts,
        name,
        { traceId, spanId: parts.ids.spanId(), sampled, random, traceState },
        context.spanId,
        options,
      );
    },
  };
}
