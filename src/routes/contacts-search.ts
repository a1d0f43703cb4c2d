// GET /v2/contacts/search?what=: the upstream's search, for internal clients holding a gateway token.
import { Hono, type Context } from 'hono';
import type { AppEnv, LookupNote } from '../app-env.js';
import { routeDocs } from '../docs/route-docs.js';
import { GatewayError } from '../errors.js';
import { clientSearchGuard } from '../guard/search-guard.js';
import { bearerAuth } from '../middleware/bearer-auth.js';
import type { Services } from '../services.js';
import type { LookupResult } from '../lookup/lookup-service.js';

/**
 * Reads the single `what` parameter; a repeated one is ambiguous and refused. Hono's single-value
 * `query()` is its fast path (`queries()` parses the whole string), so a repeat is looked for separately.
 */
export function readWhat(c: Context): string | undefined {
  const value = c.req.query('what');
  if (value !== undefined && REPEATED_WHAT.test(c.req.url)) {
    throw new GatewayError('bad_request', 'The query parameter "what" must be given once.');
  }
  return value;
}

const REPEATED_WHAT = /[?&]what=[^#]*&what=/;

/** The headers every search answer carries, whichever route served it. */
export function lookupHeaders(result: LookupResult): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': result.contentType };
  if (result.cacheStatus !== undefined) headers['cache-status'] = result.cacheStatus;
  if (result.ageSeconds !== undefined) headers['age'] = String(result.ageSeconds);
  return headers;
}

export function contactsSearchRoutes(services: Pick<Services, 'gatewayTokens' | 'normalizer' | 'lookup' | 'guard'>): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  app.get('/v2/contacts/search', routeDocs.search, bearerAuth({ tokens: services.gatewayTokens }), clientSearchGuard(services.guard), async (c) => {
    const e164 = services.normalizer.normalize(readWhat(c));
    const note: LookupNote = { e164 };
    c.set('lookup', note);
    const result = await services.lookup.lookup(e164, { client: c.get('clientId') });
    note.cache = result.cache;
    return c.body(result.body, 200, lookupHeaders(result));
  });

  return app;
}
