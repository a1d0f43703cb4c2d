// Spans over OTLP/HTTP to a receiver on loopback that decodes both encodings with OpenTelemetry's own proto files;
// then a collector that is down or never answers: the exporter drops and counts, and ending a span never waits.
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig, SETTING_NAMES, type TracingConfig } from '../../../src/config/config.js';
import { unknownSettings } from '../../../src/config/unknown-settings.js';
import {
  endServerSpan,
  startServerSpan,
  startUpstreamSpan,
  traceHeaders,
  upstreamCall,
} from '../../../src/observability/tracing/http-spans.js';
import { createTracing } from '../../../src/observability/tracing/tracing.js';
import { tracingRuntime } from '../../helpers/export-clients.js';
import { freePort } from '../../helpers/free-port.js';
import { droppedBy } from '../../helpers/dropped-spans.js';
import { startOtlpReceiver, type OtlpReceiver } from '../../helpers/otlp-receiver.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';

const runtime = tracingRuntime();

function tracingConfig(env: Record<string, string>): TracingConfig {
  const config = parseConfig(env).tracing;
  if (config === null) throw new Error('tracing is off');
  return config;
}

let receiver: OtlpReceiver;
beforeAll(async () => {
  receiver = await startOtlpReceiver();
});
afterAll(() => receiver.close());

describe.each(['http/protobuf', 'http/json'])('OTLP/HTTP %s', (protocol) => {
  it('exports a server span and its client span as the proto files define them', async () => {
    receiver.requests.length = 0;
    const tracing = createTracing(
      tracingConfig({
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
        OTEL_EXPORTER_OTLP_HEADERS: 'x-tenant=gateway%20one',
        OTEL_SERVICE_NAME: 'gateway-under-test',
      }),
      runtime,
    );
    const server = startServerSpan(
      tracing.tracer,
      {
        method: 'GET',
        route: '/v2/contacts/search',
        traceparent: `00-${TRACE}-${CALLER_SPAN}-01`,
        tracestate: 'rojo=1',
      },
      () => ({
        scheme: 'http',
        path: '/v2/contacts/search',
        serverAddress: '127.0.0.1',
        serverPort: 8080,
        protocolVersion: '1.1',
        userAgent: 'pbx/2.1',
        clientAddress: '127.0.0.1',
      }),
    );
    const upstream = startUpstreamSpan(
      tracing.tracer,
      server,
      upstreamCall('GET', 'https://upstream.example.net', '/v2/contacts/search', ['what']),
    );
    upstream.addLink({ context: server.context!, attributes: { 'link.reason': 'test' } });
    upstream.setAttribute('gateway.queue.seconds', 0.25);
    upstream.setAttribute('gateway.retried', false);
    upstream.setStatus({ code: 'error', message: 'upstream answered 502' });
    upstream.end();
    endServerSpan(server, { status: 502, cacheStatus: 'miss', problemType: 'https://example.com/problems/upstream' });
    await tracing.flush();

    expect(receiver.requests).toHaveLength(1);
    const [exported] = receiver.requests;
    expect(exported!.contentType).toBe(protocol === 'http/json' ? 'application/json' : 'application/x-protobuf');
    expect(exported!.headers['x-tenant']).toBe('gateway one');
    const [client, serverSpan] = exported!.spans;
    expect(serverSpan).toMatchObject({
      traceId: TRACE,
      spanId: server.context!.spanId,
      parentSpanId: CALLER_SPAN,
      traceState: 'rojo=1',
      name: 'GET /v2/contacts/search',
      kind: 2,
      serviceName: 'gateway-under-test',
      attributes: {
        'http.response.status_code': 502,
        'error.type': '502',
        'cache.status': 'miss',
        'url.path': '/v2/contacts/search',
        'server.port': 8080,
        'network.protocol.version': '1.1',
        'user_agent.original': 'pbx/2.1',
      },
      status: { code: 2 },
    });
    expect(client).toMatchObject({
      traceId: TRACE,
      spanId: upstream.context!.spanId,
      parentSpanId: server.context!.spanId,
      kind: 3,
      attributes: {
        'server.port': 443,
        'url.full': 'https://upstream.example.net/v2/contacts/search?what=REDACTED',
        'gateway.queue.seconds': 0.25,
        'gateway.retried': false,
      },
      links: [{ traceId: TRACE, spanId: server.context!.spanId }],
      status: { code: 2, message: 'upstream answered 502' },
    });
    expect(traceHeaders(upstream).traceparent).toBe(`00-${TRACE}-${client!.spanId}-01`);
    // Nanoseconds since the epoch, to the microsecond, and in order.
    const nowNs = BigInt(Date.now()) * 1_000_000n;
    expect(nowNs - serverSpan!.startTimeUnixNano).toBeLessThan(60_000_000_000n);
    expect(serverSpan!.endTimeUnixNano).toBeGreaterThanOrEqual(client!.endTimeUnixNano);
    expect(client!.startTimeUnixNano).toBeGreaterThanOrEqual(serverSpan!.startTimeUnixNano);
    expect(droppedBy(tracing.dropped())).toEqual({});
  });
});

