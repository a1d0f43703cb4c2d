// The answers Node's listeners give before the app sees a request are traced as the app's are: the request rules'
// refusals continue the caller's trace, the HTTP parser's own refusals start one, and the metrics listener's scrapes
// and refusals have spans too; each problem body and access-log line carries the trace id.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/free-port.js';
import { rawRequest } from '../helpers/raw-http.js';
import { SPAN_KIND, startTracedStack, type TracedStack } from '../helpers/traced-stack.js';

const { SERVER } = SPAN_KIND;
const TRACE = '0af7651916cd43dd8448eb211c80319c';
const CALLER_SPAN = 'b7ad6b7169203331';

/** A caller's sampled context with a trace id of its own per test (the last hex digits vary). */
const callerOf = (n: number) => ({
  traceId: `${TRACE.slice(0, 28)}${String(n).padStart(4, '0')}`,
  traceparent: `00-${TRACE.slice(0, 28)}${String(n).padStart(4, '0')}-${CALLER_SPAN}-01`,
});

describe("tracing the answers of Node's listeners", () => {
  let traced: TracedStack;
  let metricsUrl: string;

  beforeAll(async () => {
    traced = await startTracedStack({ env: { METRICS_PORT: String(await freePort()) } });
    metricsUrl = `http://127.0.0.1:${traced.stack.gateway.metricsServer!.port}`;
  });
  afterAll(() => traced.close());

  const spansOf = (traceId: string) => traced.spansOf(traceId);
  const requestLine = (requestId: string) => traced.requestLine('requestId', requestId);
  const gatewayUrl = () => traced.stack.gateway.url;

  it("continues the caller's trace on a refusal of the request rules, with the trace id in the body and the log", async () => {
    const caller = callerOf(1);
    const res = await rawRequest(
      gatewayUrl(),
      `GET /v2/contacts/search?what=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer a\r\nAuthorization: Bearer b\r\ntraceparent: ${caller.traceparent}`,
    );
    expect(res.status).toBe(401);
    const body = JSON.parse(res.body) as { traceId?: string; requestId: string; type: string };
    expect(body.traceId).toBe(caller.traceId);
    expect(requestLine(body.requestId)?.fields.traceId).toBe(caller.traceId);
    const spans = await spansOf(caller.traceId);
    expect(spans).toHaveLength(1);
    expect(spans[0]).toMatchObject({ name: 'GET /v2/contacts/search', kind: SERVER, parentSpanId: CALLER_SPAN });
    expect(spans[0]!.attributes).toMatchObject({
      'http.route': '/v2/contacts/search',
      'http.response.status_code': 401,
      'gateway.problem.type': body.type,
    });
    expect(requestLine(body.requestId)?.fields.spanId).toBe(spans[0]!.spanId);
  });

  it("records the listener's own address, never a refused Host, on the span", async () => {
    const caller = callerOf(2);
    const res = await rawRequest(
      gatewayUrl(),
      `GET /healthz HTTP/1.1\r\nHost: 447700900123@example\r\ntraceparent: ${caller.traceparent}`,
    );
    expect(res.status).toBe(400);
    expect((JSON.parse(res.body) as { traceId?: string }).traceId).toBe(caller.traceId);
    const [span] = await spansOf(caller.traceId);
    expect(span!.attributes['server.address']).toBe('127.0.0.1');
    expect([span!.name, ...Object.values(span!.attributes).map(String)].join(' ')).not.toMatch(/7700\D?900\D?123/);
  });

  it('starts a trace of its own for a request the HTTP parser refuses, and puts it in the body', async () => {
    const res = await rawRequest(gatewayUrl(), 'GET /healthz HTTP/1.1\r\nHost 127.0.0.1');
    expect(res.status).toBe(400);
    const body = JSON.parse(res.body) as { traceId?: string; requestId: string; code: string };
    expect(body.traceId).toMatch(/^[0-9a-f]{32}$/);
    const [span] = await spansOf(body.traceId!);
    expect(span).toMatchObject({ name: 'HTTP', kind: SERVER, parentSpanId: '' });
    expect(span!.attributes).toMatchObject({ 'http.request.method': '_OTHER', 'http.response.status_code': 400 });
    expect(requestLine(body.requestId)?.fields.traceId).toBe(body.traceId);
  });

  it('traces a scrape of the metrics listener and its refusals', async () => {
    const scrape = callerOf(3);
    const res = await fetch(`${metricsUrl}/metrics`, { headers: { traceparent: scrape.traceparent } });
    expect(res.status).toBe(200);
    await res.text();
    const [span] = await spansOf(scrape.traceId);
    expect(span).toMatchObject({ name: 'GET /metrics', kind: SERVER, parentSpanId: CALLER_SPAN });
    const refused = callerOf(4);
    const body = await rawRequest(
      metricsUrl,
      `GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5000\r\ntraceparent: ${refused.traceparent}`,
    );
    expect(body.status).toBe(413);
    expect((JSON.parse(body.body) as { traceId?: string }).traceId).toBe(refused.traceId);
    expect(await spansOf(refused.traceId)).toHaveLength(1);
  });
});
