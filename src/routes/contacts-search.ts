// GET /v2/contacts/search?what=: the upstream's search, for internal clients holding a gateway token.
import { Hono } from 'hono';
import type { AppEnv } from '../app-env.js';
import { GatewayError } from '../errors.js';
import { bearerAuth } from '../middleware/bearer-auth.js';
import type { Services } from '../services.js';
import type { LookupResult } from '../lookup/lookup-service.js';

/** Reads the single `what` parameter; a repeated one is ambiguous and refused. */
export function readWhat(values: string[] | undefined): string | undefined {
  if (values === undefined) return undefined;
  if (values.length > 1) throw new GatewayError('bad_request', 'The query parameter "what" must be given once.');
  return values[0];
}

/** The headers every search answer carries, whichever route served it. */
export function lookupHeaders(result: LookupResult): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': result.contentType };
  if (result.cacheStatus !== undefined) headers['cache-status'] = result.cacheStatus;
  if (result.ageSeconds !== undefined) headers['age'] = String(result.ageSeconds);
  return headers;
}

export function contactsSearchRoutes(services: Pick<Services, 'gatewayTokens' | 'normalizer' | 'lookup'>): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  app.get('/v2/contacts/search', bearerAuth({ tokens: services.gatewayTokens }), async (c) => {
    const e164 = services.normalizer.normalize(readWhat(c.req.queries('what')));
    const result = await services.lookup.lookup(e164);
    return c.body(result.body, 200, lookupHeaders(result));
  });

  return app;
}
