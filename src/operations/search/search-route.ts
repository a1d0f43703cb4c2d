// GET /v2/contacts/search as a Hono route: a door of the search's JSON renderer (search-json.ts), which decides the
// whole answer. The door only hands over the request's parts and turns the answer into a Response.
import { Hono, type Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { AppEnv } from '../../http/app-env.js';
import { searchDocs } from './search-docs.js';
import { SEARCH_ROUTE, type SearchJson } from './search-json.js';
import type { PeerCertificate } from '../../auth/certificates/peer-certificate.js';
import { requestOf } from '../../http/request-of.js';

/**
 * What the route needs of the services: the renderer the services build (so it names them by shape, not by their
 * type: the services import this folder's renderer) and the caller's address.
 */
interface SearchRouteServices {
  searchJson: SearchJson;
  peerAddress: (c: Context) => string | undefined;
  clientCertificates: { of: (c: Context) => PeerCertificate | undefined };
}

export function contactsSearchRoutes(services: SearchRouteServices): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const { searchJson, peerAddress } = services;
  const certificateOf = services.clientCertificates.of;

  app.get(SEARCH_ROUTE, searchDocs.search, async (c) => {
    const answer = await searchJson.answer(requestOf(c, peerAddress, certificateOf), c.get('span'));
    // For the access log, as every route records its caller.
    if (answer.clientId !== undefined) c.set('clientId', answer.clientId);
    if (answer.lookup !== undefined) c.set('lookup', answer.lookup);
    return c.body(answer.body, answer.status as ContentfulStatusCode, answer.headers);
  });

  return app;
}
