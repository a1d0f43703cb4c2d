// A batch of spans as an OTLP/HTTP `http/json` body: the protobuf JSON mapping with OTLP's exceptions (ids as hex,
// enums as integers; OpenTelemetry specification, "OTLP/HTTP", "JSON Protobuf Encoding").
import { OTLP_SPAN_KIND, OTLP_STATUS_CODE, unixNanos, type ExportSource } from './otlp-values.js';
import type { Attributes, AttributeValue, FinishedSpan, SpanLink } from './span.js';

// int64 values are strings in the protobuf JSON mapping.
const anyValue = (value: AttributeValue) =>
  typeof value === 'string'
    ? { stringValue: value }
    : typeof value === 'boolean'
      ? { boolValue: value }
      : Number.isInteger(value)
        ? { intValue: String(value) }
        : { doubleValue: value };

const keyValues = (attributes: Attributes) =>
  Object.entries(attributes).map(([key, value]) => ({ key, value: anyValue(value) }));

const link = (l: SpanLink) => ({
  traceId: l.context.traceId,
  spanId: l.context.spanId,
  ...(l.context.traceState !== undefined && { traceState: l.context.traceState }),
  attributes: keyValues(l.attributes ?? {}),
});

const span = (s: FinishedSpan) => ({
  traceId: s.context.traceId,
  spanId: s.context.spanId,
  ...(s.context.traceState !== undefined && { traceState: s.context.traceState }),
  ...(s.parentSpanId !== undefined && { parentSpanId: s.parentSpanId }),
  name: s.name,
  kind: OTLP_SPAN_KIND[s.kind],
  startTimeUnixNano: String(unixNanos(s.startMs)),
  endTimeUnixNano: String(unixNanos(s.endMs)),
  attributes: keyValues(s.attributes),
  links: s.links.map(link),
  status: {
    code: OTLP_STATUS_CODE[s.status.code],
    ...(s.status.code === 'error' && s.status.message && { message: s.status.message }),
  },
});

/** The request body: one ResourceSpans (the service) with one ScopeSpans holding every span. */
export function encodeOtlpJson(spans: readonly FinishedSpan[], source: ExportSource): string {
  return JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: keyValues({ 'service.name': source.serviceName }) },
        scopeSpans: [{ scope: { name: source.scopeName }, spans: spans.map(span) }],
      },
    ],
  });
}