describe.each(['http/protobuf', 'http/json'])('OTLP/HTTP %s, values of every kind', (protocol) => {
  it('sends a batch larger than the encoder starts with, non-ASCII text and negative whole numbers intact', async () => {
    receiver.requests.length = 0;
    const tracing = createTracing(
      tracingConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: protocol }),
      runtime,
    );
    for (let i = 0; i < 200; i++) {
      const span = tracing.tracer.startSpan(`Zürich ${i} ✓`, undefined);
      span.setAttribute('offset', -i);
      span.setAttribute('ratio', i / 7);
      span.end();
    }
    await tracing.flush();
    const spans = receiver.spans();
    expect(spans).toHaveLength(200);
    expect(spans[199]).toMatchObject({ name: 'Zürich 199 ✓', attributes: { offset: -199, ratio: 199 / 7 } });
    expect(receiver.requests.length).toBe(1);
  });
});

describe('the receiver', () => {
  it('refuses a JSON body with a field the proto files do not define, and a protobuf body that is not one', async () => {
    const post = (contentType: string, body: string) =>
      fetch(receiver.url, { method: 'POST', headers: { 'content-type': contentType }, body }).then((r) => r.status);
    expect(await post('application/json', '{"resourceSpans":[{"scopeSpans":[{"spans":[{"nme":"x"}]}]}]}')).toBe(400);
    expect(await post('application/x-protobuf', '\u00ff\u00ff\u00ff')).toBe(400);
    expect(await post('application/json', '{"resourceSpans":[]}')).toBe(200);
  });
});

describe('batching', () => {
  /** Tracing that exports to the test receiver in batches of three, after `delayMs` for a part batch. */
  const batchesOfThree = (delayMs: number) =>
    createTracing(
      tracingConfig({
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.url,
        OTEL_BSP_SCHEDULE_DELAY: String(delayMs),
        OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '3',
      }),
      runtime,
    );

  it('sends a full batch at once without waiting for the delay, and the rest on flush', async () => {
    receiver.requests.length = 0;
    const tracing = batchesOfThree(60_000);
    for (let i = 0; i < 3; i++) tracing.tracer.startSpan(`batch ${i}`, undefined).end();
    await receiver.waitForSpans(3);
    tracing.tracer.startSpan('batch 3', undefined).end();
    await tracing.flush();
    expect(receiver.requests.map((r) => r.spans.map((s) => s.name))).toEqual([
      ['batch 0', 'batch 1', 'batch 2'],
      ['batch 3'],
    ]);
  });

  it('sends what ended during an export after the delay, not as soon as the export is done', async () => {
    receiver.requests.length = 0;
    const tracing = batchesOfThree(400);
    // A full batch goes at once; the span after it ends while that batch is on its way.
    for (let i = 0; i < 4; i++) tracing.tracer.startSpan(`steady ${i}`, undefined).end();
    await receiver.waitForSpans(3);
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(receiver.requests).toHaveLength(1);
    await receiver.waitForSpans(4);
    expect(receiver.requests.map((r) => r.spans.length)).toEqual([3, 1]);
  });
});

