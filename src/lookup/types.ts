// The types of one lookup shared by the cache and its shared tier: what a cached answer is and whom it is for. The
// upstream's answer itself is `UpstreamAnswer` (upstream/search-client.ts); its stored form is the shared tier's
// `TierEntry` (shared-state/lookup-tier.ts), which a cached answer extends with what only this process knows.
import type { Span } from '../observability/tracing/span.js';
import type { TierEntry } from '../shared-state/lookup-tier.js';

/** One cached upstream answer; immutable once stored, so concurrent readers can share it. */
export interface CachedAnswer extends Readonly<Omit<TierEntry, 'v'>> {
  /** Estimated bytes this entry holds in memory; what CACHE_MAX_BYTES counts. */
  readonly size: number;
  /** The body's length in UTF-8 bytes (its `Content-Length`), counted once rather than on every hit. */
  readonly bodyBytes: number;
  /** False when the answer was handed to its callers but could not be kept (larger than the cache). */
  readonly stored: boolean;
  /** Where this process got it: its own upstream call, or the shared tier (another replica's call). */
  readonly origin: 'upstream' | 'shared';
  /** The shared tier's key of the number (a keyed hash), so a purge message naming it finds this entry. */
  readonly tierKey?: string;
}

/** Who a lookup is for: a registered client id, or `console`. The cost guard charges an upstream call to it. */
export interface LookupContext {
  client: string;
  /** The span the lookup's own spans go under (the request's), and whose context reaches the upstream. */
  span?: Span | undefined;
}
