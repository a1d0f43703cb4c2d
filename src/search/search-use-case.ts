// One search, whoever asks and however it is rendered: who asks (a client by its credentials, a client already known,
// or the console), its rate, the number, the caller's wait, the guarded lookup and its count, each step once. The JSON
// search, CNAM, every item of a batch and the console call it and only render its outcome. A fresh hit is decided
// synchronously; anything that waits (a credential check, the console's shared rate, a miss) by a promise that never
// rejects.
import type { ClientAuthenticator } from '../auth/client-authenticator.js';
import { knownBearerClient, type GatewayTokens } from '../auth/gateway-tokens.js';
import type { Clock } from '../clock.js';
import { GatewayError, internalError, logIfFailed, type ErrorCode } from '../errors.js';
import { CONSOLE_CLIENT, type CostGuard } from '../guard/cost-guard.js';
import { clientAddress } from '../limits/client-address.js';
import type { ConsoleRateLimiter, ConsumeOutcome } from '../limits/console-limits.js';
import type { LookupResult, LookupService } from '../lookup/lookup-service.js';
import type { Logger } from '../observability/logger.js';
import type { LookupNote } from '../observability/request-recorder.js';
import type { SearchResult, Telemetry } from '../observability/telemetry.js';
import type { NumberNormalizer } from '../phone/normalize.js';
import { lookupDeadline, readWhat, type LookupDeadline, type RequestParts } from '../request/request-parts.js';

/** Who asks for a search. */
export type Asker =
  /** A client, by the request's `Authorization` field (Bearer or Basic). */
  | { kind: 'request'; request: RequestParts }
  /** A client already identified by {@link SearchUseCase.identify} (the items of a batch). */
  | { kind: 'client'; client: string }
  /** The anonymous console, limited per address and in total. */
  | { kind: 'console'; request: RequestParts };

/** What is asked: the number as written, how long the caller waits, and the request id the log lines quote. */
export interface SearchAsk {
  /** The request target whose `what` parameter holds the number (read here, after who asks and the rate). */
  target?: string;
  /** The number as written, where no target holds it (a batch item). */
  what?: string;
  /** The `Prefer` field (RFC 7240 `wait`). */
  prefer: string | undefined;
  requestId: string;
  /** The deadline when the caller states none, where the route has its own (CNAM); default the search's. */
  defaultDeadlineMs?: number;
}

/** The step that refused a search. */
export type SearchStep = 'identity' | 'rate' | 'number' | 'lookup';

interface OutcomeParts {
  /** The client id, or `console`; absent when nobody was identified. */
  caller: string | undefined;
  /** The RateLimit fields of the caller's rate, once it was taken. */
  rateHeaders: Record<string, string> | undefined;
  /** The number and what the cache did, for the access log. */
  lookup: LookupNote | undefined;
  /** The `Preference-Applied` value when the caller's `wait` was honoured. */
  preferenceApplied: string | undefined;
}

export interface SearchFound extends OutcomeParts {
  caller: string;
  lookup: LookupNote;
  found: LookupResult;
  /** True for a fresh hit answered from memory, synchronously. */
  fresh: boolean;
}

export interface SearchRefused extends OutcomeParts {
  refused: GatewayError;
  step: SearchStep;
}

export type SearchOutcome = SearchFound | SearchRefused;

export type Identified = { client: string } | { refused: GatewayError };

export interface SearchUseCase {
  /** Who a request is for, from its credentials: synchronously for a token verified before. */
  identify(request: RequestParts, now?: number): Identified | Promise<Identified>;
  /** The number as written in E.164, or why it is not a possible number (a batch groups its spellings by it). */
  numberOf(what: string | undefined): { e164: string } | { refused: GatewayError };
  search(asker: Asker, ask: SearchAsk): SearchOutcome | Promise<SearchOutcome>;
}

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
  /** The deadline of a search without `Prefer: wait` (LOOKUP_DEADLINE_MS); the upstream timeout bounds any wait. */
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

/** What a search's refusal counts as, per caller: which guard refused it, else an error. */
const refusalResult = (err: GatewayError): SearchResult => REFUSALS[err.code] ?? 'error';

/** The state one search carries from step to step. */
interface Search {
  rateHeaders: Record<string, string> | undefined;
  ask: SearchAsk;
  /** Absent until someone was identified. */
  caller: string | undefined;
  now: number;
}

/** A search before anyone was identified. */
const nobody = (ask: SearchAsk, now: number): Search => ({ ask, caller: undefined, now, rateHeaders: undefined });