describe('a collector that does not take the spans', () => {
  let blackHole: Server;
  let blackHolePort: number;
  const sockets = new Set<Socket>();
  beforeAll(async () => {
    // Accepts connections and never answers, like a collector behind a dropping firewall or a hung one.
    blackHole = createServer((socket) => {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => blackHole.listen(0, '127.0.0.1', resolve));
    blackHolePort = (blackHole.address() as { port: number }).port;
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => blackHole.close(() => resolve()));
  });

  it('down: the refused export is tried again within the export timeout, then every span counted as unreachable', async () => {
    const port = await freePort();
    const tracing = createTracing(
      tracingConfig({
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
        OTEL_EXPORTER_OTLP_TIMEOUT: '1500',
        OTEL_BSP_SCHEDULE_DELAY: '0',
      }),
      runtime,
    );
    const started = performance.now();
    for (let i = 0; i < 5; i++) tracing.tracer.startSpan('lost', undefined).end();
    await tracing.flush();
    expect(droppedBy(tracing.dropped())).toEqual({ unreachable: 5 });
    // One backoff of about a second (0.8 to 1.2 s) fits the 1.5 s timeout; the next would not.
    expect(performance.now() - started).toBeGreaterThan(750);
    expect(performance.now() - started).toBeLessThan(1_500);
  });

  it('black-holed: ending spans never waits, the queue stays bounded, and the timed-out batch is counted', async () => {
    const tracing = createTracing(
      tracingConfig({
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${blackHolePort}`,
        OTEL_EXPORTER_OTLP_TIMEOUT: '300',
        OTEL_BSP_SCHEDULE_DELAY: '0',
        OTEL_BSP_MAX_QUEUE_SIZE: '4',
        OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '4',
      }),
      runtime,
    );
    const started = performance.now();
    for (let i = 0; i < 4; i++) tracing.tracer.startSpan('first', undefined).end();
    // Let the export of the first four start: it hangs on the black hole.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const ending = performance.now();
    for (let i = 0; i < 10; i++) tracing.tracer.startSpan('more', undefined).end();
    // Ten spans ended while the export hangs: synchronous, no wait on the collector.
    expect(performance.now() - ending).toBeLessThan(20);
    // Four wait in the queue while the first four are in flight; six did not fit.
    expect(droppedBy(tracing.dropped())).toEqual({ queue_full: 6 });
    await tracing.flush();
    // Both exports timed out: everything is counted, nothing is left waiting.
    expect(droppedBy(tracing.dropped())).toEqual({ queue_full: 6, timeout: 8 });
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});

describe('settings', () => {
  it('is off without an endpoint, with OTEL_SDK_DISABLED=true, and reads the standard names', () => {
    expect(parseConfig({}).tracing).toBeNull();
    expect(parseConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'TRUE' }).tracing).toBeNull();
    expect(parseConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/' }).tracing).toEqual({
      url: 'http://c:4318/v1/traces',
      protocol: 'http/protobuf',
      headers: {},
      timeoutMs: 10_000,
      serviceName: 'callerid-gateway',
      sampler: { name: 'parentbased_always_on', ratio: 1, callerPerSecond: 100 },
      batch: { scheduleDelayMs: 5_000, maxQueueSize: 2_048, maxExportBatchSize: 512 },
    });
    const traced = parseConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://collector.example.com/custom/traces/',
      OTEL_EXPORTER_OTLP_HEADERS: 'Authorization=Bearer%20abc , x-a=1',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
      OTEL_SDK_DISABLED: 'false',
    }).tracing;
    expect(traced).toMatchObject({
      url: 'https://collector.example.com/custom/traces/',
      headers: { authorization: 'Bearer abc', 'x-a': '1' },
      sampler: { name: 'parentbased_traceidratio', ratio: 0.25 },
    });
    // The argument is read by the ratio samplers only.
    expect(
      parseConfig({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c',
        OTEL_TRACES_SAMPLER: 'always_on',
        OTEL_TRACES_SAMPLER_ARG: '0.1',
      }).tracing?.sampler,
    ).toEqual({ name: 'always_on', ratio: 1, callerPerSecond: 100 });
    expect(
      parseConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c', TRACING_CALLER_SAMPLED_PER_SECOND: '0' }).tracing?.sampler
        .callerPerSecond,
    ).toBe(0);
  });

  it.each([
    ['OTEL_EXPORTER_OTLP_PROTOCOL', 'grpc', 'must be one of http/protobuf, http/json'],
    ['OTEL_TRACES_SAMPLER_ARG', '1.5', 'must be a number from 0 to 1'],
    ['OTEL_TRACES_SAMPLER', 'jaeger_remote', 'must be one of'],
    ['OTEL_EXPORTER_OTLP_ENDPOINT', 'collector:4318', 'must be an http(s) URL'],
    ['OTEL_EXPORTER_OTLP_HEADERS', 'authorization', 'each entry must be name=value'],
    ['OTEL_BSP_MAX_EXPORT_BATCH_SIZE', '4096', 'must be at most OTEL_BSP_MAX_QUEUE_SIZE (2048)'],
    ['TRACING_CALLER_SAMPLED_PER_SECOND', '-1', 'must be'],
  ])('refuses %s=%s', (variable, value, problem) => {
    expect(() => parseConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', [variable]: value })).toThrow(
      `configuration error: ${variable}: ${problem}`,
    );
  });

  it('names an OTEL_* variable it does not read at start, as it does any other', () => {
    const env = { OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json', OTEL_SERVICE_NAME: 'gw' };
    expect(unknownSettings(env, SETTING_NAMES).map((u) => u.name)).toEqual(['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL']);
  });

  it('never repeats a header value it refuses (it may be a secret)', () => {
    expect(() => parseConfig({ OTEL_EXPORTER_OTLP_HEADERS: 'api-key=%E0%A4%A' })).toThrow(
      /^configuration error: OTEL_EXPORTER_OTLP_HEADERS: each entry must be name=value \(value percent-encoded\)$/,
    );
  });
});
