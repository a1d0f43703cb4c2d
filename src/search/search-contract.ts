// GET /v2/contacts/search as one runtime-neutral function: a request's parts in, the whole answer out (status, every
// header field, the body, and what the counts and the access log record). Every door calls it: the Hono route (the
// app in process, Node's app path, the Worker) and Node's listener, which skips the Fetch API objects. A fresh hit is
// answered synchronously; everything else (a miss, a stale or shared entry, every refusal and failure) by a promise.
import type { ClientAuthenticator } from '../auth/client-authenticator.js';
import { knownBearerClient, type GatewayTokens } from '../auth/gateway-tokens.js';
import type { Clock } from '../clock.js';
import { errorAnswer, GatewayError, type ErrorCode, type ProblemAnswer } from '../errors.js';
import type { CostGuard } from '../guard/cost-guard.js';
import { clientAddress } from '../limits/client-address.js';
import type { LookupResult, LookupService } from '../lookup/lookup-service.js';
import type { Logger } from '../observability/logger.js';
import type { LookupNote } from '../observability/request-recorder.js';
import type { SearchResult } from '../observability/telemetry.js';
import type { NumberNormalizer } from '../phone/normalize.js';
import {
  lookupDeadline,
  readWhat,
  requestIdOf,
  requestRefusal,
  type LookupDeadline,
  type RequestParts,
} from '../request/request-parts.js';

export const SEARCH_ROUTE = '/v2/contacts/search';

/** Contact data is personal: no shared cache may keep it, and no private one either (docs/security.md). */
export const PRIVATE_ANSWER = 'private, no-store';

/** A search's whole answer, and what the access log and the request metrics record of it. */
export interface SearchAnswer extends ProblemAnswer {
  /** The body's UTF-8 length when known (a cached answer's). */
  bodyBytes?: number | undefined;
  /** True for a fresh hit answered from memory: the same body is likely asked again. */
  fresh: boolean;
  requestId: string;
  clientId?: string | undefined;
  lookup?: LookupNote | undefined;
}

export interface SearchContract {
  /** Whether a request is the search's (its method and exact path), for a door that answers it beside the app. */
  takes(method: string | undefined, target: string | undefined): boolean;
  answer(request: RequestParts): SearchAnswer | Promise<SearchAnswer>;
}

export interface SearchContractOptions {
  gatewayTokens: GatewayTokens;
  authenticateClient: ClientAuthenticator;
  normalizer: NumberNormalizer;
  lookup: LookupService;
  guard: CostGuard;
  logger: Logger;
  clock: Clock;
  /** The deadline of a search without `Prefer: wait`, and UPSTREAM_TIMEOUT_MS, which bounds any `wait`. */
  lookupDeadlineMs: number;
  upstreamTimeoutMs: number;
  trustProxyHops: number;
}

const REFUSALS: Partial<Record<ErrorCode, SearchResult>> = {
  too_many_requests: 'rate_limited',
  quota_exhausted: 'quota_exhausted',
  budget_exhausted: 'budget_exhausted',
  upstream_rate_limited: 'upstream_refused',
  upstream_unavailable: 'upstream_refused',
  upstream_busy: 'upstream_refused',
};

/** The result of one finished search: the cache's result when it answered, else which refusal or an error. */
export function searchResultOf(status: number, cache: SearchResult | undefined, error: unknown): SearchResult {
  if (status === 200) return cache ?? 'miss';
  return error instanceof GatewayError ? (REFUSALS[error.code] ?? 'error') : 'error';
}

/** The header fields of a search's own answer, whichever route gives it (the API's, the console's, CNAM's). */
export function lookupHeaders(result: LookupResult): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': result.contentType, 'cache-control': PRIVATE_ANSWER };
  if (result.cacheStatus !== undefined) headers['cache-status'] = result.cacheStatus;
  if (result.ageSeconds !== undefined) headers['age'] = String(result.ageSeconds);
  return headers;
}

const PREFIX = `${SEARCH_ROUTE}?`;

