// GET /metrics answers in OpenMetrics, exemplars and all, when the scrape's Accept prefers it, as Prometheus's does,
// and in the text format otherwise. The route is the one both Node's metrics listener and the API port serve.
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createMetricsApp } from '../../app/app.js';
import { createMetrics } from '../../observability/metrics.js';
import { disabledTracer } from '../../observability/tracing/tracer.js';

const TEXT = 'text/plain; version=0.0.4; charset=utf-8';
const OPENMETRICS = 'application/openmetrics-text; version=1.0.0; charset=utf-8';

/** Prometheus 2's Accept on every scrape (scrape.go's acceptHeader). */
const PROMETHEUS_2 =
  'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1';
/** Prometheus 3's, from its default scrape_protocols. */
const PROMETHEUS_3 =
  'application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.5,application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.3,text/plain;version=0.0.4;q=0.2,*/*;q=0.1';

describe('GET /metrics by Accept', () => {
  const metrics = createMetrics({ registry: new Registry() });
  metrics.observeRequest('/v2/contacts/search', 'GET', 200, 0.004, {
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    spanId: '00f067aa0ba902b7',
  });
  const app = createMetricsApp(metrics, undefined, { tracer: disabledTracer, addressOf: () => undefined });
  const scrape = async (accept: string | undefined) => {
    const res = await app.request('/metrics', { headers: accept === undefined ? {} : { accept } });
    expect(res.status).toBe(200);
    return { contentType: res.headers.get('content-type'), body: await res.text() };
  };

  it.each([
    ['Prometheus 2', PROMETHEUS_2],
    ['Prometheus 3', PROMETHEUS_3],
    ['no version', 'application/openmetrics-text'],
    ['version 1.0.0', 'application/openmetrics-text; version=1.0.0; charset=utf-8'],
  ])('answers OpenMetrics with the exemplar to %s', async (_who, accept) => {
    const { contentType, body } = await scrape(accept);
    expect(contentType).toBe(OPENMETRICS);
    expect(body).toContain(
      '{le="0.005",route="/v2/contacts/search",method="GET",status="200"} 1 # {trace_id="4bf92f3577b34da6a3ce929d0e0e4736",span_id="00f067aa0ba902b7"} 0.004 ',
    );
    expect(body.endsWith('\n# EOF\n')).toBe(true);
  });

  it.each([
    ['no Accept', undefined],
    ['any type', '*/*'],
    ['the text format', 'text/plain;version=0.0.4'],
    ['the text format first', 'text/plain;version=0.0.4,application/openmetrics-text;version=1.0.0;q=0.9'],
    ['OpenMetrics refused', 'application/openmetrics-text;q=0,*/*;q=0.1'],
    ['a version it does not write alone', 'application/openmetrics-text;version=0.0.1'],
  ])('answers the text format to %s', async (_what, accept) => {
    const { contentType, body } = await scrape(accept);
    expect(contentType).toBe(TEXT);
    expect(body).toBe((await metrics.render()).body);
    expect(body).not.toContain(' # {');
  });
});
