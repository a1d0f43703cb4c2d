// How OTLP spells a span's kind, status and times (opentelemetry/proto/trace/v1/trace.proto), and the queue of ended
// spans each encoding keeps, shared by the JSON and the protobuf encodings.
import type { FinishedSpan, SpanKind, SpanStatus } from './span.js';

/** `Span.SpanKind`. */
export const OTLP_SPAN_KIND: Record<SpanKind, number> = { internal: 1, server: 2, client: 3 };

/** `Status.StatusCode`. */
export const OTLP_STATUS_CODE: Record<SpanStatus['code'], number> = { unset: 0, ok: 1, error: 2 };

/**
 * Milliseconds since the epoch as whole microseconds: OTLP's `fixed64` nanoseconds are these times a thousand (below
 * 2^53 until the year 2255, so exact as a number).
 */
export const unixMicros = (ms: number): number => Math.round(ms * 1000);

/** What an export request names as its source: the service (OTEL_SERVICE_NAME) and the instrumentation scope. */
export interface ExportSource {
  readonly serviceName: string;
  readonly scopeName: string;
}

/** Ended spans waiting for their export, kept in the export's encoding. */
export interface SpanQueue {
  /** Spans queued. */
  readonly length: number;
  push(span: FinishedSpan): void;
  /**
   * The first `max` spans (all, when fewer) as one export request's body, and out of the queue. A binary body is a
   * view of the queue's own buffer: it holds until the next `take`.
   */
  take(max: number): Uint8Array<ArrayBuffer> | string;
}
