// What one search is asked and what it comes to: the use case's input (what is asked; who asks is the use case's
// method) and its outcome, which every renderer renders: the lookup's result, or the refusal and the step that refused.
import type { Eventually } from '../base/eventually.js';
import type { GatewayError } from '../base/errors.js';
import type { LookupResult } from '../lookup/lookup-service.js';
import type { CacheResult } from '../observability/telemetry.js';
import type { Span } from '../observability/tracing/span.js';

/** What a search looked up, for the access log: the number (logged only as a keyed hash) and what the cache did. */
export interface LookupNote {
  e164: string;
  cache?: CacheResult;
}

/** What is asked: the number as written, how long the caller waits, and the request id the log lines quote. */
export interface SearchInput {
  /** The request target whose `what` parameter holds the number (read here, after who asks and the rate). */
  target?: string;
  /** The number as written, where no target holds it (a batch item). */
  what?: string;
  /** The `Prefer` field (RFC 7240 `wait`). */
  prefer: string | undefined;
  requestId: string;
  /** The deadline when the caller states none, where the route has its own (CNAM); default the search's. */
  defaultDeadlineMs?: number;
  /** The request's server span: the lookup's and the upstream call's spans go under it, its context to the upstream. */
  span?: Span | undefined;
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

/**
 * A search of a client identified before: refused by its rate (known at once: the rate is taken synchronously, which
 * this type holds to, since no promise can carry this case), or its outcome from the number on.
 */
export type ClientSearch = { rateRefused: SearchRefused } | { outcome: Eventually<SearchOutcome> };

/** Who a request is for, from its credentials, and the clock's reading once that was known. */
export type Identified = { client: string; at: number } | { refused: GatewayError };
