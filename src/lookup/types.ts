// The types of one lookup shared by the cache and its shared tier: what an answer is and whom it is for.

/** One cached upstream answer; immutable once stored, so concurrent readers can share it. */
export interface CachedAnswer {
  /** The upstream's JSON exactly as received. */
  readonly body: string;
  readonly contentType: string;
  /** Clock time (ms) the upstream answered. */
  readonly storedAt: number;
  /** Freshness lifetime in seconds (positive or negative TTL). */
  readonly ttlSeconds: number;
  readonly freshUntil: number;
  /** Until then a stale answer is served at once while one background refresh runs. */
  readonly revalidateUntil: number;
  /** Until then a stale answer replaces an upstream failure. */
  readonly staleIfErrorUntil: number;
  /** False for "no listing" answers, which get the shorter negative TTL. */
  readonly listed: boolean;
  /** Estimated bytes this entry holds in memory; what CACHE_MAX_BYTES counts. */
  readonly size: number;
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
}

export interface LoadedAnswer {
  body: string;
  contentType: string;
  /** Whether the body lists anything, when the loader already parsed it (the body is then not parsed again). */
  listed?: boolean;
}
