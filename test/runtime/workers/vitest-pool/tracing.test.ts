// Tracing inside workerd: the modules load without drawing randomness at their top level, ids are drawn per
// request, the export runs under the request's ctx.waitUntil after the answer, and a collector that refuses the
// spans (here the simulator, which has no /v1/traces) has them counted as dropped. Then one trace from a caller
// through the Worker, its Durable Objects and the upstream, as test/integration/tracing.test.ts proves it on Node:
// the spans reach an OTLP receiver that decodes with the opentelemetry-proto files, the simulator records the
// traceparents it received.
import { createExecutionContext, reset, waitOnExecutionContext } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { GATEWAY_VERSION } from '../../../../src/base/version.js';
import { parseConfig } from '../../../../src/config/config.js';
import {
  endServerSpan,
  startServerSpan,
  startUpstreamSpan,
  traceHeaders,
  upstreamCall,
} from '../../../../src/observability/tracing/http-spans.js';
import { createFetchHttp } from '../../../../src/base/upstream-http.js';
import { createTracing } from '../../../../src/observability/tracing/tracing.js';
import { createRequestScopes } from '../../../../src/runtime/workers/request-scope.js';
import { createWorkerTracing } from '../../../../src/runtime/workers/workers-tracing.js';
import type { DurableObjectNamespace } from '../../../../src/runtime/workers/bindings.js';
import { droppedBy } from '../../../helpers/dropped-spans.js';
import { DESKTOPS } from '../../../helpers/user-agents.js';
import {
  collector,
  counterObjects,
  isolate,
  metricsObjects,
  METRICS_TOKEN,
  revocationObjects,
  simulator,
  simulatorUrl,
  tokenObjects,
  tracingSettings,
  UPSTREAM_CLIENT_ID,
  type ExportedSpan,
  type Isolate,
} from './control.js';
import { WORKERD_CLIENT } from './workerd-env.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';

const tracingConfig = (endpoint: string) =>
  parseConfig({
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: '20',
  }).tracing;

/** One miss's two spans, in a request scope; `fetch` is the collector's, undefined for the Worker's own. */
function traceOneMiss(endpoint: string, fetch?: typeof globalThis.fetch) {
  const scopes = createRequestScopes();
  const ctx = createExecutionContext();
  const tracing =
    fetch === undefined
      ? createWorkerTracing(tracingConfig(endpoint), scopes.background)
      : createTracing(tracingConfig(endpoint), {
          http: (maxBodyBytes) => createFetchHttp(fetch, { maxBodyBytes }),
          background: scopes.background,
          sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
          now: Date.now,
        });
  const headers = scopes.run(ctx, () => {
    const server = startServerSpan(
      tracing.tracer,
      {
        method: 'GET',
        route: '/v2/contacts/search',
        traceparent: `00-${TRACE}-${CALLER_SPAN}-01`,
        tracestate: undefined,
      },
      () => ({
        scheme: 'https',
        path: '/v2/contacts/search',
        serverAddress: 'callerid.example.com',
        serverPort: 443,
        protocolVersion: undefined,
        userAgent: undefined,
        clientAddress: undefined,
      }),
    );
    const upstream = startUpstreamSpan(
      tracing.tracer,
      server,
      upstreamCall('GET', 'https://upstream.example.net', '/v2/contacts/search', ['what']),
    );
    upstream.end();
    endServerSpan(server, { status: 200, cacheStatus: 'miss' });
    return { upstream: traceHeaders(upstream), server: server.context!.spanId };
  });
  return { ctx, tracing, headers };
}

