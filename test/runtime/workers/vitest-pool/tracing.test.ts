// Tracing inside workerd: the modules load without drawing randomness at their top level, ids are drawn per
// request, the export runs under the request's ctx.waitUntil after the answer, and a collector that refuses the
// spans (here the simulator, which has no /v1/traces) has them counted as dropped.
import { createExecutionContext, reset, waitOnExecutionContext } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../../src/config.js';
import {
  endServerSpan,
  startServerSpan,
  startUpstreamSpan,
  traceHeaders,
} from '../../../../src/observability/tracing/http-spans.js';
import type { FetchFunction } from '../../../../src/observability/tracing/otlp-http.js';
import { createTracing } from '../../../../src/observability/tracing/tracing.js';
import { createRequestScopes } from '../../../../src/runtime/workers/request-scope.js';
import { createWorkerTracing } from '../../../../src/runtime/workers/tracing.js';
import { isolate, METRICS_TOKEN, simulator, simulatorUrl } from './control.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';

const tracingConfig = (endpoint: string) =>
  parseConfig({
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: '20',
  }).tracing;

/** One miss's two spans, in a request scope; `fetch` is the collector's, undefined for the Worker's own. */
function traceOneMiss(endpoint: string, fetch?: FetchFunction) {
  const scopes = createRequestScopes();
  const ctx = createExecutionContext();
  const tracing =
    fetch === undefined
      ? createWorkerTracing(tracingConfig(endpoint), scopes)
      : createTracing(tracingConfig(endpoint), {
          fetch,
          background: scopes.background,
          sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
          now: Date.now,
        });
  const headers = scopes.run(ctx, () => {
    const server = startServerSpan(tracing.tracer, {
      method: 'GET',
      route: '/v2/contacts/search',
      traceparent: `00-${TRACE}-${CALLER_SPAN}-01`,
      tracestate: undefined,
      scheme: 'https',
      serverAddress: 'callerid.example.com',
      clientAddress: undefined,
    });
    const upstream = startUpstreamSpan(tracing.tracer, server, {
      method: 'GET',
      urlTemplate: '/v2/contacts/search',
      serverAddress: 'upstream.example.net',
      serverPort: 443,
    });
    upstream.end();
    endServerSpan(server, { status: 200, cacheStatus: 'miss' });
    return { upstream: traceHeaders(upstream), server: server.context!.spanId };
  });
  return { ctx, tracing, headers };
}

describe('tracing in workerd', () => {
  it('exports the server and client spans under ctx.waitUntil, after the answer', async () => {
    const bodies: string[] = [];
    const recording: FetchFunction = async (_url, init) => {
      bodies.push(String(init.body));
      return new Response('{}', { status: 200 });
    };
    const { ctx, tracing, headers } = traceOneMiss('https://collector.example.com/v1/traces', recording);
    expect(bodies).toEqual([]);
    await waitOnExecutionContext(ctx);
    const spans = (
      JSON.parse(bodies[0]!) as {
        resourceSpans: { scopeSpans: { spans: { spanId: string; parentSpanId: string; traceId: string }[] }[] }[];
      }
    ).resourceSpans[0]!.scopeSpans[0]!.spans;
    expect(spans.map((s) => [s.traceId, s.parentSpanId])).toEqual([
      [TRACE, headers.server],
      [TRACE, CALLER_SPAN],
    ]);
    expect(headers.upstream.traceparent).toBe(`00-${TRACE}-${spans[0]!.spanId}-01`);
    expect(tracing.dropped()).toBe(0);
  });

  it("counts the spans a refusing collector did not take, through the Worker's tracing and its fetch", async () => {
    const { ctx, tracing } = traceOneMiss(`${simulatorUrl()}/v1/traces`);
    await waitOnExecutionContext(ctx);
    expect(tracing.dropped()).toBe(2);
  });
});

describe('the Worker gateway traced in workerd', () => {
  it("continues a caller's trace to the upstream, quotes it in a problem body and counts the spans a refusing collector dropped", async () => {
    await reset();
    await simulator.reset();
    // The simulator has no /v1/traces: every export is refused, and counted.
    const worker = await isolate({
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${simulatorUrl()}/v1/traces`,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '10',
      METRICS_TOKEN,
    });
    const token = await worker.login();
    const traceparent = `00-${TRACE}-${CALLER_SPAN}-01`;
    const { res, ctx } = await worker.request('/v2/contacts/search?what=%2B442079460021', {
      headers: { authorization: `Bearer ${token}`, traceparent },
    });
    expect(res.status).toBe(200);
    await res.text();
    await waitOnExecutionContext(ctx);
    const seen = (await simulator.stats()).traceparentsSeen;
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatch(new RegExp(`^00-${TRACE}-[0-9a-f]{16}-01$`));
    expect(seen[0]).not.toContain(CALLER_SPAN);

    const refused = await worker.request('/v2/contacts/search?what=nonsense', {
      headers: { authorization: `Bearer ${token}`, traceparent },
    });
    expect(refused.res.status).toBe(400);
    expect(((await refused.res.json()) as { traceId?: string }).traceId).toBe(TRACE);
    await waitOnExecutionContext(refused.ctx);
    // The miss's server, lookup, login and upstream spans, the refusal's server span (and the logins' own requests').
    const dropped = worker.gateway.services.tracing.dropped();
    expect(dropped).toBeGreaterThanOrEqual(5);
    // The deployment's /metrics (the metrics object's sum of every isolate's pushes) counts them.
    const scraped = await worker.scrape();
    const counted = Number(/^callerid_gateway_trace_spans_dropped_total (\d+)$/m.exec(scraped)?.[1]);
    expect(counted).toBeGreaterThanOrEqual(dropped);
  });
});
