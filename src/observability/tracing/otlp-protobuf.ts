// Spans as an OTLP/HTTP `http/protobuf` body: an ExportTraceServiceRequest, field numbers from
// opentelemetry/proto/collector/trace/v1/trace_service.proto and the files it imports.
import { OTLP_SPAN_KIND, OTLP_STATUS_CODE, unixMicros, type ExportSource, type SpanQueue } from './otlp-values.js';
import { ProtobufWriter } from './protobuf-writer.js';
import type { Attributes, AttributeValue, FinishedSpan, SpanLink } from './span.js';

/** A `KeyValue` at `field`: a string, bool, int64 or double `AnyValue`. */
function writeKeyValue(w: ProtobufWriter, field: number, key: string, value: AttributeValue): void {
  const keyValue = w.begin(field);
  w.string(1, key);
  const anyValue = w.begin(2);
  if (typeof value === 'string') w.string(1, value);
  else if (typeof value === 'boolean') w.int(2, value);
  else if (Number.isInteger(value)) w.int(3, value);
  else w.double(4, value);
  w.end(anyValue);
  w.end(keyValue);
}

/** `repeated KeyValue` at `field`. */
function writeAttributes(w: ProtobufWriter, field: number, attributes: Attributes): void {
  for (const key in attributes) writeKeyValue(w, field, key, attributes[key]!);
}

/** Keys whose last value is kept at most: a span's attribute names are a small fixed set. */
const MAX_REPEATED_KEYS = 64;
/** A span's attributes (`Span.attributes`, field 9). */
const SPAN_ATTRIBUTES = 9;

/**
 * Span attributes, each `KeyValue` written once per value in a row: the spans of a hit repeat nearly all of theirs
 * (method, route, scheme, address, port, status, cache status, client), so the bytes written for a key's last value
 * are copied again while the value stays the same.
 */
class RepeatedAttributes {
  private readonly last = new Map<string, { value: AttributeValue; bytes: Uint8Array }>();

  write(w: ProtobufWriter, attributes: Attributes): void {
    for (const key in attributes) {
      const value = attributes[key]!;
      const seen = this.last.get(key);
      if (seen !== undefined && seen.value === value) {
        w.raw(seen.bytes);
        continue;
      }
      const start = w.length;
      writeKeyValue(w, SPAN_ATTRIBUTES, key, value);
      if (seen !== undefined || this.last.size < MAX_REPEATED_KEYS)
        this.last.set(key, { value, bytes: w.copyOut(start) });
    }
  }
}

function writeLink(w: ProtobufWriter, link: SpanLink): void {
  const start = w.begin(13);
  w.hexBytes(1, link.context.traceId);
  w.hexBytes(2, link.context.spanId);
  if (link.context.traceState !== undefined) w.string(3, link.context.traceState);
  if (link.attributes !== undefined) writeAttributes(w, 4, link.attributes);
  w.end(start);
}

function writeSpan(w: ProtobufWriter, span: FinishedSpan, repeated: RepeatedAttributes): void {
  const start = w.begin(2);
  w.hexBytes(1, span.context.traceId);
  w.hexBytes(2, span.context.spanId);
  if (span.context.traceState !== undefined) w.string(3, span.context.traceState);
  if (span.parentSpanId !== undefined) w.hexBytes(4, span.parentSpanId);
  w.string(5, span.name);
  w.int(6, OTLP_SPAN_KIND[span.kind]);
  w.fixed64Thousandfold(7, unixMicros(span.startMs));
  w.fixed64Thousandfold(8, unixMicros(span.endMs));
  repeated.write(w, span.attributes);
  for (const link of span.links) writeLink(w, link);
  const status = w.begin(15);
  if (span.status.code === 'error' && span.status.message) w.string(2, span.status.message);
  w.int(3, OTLP_STATUS_CODE[span.status.code]);
  w.end(status);
  w.end(start);
}

/**
 * Spans as an `http/protobuf` body: each span is written as it ends, into one buffer kept from batch to batch, so the
 * ended span is garbage while still young (held until its export, a batch of them outlived the young generation and
 * cost the old one's collections) and no batch is walked twice. A batch's body is the one ResourceSpans (the
 * service) with one ScopeSpans around the spans' bytes as written.
 */
export class ProtobufSpanQueue implements SpanQueue {
  private readonly spans = new ProtobufWriter();
  /** Where each queued span's bytes end in {@link spans}, in order. */
  private ends: number[] = [];
  private readonly body = new ProtobufWriter();
  private readonly repeated = new RepeatedAttributes();

  constructor(private readonly source: ExportSource) {}

  get length(): number {
    return this.ends.length;
  }

  push(span: FinishedSpan): void {
    writeSpan(this.spans, span, this.repeated);
    this.ends.push(this.spans.length);
  }

  take(max: number): Uint8Array<ArrayBuffer> {
    const count = Math.min(max, this.ends.length);
    const bytes = count === 0 ? 0 : this.ends[count - 1]!;
    const w = this.body;
    const resourceSpans = w.begin(1);
    const resource = w.begin(1);
    writeAttributes(w, 1, { 'service.name': this.source.serviceName });
    w.end(resource);
    const scopeSpans = w.begin(2);
    const scope = w.begin(1);
    w.string(1, this.source.scopeName);
    w.end(scope);
    w.copyFrom(this.spans, bytes);
    w.end(scopeSpans);
    w.end(resourceSpans);
    this.spans.dropFirst(bytes);
    this.ends = this.ends.slice(count);
    for (let i = 0; i < this.ends.length; i++) this.ends[i]! -= bytes;
    return w.finish();
  }
}
