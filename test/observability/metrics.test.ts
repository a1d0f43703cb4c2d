import { spawnSync } from 'node:child_process';
import { Counter, Registry, register as globalRegistry, type OpenMetricsContentType } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/observability/metrics.js';
import { createNodeMetrics } from '../../src/runtime/node/node-metrics.js';
import { metricSourcesOf } from '../../src/services/metric-sources.js';
import { checkRequirement, fileRequirement } from '../helpers/requires.js';

const hasPromtool = checkRequirement(fileRequirement('/usr/bin/promtool', 'promtool (Debian package prometheus)'));

async function series(
  registry: Registry,
  name: string,
  labels: Record<string, string> = {},
): Promise<number | undefined> {
  const metric = registry.getSingleMetric(name);
  if (!metric) return undefined;
  const { values } = await metric.get();
  const found = values.find((v) =>
    Object.entries(labels).every(([k, want]) => String((v.labels as Record<string, unknown>)[k]) === want),
  );
  return found?.value;
}

describe('createMetrics', () => {
  it('maps every telemetry event to its metric and label', async () => {
    const registry = new Registry();
    const { telemetry } = createMetrics({ registry });
    telemetry.cacheLookup('hit');
    telemetry.cacheLookup('hit');
    telemetry.cacheLookup('stale');
    telemetry.cacheLookup('coalesced');
    telemetry.upstreamCall('search', 'ok', 0.02);
    telemetry.upstreamCall('search', 'timeout', 3);
    telemetry.upstreamCall('token', 'server_error', 0.1);
    telemetry.tokenRefresh('ok', 'unauthorized');
    telemetry.tokenRefresh('error', 'cold');
    telemetry.consoleRefused('mobile');

    const p = 'callerid_gateway_';
    expect(await series(registry, `${p}cache_lookups_total`, { result: 'hit' })).toBe(2);
    expect(await series(registry, `${p}cache_lookups_total`, { result: 'stale' })).toBe(1);
    expect(await series(registry, `${p}cache_lookups_total`, { result: 'coalesced' })).toBe(1);
    expect(await series(registry, `${p}cache_lookups_total`, { result: 'miss' })).toBe(0);
    expect(await series(registry, `${p}upstream_requests_total`, { endpoint: 'search', outcome: 'timeout' })).toBe(1);
    expect(await series(registry, `${p}upstream_requests_total`, { endpoint: 'token', outcome: 'server_error' })).toBe(
      1,
    );
    expect(await series(registry, `${p}upstream_timeouts_total`, { endpoint: 'search' })).toBe(1);
    expect(await series(registry, `${p}upstream_timeouts_total`, { endpoint: 'token' })).toBe(0);
    expect(await series(registry, `${p}upstream_request_duration_seconds`, { endpoint: 'search', le: '+Inf' })).toBe(2);
    expect(await series(registry, `${p}upstream_token_refreshes_total`, { result: 'ok', reason: 'unauthorized' })).toBe(
      1,
    );
    expect(await series(registry, `${p}upstream_token_refreshes_total`, { result: 'error', reason: 'cold' })).toBe(1);
    expect(await series(registry, `${p}upstream_token_unauthorized_refreshes_total`)).toBe(1);
    expect(await series(registry, `${p}console_refusals_total`, { reason: 'mobile' })).toBe(1);
  });

  it('reads token expiry, cache size, dropped spans and capped caller traces at scrape time', async () => {
    const registry = new Registry();
    let now = 1_000_000;
    const metrics = createMetrics({ registry });
    expect(await series(registry, 'callerid_gateway_upstream_token_expiry_timestamp_seconds')).toBeNaN();
    const status = { expiresAt: now + 90_000, consecutiveFailures: 0 };
    let dropped = 2;
    const none = { queue_full: 0, refused: 0, unavailable: 0, unreachable: 0, timeout: 0, bad_answer: 0 };
    metrics.watch(
      metricSourcesOf({
        upstreamTokens: { status: () => ({ ...status, hasToken: true, lastError: null, retryAt: null }) },
        lookupCache: { entries: 3, bytes: 4096 },
        tracing: {
          dropped: () => ({ ...none, unavailable: dropped, queue_full: 1 }),
          callerSampledCapped: () => dropped * 10,
        },
      }),
    );
    // Unix time of expiry: it does not move as time passes.
    expect(await series(registry, 'callerid_gateway_upstream_token_expiry_timestamp_seconds')).toBe(1_090);
    now += 100_000;
    expect(await series(registry, 'callerid_gateway_upstream_token_expiry_timestamp_seconds')).toBe(1_090);
    status.consecutiveFailures = 4;
    expect(await series(registry, 'callerid_gateway_upstream_token_consecutive_failures')).toBe(4);
    expect(await series(registry, 'callerid_gateway_cache_entries')).toBe(3);
    expect(await series(registry, 'callerid_gateway_cache_bytes')).toBe(4096);
    expect(await series(registry, 'callerid_gateway_trace_spans_dropped_total', { cause: 'unavailable' })).toBe(2);
    expect(await series(registry, 'callerid_gateway_trace_spans_dropped_total', { cause: 'queue_full' })).toBe(1);
    expect(await series(registry, 'callerid_gateway_trace_spans_dropped_total', { cause: 'refused' })).toBe(0);
    expect(await series(registry, 'callerid_gateway_trace_caller_sampled_capped_total')).toBe(20);
    dropped = 7;
    expect(await series(registry, 'callerid_gateway_trace_spans_dropped_total', { cause: 'unavailable' })).toBe(7);
    expect(await series(registry, 'callerid_gateway_trace_caller_sampled_capped_total')).toBe(70);
  });

  it('keeps request labels closed: unknown methods become "other"', async () => {
    const registry = new Registry();
    const metrics = createMetrics({ registry });
    metrics.observeRequest('/v2/contacts/search', 'GET', 200, 0.001);
    metrics.observeRequest('unmatched', 'BREW', 405, 0.001);
    metrics.observeRequest('unmatched', 'PROPFIND', 405, 0.001);
    expect(
      await series(registry, 'callerid_gateway_http_requests_total', {
        route: '/v2/contacts/search',
        method: 'GET',
        status: '200',
      }),
    ).toBe(1);
    expect(
      await series(registry, 'callerid_gateway_http_requests_total', {
        route: 'unmatched',
        method: 'other',
        status: '405',
      }),
    ).toBe(2);
    const text = (await metrics.render()).body;
    expect(text).not.toMatch(/BREW|PROPFIND/);
  });

  it('uses only the registry it is given, never the global one, so two gateways do not share counts', async () => {
    const a = new Registry();
    const b = new Registry();
    createMetrics({ registry: a }).telemetry.cacheLookup('hit');
    createMetrics({ registry: b });
    expect(await series(a, 'callerid_gateway_cache_lookups_total', { result: 'hit' })).toBe(1);
    expect(await series(b, 'callerid_gateway_cache_lookups_total', { result: 'hit' })).toBe(0);
    expect(globalRegistry.getSingleMetric('callerid_gateway_cache_lookups_total')).toBeUndefined();
  });

  it.skipIf(!hasPromtool)('renders text that promtool check metrics accepts without remarks', async () => {
    const registry = new Registry();
    const metrics = createMetrics({ registry });
    metrics.observeRequest('/healthz', 'GET', 200, 0.0002);
    metrics.telemetry.upstreamCall('search', 'ok', 0.05);
    const { body, contentType } = await metrics.render();
    expect(contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    const run = spawnSync('/usr/bin/promtool', ['check', 'metrics'], { input: body, encoding: 'utf8' });
    expect(`${run.stdout}${run.stderr}`.trim()).toBe('');
    expect(run.status).toBe(0);
  });

  it('writes the same text with traced requests and OpenMetrics scrapes between as without them', async () => {
    const traced = createMetrics({ registry: new Registry() });
    const plain = createMetrics({ registry: new Registry() });
    const trace = { traceId: 'a1'.repeat(16), spanId: 'b2'.repeat(8) };
    const requests: [string, string, number, number][] = [
      ['/v2/contacts/search', 'GET', 200, 0.0003],
      ['/v2/contacts/search', 'GET', 200, 0.2],
      ['/token/login', 'POST', 200, 0.01],
      ['/v2/contacts/search', 'GET', 502, 12],
    ];
    for (const [route, method, status, seconds] of requests) {
      traced.observeRequest(route, method, status, seconds, trace);
      plain.observeRequest(route, method, status, seconds);
    }
    await traced.render('openmetrics');
    const text = await traced.render();
    expect(text).toEqual(await plain.render());
    expect(text.contentType).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(text.body).not.toContain(' # {');
    expect(text.body).not.toContain('# EOF');
    // Counters keep their `_total` in the text format after an OpenMetrics scrape.
    expect(text.body).toContain('# TYPE callerid_gateway_http_requests_total counter');
    expect(text.body).toContain('\ncallerid_gateway_cache_lookups_total{result="hit"} 0\n');
  });

  it("renders OpenMetrics with the requests' exemplars and every series of the text format, named alike", async () => {
    const metrics = createMetrics({ registry: new Registry() });
    const trace = { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331' };
    metrics.observeRequest('/v2/contacts/search', 'GET', 200, 0.0007, trace);
    metrics.observeRequest('/v2/contacts/search', 'GET', 200, 0.0002);
    metrics.telemetry.upstreamCall('search', 'ok', 0.05);
    const open = await metrics.render('openmetrics');
    expect(open.contentType).toBe('application/openmetrics-text; version=1.0.0; charset=utf-8');
    expect(open.body.endsWith('\n# EOF\n')).toBe(true);
    expect(open.body.split('\n').filter((line) => line.includes(' # {'))).toEqual([
      expect.stringMatching(
        new RegExp(
          '^callerid_gateway_http_request_duration_seconds_bucket\\{le="0.001",route="/v2/contacts/search",method="GET",status="200"\\} 2 ' +
            `# \\{trace_id="${trace.traceId}",span_id="${trace.spanId}"\\} 0.0007 \\d{10}(\\.\\d+)?$`,
        ),
      ),
    ]);
    // OpenMetrics names a counter's family without `_total` and its samples with it: the same series as the text.
    expect(open.body).toContain('# TYPE callerid_gateway_http_requests counter\n');
    expect(seriesOf(open.body)).toEqual(seriesOf((await metrics.render()).body));
    expect(seriesOf(open.body)).toContain(
      'callerid_gateway_http_requests_total{route="/v2/contacts/search",method="GET",status="200"}',
    );
  });

  it('needs its views for OpenMetrics: prom-client 15.1.3 renames a counter it renders so in place', async () => {
    // The reason metrics.ts renders OpenMetrics through views of the metrics (prom-client PR #829 removes the
    // rename): once a prom-client release no longer renames, the registry can render as OpenMetrics directly.
    const counter = new Counter({ name: 'x_total', help: 'h', registers: [new Registry()] });
    const openMetrics = new Registry<OpenMetricsContentType>();
    openMetrics.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
    openMetrics.registerMetric(counter);
    await openMetrics.metrics();
    expect((counter as unknown as { name: string }).name).toBe('x');
  });

  it("names Node's families in OpenMetrics as in the text format, a counter's without its `_total`", async () => {
    const metrics = createNodeMetrics();
    const textFamilies = typeLines((await metrics.render()).body).map((line) =>
      line.replace(/^# TYPE (\w+)_total counter$/, '# TYPE $1 counter'),
    );
    expect(typeLines((await metrics.render('openmetrics')).body)).toEqual(textFamilies);
    expect(textFamilies).toContain('# TYPE process_cpu_seconds counter');
    // Node's registry keeps its names for the text format after the OpenMetrics scrape.
    expect((await metrics.render()).body).toContain('\nprocess_cpu_seconds_total ');
  });
});

/** The series a scrape's body holds: each sample's name and labels, in order (values and exemplars left out). */
function seriesOf(body: string): string[] {
  return body
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => /^[^ {]+(\{[^}]*\})?/.exec(line)![0]);
}

const typeLines = (body: string) => body.split('\n').filter((line) => line.startsWith('# TYPE '));
