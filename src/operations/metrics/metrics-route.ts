// GET /metrics: the Prometheus text format, or OpenMetrics when the scrape asks for it (Accept), optionally behind a
// bearer token (METRICS_TOKEN).
import { Hono, type Context } from 'hono';
import { accepts } from 'hono/accepts';
import type { AppEnv } from '../../http/app-env.js';
import { metricsDocs } from './metrics-docs.js';
import { constantTimeEqual, sha256Hex } from '../../auth/client-registry.js';
import { problemResponse } from '../../base/errors.js';
import type { MetricsEndpoint, MetricsFormat } from '../../observability/metrics.js';

export interface MetricsRouteOptions {
  metrics: MetricsEndpoint;
  /** When set, scrapes must send `Authorization: Bearer <token>`. */
  token?: string | undefined;
}

/** Compares digests, so neither the position of a difference nor the token's length shows in the timing. */
async function sameSecret(given: string, expected: string): Promise<boolean> {
  const [a, b] = await Promise.all([sha256Hex(given), sha256Hex(expected)]);
  return constantTimeEqual(a, b);
}

const OPENMETRICS = 'application/openmetrics-text';

/**
 * OpenMetrics (1.0.0, the version prom-client writes) when the scrape's Accept prefers it to the text format, as
 * Prometheus's does; the text format otherwise, and without an Accept. The entries come ordered by their q.
 */
function formatAsked(c: Context): MetricsFormat {
  const format = accepts(c, {
    header: 'Accept',
    supports: ['openmetrics', 'text'],
    default: 'text',
    match(entries) {
      for (const { type, params, q } of entries) {
        if (q <= 0) continue;
        const version = params.version;
        if (type.toLowerCase() === OPENMETRICS && (version === undefined || version === '1.0.0')) return 'openmetrics';
        if (/^(text\/plain|text\/\*|\*\/\*)$/i.test(type)) return 'text';
      }
      return 'text';
    },
  });
  return format === 'openmetrics' ? 'openmetrics' : 'text';
}

export function metricsRoutes(options: MetricsRouteOptions): Hono<AppEnv> {
  const { metrics, token } = options;
  const app = new Hono<AppEnv>();

  app.get('/metrics', metricsDocs.metrics, async (c) => {
    if (token !== undefined) {
      const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(c.req.header('authorization') ?? '');
      if (!match || !(await sameSecret(match[1]!, token))) {
        return problemResponse(
          'unauthorized',
          'Metrics need Authorization: Bearer <METRICS_TOKEN>.',
          c.get('requestId') ?? crypto.randomUUID(),
          {
            'www-authenticate': 'Bearer realm="callerid-gateway-metrics"',
          },
        );
      }
    }
    const { body, contentType } = await metrics.render(formatAsked(c));
    return c.body(body, 200, { 'content-type': contentType, 'cache-control': 'no-store' });
  });

  return app;
}
