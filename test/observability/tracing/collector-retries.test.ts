// The exporter keeps OTLP/HTTP's contract with a real collector socket: a 503, a 429 with Retry-After (seconds or an
// HTTP date), a 502 or 504 and a refused connection are tried again, with backoff or after the wait asked, within the
// export timeout and MAX_ATTEMPTS; any other 4xx is final. A connection cut before the answer is tried again, one cut
// while the answer is read is not (the collector may have the batch), through both runtimes' clients. The batch
// arrives once, and what is dropped is counted by cause. Every export request names the exporter in its User-Agent.
import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { GATEWAY_VERSION } from '../../../src/base/version.js';
import { parseConfig } from '../../../src/config/config.js';
import { MAX_ATTEMPTS } from '../../../src/observability/tracing/export-retry.js';
import type { ExportHttp } from '../../../src/observability/tracing/otlp-http.js';
import { createTracing, type Tracing } from '../../../src/observability/tracing/tracing.js';
import { createMetrics } from '../../../src/observability/metrics.js';
import { metricSourcesOf } from '../../../src/services/metric-sources.js';
import { Registry } from 'prom-client';
import { droppedBy } from '../../helpers/dropped-spans.js';
import { EXPORT_CLIENTS, nodeExportHttp, tracingRuntime } from '../../helpers/export-clients.js';
import { freePort } from '../../helpers/free-port.js';
import { startOtlpReceiver, type OtlpReceiver, type ScriptedAnswer } from '../../helpers/otlp-receiver.js';

const open: OtlpReceiver[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((r) => r.close()));
});

async function receiver(
  answers: (ScriptedAnswer | undefined)[] | ((n: number) => ScriptedAnswer | undefined),
  port?: number,
) {
  const answer = typeof answers === 'function' ? answers : (n: number) => answers[n];
  const r = await startOtlpReceiver({ answer, port });
  open.push(r);
  return r;
}

function tracingTo(url: string, timeoutMs = 10_000, http: ExportHttp = nodeExportHttp): Tracing {
  const config = parseConfig({
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: url,
    OTEL_EXPORTER_OTLP_TIMEOUT: String(timeoutMs),
    OTEL_BSP_SCHEDULE_DELAY: '0',
  }).tracing;
  if (config === null) throw new Error('tracing is off');
  return createTracing(config, tracingRuntime(http));
}

/** Ends `count` spans named `name-i` and waits until their export is done (delivered or given up). */
async function exportSpans(tracing: Tracing, count: number, name = 'retried'): Promise<void> {
  for (let i = 0; i < count; i++) tracing.tracer.startSpan(`${name}-${i}`, undefined).end();
  await tracing.flush();
}

const gaps = (r: OtlpReceiver) => r.arrivals.slice(1).map((a, i) => a.at - r.arrivals[i]!.at);
const names = (r: OtlpReceiver) => r.spans().map((s) => s.name);

