// The steps of one search, each once, as functions over the use case's parts: who asks, the caller's rate, the number,
// the caller's wait, the guarded lookup, and the count of what it came to.
import type { ClientAuthenticator } from '../auth/client-authenticator.js';
import { knownBearerClient, type GatewayTokens } from '../auth/gateway-tokens.js';
import type { Clock } from '../base/clock.js';
import type { Eventually } from '../base/eventually.js';
import { GatewayError, type ErrorCode } from '../base/errors.js';
import { internalError, logIfFailed } from '../observability/error-log.js';
import { CONSOLE_CLIENT, type CostGuard } from '../guard/cost-guard.js';
import { clientAddress } from '../limits/client-address.js';
import type { ConsoleRateLimiter, ConsumeOutcome } from '../limits/console-limits.js';
import type { LookupResult, LookupService } from '../lookup/lookup-service.js';
import type { Logger } from '../observability/logger.js';
import type { SearchCountResult, Telemetry } from '../observability/telemetry.js';
import type { NumberNormalizer } from './normalize.js';
import { lookupDeadline, readWhat, type LookupDeadline, type RequestParts } from '../request/request-parts.js';
import type {
  Identified,
  LookupNote,
  SearchFound,
  SearchInput,
  SearchOutcome,
  SearchRefused,
  SearchStep,
} from './search-outcome.js';

export interface SearchUseCaseOptions {
  gatewayTokens: GatewayTokens;
  authenticateClient: ClientAuthenticator;
  consoleLimiter: ConsoleRateLimiter;
  normalizer: NumberNormalizer;
  lookup: LookupService;
  guard: CostGuard;
  telemetry: Telemetry;
  logger: Logger;
  clock: Clock;
  /** UPSTREAM_TIMEOUT_MS: the deadline of a search without `Prefer: wait`, and the bound of any wait. */
  upstreamTimeoutMs: number;
  trustProxyHops: number;
}

/** What every step reads: the use case's options and the deadline of a search that states none. */
export interface SearchDeps extends SearchUseCaseOptions {
  defaultDeadline: LookupDeadline;
}

const REFUSALS: Partial<Record<ErrorCode, SearchCountResult>> = {
  too_many_requests: 'rate_limited',
  quota_exhausted: 'quota_exhausted',
  budget_exhausted: 'budget_exhausted',
  upstream_rate_limited: 'upstream_refused',
  upstream_unavailable: 'upstream_refused',
  upstream_busy: 'upstream_refused',
};

/** What a search's refusal counts as, per caller: which guard refused it, else an error. */
const refusalResult = (err: GatewayError): SearchCountResult => REFUSALS[err.code] ?? 'error';

/** The state one search carries from step to step; `Caller` is `string` once someone was identified. */
export interface SearchState<Caller extends string | undefined = string | undefined> {
  rateHeaders: Record<string, string> | undefined;
  input: SearchInput;
  caller: Caller;
  now: number;
}

/** A search before anyone was identified. */
export const nobody = (input: SearchInput, now: number): SearchState<undefined> => ({
  input,
  caller: undefined,
  now,
  rateHeaders: undefined,
});

const addressOf = (p: SearchDeps, request: RequestParts) =>
  clientAddress(request.peerAddress(), request.header('x-forwarded-for'), p.trustProxyHops);

/** Who a request is for, from its credentials: synchronously for a token verified before. */
export function identify(p: SearchDeps, request: RequestParts, now: number): Eventually<Identified> {
  const authorization = request.header('authorization');
  const known = knownBearerClient(p.gatewayTokens, authorization, now, request);
  if (known !== undefined) return { client: known, at: now };
  return p
    .authenticateClient(authorization, () => addressOf(p, request), request)
    .then((auth) => ('refused' in auth ? auth : { client: auth.clientId, at: p.clock() }));
}

/** A refusal, counted for its caller when there is one; a failure of the gateway or its upstream logged. */
export function refused(
  p: SearchDeps,
  s: SearchState,
  err: unknown,
  step: SearchStep,
  note?: LookupNote,
  applied?: string,
) {
  const { requestId } = s.input;
  const error = err instanceof GatewayError ? err : internalError(err, requestId, p.logger);
  if (error === err) logIfFailed(error, requestId, p.logger);
  if (s.caller !== undefined) p.guard.countSearch(s.caller, refusalResult(error), s.now);
  const outcome: SearchRefused = {
    refused: error,
    step,
    caller: s.caller,
    rateHeaders: s.rateHeaders,
    lookup: note,
    preferenceApplied: applied,
  };
  return outcome;
}

