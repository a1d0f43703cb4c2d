// The gateway's app mounted in a host's Hono app with `@hono/otel` in front, the host's OpenTelemetry SDK registered
// (NodeTracerProvider, an in-memory exporter): over real sockets, each request is one trace at the host's exporter,
// the host's server span its root and the gateway's server and client spans inside it.
import { serve, type ServerType } from '@hono/node-server';
import { httpInstrumentationMiddleware } from '@hono/otel';
import { context, propagation, SpanKind, trace } from '@opentelemetry/api';
import {
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { Hono } from 'hono';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNodeGateway, type NodeGateway } from '../../../src/runtime/node/gateway.js';
import { startSimulatorServer, type SimulatorServer } from '../../../src/simulator/server.js';
import { captureLogger } from '../../helpers/recorders.js';
import { CLIENTS, loginAt, stackEnv, UPSTREAM_CLIENTS } from '../../helpers/stack.js';

const exporter = new InMemorySpanExporter();
/** What the host does about `@hono/otel`'s `url.full`, which holds the request's query as it came: the number. */
const redactWhat: SpanProcessor = {
  onStart(span) {
    const full = span.attributes['url.full'];
    if (typeof full === 'string') span.setAttribute('url.full', full.replace(/([?&]what=)[^&]*/, '$1REDACTED'));
  },
  onEnd: () => undefined,
  forceFlush: () => Promise.resolve(),
  shutdown: () => Promise.resolve(),
};
const provider = new NodeTracerProvider({ spanProcessors: [redactWhat, new SimpleSpanProcessor(exporter)] });

const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

describe('the gateway mounted behind @hono/otel under a host SDK', () => {
  let simulator: SimulatorServer;
  let gateway: NodeGateway;
  let server: ServerType;
  let base: string;

  beforeAll(async () => {
    // The host registers first (a provider, its context manager and propagator), then builds the gateway.
    provider.register();
    simulator = await startSimulatorServer({ clients: UPSTREAM_CLIENTS });
    gateway = await createNodeGateway(await stackEnv(simulator.url), { logger: captureLogger() });
    const host = new Hono();
    host.use(httpInstrumentationMiddleware({ serviceName: 'host-app' }));
    host.mount('/', gateway.app.fetch);
    server = serve({ fetch: host.fetch, hostname: '127.0.0.1', port: 0 });
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
    await gateway?.close({ timeoutMs: 1000 });
    await simulator?.close();
    await provider.shutdown();
    trace.disable();
    context.disable();
    propagation.disable();
  });

  /** The finished spans of one trace. */
  const spansOfTrace = (traceId: string) =>
    exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);

  it("gives a search one trace: the host's span, the gateway's server span under it, the upstream calls under that", async () => {
    const token = await loginAt(base, 'crm', CLIENTS.crm);
    exporter.reset();
    const res = await fetch(`${base}/v2/contacts/search?what=${encodeURIComponent('+442079460011')}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.status).toBe(200);
    await res.text();
    await provider.forceFlush();

    const spans = exporter.getFinishedSpans();
    expect(new Set(spans.map((s) => s.spanContext().traceId)).size).toBe(1);
    const hostSpan = spans.find((s) => s.instrumentationScope.name === '@hono/otel')!;
    expect(hostSpan).toBeDefined();
    expect(parentOf(hostSpan)).toBeUndefined();
    const gatewaySpans = spans.filter((s) => s.instrumentationScope.name === 'callerid-gateway');
    const serverSpan = gatewaySpans.find((s) => s.kind === SpanKind.SERVER)!;
    expect(serverSpan).toMatchObject({ name: 'GET /v2/contacts/search' });
    expect(parentOf(serverSpan)).toBe(hostSpan.spanContext().spanId);
    expect(serverSpan.attributes).toMatchObject({
      'http.route': '/v2/contacts/search',
      'url.path': '/v2/contacts/search',
    });

    // Every span of the gateway hangs from its server span, the search's client span among them.
    const ids = new Set(gatewaySpans.map((s) => s.spanContext().spanId));
    for (const span of gatewaySpans.filter((s) => s !== serverSpan)) expect(ids.has(parentOf(span)!)).toBe(true);
    const upstream = gatewaySpans.find((s) => s.kind === SpanKind.CLIENT && s.name === 'GET /v2/contacts/search')!;
    expect(upstream.attributes['url.full']).toMatch(/\?what=REDACTED$/);
    // The upstream received the host's trace, its parent the gateway's client span.
    const { traceId } = hostSpan.spanContext();
    expect(simulator.controls.stats().traceparentsSeen).toContain(`00-${traceId}-${upstream.spanContext().spanId}-01`);
    for (const span of spans) expect(JSON.stringify(span.attributes)).not.toMatch(/2079460011/);
    expect(spansOfTrace(traceId)).toHaveLength(spans.length);
  });

  it("continues a caller's trace through the host, and writes the host's trace id in a problem body", async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    exporter.reset();
    const res = await fetch(`${base}/v2/contacts/search?what=x`, {
      headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
    });
    expect(res.status).toBe(401);
    const body = (await res.json()) as { traceId?: string };
    expect(body.traceId).toBe(traceId);
    await provider.forceFlush();
    const spans = spansOfTrace(traceId);
    const hostSpan = spans.find((s) => s.instrumentationScope.name === '@hono/otel')!;
    expect(parentOf(hostSpan)).toBe('00f067aa0ba902b7');
    const serverSpan = spans.find((s) => s.instrumentationScope.name === 'callerid-gateway')!;
    expect(parentOf(serverSpan)).toBe(hostSpan.spanContext().spanId);
  });
});
