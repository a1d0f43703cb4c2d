// The OpenAPI description of GET /healthz and GET /readyz (hono-openapi middlewares the route puts first in its handler list).
import type { MiddlewareHandler } from 'hono';
import { problemResponses } from '../../docs/problem-responses.js';
import { ref } from '../../docs/openapi-schemas.js';
import { json, ANONYMOUS, route, MALFORMED_REQUEST } from '../../docs/route-docs.js';

export const healthDocs = {
  healthz: route({
    tags: ['Operations'],
    summary: 'Liveness: the process answers',
    description:
      'Answers 200 as long as the process serves requests; it asks nothing of the upstream or the shared stores. For a container or orchestrator liveness probe.',
    operationId: 'healthz',
    security: ANONYMOUS,
    responses: {
      200: { description: 'Alive.', content: json(ref('Health')) },
      ...MALFORMED_REQUEST,
      ...problemResponses(),
    },
  }),

  readyz: route({
    tags: ['Operations'],
    summary: "Readiness: the deployment's revocations are read and an upstream token is held or can be obtained now",
    description:
      "Answers 200 once the gateway has read the deployment's revoked tokens and while it holds an upstream token or can obtain one now, 503 with the reason otherwise; for a load balancer or readiness probe.",
    operationId: 'readyz',
    security: ANONYMOUS,
    responses: {
      200: { description: 'Ready to serve searches.', content: json(ref('Ready')) },
      ...MALFORMED_REQUEST,
      ...problemResponses('unavailable'),
    },
  }),
} satisfies Record<string, MiddlewareHandler>;
