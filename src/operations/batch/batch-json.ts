// The batch's renderer: the outcome of each number's search as one item of the JSON answer, in the order the numbers
// were sent (spellings of one number share their search's item), and the answer's header fields.
import { problemFor } from '../../base/errors.js';
import type { SearchOutcome } from '../../search/search-outcome.js';
import { PRIVATE_ANSWER } from '../search/search-json.js';

/** One item of the batch's answer: the upstream's JSON as the single search passes it through, or the problem. */
function itemJson(what: string, outcome: SearchOutcome, requestId: string): string {
  const e164 = outcome.lookup?.e164;
  const head = `{"what":${JSON.stringify(what)},"e164":${e164 === undefined ? 'null' : JSON.stringify(e164)}`;
  if ('found' in outcome) {
    const { found } = outcome;
    // The upstream's JSON (vouched for when it arrived) goes in unparsed, as the single search passes it through.
    return `${head},"status":200,"cacheStatus":${JSON.stringify(found.cacheStatus ?? null)},"body":${found.body}}`;
  }
  const err = outcome.refused;
  const cacheStatus = err.headers['cache-status'];
  const problem = { ...err.extensions, ...problemFor(err.code, err.message, requestId) };
  return `${head},"status":${err.status}${cacheStatus === undefined ? '' : `,"cacheStatus":${JSON.stringify(cacheStatus)}`},"problem":${JSON.stringify(problem)}}`;
}

/** The batch's header fields: JSON, private, the caller's rate after its last search, the wait applied. */
function batchHeaders(outcomes: readonly SearchOutcome[]): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json', 'cache-control': PRIVATE_ANSWER };
  const last = outcomes.findLast((o) => o.rateHeaders !== undefined);
  if (last?.preferenceApplied !== undefined) headers['preference-applied'] = last.preferenceApplied;
  if (last?.rateHeaders !== undefined) Object.assign(headers, last.rateHeaders);
  return headers;
}

/** The batch's JSON answer: its header fields and body (always 200: each item says its own status). */
interface BatchJsonAnswer {
  headers: Record<string, string>;
  body: string;
}

/** The batch's answer: one item per number as sent, each from its spelling's settled outcome. */
export function renderBatchJson(
  numbers: readonly string[],
  settled: ReadonlyMap<string, SearchOutcome>,
  requestId: string,
): BatchJsonAnswer {
  const items = numbers.map((what) => itemJson(what, settled.get(what)!, requestId));
  return { headers: batchHeaders([...settled.values()]), body: `{"results":[${items.join(',')}]}` };
}