export function createSearchContract(options: SearchContractOptions): SearchContract {
  const { gatewayTokens, authenticateClient, normalizer, lookup, guard, logger, clock } = options;
  const { upstreamTimeoutMs, trustProxyHops } = options;
  const defaultDeadline = lookupDeadline(undefined, options.lookupDeadlineMs, upstreamTimeoutMs);

  /** What one search has gathered by the time it answers: who asked, its rate fields, its clock reading. */
  interface Asked {
    requestId: string;
    client: string;
    rateHeaders: Record<string, string>;
    now: number;
  }

  /** The answer of a search by a known client, counted as `result`, with its rate fields and request id. */
  function answered(
    asked: Asked,
    answer: ProblemAnswer,
    result: SearchResult,
    note: LookupNote | undefined,
    bodyBytes: number | undefined,
    fresh: boolean,
  ): SearchAnswer {
    guard.countSearch(asked.client, result, asked.now);
    const { headers } = answer;
    Object.assign(headers, asked.rateHeaders);
    headers['x-request-id'] = asked.requestId;
    return {
      status: answer.status,
      headers,
      body: answer.body,
      bodyBytes,
      fresh,
      requestId: asked.requestId,
      clientId: asked.client,
      lookup: note,
    };
  }

  function found(asked: Asked, note: LookupNote, deadline: LookupDeadline, result: LookupResult, fresh: boolean) {
    note.cache = result.cache;
    const headers = lookupHeaders(result);
    if (deadline.applied !== undefined) headers['preference-applied'] = deadline.applied;
    const answer = { status: 200, headers, body: result.body };
    return answered(asked, answer, searchResultOf(200, result.cache, undefined), note, result.bodyBytes, fresh);
  }

  function failed(asked: Asked, err: unknown, note?: LookupNote, deadline?: LookupDeadline): SearchAnswer {
    // Said on the 504 too: the caller's wait is what ended it.
    if (deadline?.applied !== undefined && err instanceof GatewayError)
      err.headers['preference-applied'] = deadline.applied;
    const answer = errorAnswer(err, asked.requestId, logger);
    return answered(asked, answer, searchResultOf(answer.status, undefined, err), note, undefined, false);
  }

  /** One search by a known client, from its rate to its answer, in the order the search meets them. */
  function search(
    request: RequestParts,
    requestId: string,
    client: string,
    now: number,
  ): SearchAnswer | Promise<SearchAnswer> {
    const rate = guard.rate.take(client, now);
    const asked: Asked = { requestId, client, rateHeaders: guard.rate.fields.headers(rate.state), now };
    if (!rate.allowed) {
      const retryAfter = String(rate.state.resetSeconds);
      const refused = new GatewayError(
        'too_many_requests',
        `This client made more than ${rate.state.limit} searches this minute; try again in ${retryAfter} s.`,
        { headers: { 'retry-after': retryAfter } },
      );
      return failed(asked, refused);
    }
    let e164: string;
    try {
      e164 = normalizer.normalize(readWhat(request.target));
    } catch (err) {
      return failed(asked, err);
    }
    const note: LookupNote = { e164 };
    const prefer = request.header('prefer');
    const deadline =
      prefer === undefined ? defaultDeadline : lookupDeadline(prefer, defaultDeadline.ms, upstreamTimeoutMs);
    // Counted in memory, answered from memory: no network round trip on a hit.
    const fresh = lookup.lookupFresh(e164, now);
    if (fresh !== undefined) return found(asked, note, deadline, fresh, true);
    return lookup.lookup(e164, { client }, { deadlineMs: deadline.ms }).then(
      (result) => found(asked, note, deadline, result, false),
      (err: unknown) => failed(asked, err, note, deadline),
    );
  }

  /** An answer to a request no client was found for: refused by its parts, or by its credentials. */
  const unknownClient = (answer: ProblemAnswer, requestId: string): SearchAnswer => ({
    ...answer,
    fresh: false,
    requestId,
  });

  function answer(request: RequestParts, requestId: string): SearchAnswer | Promise<SearchAnswer> {
    // One reading of the clock for every check of a hit (a reading costs about as much as one of the checks).
    const now = clock();
    const refused = requestRefusal(request, requestId);
    if (refused !== undefined) return unknownClient(refused, requestId);
    const authorization = request.header('authorization');
    const known = knownBearerClient(gatewayTokens, authorization, now);
    if (known !== undefined) return search(request, requestId, known, now);
    const addressOf = () => clientAddress(request.peerAddress(), request.header('x-forwarded-for'), trustProxyHops);
    return authenticateClient(authorization, addressOf).then((auth) =>
      'refused' in auth
        ? unknownClient(errorAnswer(auth.refused, requestId, logger), requestId)
        : search(request, requestId, auth.clientId, clock()),
    );
  }

  /** A bug of the gateway's own: answered as every unknown error is (500, logged with its stack), never thrown. */
  const internalFailure = (err: unknown, requestId: string): SearchAnswer =>
    unknownClient(errorAnswer(err, requestId, logger), requestId);

  return {
    takes: (method, target) =>
      method === 'GET' && target !== undefined && (target === SEARCH_ROUTE || target.startsWith(PREFIX)),
    answer(request) {
      const requestId = request.requestId ?? requestIdOf(request.header('x-request-id'));
      try {
        const outcome = answer(request, requestId);
        return outcome instanceof Promise ? outcome.catch((err: unknown) => internalFailure(err, requestId)) : outcome;
      } catch (err) {
        return internalFailure(err, requestId);
      }
    },
  };
}
