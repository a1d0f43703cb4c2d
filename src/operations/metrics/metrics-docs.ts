// The OpenAPI description of GET /metrics (hono-openapi middlewares the route puts first in its handler list).
import type { MiddlewareHandler } from 'hono';
import { problemResponses } from '../../docs/problem-responses.js';
import { route } from '../../docs/route-docs.js';

export const metricsDocs = {
  metrics: route({
    tags: ['Operations'],
    summary: 'Prometheus metrics',
    description:
      'The Prometheus text format, or OpenMetrics 1.0.0 when `Accept` prefers `application/openmetrics-text` (as Prometheus asks): on Node its request-duration buckets then carry the trace and span ids of recorded requests as exemplars. On Node served on its own listener (METRICS_PORT, default 9464); on the API port only with METRICS_TOKEN set (then it needs `Authorization: Bearer <METRICS_TOKEN>`) or METRICS_PORT=0.',
    operationId: 'metrics',
    security: [{}, { metricsToken: [] }],
    responses: {
      200: {
        description: 'The metrics of this process.',
        content: {
          'text/plain': { schema: { type: 'string' } },
          'application/openmetrics-text': { schema: { type: 'string' } },
        },
      },
      ...problemResponses('unauthorized'),
    },
  }),
} satisfies Record<string, MiddlewareHandler>;
