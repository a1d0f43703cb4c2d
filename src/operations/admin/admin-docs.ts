// The OpenAPI description of the admin routes (cache purges, revoking a client, usage) (hono-openapi middlewares the route puts first in its handler list).
import type { MiddlewareHandler } from 'hono';
import { problemResponses } from '../../docs/problem-responses.js';
import { ref } from '../../docs/openapi-schemas.js';
import { json, GATEWAY_TOKEN, route } from '../../docs/route-docs.js';

export const adminDocs = {
  purgeNumber: route({
    tags: ['Admin'],
    summary: 'Purge one number from the cache',
    description: 'For clients in GATEWAY_ADMIN_CLIENTS. Any spelling of the number reaches its one entry.',
    operationId: 'purgeNumber',
    security: GATEWAY_TOKEN,
    parameters: [
      {
        name: 'number',
        in: 'path',
        required: true,
        description: 'The number in any usual spelling (URL-encoded).',
        schema: { type: 'string' },
      },
    ],
    responses: {
      200: { description: 'Purged (`purged: 0` when it was not cached).', content: json(ref('PurgeNumber')) },
      ...problemResponses('bad_request', 'invalid_number', 'unauthorized', 'forbidden', 'unavailable'),
    },
  }),

  purgeAll: route({
    tags: ['Admin'],
    summary: 'Purge the whole cache',
    description: 'For clients in GATEWAY_ADMIN_CLIENTS.',
    operationId: 'purgeAll',
    security: GATEWAY_TOKEN,
    responses: {
      200: { description: 'Purged.', content: json(ref('PurgeAll')) },
      ...problemResponses('unauthorized', 'forbidden', 'unavailable'),
    },
  }),

  revokeClient: route({
    tags: ['Admin'],
    summary: 'Revoke every token issued to a client so far',
    description:
      'For clients in GATEWAY_ADMIN_CLIENTS. Every token issued to the client up to and including `revoked_before` (to the millisecond) is refused by every replica within a second; the answer comes after that instant, and the client logs in again for a new token. An id that is not registered: 404.',
    operationId: 'revokeClient',
    security: GATEWAY_TOKEN,
    requestBody: { required: true, content: json(ref('RevokeClientRequest')) },
    responses: {
      200: { description: 'Revoked.', content: json(ref('RevokeClient')) },
      ...problemResponses('bad_request', 'unauthorized', 'forbidden', 'not_found', 'payload_too_large', 'unavailable'),
    },
  }),

  usage: route({
    tags: ['Admin'],
    summary: "Today's use of the paid upstream per caller",
    description: 'For clients in GATEWAY_ADMIN_CLIENTS.',
    operationId: 'usage',
    security: GATEWAY_TOKEN,
    responses: {
      200: { description: "Today's figures.", content: json(ref('Usage')) },
      ...problemResponses('unauthorized', 'forbidden'),
    },
  }),
} satisfies Record<string, MiddlewareHandler>;