describe('tracing in workerd', () => {
  it('exports the server and client spans under ctx.waitUntil, after the answer', async () => {
    const bodies: string[] = [];
    const recording: typeof fetch = async (_url, init) => {
      bodies.push(String(init?.body));
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
    expect(droppedBy(tracing.dropped())).toEqual({});
  });

  it("counts the spans a refusing collector did not take, through the Worker's tracing and its fetch", async () => {
    const { ctx, tracing } = traceOneMiss(`${simulatorUrl()}/v1/traces`);
    await waitOnExecutionContext(ctx);
    expect(droppedBy(tracing.dropped())).toEqual({ refused: 2 });
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
    // The miss's server, lookup, tier, guard queue and upstream spans, the refusal's server span (and the login's own
    // request's; the upstream login is the token object's, exported by the object).
    const dropped = { ...worker.gateway.services.tracing.dropped() };
    expect(Object.keys(droppedBy(dropped))).toEqual(['refused']);
    expect(dropped.refused).toBeGreaterThanOrEqual(5);
    // The deployment's /metrics (the metrics object's sum of every isolate's pushes) counts them, by cause.
    const scraped = await worker.scrape();
    const counted = (cause: string) =>
      Number(
        new RegExp(`^callerid_gateway_trace_spans_dropped_total\\{cause="${cause}"\\} (\\d+)$`, 'm').exec(scraped)?.[1],
      );
    expect(counted('refused')).toBeGreaterThanOrEqual(dropped.refused);
    expect(counted('unavailable')).toBe(0);
  });
});

const [INTERNAL, SERVER, CLIENT] = [1, 2, 3];

/** A caller's span context in a trace of its own, so a test reads only its own spans. */
function callerTrace(sampled: boolean) {
  const id = () => crypto.randomUUID().replaceAll('-', '');
  const traceId = id();
  const spanId = id().slice(0, 16);
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-${sampled ? '01' : '00'}` };
}

/** The export requests of `traceId` once `complete` says every span arrived (the isolate's and the objects'). */
async function exportsOf(traceId: string, complete: (spans: ExportedSpan[]) => boolean): Promise<ExportedSpan[][]> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const exports = await collector.exports(traceId);
    if (complete(exports.flat()) || Date.now() > deadline) return exports;
    await new Promise((r) => setTimeout(r, 20));
  }
}

const named = (spans: ExportedSpan[], kind: number, name: string): ExportedSpan => {
  const found = spans.filter((s) => s.kind === kind && s.name === name);
  expect(found, `${name} (kind ${kind})`).toHaveLength(1);
  return found[0]!;
};

const hasLogin = (spans: ExportedSpan[]) => spans.some((s) => s.name === 'POST /token/login');

/** A miss for `number` through `via`, in the caller's trace; its background work (the exports) finished. */
async function tracedMiss(via: Isolate, token: string, number: string, headers: Record<string, string>) {
  const { res, ctx } = await via.request(`/v2/contacts/search?what=${encodeURIComponent(number)}`, {
    headers: { authorization: `Bearer ${token}`, ...headers },
  });
  expect(res.status).toBe(200);
  expect(res.headers.get('cache-status')).toContain('fwd=miss');
  await res.text();
  await waitOnExecutionContext(ctx);
}

describe('one trace through the Worker, its Durable Objects and the upstream', () => {
  it("makes a miss the caller's child: the server span, lookup, lookup cache-api, guard queue, the token object's login and the upstream call, the upstream's traceparents naming the client spans", async () => {
    await reset();
    await simulator.reset();
    const worker = await isolate(tracingSettings());
    const caller = callerTrace(true);
    await tracedMiss(worker, await worker.login(), '+442079460031', {
      traceparent: caller.traceparent,
      tracestate: 'vendor=opaque',
    });
    const exports = await exportsOf(caller.traceId, (spans) => hasLogin(spans) && spans.some((s) => s.kind === SERVER));
    const spans = exports.flat();
    const server = named(spans, SERVER, 'GET /v2/contacts/search');
    expect(server.parentSpanId).toBe(caller.spanId);
    expect(server.attributes).toMatchObject({
      'http.request.method': 'GET',
      'http.route': '/v2/contacts/search',
      'http.response.status_code': 200,
      'url.scheme': 'https',
      'server.address': 'callerid.test',
      'cache.status': 'miss',
      'gateway.client.id': WORKERD_CLIENT.id,
    });
    const lookup = named(spans, INTERNAL, 'lookup');
    expect(lookup.parentSpanId).toBe(server.spanId);
    const tier = named(spans, INTERNAL, 'lookup cache-api');
    expect(tier.parentSpanId).toBe(lookup.spanId);
    expect(tier.attributes['lookup.tier.result']).toBe('absent');
    expect(named(spans, INTERNAL, 'guard queue').parentSpanId).toBe(lookup.spanId);
    const upstream = named(spans, CLIENT, 'GET /v2/contacts/search');
    expect(upstream.parentSpanId).toBe(lookup.spanId);
    expect(upstream.attributes).toMatchObject({ 'http.response.status_code': 200, 'server.address': '127.0.0.1' });
    // The isolate asked the token object, which logged in for this search: its span is the lookup's child, recorded
    // and sent by the object (an export request of its own), with the same service name.
    const login = named(spans, CLIENT, 'POST /token/login');
    expect(login.parentSpanId).toBe(lookup.spanId);
    expect(login.attributes).toMatchObject({ 'http.request.method': 'POST', 'http.response.status_code': 200 });
    expect(exports.find((e) => e.some((s) => s.spanId === login.spanId))).toEqual([login]);
    expect(login.serviceName).toBe(server.serviceName);
    expect(spans).toHaveLength(6);
    for (const span of spans) expect(span.traceState).toBe('vendor=opaque');
    // The isolate's export and the token object's, each naming the exporter through the Worker's own fetch.
    const agents = await collector.userAgents(caller.traceId);
    expect(agents.length).toBeGreaterThanOrEqual(2);
    for (const agent of agents) expect(agent).toBe(`callerid-gateway/${GATEWAY_VERSION}`);
    const seen = await simulator.stats();
    expect(seen.traceparentsSeen).toEqual([`00-${caller.traceId}-${upstream.spanId}-01`]);
    expect(seen.loginTraceparentsSeen).toEqual([`00-${caller.traceId}-${login.spanId}-01`]);
  });

  it("records nothing of a caller's unsampled trace, in the isolate or the token object, and still passes it to the upstream", async () => {
    await reset();
    await simulator.reset();
    const unsampled = callerTrace(false);
    const first = await isolate(tracingSettings());
    await tracedMiss(first, await first.login(), '+442079460032', { traceparent: unsampled.traceparent });
    const seen = await simulator.stats();
    const propagated = new RegExp(`^00-${unsampled.traceId}-(?!${unsampled.spanId})[0-9a-f]{16}-00$`);
    expect(seen.traceparentsSeen).toHaveLength(1);
    expect(seen.traceparentsSeen[0]).toMatch(propagated);
    expect(seen.loginTraceparentsSeen).toHaveLength(1);
    expect(seen.loginTraceparentsSeen[0]).toMatch(propagated);
    // The same object logs in again for a sampled caller: it sends spans in order, so whatever it had recorded
    // of the unsampled trace would have arrived before this login's span.
    const object = tokenObjects.get(tokenObjects.idFromName(UPSTREAM_CLIENT_ID));
    expect(await object.dropIfCurrent(UPSTREAM_CLIENT_ID, (await object.read(UPSTREAM_CLIENT_ID))!.generation)).toBe(
      true,
    );
    const sampled = callerTrace(true);
    const second = await isolate(tracingSettings());
    await tracedMiss(second, await second.login(), '+442079460033', { traceparent: sampled.traceparent });
    expect(hasLogin((await exportsOf(sampled.traceId, hasLogin)).flat())).toBe(true);
    expect(await collector.exports(unsampled.traceId)).toEqual([]);
  });

  it("carries the request's trace context on every Durable Object call made for it; the metrics pushes carry none", async () => {
    await reset();
    await simulator.reset();
    const calls: ObjectCall[] = [];
    const worker = await isolate({
      ...tracingSettings(),
      METRICS_TOKEN,
      CLIENT_UPSTREAM_QUOTAS: `${WORKERD_CLIENT.id}:100`,
      CLIENT_RATE_PER_MINUTE: '100',
      UPSTREAM_TOKEN: recorded('UPSTREAM_TOKEN', tokenObjects, calls),
      COUNTERS: recorded('COUNTERS', counterObjects, calls),
      REVOCATIONS: recorded('REVOCATIONS', revocationObjects, calls),
      METRICS: recorded('METRICS', metricsObjects, calls),
    });
    const token = await worker.login();
    /** One request in a trace of its own, and the calls it made, in the background too. */
    const traced = async (path: string, init: RequestInit & { headers: Record<string, string> }) => {
      const caller = callerTrace(true);
      calls.length = 0;
      const { res, ctx } = await worker.request(path, {
        ...init,
        headers: { ...init.headers, traceparent: caller.traceparent },
      });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
      await waitOnExecutionContext(ctx);
      return { caller, calls: [...calls] };
    };
    // The isolate's copy of the revocations, read at the login, is old enough to be read again at the miss.
    await new Promise((r) => setTimeout(r, 600));
    const miss = await traced('/v2/contacts/search?what=%2B442079460034', {
      headers: { authorization: `Bearer ${token}` },
    });
    const consoleSearch = await traced('/console/v2/contacts/search?what=%2B442079460035', {
      headers: { 'user-agent': DESKTOPS.chromeLinux, 'sec-ch-ua-mobile': '?0', 'cf-connecting-ip': '198.51.100.7' },
    });
    const revocation = await traced('/oauth2/revoke', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token, client_id: WORKERD_CLIENT.id, client_secret: WORKERD_CLIENT.secret }),
    });
    const scrape = await traced('/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });

    const methods = (r: { calls: ObjectCall[] }) => new Set(r.calls.map((c) => c.method));
    expect([...methods(miss)]).toEqual(
      expect.arrayContaining(['REVOCATIONS.since', 'UPSTREAM_TOKEN.refresh', 'COUNTERS.consume', 'COUNTERS.add']),
    );
    expect([...methods(consoleSearch)]).toContain('COUNTERS.consume');
    expect([...methods(revocation)]).toContain('REVOCATIONS.revoke');
    expect([...methods(scrape)]).toEqual(expect.arrayContaining(['METRICS.push', 'METRICS.render']));
    for (const request of [miss, consoleSearch, revocation, scrape]) {
      const ofTrace = new RegExp(`^00-${request.caller.traceId}-[0-9a-f]{16}-01$`);
      for (const call of request.calls) {
        if (call.method === 'METRICS.push') expect(call.args, call.method).toHaveLength(1);
        else expect(call.args.at(-1), call.method).toEqual({ traceparent: expect.stringMatching(ofTrace) });
      }
    }
    // Checked before the request's server span: the caller's own context, as it came.
    const since = miss.calls.find((c) => c.method === 'REVOCATIONS.since')!;
    expect(since.args.at(-1)).toEqual({ traceparent: miss.caller.traceparent });
    // The refresh names the lookup span, which the object's login goes under.
    const refresh = miss.calls.find((c) => c.method === 'UPSTREAM_TOKEN.refresh')!;
    const spans = (await exportsOf(miss.caller.traceId, hasLogin)).flat();
    const lookup = named(spans, INTERNAL, 'lookup');
    expect(refresh.args.at(-1)).toEqual({ traceparent: `00-${miss.caller.traceId}-${lookup.spanId}-01` });
    expect(named(spans, CLIENT, 'POST /token/login').parentSpanId).toBe(lookup.spanId);
  });
});

interface ObjectCall {
  /** `BINDING.method`. */
  method: string;
  args: unknown[];
}

/** `namespace` with every call its objects get recorded in `calls`, then made over RPC as it came. */
function recorded<T extends object>(
  binding: string,
  namespace: DurableObjectNamespace<T>,
  calls: ObjectCall[],
): DurableObjectNamespace<T> {
  return {
    idFromName: (name) => namespace.idFromName(name),
    get(id) {
      const stub = namespace.get(id) as Record<string, (...args: unknown[]) => unknown>;
      return new Proxy({} as T, {
        get:
          (_, method: string) =>
          (...args: unknown[]) => {
            calls.push({ method: `${binding}.${method}`, args });
            return stub[method]!(...args);
          },
      });
    },
  };
}
