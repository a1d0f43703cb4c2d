// The search's JSON renderer, GET /v2/contacts/search as one runtime-neutral function: a request's parts in, the whole
// answer out (status, every header field, the body, and what the counts and the access log record). It renders the
// search use case's outcome as JSON; every door calls it: the Hono route (the app in process, Node's app path, the
// Worker) and Node's listener, which skips the Fetch API objects. A fresh hit is answered synchronously; everything
// else by a promise.
import { whenSettled, type Eventually } from '../../base/eventually.js';
import { problemAnswer, type ProblemAnswer } from '../../base/errors.js';
import type { LookupResult } from '../../lookup/lookup-service.js';
import type { Span } from '../../observability/tracing/span.js';
import { requestIdOf, type RequestParts } from '../../request/request-parts.js';
import type { LookupNote, SearchOutcome } from '../../search/search-outcome.js';
import type { SearchUseCase } from '../../search/search-use-case.js';

export const SEARCH_ROUTE = '/v2/contacts/search';

/** Contact data is personal: no shared cache may keep it, and no private one either (docs/security.md). */
export const PRIVATE_ANSWER = 'private, no-store';

/** The JSON search's whole answer, and what the access log and the request metrics record of it. */
export interface SearchJsonAnswer extends ProblemAnswer {
  /** The body's UTF-8 length when known (a cached answer's). */
  bodyBytes?: number | undefined;
  /** True for a fresh hit answered from memory: the same body is likely asked again. */
  fresh: boolean;
  requestId: string;
  clientId?: string | undefined;
  lookup?: LookupNote | undefined;
}

export interface SearchJson {
  /** Whether a request is the search's (its method and exact path), for a door that answers it beside the app. */
  takes(method: string | undefined, target: string | undefined): boolean;
  /** `span`: the request's server span, which the search's own spans go under. */
  answer(request: RequestParts, span?: Span): Eventually<SearchJsonAnswer>;
}

/** What the cache did (RFC 9211 `Cache-Status`) and the answer's `Age`, as every route that shows them says it. */
export function cacheFields(result: LookupResult, headers: Record<string, string>): Record<string, string> {
  if (result.cacheStatus !== undefined) headers['cache-status'] = result.cacheStatus;
  if (result.ageSeconds !== undefined) headers['age'] = String(result.ageSeconds);
  return headers;
}

/** The JSON answer of a search's outcome: the upstream's body, or the refusal as problem+json. */
function renderSearchJson(outcome: SearchOutcome, requestId: string): SearchJsonAnswer {
  let answer: SearchJsonAnswer;
  if ('found' in outcome) {
    const { found } = outcome;
    const headers = cacheFields(found, { 'content-type': found.contentType, 'cache-control': PRIVATE_ANSWER });
    answer = { status: 200, headers, body: found.body, bodyBytes: found.bodyBytes, fresh: outcome.fresh, requestId };
  } else {
    const { code, message, headers, extensions } = outcome.refused;
    answer = { ...problemAnswer(code, message, requestId, headers, extensions), fresh: false, requestId };
  }
  // Said on the 504 too: the caller's wait is what ended it.
  if (outcome.preferenceApplied !== undefined) answer.headers['preference-applied'] = outcome.preferenceApplied;
  if (outcome.rateHeaders !== undefined) Object.assign(answer.headers, outcome.rateHeaders);
  answer.headers['x-request-id'] = requestId;
  answer.clientId = outcome.caller;
  answer.lookup = outcome.lookup;
  return answer;
}

const PREFIX = `${SEARCH_ROUTE}?`;

export function createSearchJson(search: SearchUseCase): SearchJson {
  return {
    takes: (method, target) =>
      method === 'GET' && target !== undefined && (target === SEARCH_ROUTE || target.startsWith(PREFIX)),
    answer(request, span) {
      const requestId = request.requestId ?? requestIdOf(request.header('x-request-id'));
      const input = { target: request.target, prefer: request.header('prefer'), requestId, span };
      return whenSettled(search.byCredentials(request, input), (outcome) => renderSearchJson(outcome, requestId));
    },
  };
}
