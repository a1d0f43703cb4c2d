// One search, whoever asks and however it is rendered: who asks (a client by its credentials, a client already known,
// or the console), its rate, the number, the caller's wait, the guarded lookup and its count, each step once
// (search-steps.ts). The JSON search, CNAM, every item of a batch and the console call it and only render its
// outcome (search-outcome.ts). A fresh hit is decided synchronously; anything that waits (a credential check, the
// console's shared rate, a miss) by a promise that never rejects.
import { whenSettled, type Eventually } from '../base/eventually.js';
import type { GatewayError } from '../base/errors.js';
import { lookupDeadline, type RequestParts } from '../request/request-parts.js';
import type { ClientSearch, Identified, SearchInput, SearchOutcome, SearchRefused } from './search-outcome.js';
import {
  clientRate,
  clientSearch,
  consoleSearch,
  identify,
  lookUp,
  nobody,
  numberOf,
  refused,
  type SearchDeps,
  type SearchState,
  type SearchUseCaseOptions,
} from './search-steps.js';

export interface SearchUseCase {
  /** Who a request is for, from its credentials: synchronously for a token verified before. */
  identify(request: RequestParts): Eventually<Identified>;
  /** The number as written in E.164, or why it is not a possible number (a batch groups its spellings by it). */
  numberOf(what: string | undefined): { e164: string } | { refused: GatewayError };
  /** A client's search, the client known by the request's `Authorization` field (Bearer or Basic). */
  byCredentials(request: RequestParts, input: SearchInput): Eventually<SearchOutcome>;
  /** The anonymous console's search, limited per address and in total. */
  byConsole(request: RequestParts, input: SearchInput): Eventually<SearchOutcome>;
  /** A search of a client identified before (the items of a batch): a refusal by its rate is known at once. */
  byClient(client: string, input: SearchInput): ClientSearch;
}

function byCredentials(p: SearchDeps, request: RequestParts, input: SearchInput, now: number) {
  return whenSettled(identify(p, request, now), (who) =>
    'client' in who
      ? clientSearch(p, input, who.client, who.at)
      : refused(p, nobody(input, now), who.refused, 'identity'),
  );
}

const same = (outcome: SearchOutcome) => outcome;

/** A bug of the gateway's own: an outcome as every unknown error is (500, logged with its stack), never thrown. */
const failed = (p: SearchDeps, input: SearchInput, now: number, err: unknown) =>
  refused(p, nobody(input, now), err, 'lookup');

/** One search run so that it never throws nor rejects. */
function safely(p: SearchDeps, input: SearchInput, now: number, search: () => Eventually<SearchOutcome>) {
  try {
    return whenSettled(search(), same, (err) => failed(p, input, now, err));
  } catch (err) {
    return failed(p, input, now, err);
  }
}

/** A known client's search: its rate first (synchronous by its type), then the rest as any search. */
function byClient(p: SearchDeps, client: string, input: SearchInput): ClientSearch {
  const now = p.clock();
  let rate: SearchState<string> | SearchRefused;
  try {
    rate = clientRate(p, input, client, now);
  } catch (err) {
    return { outcome: failed(p, input, now, err) };
  }
  if ('refused' in rate) return { rateRefused: rate };
  const allowed = rate;
  return { outcome: safely(p, input, now, () => lookUp(p, allowed)) };
}

export function createSearchUseCase(options: SearchUseCaseOptions): SearchUseCase {
  const p: SearchDeps = {
    ...options,
    defaultDeadline: lookupDeadline(undefined, options.upstreamTimeoutMs, options.upstreamTimeoutMs),
  };
  return {
    identify: (request) => identify(p, request, p.clock()),
    numberOf: (what) => numberOf(p, what),
    byCredentials(request, input) {
      // One reading of the clock for every check of a hit (a reading costs about as much as one of the checks).
      const now = p.clock();
      return safely(p, input, now, () => byCredentials(p, request, input, now));
    },
    byConsole(request, input) {
      const now = p.clock();
      return safely(p, input, now, () => consoleSearch(p, input, request));
    },
    byClient: (client, input) => byClient(p, client, input),
  };
}
