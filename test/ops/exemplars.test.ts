// Exemplars from a running gateway to Prometheus's own server: a Node gateway traces every request (ratio 1.0) to an
// OTLP receiver that decodes with the opentelemetry-proto files, Prometheus with exemplar storage scrapes its
// metrics listener (asking OpenMetrics first, as it always does), and /api/v1/query_exemplars returns the
// request-duration exemplars, each naming a server span the receiver decoded. The text format of the same listener
// stays what promtool accepts, without exemplars.
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/free-port.js';
import { PROMETHEUS_BIN, startPrometheus, type RunningPrometheus } from '../helpers/prometheus.js';
import { checkRequirement, fileRequirement } from '../helpers/requires.js';
import type { Stack } from '../helpers/stack.js';
import { SPAN_KIND, startTracedStack, type TracedStack } from '../helpers/traced-stack.js';

const PROMTOOL_BIN = '/usr/bin/promtool';
const hasPrometheus = checkRequirement(fileRequirement(PROMETHEUS_BIN, 'prometheus (Debian package prometheus)'));
const hasPromtool = checkRequirement(fileRequirement(PROMTOOL_BIN, 'promtool (Debian package prometheus)'));

const JOB = 'callerid-gateway';
const { SERVER } = SPAN_KIND;
const DURATION_BUCKETS = 'callerid_gateway_http_request_duration_seconds_bucket';

interface ExemplarSeries {
  seriesLabels: Record<string, string>;
  exemplars: { labels: Record<string, string>; value: string; timestamp: number }[];
}

describe.skipIf(!hasPrometheus)('exemplars of a traced gateway in Prometheus with exemplar storage', () => {
  let traced: TracedStack;
  let stack: Stack;
  let prometheus: RunningPrometheus;
  let metricsUrl: string;
  const start = Math.floor(Date.now() / 1000) - 60;
  /** A caller's unsampled trace: answered and logged, recorded nowhere, so never an exemplar. */
  const unsampledTrace = 'feedc0de'.repeat(4);

  beforeAll(async () => {
    traced = await startTracedStack({
      env: {
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '1.0',
        // Scraped on the metrics listener, as config/prometheus/prometheus.yml does.
        METRICS_PORT: String(await freePort()),
      },
    });
    stack = traced.stack;
    metricsUrl = `http://127.0.0.1:${stack.gateway.metricsServer!.port}/metrics`;
    prometheus = await startPrometheus({
      job: JOB,
      targets: [`127.0.0.1:${stack.gateway.metricsServer!.port}`],
      features: ['exemplar-storage'],
    });
    // A first scrape before any request: OpenMetrics with the token's expiry still NaN parses.
    await prometheus.scraped();

    const crm = await stack.login('crm'); // through the app: POST /token/login
    for (const what of ['020 7946 0101', '020 7946 0101', '020 7946 0102', 'not a number']) {
      // Through Node's search door: two misses, a hit, a 400.
      await (await stack.search(what, crm)).arrayBuffer();
    }
    const unsampled = await stack.search('020 7946 0101', crm, {
      headers: { traceparent: `00-${unsampledTrace}-00f067aa0ba902b7-00` },
    });
    expect(unsampled.status).toBe(200);
    await unsampled.arrayBuffer();
    await stack.gateway.services.tracing.flush();
  }, 60_000);

  afterAll(async () => {
    await prometheus?.close();
    await traced?.close();
  });

  /** The duration's exemplars Prometheus holds, once it holds one for each of `routes`. */
  const exemplarsOf = async (routes: string[]): Promise<ExemplarSeries[]> => {
    const query = `/api/v1/query_exemplars?query=${encodeURIComponent(DURATION_BUCKETS)}&start=${start}&end=${start + 900}`;
    const deadline = Date.now() + 20_000;
    for (;;) {
      const answer = (await prometheus.api<{ data?: ExemplarSeries[] }>(query)).data ?? [];
      const held = new Set(answer.map((s) => s.seriesLabels.route));
      if (routes.every((route) => held.has(route)) || Date.now() > deadline) return answer;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  };

  it("returns exemplars whose trace and span ids are exported server spans', for the door and the app", async () => {
    const answer = await exemplarsOf(['/v2/contacts/search', '/token/login']);
    const servers = traced.receiver.spans().filter((s) => s.kind === SERVER);
    const exemplars = answer.flatMap((s) => s.exemplars.map((e) => ({ series: s.seriesLabels, ...e })));
    expect(
      answer.map((s) => s.seriesLabels.route),
      prometheus.output(),
    ).toEqual(expect.arrayContaining(['/v2/contacts/search', '/token/login']));
    for (const exemplar of exemplars) {
      expect(Object.keys(exemplar.labels).sort()).toEqual(['span_id', 'trace_id']);
      const span = servers.find((s) => s.traceId === exemplar.labels.trace_id);
      expect(span, `no exported server span of ${exemplar.labels.trace_id}`).toBeDefined();
      expect(span!.spanId).toBe(exemplar.labels.span_id);
      // The span and the series name the same route and status.
      expect(span!.attributes['http.route']).toBe(exemplar.series.route);
      expect(String(span!.attributes['http.response.status_code'])).toBe(exemplar.series.status);
      // The exemplar's value lies in its bucket.
      const le = exemplar.series.le === '+Inf' ? Infinity : Number(exemplar.series.le);
      expect(Number(exemplar.value)).toBeLessThanOrEqual(le);
    }
    expect(exemplars.map((e) => e.labels.trace_id)).not.toContain(unsampledTrace);
    // The numbers as a leak would carry them, in any spelling (a separator or none), never the shorter runs a
    // random id or a duration may hold by chance.
    expect(JSON.stringify(answer)).not.toMatch(/7946\D?010[12]/);
  }, 30_000);

  it('keeps the series named as in the text format: the request counter counts every search', async () => {
    const searches = async () =>
      (await prometheus.query(`sum(callerid_gateway_http_requests_total{route="/v2/contacts/search"})`)).data?.result[0]
        ?.value[1];
    const deadline = Date.now() + 20_000;
    let counted = await searches();
    while (counted !== '5' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      counted = await searches();
    }
    expect(counted).toBe('5');
  }, 30_000);

  it.skipIf(!hasPromtool)(
    'answers a scrape that does not ask for OpenMetrics in the text format promtool accepts',
    async () => {
      const res = await fetch(metricsUrl);
      expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
      const text = await res.text();
      expect(text).toContain(
        `${DURATION_BUCKETS}{le="+Inf",route="/v2/contacts/search",method="GET",status="200"} 4\n`,
      );
      expect(text).not.toContain(' # {');
      expect(text).not.toContain('# EOF');
      const run = spawnSync(PROMTOOL_BIN, ['check', 'metrics'], { input: text, encoding: 'utf8' });
      expect(run.stdout + run.stderr).toBe('');
      expect(run.status).toBe(0);
    },
  );
});
