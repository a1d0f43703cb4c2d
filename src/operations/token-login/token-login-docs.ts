// The OpenAPI description of POST /token/login (hono-openapi middlewares the route puts first in its handler list).
import type { MiddlewareHandler } from 'hono';
import { problemResponses } from '../../docs/problem-responses.js';
import { ref } from '../../docs/openapi-schemas.js';
import { json, header, route } from '../../docs/route-docs.js';

export const tokenLoginDocs = {
  tokenLogin: route({
    tags: ['Token'],
    summary: 'Obtain a gateway token (client-credentials grant)',
    description:
      "The upstream's own token endpoint, answered by the gateway for the clients in GATEWAY_CLIENTS: an existing client only changes its base URL. The client id and secret come as the form fields `client_id` and `client_secret` (as the upstream has them), or as HTTP Basic (`client_secret_basic`, RFC 6749 section 2.3.1), never both.",
    operationId: 'tokenLogin',
    // The form fields need no Authorization header; HTTP Basic is the other way to send the same credentials.
    security: [{}, { clientBasic: [] }],
    requestBody: { required: true, content: { 'application/x-www-form-urlencoded': { schema: ref('TokenRequest') } } },
    responses: {
      200: {
        description: "A gateway token in the upstream's response shape.",
        headers: { 'Cache-Control': header('`no-store`.') },
        content: json(ref('TokenResponse')),
      },
      ...problemResponses('bad_request', 'unauthorized', 'payload_too_large', 'too_many_requests'),
    },
  }),
} satisfies Record<string, MiddlewareHandler>;
