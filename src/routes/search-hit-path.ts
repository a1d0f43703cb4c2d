// The cache-hit path of GET /v2/contacts/search without the Fetch API objects: a runtime whose server hands
// over raw request parts (Node) answers a fresh hit with it and gives everything else to the app. It only
// answers when every step is already known to succeed (token verified before, spelling seen before, fresh
// entry), so errors, misses and stale entries always take the app's one code path.
import type { LookupNote } from '../app-env.js';
import { bearerToken } from '../auth/bearer.js';
import type { Services } from '../services.js';
import { lookupHeaders } from './contacts-search.js';

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

/** The single `what` value of a query string decoded as Hono decodes it, or undefined for anything unusual. */
function singleWhat(query: string): string | undefined {
  let found: string | undefined;
  for (const pair of query.split('&')) {
    const eq = pair.indexOf('=');
    const key = eq === -1 ? pair : pair.slice(0, eq);
    // An encoded name or another case of `what` may be a smuggled repetition: the app decides (400).
    if (key.includes('%') || key.includes('+')) return undefined;
    if (key !== 'what') {
      if (key.length === 4 && key.toLowerCase() === 'what') return undefined;
      continue;
    }
    if (found !== undefined || eq === -1) return undefined;
    let value = pair.slice(eq + 1);
    if (value.includes('+')) value = value.replaceAll('+', ' ');
    if (value.includes('%')) {
      try {
        value = decodeURIComponent(value);
      } catch {
        return undefined;
      }
    }
    found = value;
  }
  return found;
}

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
    const raw = singleWhat(target.slice(PREFIX.length));
    const e164 = raw === undefined ? undefined : normalizer.peek(raw);
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
