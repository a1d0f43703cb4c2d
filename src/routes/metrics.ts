// GET /metrics: the Prometheus text format, optionally behind a bearer token (METRICS_TOKEN).
import { Hono } from 'hono';
import type { AppEnv } from '../app-env.js';
import { problemResponse } from '../errors.js';
import type { GatewayMetrics } from '../observability/metrics.js';

export interface MetricsRouteOptions {
  metrics: GatewayMetrics;
  /** When set, scrapes must send `Authorization: Bearer <token>`. */
  token?: string | undefined;
}

const encoder = new TextEncoder();

/** Compares digests, so neither the position of a difference nor the token's length shows in the timing. */
async function sameSecret(given: string, expected: string): Promise<boolean> {
  const [a, b] = await Promise.all([
    crypto.subtle.digest('SHA-256', encoder.encode(given)),
    crypto.subtle.digest('SHA-256', encoder.encode(expected)),
  ]);
  const x = new Uint8Array(a);
  const y = new Uint8Array(b);
  let diff = 0;
  for (let i = 0; i < x.length; i++) diff |= x[i]! ^ y[i]!;
  return diff === 0;
}

export function metricsRoutes(options: MetricsRouteOptions): Hono<AppEnv> {
  const { metrics, token } = options;
  const app = new Hono<AppEnv>();

  app.get('/metrics', async (c) => {
    if (token !== undefined) {
      const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(c.req.header('authorization') ?? '');
      if (!match || !(await sameSecret(match[1]!, token))) {
        return problemResponse('unauthorized', 'Metrics need Authorization: Bearer <METRICS_TOKEN>.', c.get('requestId') ?? crypto.randomUUID(), {
          'www-authenticate': 'Bearer realm="callerid-gateway-metrics"',
        });
      }
    }
    const { body, contentType } = await metrics.render();
    return c.body(body, 200, { 'content-type': contentType, 'cache-control': 'no-store' });
  });

  return app;
}
