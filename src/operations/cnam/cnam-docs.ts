// The OpenAPI description of GET /v2/contacts/cnam (hono-openapi middlewares the route puts first in its handler list).
import type { MiddlewareHandler } from 'hono';
import { problemResponses } from '../../docs/problem-responses.js';
import { header, CLIENT, SEARCH_HEADERS, WHAT, PREFER, PREFERENCE_APPLIED, route } from '../../docs/route-docs.js';

export const cnamDocs = {
  cnam: route({
    tags: ['Contacts'],
    summary: 'The caller name as plain ASCII text, for PBX dialplans (CNAM)',
    description:
      "The first result's display name folded to ASCII and cut to CNAM_MAX_LENGTH. Every lookup outcome is a 200: without a name the " +
      'body is CNAM_FALLBACK and `CNAM-Result` says why. Only wrong credentials (401) and the failed-login limit (429) get another status, ' +
      'with the fallback as body too. Default deadline CNAM_DEADLINE_MS.',
    operationId: 'cnam',
    security: CLIENT,
    parameters: [WHAT, PREFER],
    responses: {
      200: {
        description: 'The name, or the fallback.',
        headers: {
          'CNAM-Result': {
            description: 'Why this body.',
            schema: {
              enum: [
                'listed',
                'no-listing',
                'no-name',
                'not-a-number',
                'deadline',
                'upstream-error',
                'upstream-unavailable',
                'quota-exhausted',
                'rate-limited',
                'gateway-error',
              ],
            },
          },
          ...SEARCH_HEADERS,
          ...PREFERENCE_APPLIED,
        },
        content: { 'text/plain': { schema: { type: 'string', pattern: "^[A-Za-z0-9 .,'&()/+-]*$" } } },
      },
      401: {
        description: 'Missing or wrong credentials (`CNAM-Result: unauthorized`); the body is the fallback.',
        headers: {
          'WWW-Authenticate': header(
            '`Bearer realm="callerid-gateway", Basic realm="callerid-gateway", charset="UTF-8"`.',
          ),
        },
        content: { 'text/plain': { schema: { type: 'string' } } },
      },
      429: {
        description:
          'Too many failed credentials from this address (`CNAM-Result: auth-throttled`); the body is the fallback.',
        headers: { 'Retry-After': header('Seconds until credentials are checked again.') },
        content: { 'text/plain': { schema: { type: 'string' } } },
      },
      ...problemResponses(),
    },
  }),
} satisfies Record<string, MiddlewareHandler>;
