// The OpenAPI description of POST /v2/contacts/batch (hono-openapi middlewares the route puts first in its handler list).
import type { MiddlewareHandler } from 'hono';
import { problemResponses } from '../../docs/problem-responses.js';
import { ref } from '../../docs/openapi-schemas.js';
import {
  json,
  CLIENT,
  RATE_LIMIT_HEADERS,
  SEARCH_HEADERS,
  PREFER,
  PREFERENCE_APPLIED,
  route,
} from '../../docs/route-docs.js';

export const batchDocs = {
  batch: route({
    tags: ['Contacts'],
    summary: 'Many searches in one request (CRMs)',
    description:
      'Each distinct number goes through the same cache, coalescing, rate, quota and concurrency bound as a single search; spellings of one ' +
      'number are looked up once; one deadline (`Prefer: wait`) bounds the whole batch. Each item carries its own status and the body or problem.',
    operationId: 'searchBatch',
    security: CLIENT,
    parameters: [PREFER],
    requestBody: { required: true, content: json(ref('BatchRequest')) },
    responses: {
      200: {
        description: 'One item per number, in order.',
        headers: { 'Cache-Control': SEARCH_HEADERS['Cache-Control'], ...RATE_LIMIT_HEADERS, ...PREFERENCE_APPLIED },
        content: json(ref('BatchAnswer')),
      },
      ...problemResponses('bad_request', 'unauthorized', 'payload_too_large', 'too_many_requests'),
    },
  }),
} satisfies Record<string, MiddlewareHandler>;