describe('an exporter facing a collector that asks it to come back', () => {
  it('503 then 200: the batch is sent again after a backoff of about a second, delivered once, nothing dropped', async () => {
    const collector = await receiver([{ status: 503 }]);
    const tracing = tracingTo(collector.url);
    await exportSpans(tracing, 6);

    expect(collector.arrivals).toHaveLength(2);
    expect(collector.requests).toHaveLength(1);
    expect(names(collector)).toEqual(['retried-0', 'retried-1', 'retried-2', 'retried-3', 'retried-4', 'retried-5']);
    // The first backoff: 1 s, moved by up to a fifth either way.
    expect(gaps(collector)[0]).toBeGreaterThanOrEqual(790);
    expect(gaps(collector)[0]).toBeLessThan(1_500);
    expect(droppedBy(tracing.dropped())).toEqual({});
  });

  it('429 with Retry-After: 2 waits the two seconds asked, not the backoff, and delivers the batch once', async () => {
    const collector = await receiver([{ status: 429, headers: { 'retry-after': '2' } }]);
    const tracing = tracingTo(collector.url);
    await exportSpans(tracing, 3);

    expect(collector.arrivals).toHaveLength(2);
    expect(gaps(collector)[0]).toBeGreaterThanOrEqual(1_990);
    expect(names(collector)).toEqual(['retried-0', 'retried-1', 'retried-2']);
    expect(droppedBy(tracing.dropped())).toEqual({});
  });

  it('429 with Retry-After as an HTTP date, 502 and 504: each tried again until the collector takes the batch', async () => {
    const at = new Date(Date.now() + 1_000).toUTCString();
    const collector = await receiver([
      { status: 429, headers: { 'retry-after': at } },
      { status: 502, headers: { 'retry-after': '0' } },
      { status: 504, headers: { 'retry-after': '0' } },
    ]);
    const tracing = tracingTo(collector.url);
    await exportSpans(tracing, 2);

    expect(collector.arrivals).toHaveLength(4);
    // The date is to the second: the wait ends at most a second before the instant asked for.
    expect(collector.arrivals[1]!.at).toBeGreaterThanOrEqual(Date.parse(at) - 10);
    expect(collector.requests).toHaveLength(1);
    expect(names(collector)).toEqual(['retried-0', 'retried-1']);
    expect(droppedBy(tracing.dropped())).toEqual({});
  });

  it('a refused connection: tried again with backoff until a collector listens on the port', async () => {
    const port = await freePort();
    const tracing = tracingTo(`http://127.0.0.1:${port}/v1/traces`);
    const exported = exportSpans(tracing, 4);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const collector = await receiver([], port);
    await exported;

    expect(names(collector)).toEqual(['retried-0', 'retried-1', 'retried-2', 'retried-3']);
    expect(collector.requests).toHaveLength(1);
    expect(droppedBy(tracing.dropped())).toEqual({});
  });

  it(`503 every time: ${MAX_ATTEMPTS} tries at most, then the spans counted as unavailable`, async () => {
    const collector = await receiver(() => ({ status: 503, headers: { 'retry-after': '0' } }));
    const tracing = tracingTo(collector.url);
    await exportSpans(tracing, 5);

    expect(collector.arrivals).toHaveLength(MAX_ATTEMPTS);
    expect(droppedBy(tracing.dropped())).toEqual({ unavailable: 5 });
  });

  it('a Retry-After past the export timeout: given up at once, not waited out', async () => {
    const collector = await receiver(() => ({ status: 429, headers: { 'retry-after': '30' } }));
    const tracing = tracingTo(collector.url, 2_000);
    const started = Date.now();
    await exportSpans(tracing, 2);

    expect(Date.now() - started).toBeLessThan(1_000);
    expect(collector.arrivals).toHaveLength(1);
    expect(droppedBy(tracing.dropped())).toEqual({ unavailable: 2 });
  });

  it.each([400, 401, 403, 404, 413, 500, 501])(
    '%i: never tried again, the spans counted as refused',
    async (status) => {
      const collector = await receiver(() => ({ status, headers: { 'retry-after': '0' } }));
      const tracing = tracingTo(collector.url);
      await exportSpans(tracing, 3);

      expect(collector.arrivals).toHaveLength(1);
      expect(droppedBy(tracing.dropped())).toEqual({ refused: 3 });
    },
  );

  it("names the exporter in every request's User-Agent: callerid-gateway and package.json's version", async () => {
    const collector = await receiver([{ status: 503, headers: { 'retry-after': '0' } }]);
    const tracing = tracingTo(collector.url);
    await exportSpans(tracing, 1);

    expect(collector.arrivals.map((a) => a.headers['user-agent'])).toEqual([
      `callerid-gateway/${GATEWAY_VERSION}`,
      `callerid-gateway/${GATEWAY_VERSION}`,
    ]);
  });

  it('counts the drops by cause in /metrics', async () => {
    const collector = await receiver((n) =>
      n === 0 ? { status: 400 } : { status: 503, headers: { 'retry-after': '0' } },
    );
    const tracing = tracingTo(collector.url);
    const registry = new Registry();
    const metrics = createMetrics({ registry });
    metrics.watch(
      metricSourcesOf({
        upstreamTokens: {
          status: () => ({ expiresAt: null, consecutiveFailures: 0, hasToken: false, lastError: null, retryAt: null }),
        },
        tracing,
      }),
    );
    await exportSpans(tracing, 2, 'first');
    await exportSpans(tracing, 3, 'second');

    const { body } = await metrics.render();
    const line = (cause: string) =>
      new RegExp(`^callerid_gateway_trace_spans_dropped_total\\{cause="${cause}"\\} (\\d+)$`, 'm').exec(body)?.[1];
    expect(line('refused')).toBe('2');
    expect(line('unavailable')).toBe('3');
    expect(line('unreachable')).toBe('0');
    expect(line('queue_full')).toBe('0');
  });
});

/**
 * A collector on loopback that takes each request's body and then, for the `n`th request (from 0), cuts the
 * connection: before any answer (`before`), or after the status line and half a declared body (`during`); undefined:
 * answers 200. It counts the requests that arrived.
 */
async function cuttingCollector(cut: (n: number) => 'before' | 'during' | undefined) {
  let arrived = 0;
  const server: Server = createServer((req, res) => {
    const n = arrived++;
    req.resume();
    req.once('end', () => {
      const how = cut(n);
      if (how === 'before') return void req.socket.destroy();
      if (how === undefined) return void res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '64' });
      res.write('{"partialSuccess":', () => setTimeout(() => req.socket.destroy(), 20));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    arrived: () => arrived,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe.each(EXPORT_CLIENTS)('an exporter whose connection is cut, through %s', (_, http) => {
  it('before the answer began: tried again, and the batch is delivered by the next try', async () => {
    const collector = await cuttingCollector((n) => (n === 0 ? 'before' : undefined));
    try {
      const tracing = tracingTo(collector.url, 10_000, http);
      await exportSpans(tracing, 3);
      expect(collector.arrived()).toBe(2);
      expect(droppedBy(tracing.dropped())).toEqual({});
    } finally {
      await collector.close();
    }
  });

  it('while the answer was read: not tried again (the collector may have the batch), the spans counted as unreachable', async () => {
    const collector = await cuttingCollector(() => 'during');
    try {
      const tracing = tracingTo(collector.url, 10_000, http);
      await exportSpans(tracing, 3);
      expect(collector.arrived()).toBe(1);
      expect(droppedBy(tracing.dropped())).toEqual({ unreachable: 3 });
    } finally {
      await collector.close();
    }
  });
});
