// The span model: what a span records while it runs and what the exporter receives when it ends. A span that is
// not recorded (tracing off, or a trace the sampler left out) still carries its context, so it propagates.
import type { SpanContext } from './trace-context.js';

export type SpanKind = 'internal' | 'server' | 'client';
/** Whole numbers are sent as OTLP integers, others as doubles. Never a telephone number or a secret. */
export type AttributeValue = string | number | boolean;
export type Attributes = Record<string, AttributeValue>;

/** A span this one relates to without being its child: the lookup another caller started, a token refresh. */
export interface SpanLink {
  readonly context: SpanContext;
  readonly attributes?: Attributes;
}

export type SpanStatus = { readonly code: 'unset' | 'ok' } | { readonly code: 'error'; readonly message?: string };

/** A span as the exporter receives it once ended; times in milliseconds since the epoch (fractions allowed). */
export interface FinishedSpan {
  readonly name: string;
  readonly kind: SpanKind;
  readonly context: SpanContext;
  readonly parentSpanId: string | undefined;
  readonly startMs: number;
  readonly endMs: number;
  readonly attributes: Attributes;
  readonly links: readonly SpanLink[];
  readonly status: SpanStatus;
}

export interface Span {
  /** Undefined only while tracing is off and the caller sent no valid `traceparent`: nothing to propagate. */
  readonly context: SpanContext | undefined;
  /** False for a span nobody exports: its setters do nothing. */
  readonly recording: boolean;
  /**
   * True for a caller's span in another isolate, known by the context it sent (a Durable Object's caller): a span
   * started under it is its child and this process's first of the trace, recorded as the caller's flag says.
   */
  readonly remote?: boolean;
  /**
   * The header fields sent on as they are instead of being written anew from the context: with tracing off, the
   * caller's `traceparent` and `tracestate` as they came (byte for byte); under a host's SDK, what its propagator writes.
   */
  readonly carried?: Readonly<Record<string, string>>;
  setAttribute(key: string, value: AttributeValue): void;
  addLink(link: SpanLink): void;
  setStatus(status: SpanStatus): void;
  /** Ends the span (once: later calls do nothing) and hands it to the exporter. */
  end(): void;
}

/** Where a recorded span goes when it ends, and the clock it is timed by. */
export interface SpanSink {
  now(): number;
  end(span: FinishedSpan): void;
}

/**
 * A span that records nothing and only carries its context; `remote` when the context came from another isolate,
 * `carried` when the caller's header fields go on as they came (tracing off).
 */
export class PropagatingSpan implements Span {
  readonly recording = false;
  constructor(
    readonly context: SpanContext | undefined,
    readonly remote = false,
    readonly carried?: Readonly<Record<string, string>>,
  ) {}
  setAttribute(): void {}
  addLink(): void {}
  setStatus(): void {}
  end(): void {}
}

const NO_LINKS: readonly SpanLink[] = [];
const UNSET: SpanStatus = { code: 'unset' };

/**
 * A sampled span: collects what it is told, and gives itself to its sink when it ends, as the finished span the
 * exporter reads (no copy of it is made).
 */
export class RecordingSpan implements Span, FinishedSpan {
  readonly recording = true;
  readonly attributes: Attributes = {};
  links: readonly SpanLink[] = NO_LINKS;
  status: SpanStatus = UNSET;
  readonly startMs: number;
  endMs = 0;
  private ended = false;

  constructor(
    private readonly sink: SpanSink,
    readonly name: string,
    readonly kind: SpanKind,
    readonly context: SpanContext,
    readonly parentSpanId: string | undefined,
  ) {
    this.startMs = sink.now();
  }

  setAttribute(key: string, value: AttributeValue): void {
    if (!this.ended) this.attributes[key] = value;
  }

  addLink(link: SpanLink): void {
    if (!this.ended) this.links = [...this.links, link];
  }

  setStatus(status: SpanStatus): void {
    if (!this.ended) this.status = status;
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.endMs = this.sink.now();
    this.sink.end(this);
  }
}