function found(
  p: SearchDeps,
  s: SearchState<string>,
  note: LookupNote,
  deadline: LookupDeadline,
  result: LookupResult,
  fresh: boolean,
) {
  note.cache = result.cache;
  p.guard.countSearch(s.caller, result.cache ?? 'miss', s.now);
  const outcome: SearchFound = {
    found: result,
    fresh,
    caller: s.caller,
    rateHeaders: s.rateHeaders,
    lookup: note,
    preferenceApplied: deadline.applied,
  };
  return outcome;
}

/** The number as written in E.164, or why it is not a possible number. */
export function numberOf(p: SearchDeps, what: string | undefined): { e164: string } | { refused: GatewayError } {
  try {
    return { e164: p.normalizer.normalize(what) };
  } catch (err) {
    if (err instanceof GatewayError) return { refused: err };
    throw err;
  }
}

/** The caller's deadline: its `Prefer: wait`, else the route's default, bounded by the upstream timeout. */
function deadlineOf(p: SearchDeps, input: SearchInput): LookupDeadline {
  if (input.prefer === undefined && input.defaultDeadlineMs === undefined) return p.defaultDeadline;
  return lookupDeadline(input.prefer, input.defaultDeadlineMs ?? p.defaultDeadline.ms, p.upstreamTimeoutMs);
}

/** The number, the caller's wait and the guarded lookup, once the caller's rate allowed the search. */
export function lookUp(p: SearchDeps, s: SearchState<string>): Eventually<SearchOutcome> {
  let number: ReturnType<typeof numberOf>;
  try {
    number = numberOf(p, s.input.target === undefined ? s.input.what : readWhat(s.input.target));
  } catch (err) {
    return refused(p, s, err, 'number');
  }
  if ('refused' in number) return refused(p, s, number.refused, 'number');
  const note: LookupNote = { e164: number.e164 };
  const deadline = deadlineOf(p, s.input);
  // Counted in memory, answered from memory: no network round trip on a hit.
  const fresh = p.lookup.lookupFresh(note.e164, s.now);
  if (fresh !== undefined) return found(p, s, note, deadline, fresh, true);
  return p.lookup.lookup(note.e164, { client: s.caller, span: s.input.span }, { deadlineMs: deadline.ms }).then(
    (result) => found(p, s, note, deadline, result, false),
    (err: unknown) => refused(p, s, err, 'lookup', note, deadline.applied),
  );
}

/**
 * A client's rate, counted in memory: the search allowed to go on, or refused. Synchronous by its type: a batch
 * refuses whole when the rate allows not even its first search, and learns that at once.
 */
export function clientRate(
  p: SearchDeps,
  input: SearchInput,
  client: string,
  now: number,
): SearchState<string> | SearchRefused {
  const rate = p.guard.rate.take(client, now);
  const s = { input, caller: client, now, rateHeaders: p.guard.rate.fields.headers(rate.state) };
  if (rate.allowed) return s;
  const retryAfter = String(rate.state.resetSeconds);
  const message = `This client made more than ${rate.state.limit} searches this minute; try again in ${retryAfter} s.`;
  const refusal = new GatewayError('too_many_requests', message, { headers: { 'retry-after': retryAfter } });
  return refused(p, s, refusal, 'rate');
}

/** A client's search from its rate on. */
export function clientSearch(p: SearchDeps, input: SearchInput, client: string, now: number) {
  const allowed = clientRate(p, input, client, now);
  return 'refused' in allowed ? allowed : lookUp(p, allowed);
}

/** The console's search: its own limits, per address and in total, in the shared store where there is one. */
export function consoleSearch(p: SearchDeps, input: SearchInput, request: RequestParts) {
  const s: SearchState<string> = { input, caller: CONSOLE_CLIENT, now: p.clock(), rateHeaders: undefined };
  return p.consoleLimiter.consume(addressOf(p, request)).then(
    (taken) => {
      s.rateHeaders = p.consoleLimiter.fields.headers(taken.state);
      return taken.allowed ? lookUp(p, s) : refused(p, s, consoleRateRefusal(taken, p.telemetry), 'rate');
    },
    (err: unknown) => refused(p, s, err, 'rate'),
  );
}

/** The console's rate refusal: which of its limits, and when to try again. */
function consoleRateRefusal(taken: Extract<ConsumeOutcome, { allowed: false }>, telemetry: Telemetry): GatewayError {
  telemetry.consoleRefused('rate_limited');
  const seconds = String(taken.retryAfterSeconds);
  const who = taken.scope === 'address' ? 'from your address' : 'to the console';
  return new GatewayError('too_many_requests', `Too many requests ${who}; try again in ${seconds} s.`, {
    headers: { 'retry-after': seconds },
  });
}
