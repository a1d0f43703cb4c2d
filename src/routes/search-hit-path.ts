// The cache-hit path of GET /v2/contacts/search without the Fetch API objects: a runtime whose server hands
// over raw request parts (Node) answers a fresh hit with it and gives everything else to the app. It only
// answers when every step is already known to succeed (token verified before, spelling seen before, fresh
// entry), so errors, misses and stale entries always take the app's one code path.
import type { LookupNote } from '../app-env.js';
import { bearerToken } from '../auth/gateway-tokens.js';
import type { Services } from '../services.js';
import { lookupHeaders } from './contacts-search.js';
import { whatParam } from './search-request.js';

export const SEARCH_ROUTE = '/v2/contacts/search';

export interface HitAnswer {
  headers: Record<string, string>;
  body: string;
  requestId: string;
  clientId: string;
  lookup: LookupNote;
}

export type SearchHitPath = (
  method: string | undefined,
  target: string | undefined,
  authorization: string | undefined,
  requestIdHeader: string | string[] | undefined,
) => HitAnswer | undefined;

// The rules of hono/request-id as the app configures it (64 characters of [A-Za-z0-9_=-]).
const GOOD_REQUEST_ID = /^[\w\-=]{1,64}$/;
const PREFIX = `${SEARCH_ROUTE}?`;

export function createSearchHitPath(
  services: Pick<Services, 'gatewayTokens' | 'normalizer' | 'lookup' | 'guard'>,
): SearchHitPath {
  const { gatewayTokens, normalizer, lookup, guard } = services;

  return function searchHitPath(method, target, authorization, requestIdHeader) {
    if (method !== 'GET' || target === undefined || !target.startsWith(PREFIX) || authorization === undefined)
      return undefined;
    const token = bearerToken(authorization);
    const verified = token === undefined ? undefined : gatewayTokens.peek(token);
    if (verified === undefined) return undefined;
    // The app's own reader: a repetition or a missing value is the app's to answer (400).
    const what = whatParam(target.slice(PREFIX.length));
    const e164 = what.count !== 1 || what.value === undefined ? undefined : normalizer.peek(what.value);
    if (e164 === undefined) return undefined;
    // Over the rate, the app answers the 429.
    if (!guard.rate.allows(verified.clientId)) return undefined;
    const result = lookup.lookupFresh(e164);
    if (result === undefined) return undefined;
    // Counted here, in memory (reconciled in the background): no network round trip on a hit.
    const rate = guard.rate.take(verified.clientId);
    guard.countSearch(verified.clientId, 'hit');

    const requestId =
      typeof requestIdHeader === 'string' && GOOD_REQUEST_ID.test(requestIdHeader)
        ? requestIdHeader
        : crypto.randomUUID();
    const headers = lookupHeaders(result);
    Object.assign(headers, guard.rate.fields.headers(rate.state));
    headers['x-request-id'] = requestId;
    return {
      headers,
      body: result.body,
      requestId,
      clientId: verified.clientId,
      lookup: { e164, cache: result.cache },
    };
  };
}
