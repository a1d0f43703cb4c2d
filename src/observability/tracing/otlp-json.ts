// A batch of spans as an OTLP/HTTP `http/json` body: the protobuf JSON mapping with OTLP's exceptions (ids as hex,
// enums as integers; OpenTelemetry specification, "OTLP/HTTP", "JSON Protobuf Encoding").
import { OTLP_SPAN_KIND, OTLP_STATUS_CODE, unixMicros, type ExportSource, type SpanQueue } from './otlp-values.js';
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
  startTimeUnixNano: `${unixMicros(s.startMs)}000`,
  endTimeUnixNano: `${unixMicros(s.endMs)}000`,
  attributes: keyValues(s.attributes),
  links: s.links.map(link),
  status: {
    code: OTLP_STATUS_CODE[s.status.code],
    ...(s.status.code === 'error' && s.status.message && { message: s.status.message }),
  },
});

/** Spans as an `http/json` body: kept as they ended, written out a batch at a time. */
export class JsonSpanQueue implements SpanQueue {
  private readonly spans: FinishedSpan[] = [];

  constructor(private readonly source: ExportSource) {}

  get length(): number {
    return this.spans.length;
  }

  push(span: FinishedSpan): void {
    this.spans.push(span);
  }

  /** One ResourceSpans (the service) with one ScopeSpans holding the spans. */
  take(max: number): string {
    return JSON.stringify({
      resourceSpans: [
        {
          resource: { attributes: keyValues({ 'service.name': this.source.serviceName }) },
          scopeSpans: [{ scope: { name: this.source.scopeName }, spans: this.spans.splice(0, max).map(span) }],
        },
      ],
    });
  }
}
