// POST /v2/contacts/search/batch {"numbers": [...]}: many searches in one request for CRMs (docs/pbx.md).
// Each distinct number is one search of the search use case (search/search-use-case.ts), as a single search would
// be: the client's rate, the cache, coalescing, quota and concurrency bound; spellings of one number are searched
// once; one deadline bounds the whole batch.
import { Hono, type Context } from 'hono';
import type { AppEnv } from '../../http/app-env.js';
import { batchDocs } from './batch-docs.js';
import { renderBatchJson } from './batch-json.js';
import { GatewayError } from '../../base/errors.js';
import type { Services } from '../../services/services.js';
import type { Eventually } from '../../base/eventually.js';
import type { SearchInput, SearchOutcome, SearchRefused } from '../../search/search-outcome.js';
import type { SearchUseCase } from '../../search/search-use-case.js';
import { requestOf } from '../../http/request-of.js';

export const BATCH_ROUTE = '/v2/contacts/search/batch';

/** Bytes allowed per number in the body: a 40-character spelling, its quotes, a comma and some spaces. */
const BYTES_PER_NUMBER = 64;

/** The batch body's bound (the app's body limit applies it, before authentication): never below REQUEST_MAX_BODY_BYTES. */
export function batchBodyBytes(config: Pick<Services['config'], 'http' | 'batch'>): number {
  return Math.max(config.http.maxBodyBytes, 1024 + config.batch.maxNumbers * BYTES_PER_NUMBER);
}

/** The `numbers` of a batch body; a GatewayError (400, 413) for anything else. */
function readNumbers(text: string, max: number): string[] {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new GatewayError('bad_request', 'The body must be JSON: {"numbers": ["+44 20 7946 0001", ...]}.');
  }
  const numbers =
    typeof body === 'object' && body !== null && !Array.isArray(body)
      ? (body as { numbers?: unknown }).numbers
      : undefined;
  if (!Array.isArray(numbers))
    throw new GatewayError('bad_request', 'The body must be an object with an array "numbers".');
  if (numbers.length > max)
    throw new GatewayError(
      'payload_too_large',
      `A batch holds at most ${max} numbers; this one has ${numbers.length}.`,
    );
  const bad = numbers.findIndex((n) => typeof n !== 'string');
  if (bad !== -1) throw new GatewayError('bad_request', `numbers[${bad}] is not a string.`);
  return numbers as string[];
}

/**
 * Searches each distinct number once, in order, as the client's searches (spellings of one number are one search; a
 * spelling that is no possible number is refused without one). When the client's rate allows not even the first,
 * the batch is refused whole and nothing more is searched (the use case says so at once: `ClientSearch`). Keyed by
 * the spelling as written.
 */
function searchEach(
  search: SearchUseCase,
  client: string,
  numbers: readonly string[],
  input: Omit<SearchInput, 'what'>,
): { outcomes: Map<string, Eventually<SearchOutcome>> } | { refusedWhole: SearchRefused } {
  const byNumber = new Map<string, Eventually<SearchOutcome>>();
  const outcomes = new Map<string, Eventually<SearchOutcome>>();
  for (const what of numbers) {
    if (outcomes.has(what)) continue;
    const number = search.numberOf(what);
    if ('refused' in number) {
      outcomes.set(what, notANumber(number.refused));
      continue;
    }
    let outcome = byNumber.get(number.e164);
    if (outcome === undefined) {
      const searched = search.byClient(client, { ...input, what: number.e164 });
      if ('rateRefused' in searched && byNumber.size === 0) return { refusedWhole: searched.rateRefused };
      outcome = 'rateRefused' in searched ? searched.rateRefused : searched.outcome;
      byNumber.set(number.e164, outcome);
    }
    outcomes.set(what, outcome);
  }
  return { outcomes };
}

/** A batch item that is no possible number: refused before any search, counted nowhere. */
const notANumber = (refused: GatewayError): SearchRefused => ({
  refused,
  step: 'number',
  caller: undefined,
  rateHeaders: undefined,
  lookup: undefined,
  preferenceApplied: undefined,
});

export function contactsBatchRoutes(
  services: Pick<Services, 'config' | 'search' | 'peerAddress' | 'clientCertificates'>,
): Hono<AppEnv> {
  const { config, search, peerAddress } = services;
  const certificateOf = services.clientCertificates.of;
  const max = config.batch.maxNumbers;
  const app = new Hono<AppEnv>();

  app.post(BATCH_ROUTE, batchDocs.batch, async (c: Context<AppEnv>) => {
    const who = await search.identify(requestOf(c, peerAddress, certificateOf));
    if ('refused' in who) throw who.refused;
    c.set('clientId', who.client);
    const numbers = readNumbers(await c.req.text(), max);
    const requestId = c.get('requestId');
    const searched = searchEach(search, who.client, numbers, {
      prefer: c.req.header('prefer'),
      requestId,
      span: c.get('span'),
    });
    // Nothing of the batch may be looked up: refused as a whole, as a single search would be.
    if ('refusedWhole' in searched) {
      const { refused, rateHeaders } = searched.refusedWhole;
      throw new GatewayError(refused.code, refused.message, { headers: { ...rateHeaders, ...refused.headers } });
    }
    // Every search settles by the deadline (an answer, a stale entry, or a 504 while its upstream call goes on).
    const settled = new Map<string, SearchOutcome>();
    await Promise.all([...searched.outcomes].map(async ([what, pending]) => settled.set(what, await pending)));
    const { headers, body } = renderBatchJson(numbers, settled, requestId);
    return c.body(body, 200, headers);
  });

  return app;
}
