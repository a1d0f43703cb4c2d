// GET /metrics: the Prometheus text format, optionally behind a bearer token (METRICS_TOKEN).
import { Hono } from 'hono';
import type { AppEnv } from '../app-env.js';
import { routeDocs } from '../docs/route-docs.js';
import { constantTimeEqual, sha256Hex } from '../auth/client-registry.js';
import { problemResponse } from '../errors.js';
import type { MetricsEndpoint } from '../observability/metrics.js';

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

export function metricsRoutes(options: MetricsRouteOptions): Hono<AppEnv> {
  const { metrics, token } = options;
  const app = new Hono<AppEnv>();

  app.get('/metrics', routeDocs.metrics, async (c) => {
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
    const { body, contentType } = await metrics.render();
    return c.body(body, 200, { 'content-type': contentType, 'cache-control': 'no-store' });
  });

  return app;
}
