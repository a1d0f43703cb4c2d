import { context, propagation, SpanStatusCode, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createHostTracer, hostTracerProvider, untracedByHost } from './host-tracer.js';
import { endUpstreamSpan, remoteSpan, traceHeaders } from './http-spans.js';

const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';

describe('finding a host SDK', () => {
  it('finds none before one registers, and the registered provider after', () => {
    expect(hostTracerProvider()).toBeUndefined();
    provider.register();
    expect(hostTracerProvider()).toBeDefined();
  });
});

describe('the tracer over a host SDK', () => {
  const tracer = () => createHostTracer(hostTracerProvider()!);
  beforeAll(() => {
    if (hostTracerProvider() === undefined) provider.register();
  });
  beforeEach(() => exporter.reset());
  afterAll(async () => {
    await provider.shutdown();
    trace.disable();
    context.disable();
    propagation.disable();
  });

  it("continues the caller's context through the host's propagator when no span is active", () => {
    const server = tracer().startServerSpan('GET /x', `00-${CALLER_TRACE}-${CALLER_SPAN}-01`, 'vendor=1');
    const client = tracer().startSpan('GET /upstream', server, { kind: 'client' });
    expect(client.context).toMatchObject({ traceId: CALLER_TRACE, sampled: true, traceState: 'vendor=1' });
    expect(traceHeaders(client)).toEqual({
      traceparent: `00-${CALLER_TRACE}-${client.context!.spanId}-01`,
      tracestate: 'vendor=1',
    });
    client.end();
    server.end();
    const [ended, serverEnded] = exporter.getFinishedSpans();
    expect(ended!.parentSpanContext?.spanId).toBe(server.context!.spanId);
    expect(serverEnded!.parentSpanContext).toMatchObject({ spanId: CALLER_SPAN, isRemote: true });
  });

  it("makes its server span the child of the host's active span, whatever the caller's header says", () => {
    const hostSpan = trace.getTracer('host').startSpan('host server');
    const server = context.with(trace.setSpan(context.active(), hostSpan), () =>
      tracer().startServerSpan('GET /x', `00-${CALLER_TRACE}-${CALLER_SPAN}-01`, undefined),
    );
    server.end();
    hostSpan.end();
    expect(server.context!.traceId).toBe(hostSpan.spanContext().traceId);
    expect(exporter.getFinishedSpans()[0]!.parentSpanContext?.spanId).toBe(hostSpan.spanContext().spanId);
  });

  it("continues a Durable Object caller's context sent as an argument", () => {
    const span = tracer().startSpan(
      'POST /token/login',
      remoteSpan({ traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` }),
    );
    span.end();
    expect(exporter.getFinishedSpans()[0]!.parentSpanContext).toMatchObject({
      traceId: CALLER_TRACE,
      spanId: CALLER_SPAN,
      isRemote: true,
    });
  });

  it("records the gateway's status and links on the host's span", () => {
    const first = tracer().startSpan('lookup', undefined);
    const waiting = tracer().startSpan('lookup wait', undefined);
    waiting.addLink({ context: first.context!, attributes: { reason: 'coalesced' } });
    endUpstreamSpan(waiting, { status: 503 });
    first.end();
    const ended = exporter.getFinishedSpans().find((s) => s.name === 'lookup wait')!;
    expect(ended.status.code).toBe(SpanStatusCode.ERROR);
    expect(ended.attributes).toMatchObject({ 'http.response.status_code': 503, 'error.type': '503' });
    expect(ended.links[0]).toMatchObject({
      context: { spanId: first.context!.spanId },
      attributes: { reason: 'coalesced' },
    });
  });

  it("suppresses the host's instrumentation inside untracedByHost, as the SDK's own suppressTracing does", () => {
    const inside = untracedByHost(() => trace.getTracer('undici').startSpan('GET'));
    const outside = trace.getTracer('undici').startSpan('GET');
    expect(inside.isRecording()).toBe(false);
    expect(outside.isRecording()).toBe(true);
    outside.end();
  });
});
