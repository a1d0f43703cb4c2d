// Node's metrics: a registry of the gateway's own with Node's default process metrics added (those fail
// in workerd, so only here), and the optional separate metrics port (METRICS_PORT).
import { getRequestListener } from '@hono/node-server';
import type { Server } from 'node:http';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { createMetricsApp } from '../../app/app.js';
import { createMetrics, type GatewayMetrics } from '../../observability/metrics.js';
import type { Services } from '../../services/services.js';
import { UNMATCHED_ROUTE } from '../../observability/telemetry.js';
import { createListener, type ListenerOptions } from './listener.js';

const METRICS_PATH = '/metrics';

export function createNodeMetrics(): GatewayMetrics {
  const registry = new Registry();
  // Unprefixed (process_*, nodejs_*), as the usual Node.js dashboards expect them.
  collectDefaultMetrics({ register: registry });
  // prom-client exports these three gauges with a counter's `_total` suffix, which promtool refuses; the same
  // figures by type stay (nodejs_active_handles, nodejs_active_requests, nodejs_active_resources): sum() them.
  for (const misnamed of [
    'nodejs_active_handles_total',
    'nodejs_active_requests_total',
    'nodejs_active_resources_total',
  ])
    registry.removeSingleMetric(misnamed);
  return createMetrics({ registry });
}

/** Connections the metrics listener holds at once: a few Prometheus servers scraping, with room for a probe. */
const METRICS_MAX_CONNECTIONS = 64;

interface MetricsServerOptions extends Pick<ListenerOptions, 'http' | 'record' | 'tracing'> {
  /** METRICS_HOST: the host of a request without Host (HTTP/1.0). */
  host: string;
  /** METRICS_TOKEN: the bearer token a scrape must show, when set. */
  token: string | undefined;
  /** The trusted client address of a scrape, for its span (TRUST_PROXY_HOPS, as on the API). */
  addressOf: Services['addressOf'];
  /** The HTTP version of a scrape, for its span. */
  protocolOf: Services['protocolOf'];
}

/**
 * Serves only GET /metrics, on a port of its own (on loopback unless METRICS_HOST says otherwise), so it can stay
 * off the network the API is exposed to. It meets the API's request rules and timeouts and never reads a body.
 */
export function createMetricsServer(metrics: GatewayMetrics, options: MetricsServerOptions): Server {
  const app = createMetricsApp(metrics, options.token, {
    tracer: options.tracing.tracer,
    addressOf: options.addressOf,
    protocolOf: options.protocolOf,
  });
  return createListener(getRequestListener(app.fetch, { hostname: options.host }), {
    rules: { takesBody: () => false, boundOf: () => 0 },
    record: options.record,
    tracing: options.tracing,
    routeOf: (_method, path) => (path === METRICS_PATH ? METRICS_PATH : UNMATCHED_ROUTE),
    http: options.http,
    maxConnections: METRICS_MAX_CONNECTIONS,
  });
}
