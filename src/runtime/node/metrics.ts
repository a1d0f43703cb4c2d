// Node's metrics: a registry of the gateway's own with Node's default process metrics added (those fail
// in workerd, so only here), and the optional separate metrics port (METRICS_PORT).
import { createAdaptorServer, type ServerType } from '@hono/node-server';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { createMetricsApp } from '../../app.js';
import { createMetrics, type GatewayMetrics } from '../../observability/metrics.js';

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

/** Serves only GET /metrics, on a port of its own, so it can stay off the network the API is exposed to. */
export function createMetricsServer(metrics: GatewayMetrics, token: string | undefined): ServerType {
  return createAdaptorServer({ fetch: createMetricsApp(metrics, token).fetch });
}
