// GET /v2/contacts/search as a Hono route: a door of the search contract (search/search-contract.ts), which decides
// the whole answer. The door only hands over the request's parts and turns the answer into a Response.
import { Hono } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { AppEnv } from '../app-env.js';
import { routeDocs } from '../docs/route-docs.js';
import { SEARCH_ROUTE } from '../search/search-contract.js';
import type { Services } from '../services.js';
import { requestOf } from './request-of.js';

export function contactsSearchRoutes(services: Pick<Services, 'search' | 'peerAddress'>): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const { search, peerAddress } = services;

  app.get(SEARCH_ROUTE, routeDocs.search, async (c) => {
    const answer = await search.answer(requestOf(c, peerAddress), c.get('span'));
    // For the access log, as every route records its caller.
    if (answer.clientId !== undefined) c.set('clientId', answer.clientId);
    if (answer.lookup !== undefined) c.set('lookup', answer.lookup);
    return c.body(answer.body, answer.status as ContentfulStatusCode, answer.headers);
  });

  return app;
}
