// POST /v2/contacts/search/batch {"numbers": [...]}: many searches in one request for CRMs (docs/pbx.md).
// Each distinct number goes through the same cache, coalescing, rate, quota and concurrency bound as a single
// search; spellings of one number are looked up once; one deadline bounds the whole batch.
import { Hono, type Context } from 'hono';
import type { AppEnv } from '../app-env.js';
import { routeDocs } from '../docs/route-docs.js';
import { GatewayError, problemFor } from '../errors.js';
import { searchResultOf } from '../search/search-contract.js';
import type { LookupResult } from '../lookup/lookup-service.js';
import { clientAuth } from '../middleware/client-auth.js';
import type { RateLimitState } from '../limits/headers.js';
import type { Services } from '../services.js';
import { PRIVATE_ANSWER } from '../search/search-contract.js';
import { lookupDeadline } from '../request/request-parts.js';

export const BATCH_ROUTE = '/v2/contacts/search/batch';

/** Bytes allowed per number in the body: a 40-character spelling, its quotes, a comma and some spaces. */
const BYTES_PER_NUMBER = 64;

/** The batch body's bound (the app's body limit applies it, before authentication): never below REQUEST_MAX_BODY_BYTES. */
export function batchBodyBytes(config: Pick<Services['config'], 'http' | 'batch'>): number {
  return Math.max(config.http.maxBodyBytes, 1024 + config.batch.maxNumbers * BYTES_PER_NUMBER);
}

type Outcome = { found: LookupResult } | { failed: GatewayError };

/** The `numbers` of a batch body; a GatewayError (400, 413) for anything else. */
export function readNumbers(text: string, max: number): string[] {
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

function itemJson(what: string, e164: string | null, outcome: Outcome, requestId: string): string {
  const head = `{"what":${JSON.stringify(what)},"e164":${e164 === null ? 'null' : JSON.stringify(e164)}`;
  if ('found' in outcome) {
    const { found } = outcome;
    // The upstream's JSON (vouched for when it arrived) goes in unparsed, as the single search passes it through.
    return `${head},"status":200,"cacheStatus":${JSON.stringify(found.cacheStatus ?? null)},"body":${found.body}}`;
  }
  const err = outcome.failed;
  const cacheStatus = err.headers['cache-status'];
  const problem = { ...err.extensions, ...problemFor(err.code, err.message, requestId) };
  return `${head},"status":${err.status}${cacheStatus === undefined ? '' : `,"cacheStatus":${JSON.stringify(cacheStatus)}`},"problem":${JSON.stringify(problem)}}`;
}

export function contactsBatchRoutes(
  services: Pick<Services, 'config' | 'normalizer' | 'lookup' | 'guard' | 'authenticateClient' | 'addressOf'>,
): Hono<AppEnv> {
  const { config, normalizer, lookup, guard } = services;
  const max = config.batch.maxNumbers;
  const upstreamTimeoutMs = config.upstream?.timeoutMs ?? config.lookupDeadlineMs;
  const app = new Hono<AppEnv>();

  app.post(
    BATCH_ROUTE,
    routeDocs.batch,
    clientAuth(services.authenticateClient, services.addressOf),
    async (c: Context<AppEnv>) => {
      const numbers = readNumbers(await c.req.text(), max);
      const client = c.get('clientId');
      if (numbers.length > 0 && !guard.rate.allows(client)) {
        // Nothing of the batch may be looked up: refused as a whole, as a single search would be.
        const { state } = guard.rate.take(client);
        guard.countSearch(client, 'rate_limited');
        throw new GatewayError(
          'too_many_requests',
          `This client made more than ${state.limit} searches this minute; try again in ${state.resetSeconds} s.`,
          {
            headers: { ...guard.rate.fields.headers(state), 'retry-after': String(state.resetSeconds) },
          },
        );
      }
      const deadline = lookupDeadline(c.req.header('prefer'), config.lookupDeadlineMs, upstreamTimeoutMs);
      const headers: Record<string, string> = { 'content-type': 'application/json', 'cache-control': PRIVATE_ANSWER };
      if (deadline.applied !== undefined) headers['preference-applied'] = deadline.applied;

      // The client rate counts each distinct number once (a lookup), as if it were a single search.
      let rate: RateLimitState | undefined;
      const lookups = new Map<string, Promise<Outcome>>();
      const e164s = numbers.map((what): string | GatewayError => {
        let e164: string;
        try {
          e164 = normalizer.normalize(what);
        } catch (err) {
          return err instanceof GatewayError
            ? err
            : new GatewayError('invalid_number', 'Not a possible telephone number.');
        }
        if (!lookups.has(e164)) {
          const taken = guard.rate.take(client);
          rate = taken.state;
          if (!taken.allowed) {
            const retryAfter = String(taken.state.resetSeconds);
            lookups.set(
              e164,
              Promise.resolve({
                failed: new GatewayError(
                  'too_many_requests',
                  `This client made more than ${taken.state.limit} searches this minute; try again in ${retryAfter} s.`,
                  { headers: { 'retry-after': retryAfter } },
                ),
              }),
            );
          } else {
            lookups.set(
              e164,
              lookup.lookup(e164, { client }, { deadlineMs: deadline.ms }).then(
                (found): Outcome => ({ found }),
                (err: unknown): Outcome => ({
                  failed:
                    err instanceof GatewayError
                      ? err
                      : new GatewayError('internal', 'This number could not be looked up; please contact support.'),
                }),
              ),
            );
          }
        }
        return e164;
      });
      if (rate !== undefined) Object.assign(headers, guard.rate.fields.headers(rate));
      // Every lookup settles by the deadline (an answer, a stale entry, or a 504 while its upstream call goes on).
      const outcomes = new Map<string, Outcome>();
      await Promise.all([...lookups].map(async ([e164, pending]) => outcomes.set(e164, await pending)));

      const requestId = c.get('requestId');
      const items = numbers.map((what, i) => {
        const e164 = e164s[i]!;
        if (e164 instanceof GatewayError) return itemJson(what, null, { failed: e164 }, requestId);
        return itemJson(what, e164, outcomes.get(e164)!, requestId);
      });
      for (const outcome of outcomes.values()) {
        if ('found' in outcome) guard.countSearch(client, outcome.found.cache ?? 'miss');
        else guard.countSearch(client, searchResultOf(outcome.failed.status, undefined, outcome.failed));
      }
      return c.body(`{"results":[${items.join(',')}]}`, 200, headers);
    },
  );

  return app;
}
