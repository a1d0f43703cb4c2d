// The OpenAPI description of GET /v2/contacts/search (hono-openapi middlewares the route puts first in its handler list).
import type { MiddlewareHandler } from 'hono';
import { problemResponses } from '../../docs/problem-responses.js';
import { ref } from '../../docs/openapi-schemas.js';
import {
  json,
  CLIENT,
  SEARCH_HEADERS,
  WHAT,
  PREFER,
  PREFERENCE_APPLIED,
  UPSTREAM_PROBLEMS,
  route,
} from '../../docs/route-docs.js';

export const searchDocs = {
  search: route({
    tags: ['Contacts'],
    summary: 'Find contact details by telephone number',
    description:
      "The upstream's search, answered from the gateway's cache when it can (see `Cache-Status`). Impossible numbers are refused before they reach the paid upstream.",
    operationId: 'searchContacts',
    security: CLIENT,
    parameters: [WHAT, PREFER],
    responses: {
      200: {
        description: "The upstream's answer, unchanged (`total: 0`, `results: []` for no listing).",
        headers: { ...SEARCH_HEADERS, ...PREFERENCE_APPLIED },
        content: json(ref('SearchAnswer')),
      },
      ...problemResponses('bad_request', 'invalid_number', 'unauthorized', 'too_many_requests', ...UPSTREAM_PROBLEMS),
    },
  }),
} satisfies Record<string, MiddlewareHandler>;
