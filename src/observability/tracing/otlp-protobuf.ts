// A batch of spans as an OTLP/HTTP `http/protobuf` body: an ExportTraceServiceRequest, field numbers from
// opentelemetry/proto/collector/trace/v1/trace_service.proto and the files it imports.
import { OTLP_SPAN_KIND, OTLP_STATUS_CODE, unixNanos, type ExportSource } from './otlp-values.js';
import { ProtobufWriter } from './protobuf-writer.js';
import type { Attributes, FinishedSpan, SpanLink } from './span.js';

/** `repeated KeyValue` at `field`: a string, bool, int64 or double `AnyValue` each. */
function writeAttributes(writer: ProtobufWriter, field: number, attributes: Attributes): void {
  for (const [key, value] of Object.entries(attributes)) {
    writer.message(field, (kv) => {
      kv.string(1, key);
      kv.message(2, (any) => {
        if (typeof value === 'string') any.string(1, value);
        else if (typeof value === 'boolean') any.int(2, value);
        else if (Number.isInteger(value)) any.int(3, value);
        else any.double(4, value);
      });
    });
  }
}

function writeLink(writer: ProtobufWriter, link: SpanLink): void {
  writer.message(13, (l) => {
    l.hexBytes(1, link.context.traceId);
    l.hexBytes(2, link.context.spanId);
    if (link.context.traceState !== undefined) l.string(3, link.context.traceState);
    writeAttributes(l, 4, link.attributes ?? {});
  });
}

function writeSpan(writer: ProtobufWriter, span: FinishedSpan): void {
  writer.message(2, (s) => {
    s.hexBytes(1, span.context.traceId);
    s.hexBytes(2, span.context.spanId);
    if (span.context.traceState !== undefined) s.string(3, span.context.traceState);
    if (span.parentSpanId !== undefined) s.hexBytes(4, span.parentSpanId);
    s.string(5, span.name);
    s.int(6, OTLP_SPAN_KIND[span.kind]);
    s.fixed64(7, unixNanos(span.startMs));
    s.fixed64(8, unixNanos(span.endMs));
    writeAttributes(s, 9, span.attributes);
    for (const link of span.links) writeLink(s, link);
    s.message(15, (status) => {
      if (span.status.code === 'error' && span.status.message) status.string(2, span.status.message);
      status.int(3, OTLP_STATUS_CODE[span.status.code]);
    });
  });
}

/** The request body: one ResourceSpans (the service) with one ScopeSpans holding every span. */
export function encodeOtlpProtobuf(spans: readonly FinishedSpan[], source: ExportSource): Uint8Array<ArrayBuffer> {
  const request = new ProtobufWriter();
  request.message(1, (resourceSpans) => {
    resourceSpans.message(1, (resource) => writeAttributes(resource, 1, { 'service.name': source.serviceName }));
    resourceSpans.message(2, (scopeSpans) => {
      scopeSpans.message(1, (scope) => scope.string(1, source.scopeName));
      for (const span of spans) writeSpan(scopeSpans, span);
    });
  });
  return request.finish();
}
