// One search, whoever asks and however it is rendered: who asks (a client by its credentials, a client already known,
// or the console), its rate, the number, the caller's wait, the guarded lookup and its count, each step once
// (search-steps.ts). The JSON search, CNAM, every item of a batch and the console call it and only render its
// outcome (search-outcome.ts). A fresh hit is decided synchronously; anything that waits (a credential check, the
// console's shared rate, a miss) by a promise that never rejects.
import type { GatewayError } from '../base/errors.js';
import { lookupDeadline, type RequestParts } from '../request/request-parts.js';
import type { Asker, Identified, SearchAsk, SearchOutcome } from './search-outcome.js';
import {
  clientSearch,
  consoleSearch,
  identify,
  nobody,
  numberOf,
  refused,
  type SearchParts,
  type SearchUseCaseOptions,
} from './search-steps.js';

export interface SearchUseCase {
  /** Who a request is for, from its credentials: synchronously for a token verified before. */
  identify(request: RequestParts): Identified | Promise<Identified>;
  /** The number as written in E.164, or why it is not a possible number (a batch groups its spellings by it). */
  numberOf(what: string | undefined): { e164: string } | { refused: GatewayError };
  search(asker: Asker, ask: SearchAsk): SearchOutcome | Promise<SearchOutcome>;
}

function search(p: SearchParts, asker: Asker, ask: SearchAsk, now: number): SearchOutcome | Promise<SearchOutcome> {
  if (asker.kind === 'client') return clientSearch(p, ask, asker.client, now);
  if (asker.kind === 'console') return consoleSearch(p, ask, asker.request);
  const who = identify(p, asker.request, now);
  if (!(who instanceof Promise))
    return 'client' in who
      ? clientSearch(p, ask, who.client, now)
      : refused(p, nobody(ask, now), who.refused, 'identity');
  return who.then((known) =>
    'client' in known
      ? clientSearch(p, ask, known.client, p.clock())
      : refused(p, nobody(ask, now), known.refused, 'identity'),
  );
}

/** A bug of the gateway's own: an outcome as every unknown error is (500, logged with its stack), never thrown. */
const failed = (p: SearchParts, ask: SearchAsk, now: number, err: unknown) =>
  refused(p, nobody(ask, now), err, 'lookup');

export function createSearchUseCase(options: SearchUseCaseOptions): SearchUseCase {
  const p: SearchParts = {
    ...options,
    defaultDeadline: lookupDeadline(undefined, options.upstreamTimeoutMs, options.upstreamTimeoutMs),
  };
  return {
    identify: (request) => identify(p, request, p.clock()),
    numberOf: (what) => numberOf(p, what),
    search(asker, ask) {
      // One reading of the clock for every check of a hit (a reading costs about as much as one of the checks).
      const now = p.clock();
      try {
        const outcome = search(p, asker, ask, now);
        return outcome instanceof Promise ? outcome.catch((err: unknown) => failed(p, ask, now, err)) : outcome;
      } catch (err) {
        return failed(p, ask, now, err);
      }
    },
  };
}
