// The OpenAPI description of the console's page and its search (hono-openapi middlewares the route puts first in its handler list).
import type { MiddlewareHandler } from 'hono';
import { problemResponses } from '../../docs/problem-responses.js';
import { ref } from '../../docs/openapi-schemas.js';
import {
  json,
  ANONYMOUS,
  RATE_LIMIT_HEADERS,
  SEARCH_HEADERS,
  WHAT,
  UPSTREAM_PROBLEMS,
  route,
} from '../../docs/route-docs.js';

export const consoleDocs = {
  consolePage: route({
    tags: ['Console'],
    summary: 'The console: a web page to try the search',
    description: 'Anonymous; tablets and larger (a phone gets a friendly refusal page, 403).',
    operationId: 'consolePage',
    security: ANONYMOUS,
    responses: {
      200: { description: 'The page.', content: { 'text/html': { schema: { type: 'string' } } } },
      403: { description: 'A phone: the refusal page.', content: { 'text/html': { schema: { type: 'string' } } } },
      ...problemResponses(),
    },
  }),

  consoleSearch: route({
    tags: ['Console'],
    summary: "The console's search: one provider's results, rate limited, no token",
    description:
      "Like the search, without a token, for people trying the service: only CONSOLE_PROVIDER's results, rate limited per address and in total (CONSOLE_RATE_*), refused to phones.",
    operationId: 'consoleSearch',
    security: ANONYMOUS,
    parameters: [WHAT],
    responses: {
      200: {
        description:
          "The upstream's answer with only CONSOLE_PROVIDER's results (`total` adjusted). No `Cache-Status` or `Age`: they would tell a visitor what others looked up.",
        headers: { 'Cache-Control': SEARCH_HEADERS['Cache-Control'], ...RATE_LIMIT_HEADERS },
        content: json(ref('SearchAnswer')),
      },
      ...problemResponses(
        'bad_request',
        'invalid_number',
        'device_not_supported',
        'too_many_requests',
        ...UPSTREAM_PROBLEMS,
      ),
    },
  }),
} satisfies Record<string, MiddlewareHandler>;
