// An app's tracing, built once by the runtime's composition root: the host's OpenTelemetry SDK when one is registered
// with `@opentelemetry/api`, else the gateway's own lean tracer from the configuration; the tracer the request path
// uses, and what the runtime and the metrics need of the exporter behind it (its drop count, a last flush).
import type { TracerProvider } from '@opentelemetry/api';
import type { TracingConfig } from '../../config/config.js';
import { otlpSender, type ExportHttp } from './otlp-http.js';
import { callerSampleBudget } from './sampler.js';
import { DROP_CAUSES } from './export-retry.js';
import { SpanBatcher, type BatcherRuntime, type DroppedSpans } from './span-batcher.js';
import { createHostTracer, hostTracerProvider, untracedByHost } from './host-tracer.js';
import { createTracer, disabledTracer, type Tracer } from './tracer.js';

export interface Tracing {
  readonly tracer: Tracer;
  /** Spans lost so far by cause (queue full, export failed): the values of the dropped-spans counter. */
  dropped(): DroppedSpans;
  /** Traces callers' contexts asked to record past TRACING_CALLER_SAMPLED_PER_SECOND so far. */
  callerSampledCapped(): number;
  /** Sends what is queued; resolves when the exporter is idle (before a process exits). */
  flush(): Promise<void>;
  /**
   * Under a host's SDK only: runs a call the gateway traces itself (an upstream request) with the host's
   * instrumentation of it suppressed, so the call has one span, the gateway's, and one `traceparent`.
   */
  readonly untraced?: <T>(call: () => T) => T;
}

export interface TracingRuntime extends BatcherRuntime {
  /**
   * The HTTP client export requests go out through, built once for the exporter: the runtime's client of the
   * upstream calls (Node's undici Agent, Workers' fetch), a pool of its own, unless a test gives another.
   */
  readonly http: ExportHttp;
}

const NONE_DROPPED: DroppedSpans = Object.fromEntries(DROP_CAUSES.map((c) => [c, 0])) as DroppedSpans;

/** Tracing off: what an app gets when its runtime gives none. */
export const tracingOff: Tracing = {
  tracer: disabledTracer,
  dropped: () => NONE_DROPPED,
  callerSampledCapped: () => 0,
  flush: () => Promise.resolve(),
};

/** Spans go to the host's SDK: its sampler, processors and exporter; flushing it flushes the host's provider. */
function hostTracing(provider: TracerProvider): Tracing {
  const flushable = provider as TracerProvider & { getDelegate?(): { forceFlush?(): Promise<void> } };
  return {
    tracer: createHostTracer(provider),
    dropped: () => NONE_DROPPED,
    callerSampledCapped: () => 0,
    flush: async () => flushable.getDelegate?.().forceFlush?.(),
    untraced: untracedByHost,
  };
}

/**
 * A host's registered SDK when there is one (whatever `config` says: the host reads the same OTEL_* variables);
 * else `config`, {@link Config}'s `tracing`: null means off, and then nothing is recorded or sent.
 */
export function createTracing(config: TracingConfig | null, runtime: TracingRuntime): Tracing {
  const host = hostTracerProvider();
  if (host !== undefined) return hostTracing(host);
  if (config === null) return tracingOff;
  const batcher = new SpanBatcher(otlpSender(config, runtime.http, runtime), config.batch, runtime);
  const callers = callerSampleBudget(config.sampler.callerPerSecond);
  return {
    tracer: createTracer(config.sampler, batcher, callers),
    dropped: () => batcher.dropped(),
    callerSampledCapped: () => callers.capped,
    flush: () => batcher.flush(),
  };
}
