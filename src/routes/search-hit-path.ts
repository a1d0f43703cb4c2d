// GET /v2/contacts/search without the Fetch API objects, for a runtime whose server hands over raw request parts
// (Node). The hit path answers a fresh hit synchronously, only when every step is already known to succeed (token
// verified before, spelling seen before, fresh entry). The search path answers the rest of a search whose token is
// verified, whose number normalises and whose client is under its rate: the lookup (miss, stale, shared, upstream)
// and its failures, as the app's route, guard and error handler would. Anything else goes to the app.
import type { LookupNote } from '../app-env.js';
import { bearerToken } from '../auth/gateway-tokens.js';
import { errorResponse } from '../errors.js';
import { searchResultOf } from '../guard/search-guard.js';
import type { Services } from '../services.js';
import { lookupHeaders } from './contacts-search.js';
import { lookupDeadline, whatParam } from './search-request.js';

export const SEARCH_ROUTE = '/v2/contacts/search';

export interface HitAnswer {
  headers: Record<string, string>;
  body: string;
  /** The body's UTF-8 length when known (a cached answer's); otherwise it is counted when sent. */
  bodyBytes?: number | undefined;
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

/** The request id the app's requestId middleware would use: the caller's when well formed, else a new one. */
const requestIdOf = (header: string | string[] | undefined): string =>
  typeof header === 'string' && GOOD_REQUEST_ID.test(header) ? header : crypto.randomUUID();

/** The client and the `what` value of a search the paths may take (a GET with a known token), else undefined. */
function readSearch(
  gatewayTokens: Services['gatewayTokens'],
  method: string | undefined,
  target: string | undefined,
  authorization: string | undefined,
  now?: number,
): { client: string; what: string } | undefined {
  if (method !== 'GET' || target === undefined || !target.startsWith(PREFIX) || authorization === undefined)
    return undefined;
  // `Bearer <token>` as clients send it is looked up as it is: only verified (well-formed) tokens are known, so
  // anything else misses here and takes the full reader.
  const token = authorization.startsWith('Bearer ') ? authorization.slice(7) : bearerToken(authorization);
  const verified = token === undefined ? undefined : gatewayTokens.peek(token, now);
  if (verified === undefined) return undefined;
  // The app's own reader: a repetition or a missing value is the app's to answer (400).
  const what = whatParam(target.slice(PREFIX.length));
  return what.count !== 1 || what.value === undefined ? undefined : { client: verified.clientId, what: what.value };
}

/** The client's rate fields and the request id on top of an answer's own headers, as the app's middleware adds them. */
function withRequestHeaders(
  headers: Record<string, string>,
  rateHeaders: Record<string, string>,
  requestId: string,
): Record<string, string> {
  Object.assign(headers, rateHeaders);
  headers['x-request-id'] = requestId;
  return headers;
}

export function createSearchHitPath(
  services: Pick<Services, 'gatewayTokens' | 'normalizer' | 'lookup' | 'guard' | 'clock'>,
): SearchHitPath {
  const { gatewayTokens, normalizer, lookup, guard, clock } = services;

  return function searchHitPath(method, target, authorization, requestIdHeader) {
    // One reading of the clock for every check of the hit (a reading costs about as much as one of the checks).
    const now = clock();
    const search = readSearch(gatewayTokens, method, target, authorization, now);
    const e164 = search === undefined ? undefined : normalizer.peek(search.what);
    if (search === undefined || e164 === undefined) return undefined;
    const { client } = search;
    // Over the rate, the app answers the 429.
    if (!guard.rate.allows(client, now)) return undefined;
    const result = lookup.lookupFresh(e164, now);
    if (result === undefined) return undefined;
    // Counted here, in memory (reconciled in the background): no network round trip on a hit.
    const rate = guard.rate.take(client, now);
    guard.countSearch(client, 'hit', now);

    const requestId = requestIdOf(requestIdHeader);
    const headers = withRequestHeaders(lookupHeaders(result), guard.rate.fields.headers(rate.state), requestId);
    return {
      headers,
      body: result.body,
      bodyBytes: result.bodyBytes,
      requestId,
      clientId: client,
      lookup: { e164, cache: result.cache },
    };
  };
}

/** What the search path answers: the status and headers of the app's answer, its body, and what the log records. */
export interface SearchAnswer extends HitAnswer {
  status: number;
}

export interface SearchRequest {
  method: string | undefined;
  target: string | undefined;
  authorization: string | undefined;
  requestId: string | string[] | undefined;
  /** The `Prefer` header: a search with one is the app's (it answers `Preference-Applied`). */
  prefer: string | string[] | undefined;
  /** Whether the request declares a body (Content-Length or Transfer-Encoding): the app bounds those. */
  hasBody: boolean;
}

export type SearchPath = (request: SearchRequest) => Promise<SearchAnswer> | undefined;

export function createSearchPath(
  services: Pick<Services, 'gatewayTokens' | 'normalizer' | 'lookup' | 'guard' | 'config' | 'logger'>,
): SearchPath {
  const { gatewayTokens, normalizer, lookup, guard, config, logger } = services;
  const deadlineMs = lookupDeadline(
    undefined,
    config.lookupDeadlineMs,
    config.upstream?.timeoutMs ?? config.lookupDeadlineMs,
  ).ms;

  return function searchPath(r) {
    if (r.prefer !== undefined || r.hasBody) return undefined;
    const search = readSearch(gatewayTokens, r.method, r.target, r.authorization);
    if (search === undefined) return undefined;
    let e164: string;
    try {
      e164 = normalizer.normalize(search.what);
    } catch {
      // Not a possible number: the app answers the 400 (and counts it as the app does).
      return undefined;
    }
    const { client } = search;
    // Over the rate, the app answers the 429; under it, the guard's take comes before the lookup, as in the app.
    if (!guard.rate.allows(client)) return undefined;
    const rateHeaders = guard.rate.fields.headers(guard.rate.take(client).state);
    const requestId = requestIdOf(r.requestId);
    const note: LookupNote = { e164 };
    const answer = (
      status: number,
      headers: Record<string, string>,
      body: string,
      bodyBytes?: number,
    ): SearchAnswer => ({
      status,
      headers: withRequestHeaders(headers, rateHeaders, requestId),
      body,
      bodyBytes,
      requestId,
      clientId: client,
      lookup: note,
    });
    return lookup.lookup(e164, { client }, { deadlineMs }).then(
      (result) => {
        note.cache = result.cache;
        guard.countSearch(client, searchResultOf(200, result.cache, undefined));
        return answer(200, lookupHeaders(result), result.body, result.bodyBytes);
      },
      async (err: unknown) => {
        const res = errorResponse(err, requestId, logger);
        guard.countSearch(client, searchResultOf(res.status, undefined, err));
        const headers: Record<string, string> = {};
        res.headers.forEach((value, name) => (headers[name] = value));
        return answer(res.status, headers, await res.text());
      },
    );
  };
}