export function createSearchUseCase(options: SearchUseCaseOptions): SearchUseCase {
  const { gatewayTokens, authenticateClient, normalizer, lookup, guard, logger, clock } = options;
  const defaultDeadline = lookupDeadline(undefined, options.lookupDeadlineMs, options.upstreamTimeoutMs);
  const addressOf = (request: RequestParts) =>
    clientAddress(request.peerAddress(), request.header('x-forwarded-for'), options.trustProxyHops);

  function identify(request: RequestParts, now = clock()): Identified | Promise<Identified> {
    const authorization = request.header('authorization');
    const known = knownBearerClient(gatewayTokens, authorization, now);
    if (known !== undefined) return { client: known };
    return authenticateClient(authorization, () => addressOf(request)).then((auth) =>
      'refused' in auth ? auth : { client: auth.clientId },
    );
  }

  /** A refusal, counted for its caller when there is one; a failure of the gateway or its upstream logged. */
  function refused(s: Search, err: unknown, step: SearchStep, note?: LookupNote, applied?: string) {
    const { requestId } = s.ask;
    const error = err instanceof GatewayError ? err : internalError(err, requestId, logger);
    if (error === err) logIfFailed(error, requestId, logger);
    if (s.caller !== undefined) guard.countSearch(s.caller, refusalResult(error), s.now);
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
    s: Search & { caller: string },
    note: LookupNote,
    deadline: LookupDeadline,
    result: LookupResult,
    fresh: boolean,
  ) {
    note.cache = result.cache;
    guard.countSearch(s.caller, result.cache ?? 'miss', s.now);
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

  function numberOf(what: string | undefined): { e164: string } | { refused: GatewayError } {
    try {
      return { e164: normalizer.normalize(what) };
    } catch (err) {
      if (err instanceof GatewayError) return { refused: err };
      throw err;
    }
  }

  /** The number, the caller's wait and the guarded lookup, once the caller's rate allowed the search. */
  function lookUp(s: Search & { caller: string }): SearchOutcome | Promise<SearchOutcome> {
    let number: ReturnType<typeof numberOf>;
    try {
      number = numberOf(s.ask.target === undefined ? s.ask.what : readWhat(s.ask.target));
    } catch (err) {
      return refused(s, err, 'number');
    }
    if ('refused' in number) return refused(s, number.refused, 'number');
    const note: LookupNote = { e164: number.e164 };
    const { prefer } = s.ask;
    const defaultMs = s.ask.defaultDeadlineMs ?? defaultDeadline.ms;
    const deadline =
      prefer === undefined && s.ask.defaultDeadlineMs === undefined
        ? defaultDeadline
        : lookupDeadline(prefer, defaultMs, options.upstreamTimeoutMs);
    // Counted in memory, answered from memory: no network round trip on a hit.
    const fresh = lookup.lookupFresh(note.e164, s.now);
    if (fresh !== undefined) return found(s, note, deadline, fresh, true);
    return lookup.lookup(note.e164, { client: s.caller }, { deadlineMs: deadline.ms }).then(
      (result) => found(s, note, deadline, result, false),
      (err: unknown) => refused(s, err, 'lookup', note, deadline.applied),
    );
  }

  /** A client's search from its rate on (the rate is counted in memory: synchronous). */
  function clientSearch(ask: SearchAsk, client: string, now: number) {
    const rate = guard.rate.take(client, now);
    const s = { ask, caller: client, now, rateHeaders: guard.rate.fields.headers(rate.state) };
    if (rate.allowed) return lookUp(s);
    const retryAfter = String(rate.state.resetSeconds);
    const message = `This client made more than ${rate.state.limit} searches this minute; try again in ${retryAfter} s.`;
    return refused(
      s,
      new GatewayError('too_many_requests', message, { headers: { 'retry-after': retryAfter } }),
      'rate',
    );
  }

  /** The console's search: its own limits, per address and in total, in the shared store where there is one. */
  function consoleSearch(ask: SearchAsk, request: RequestParts) {
    const s: Search & { caller: string } = { ask, caller: CONSOLE_CLIENT, now: clock(), rateHeaders: undefined };
    return options.consoleLimiter.consume(addressOf(request)).then(
      (taken) => {
        s.rateHeaders = options.consoleLimiter.fields.headers(taken.state);
        return taken.allowed ? lookUp(s) : refused(s, consoleRateRefusal(taken, options.telemetry), 'rate');
      },
      (err: unknown) => refused(s, err, 'rate'),
    );
  }

  /** A bug of the gateway's own: an outcome as every unknown error is (500, logged with its stack), never thrown. */
  const failed = (ask: SearchAsk, now: number, err: unknown) => refused(nobody(ask, now), err, 'lookup');

  function search(asker: Asker, ask: SearchAsk, now: number): SearchOutcome | Promise<SearchOutcome> {
    if (asker.kind === 'client') return clientSearch(ask, asker.client, now);
    if (asker.kind === 'console') return consoleSearch(ask, asker.request);
    const who = identify(asker.request, now);
    if (!(who instanceof Promise))
      return 'client' in who ? clientSearch(ask, who.client, now) : refused(nobody(ask, now), who.refused, 'identity');
    return who.then((known) =>
      'client' in known
        ? clientSearch(ask, known.client, clock())
        : refused(nobody(ask, now), known.refused, 'identity'),
    );
  }

  return {
    identify,
    numberOf,
    search(asker, ask) {
      // One reading of the clock for every check of a hit (a reading costs about as much as one of the checks).
      const now = clock();
      try {
        const outcome = search(asker, ask, now);
        return outcome instanceof Promise ? outcome.catch((err: unknown) => failed(ask, now, err)) : outcome;
      } catch (err) {
        return failed(ask, now, err);
      }
    },
  };
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
