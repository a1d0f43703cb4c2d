// GET /v2/contacts/search?what=: the upstream's search, for internal clients holding a gateway token.
import { Hono, type Context } from 'hono';
import type { AppEnv, LookupNote } from '../app-env.js';
import { routeDocs } from '../docs/route-docs.js';
import { GatewayError } from '../errors.js';
import { clientSearchGuard } from '../guard/search-guard.js';
import { clientAuth } from '../middleware/client-auth.js';
import type { Services } from '../services.js';
import type { LookupResult } from '../lookup/lookup-service.js';
import { lookupDeadline, whatParam } from './search-request.js';

/**
 * Reads the single `what` parameter (routes/search-request.ts). Any repetition is ambiguous and refused, however the
 * name is spelled: `wh%61t`, `%77hat`, `WHAT`, or a bare `what` without `=`.
 */
export function readWhat(c: Context): string | undefined {
  const url = c.req.url;
  const start = url.indexOf('?');
  if (start === -1) return undefined;
  const { count, value } = whatParam(url.slice(start + 1));
  if (count > 1) throw new GatewayError('bad_request', 'The query parameter "what" must be given once.');
  return value;
}

/** Contact data is personal: no shared cache may keep it, and no private one either (README, "Security"). */
export const PRIVATE_ANSWER = 'private, no-store';

/** The headers every API search answer carries, whichever path served it (the app or the Node hit path). */
export function lookupHeaders(result: LookupResult): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': result.contentType, 'cache-control': PRIVATE_ANSWER };
  if (result.cacheStatus !== undefined) headers['cache-status'] = result.cacheStatus;
  if (result.ageSeconds !== undefined) headers['age'] = String(result.ageSeconds);
  return headers;
}

export function contactsSearchRoutes(
  services: Pick<Services, 'config' | 'authenticateClient' | 'normalizer' | 'lookup' | 'guard'>,
): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const { config } = services;
  const upstreamTimeoutMs = config.upstream?.timeoutMs ?? config.lookupDeadlineMs;

  app.get(
    '/v2/contacts/search',
    routeDocs.search,
    clientAuth(services.authenticateClient),
    clientSearchGuard(services.guard),
    async (c) => {
      const e164 = services.normalizer.normalize(readWhat(c));
      const note: LookupNote = { e164 };
      c.set('lookup', note);
      const deadline = lookupDeadline(c.req.header('prefer'), config.lookupDeadlineMs, upstreamTimeoutMs);
      let result: LookupResult;
      try {
        result = await services.lookup.lookup(e164, { client: c.get('clientId') }, { deadlineMs: deadline.ms });
      } catch (err) {
        // Said on the 504 too: the caller's wait is what ended it. Each lookup failure is this caller's own object.
        if (deadline.applied !== undefined && err instanceof GatewayError)
          err.headers['preference-applied'] = deadline.applied;
        throw err;
      }
      note.cache = result.cache;
      const headers = lookupHeaders(result);
      if (deadline.applied !== undefined) headers['preference-applied'] = deadline.applied;
      return c.body(result.body, 200, headers);
    },
  );

  return app;
}
