// GET /v2/contacts/cnam?what=: the caller's name as plain ASCII text for PBX dialplans (docs/pbx.md).
// A lookup that yields no name is still a 200 with CNAM_FALLBACK, and `CNAM-Result` says why; only
// credentials that are wrong (401) or throttled (429) get another status, also with the fallback as body.
import { Hono } from 'hono';
import type { AppEnv, LookupNote } from '../app-env.js';
import { routeDocs } from '../docs/route-docs.js';
import { createCallerNameOf } from '../cnam/caller-name.js';
import { GatewayError, type ErrorCode } from '../errors.js';
import type { SearchResult } from '../observability/telemetry.js';
import type { Services } from '../services.js';
import { PRIVATE_ANSWER } from '../search/search-contract.js';
import { lookupDeadline, readWhat } from '../request/request-parts.js';
import { UPSTREAM_BODY } from '../upstream/search-client.js';

export const CNAM_ROUTE = '/v2/contacts/cnam';

/** The closed set of `CNAM-Result` values (docs/pbx.md, "CNAM rules"). */
export type CnamResult =
  | 'listed'
  | 'no-listing'
  | 'no-name'
  | 'not-a-number'
  | 'deadline'
  | 'upstream-error'
  | 'upstream-unavailable'
  | 'quota-exhausted'
  | 'rate-limited'
  | 'gateway-error'
  | 'unauthorized'
  | 'auth-throttled';

const RESULT_OF_ERROR: Partial<Record<ErrorCode, CnamResult>> = {
  bad_request: 'not-a-number',
  invalid_number: 'not-a-number',
  deadline_exceeded: 'deadline',
  upstream_timeout: 'deadline',
  quota_exhausted: 'quota-exhausted',
  budget_exhausted: 'quota-exhausted',
  too_many_requests: 'rate-limited',
  upstream_rate_limited: 'upstream-unavailable',
  upstream_unavailable: 'upstream-unavailable',
  upstream_busy: 'upstream-unavailable',
  token_unavailable: 'upstream-unavailable',
  upstream_error: 'upstream-error',
};

/** The same per-caller search results the JSON route reports, so /admin/usage and the metrics count CNAM too. */
const SEARCH_RESULT_OF: Partial<Record<CnamResult, SearchResult>> = {
  'rate-limited': 'rate_limited',
  'quota-exhausted': 'quota_exhausted',
  'upstream-unavailable': 'upstream_refused',
};

const TEXT = 'text/plain; charset=utf-8';

export function contactsCnamRoutes(
  services: Pick<
    Services,
    'config' | 'normalizer' | 'lookup' | 'guard' | 'authenticateClient' | 'addressOf' | 'logger'
  >,
): Hono<AppEnv> {
  const { config, normalizer, lookup, guard, logger } = services;
  const { fallback, deadlineMs } = config.cnam;
  const upstreamTimeoutMs = config.upstream?.timeoutMs ?? deadlineMs;
  const callerNameOf = createCallerNameOf({
    resultsPath: UPSTREAM_BODY.resultsPath,
    displayNamePath: UPSTREAM_BODY.displayNamePath,
    maxLength: config.cnam.maxLength,
  });
  const app = new Hono<AppEnv>();

  app.get(CNAM_ROUTE, routeDocs.cnam, async (c) => {
    const headers: Record<string, string> = { 'content-type': TEXT, 'cache-control': PRIVATE_ANSWER };
    const answer = (status: 200 | 401 | 429, result: CnamResult, name = fallback) => {
      headers['cnam-result'] = result;
      return c.body(name, status, headers);
    };

    const auth = await services.authenticateClient(c.req.header('authorization'), () => services.addressOf(c));
    if ('refused' in auth) {
      // Wrong credentials are the PBX operator's to fix, not a lookup outcome: said by the status too.
      Object.assign(headers, auth.refused.headers);
      return auth.refused.status === 429 ? answer(429, 'auth-throttled') : answer(401, 'unauthorized');
    }
    const client = auth.clientId;
    c.set('clientId', client);
    const rate = guard.rate.take(client);
    Object.assign(headers, guard.rate.fields.headers(rate.state));
    if (!rate.allowed) {
      guard.countSearch(client, 'rate_limited');
      headers['retry-after'] = String(rate.state.resetSeconds);
      return answer(200, 'rate-limited');
    }

    const deadline = lookupDeadline(c.req.header('prefer'), deadlineMs, upstreamTimeoutMs);
    if (deadline.applied !== undefined) headers['preference-applied'] = deadline.applied;
    let result: CnamResult;
    let name = fallback;
    try {
      // An impossible number ("anonymous", "unknown", an extension) is refused here, before any upstream call.
      const e164 = normalizer.normalize(readWhat(c.req.url));
      const note: LookupNote = { e164 };
      c.set('lookup', note);
      const found = await lookup.lookup(e164, { client }, { deadlineMs: deadline.ms });
      note.cache = found.cache;
      if (found.cacheStatus !== undefined) headers['cache-status'] = found.cacheStatus;
      if (found.ageSeconds !== undefined) headers['age'] = String(found.ageSeconds);
      const caller = callerNameOf(found.body);
      result = 'name' in caller ? 'listed' : caller.none;
      if ('name' in caller) name = caller.name;
      guard.countSearch(client, found.cache ?? 'miss');
    } catch (err) {
      if (!(err instanceof GatewayError)) {
        logger.error(
          {
            event: 'cnam_failed',
            err: err instanceof Error ? { name: err.name, message: err.message, stack: err.stack } : String(err),
          },
          'CNAM lookup failed',
        );
      }
      result = err instanceof GatewayError ? (RESULT_OF_ERROR[err.code] ?? 'upstream-error') : 'gateway-error';
      const cacheStatus = err instanceof GatewayError ? err.headers['cache-status'] : undefined;
      if (cacheStatus !== undefined) headers['cache-status'] = cacheStatus;
      guard.countSearch(client, SEARCH_RESULT_OF[result] ?? 'error');
    }
    return answer(200, result, name);
  });

  return app;
}
