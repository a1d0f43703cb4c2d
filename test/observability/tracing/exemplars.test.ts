// Exemplars as prom-client 15.1.3 writes them and Prometheus keeps them: a request-duration histogram on an
// OpenMetrics registry carries the trace id of a sampled request, and Prometheus with exemplar storage returns it
// through /api/v1/query_exemplars, naming a span the exporter sent. The registry is the test's own: what prom-client
// does (and does not do) with exemplars is what the gateway's metrics can rely on.
import { createServer, type Server } from 'node:http';
import client from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config.js';
import { inProcess } from '../../../src/shared-state/background.js';
import { endServerSpan, startServerSpan } from '../../../src/observability/tracing/http-spans.js';
import { createTracing } from '../../../src/observability/tracing/tracing.js';
import { startOtlpReceiver, type OtlpReceiver } from '../../helpers/otlp-receiver.js';
import { PROMETHEUS_BIN, startPrometheus, type RunningPrometheus } from '../../helpers/prometheus.js';
import { checkRequirement, fileRequirement } from '../../helpers/requires.js';

const { Histogram, Registry } = client;
const BUCKETS = [0.005, 0.05, 0.5];

type OpenMetricsRegistry = client.Registry<client.OpenMetricsContentType>;

/**
 * prom-client's types lack the registry constructor's content type argument: set after construction, which is
 * also what its own code reads.
 */
function openMetricsRegistry(): OpenMetricsRegistry {
  const registry = new Registry<client.OpenMetricsContentType>();
  registry.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
  return registry;
}

// prom-client's types allow only the metric's own label names as exemplar labels: the exemplar's are named in the
// type parameter too, while `labelNames` (what the series carry) stays `route` alone.
const exemplarHistogram = (registry: client.Registry<client.RegistryContentType>) =>
  new Histogram<'route' | 'trace_id' | 'span_id'>({
    name: 'test_request_duration_seconds',
    help: 'Request duration.',
    labelNames: ['route'],
    buckets: BUCKETS,
    enableExemplars: true,
    registers: [registry],
  });

describe('prom-client 15.1.3 exemplars', () => {
  it('writes the exemplar on the bucket the value falls in, per label set, in OpenMetrics only', async () => {
    const registry = openMetricsRegistry();
    const histogram = exemplarHistogram(registry);
    histogram.observe({ labels: { route: '/a' }, value: 0.02, exemplarLabels: { trace_id: 'a'.repeat(32) } });
    histogram.observe({ labels: { route: '/b' }, value: 0.3, exemplarLabels: { trace_id: 'b'.repeat(32) } });
    // Above the last finite bound: on the +Inf bucket.
    histogram.observe({ labels: { route: '/b' }, value: 7, exemplarLabels: { trace_id: 'c'.repeat(32) } });
    // An unsampled request: counted, no exemplar.
    histogram.observe({ labels: { route: '/a' }, value: 0.001 });
    const text = await registry.metrics();
    const exemplarLines = text.split('\n').filter((line) => line.includes(' # {'));
    expect(exemplarLines.map((line) => line.replace(/ [\d.]+$/, ''))).toEqual([
      `test_request_duration_seconds_bucket{le="0.05",route="/a"} 2 # {trace_id="${'a'.repeat(32)}"} 0.02`,
      `test_request_duration_seconds_bucket{le="0.5",route="/b"} 1 # {trace_id="${'b'.repeat(32)}"} 0.3`,
      `test_request_duration_seconds_bucket{le="+Inf",route="/b"} 2 # {trace_id="${'c'.repeat(32)}"} 7`,
    ]);
    // The exemplar's timestamp is in seconds, as OpenMetrics wants it.
    const seconds = Number(/ ([\d.]+)$/.exec(exemplarLines[0]!)![1]);
    expect(Math.abs(seconds - Date.now() / 1000)).toBeLessThan(60);
    expect(text.trimEnd().endsWith('# EOF')).toBe(true);
  });

  it('ties exemplars to an OpenMetrics registry and to the object form of observe', () => {
    // A histogram with exemplars cannot sit in a text-format registry: the text format needs a registry of its own.
    expect(() => exemplarHistogram(new Registry())).toThrow(/only on OpenMetrics registries/);
    const histogram = exemplarHistogram(openMetricsRegistry());
    // observe(labels, value), the form without exemplars, throws once exemplars are on.
    expect(() => histogram.observe({ route: '/a' } as never, 0.1 as never)).toThrow(/not a valid number/);
  });
});

const prometheusPresent = checkRequirement(fileRequirement(PROMETHEUS_BIN, `Prometheus (${PROMETHEUS_BIN})`));

describe.skipIf(!prometheusPresent)('an exemplar through Prometheus', () => {
  let receiver: OtlpReceiver;
  let target: Server;
  let prometheus: RunningPrometheus;
  const registry = openMetricsRegistry();
  const histogram = exemplarHistogram(registry);

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    target = createServer(async (_req, res) => {
      res.writeHead(200, { 'content-type': registry.contentType }).end(await registry.metrics());
    });
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    const { port } = target.address() as { port: number };
    prometheus = await startPrometheus({
      job: 'exemplars',
      targets: [`127.0.0.1:${port}`],
      features: ['exemplar-storage'],
    });
    await prometheus.scraped();
  }, 60_000);

  afterAll(async () => {
    await prometheus?.close();
    await new Promise<void>((resolve) => target?.close(() => resolve()));
    await receiver?.close();
  });

  it("returns the exemplar whose trace id is an exported span's", async () => {
    const tracing = createTracing(parseConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.url }).tracing, {
      fetch: (url, init) => fetch(url, init),
      background: inProcess,
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
      now: Date.now,
    });
    const span = startServerSpan(tracing.tracer, {
      method: 'GET',
      route: '/v2/contacts/search',
      traceparent: undefined,
      tracestate: undefined,
      scheme: 'http',
      serverAddress: '127.0.0.1',
      clientAddress: undefined,
    });
    endServerSpan(span, { status: 200, cacheStatus: 'miss' });
    const { traceId, spanId } = span.context!;
    histogram.observe({
      labels: { route: '/v2/contacts/search' },
      value: 0.12,
      exemplarLabels: { trace_id: traceId, span_id: spanId },
    });
    await tracing.flush();
    expect(receiver.spans().map((s) => s.traceId)).toEqual([traceId]);

    const start = Math.floor(Date.now() / 1000) - 60;
    const query = `/api/v1/query_exemplars?query=${encodeURIComponent('test_request_duration_seconds_bucket')}&start=${start}&end=${start + 600}`;
    type Exemplars = {
      data: { seriesLabels: Record<string, string>; exemplars: { labels: Record<string, string>; value: string }[] }[];
    };
    const deadline = Date.now() + 20_000;
    let answer: Exemplars['data'] = [];
    while (answer.length === 0 && Date.now() < deadline) {
      answer = (await prometheus.api<Exemplars>(query)).data ?? [];
      if (answer.length === 0) await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(answer, prometheus.output()).toHaveLength(1);
    expect(answer[0]!.seriesLabels).toMatchObject({ le: '0.5', route: '/v2/contacts/search' });
    expect(answer[0]!.exemplars).toEqual([
      expect.objectContaining({ labels: { trace_id: traceId, span_id: spanId }, value: '0.12' }),
    ]);
  }, 60_000);
});
