// The CNAM text renderer: a search's outcome as what a PBX reads (docs/pbx.md, "CNAM rules"): the caller's name as
// plain ASCII, `CNAM-Result` saying why there is none, and a status other than 200 only for wrong or throttled
// credentials.
import type { ErrorCode } from '../../base/errors.js';
import type { SearchOutcome } from '../../search/search-outcome.js';
import { cacheFields, PRIVATE_ANSWER } from '../search/search-json.js';
import type { CallerNameOf } from './caller-name.js';

/** The closed set of `CNAM-Result` values (docs/pbx.md, "CNAM rules"). */
type CnamResult =
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

const TEXT = 'text/plain; charset=utf-8';

/** What the caller's PBX is told: `CNAM-Result`, the status (only wrong or throttled credentials change it) and the name. */
function cnamOf(
  outcome: SearchOutcome,
  callerNameOf: CallerNameOf,
): { result: CnamResult; status: 200 | 401 | 429; name?: string } {
  if ('found' in outcome) {
    const caller = callerNameOf(outcome.found.body);
    return 'name' in caller
      ? { result: 'listed', status: 200, name: caller.name }
      : { result: caller.none, status: 200 };
  }
  const { refused, step } = outcome;
  // Wrong credentials are the PBX operator's to fix, not a lookup outcome: said by the status too.
  if (step === 'identity')
    return refused.status === 429 ? { result: 'auth-throttled', status: 429 } : { result: 'unauthorized', status: 401 };
  if (refused.code === 'internal') return { result: 'gateway-error', status: 200 };
  return { result: RESULT_OF_ERROR[refused.code] ?? 'upstream-error', status: 200 };
}

/** The header fields of a CNAM answer: the text's, the caller's rate, what the cache did, the wait applied. */
function cnamHeaders(outcome: SearchOutcome, result: CnamResult): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': TEXT, 'cache-control': PRIVATE_ANSWER };
  if (outcome.rateHeaders !== undefined) Object.assign(headers, outcome.rateHeaders);
  if (outcome.preferenceApplied !== undefined) headers['preference-applied'] = outcome.preferenceApplied;
  if ('found' in outcome) cacheFields(outcome.found, headers);
  else if (outcome.step === 'identity' || outcome.step === 'rate') Object.assign(headers, outcome.refused.headers);
  else if (outcome.refused.headers['cache-status'] !== undefined)
    headers['cache-status'] = outcome.refused.headers['cache-status'];
  headers['cnam-result'] = result;
  return headers;
}

/** The CNAM answer: only wrong or throttled credentials change the status. */
interface CnamTextAnswer {
  status: 200 | 401 | 429;
  headers: Record<string, string>;
  body: string;
}

/** A search's outcome as the CNAM answer: the caller's name (or the fallback) as text, its status and header fields. */
export function renderCnamText(outcome: SearchOutcome, callerNameOf: CallerNameOf, fallback: string): CnamTextAnswer {
  const { result, status, name } = cnamOf(outcome, callerNameOf);
  return { status, headers: cnamHeaders(outcome, result), body: name ?? fallback };
}
