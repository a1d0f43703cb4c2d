// The per-number cache of search answers: lru-cache bounded in bytes, one upstream load per number at a
// time (lru-cache's fetch), fresh / stale-while-revalidate / stale-if-error windows kept on the injected clock.
import { LRUCache } from 'lru-cache';
import type { Clock } from '../clock.js';
import { hasListing, parsePath } from './listing.js';

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
}

/**
 * What the cache did for one read. `revalidated`: a stale entry past its revalidate window was refreshed
 * while the caller waited; `collapsed`: the caller joined a load another caller had started.
 */
export type CacheOutcome = 'hit' | 'miss' | 'revalidated' | 'stale' | 'stale_if_error';

export interface CacheRead {
  answer: CachedAnswer;
  outcome: CacheOutcome;
  collapsed: boolean;
  /** Clock time of the read, for `Age` and `ttl=`. */
  now: number;
}

export interface LookupCache {
  /** The answer for an E.164 number: cached, or loaded once however many callers ask at the same time. */
  read(e164: string, context?: LookupContext): Promise<CacheRead>;
  /** A fresh hit, synchronously, or undefined when answering would need the upstream or a stale entry. */
  readFresh(e164: string): CacheRead | undefined;
  /** The entry held past its freshness while it may still replace a failure (a caller's deadline passed), or undefined. */
  readStale(e164: string): CacheRead | undefined;
  /** Forgets one number (a load in flight still answers its callers but is not kept). */
  delete(e164: string): boolean;
  /** Forgets everything; returns how many entries there were. */
  clear(): number;
  /** Entries held, including loads in flight. */
  readonly entries: number;
  /** Estimated bytes held, the figure bounded by `maxBytes`. */
  readonly bytes: number;
  readonly maxBytes: number;
}

/** Who a lookup is for: a registered client id, or `console`. The cost guard charges an upstream call to it. */
export interface LookupContext {
  client: string;
}

/** The context of reads that name no caller (unit tests of the cache itself). */
export const UNNAMED_CALLER: LookupContext = { client: 'gateway' };

export interface LoadedAnswer {
  body: string;
  contentType: string;
}

export interface LookupCacheOptions {
  /**
   * Fetches a number from the upstream; rejects on any failure, which is never cached. `context` is the caller
   * that started the load (joiners of a load in flight are not charged for it).
   */
  load: (e164: string, context: LookupContext) => Promise<LoadedAnswer>;
  clock: Clock;
  /** Keeps a stale-while-revalidate refresh alive after the response (Workers: ctx.waitUntil); default in process. */
  background?: (work: Promise<unknown>) => void;
  maxBytes: number;
  ttlSeconds: number;
  negativeTtlSeconds: number;
  staleWhileRevalidateSeconds: number;
  staleIfErrorSeconds: number;
  /** Dotted path of the results array in the upstream's body; empty or absent means "no listing". */
  resultsPath: string;
}

// The body's characters are counted at 1 or 2 bytes as V8 stores them; on top of that each entry costs its
// key, the answer object, lru-cache's slots and the key map's entry: the bench measured ~410 bytes per entry
// of live heap beyond the body (92,252 entries at 64 MiB counted with 256 used 77.5 MiB of heap).
const ENTRY_OVERHEAD_BYTES = 410;
const ONE_BYTE = /^[\0-\xff]*$/;
const JSON_TYPE = 'application/json';

/** Reads that see stale values too: our own windows decide, lru-cache's TTL only ends retention. */
const READ_STALE = { allowStale: true } as const;

export function createLookupCache(options: LookupCacheOptions): LookupCache {
  const { clock, load, maxBytes } = options;
  const resultsPath = parsePath(options.resultsPath);
  const revalidateMs = options.staleWhileRevalidateSeconds * 1000;
  const staleIfErrorMs = options.staleIfErrorSeconds * 1000;

  function toAnswer(e164: string, loaded: LoadedAnswer, now: number): CachedAnswer {
    const listed = hasListing(loaded.body, resultsPath);
    const ttlSeconds = listed ? options.ttlSeconds : options.negativeTtlSeconds;
    const freshUntil = now + ttlSeconds * 1000;
    const bodyBytes = ONE_BYTE.test(loaded.body) ? loaded.body.length : loaded.body.length * 2;
    const size = ENTRY_OVERHEAD_BYTES + e164.length + bodyBytes;
    return {
      body: loaded.body,
      // One shared string for the usual type instead of one copy per entry.
      contentType: loaded.contentType === JSON_TYPE ? JSON_TYPE : loaded.contentType,
      storedAt: now,
      ttlSeconds,
      freshUntil,
      revalidateUntil: freshUntil + revalidateMs,
      staleIfErrorUntil: freshUntil + staleIfErrorMs,
      listed,
      size,
      stored: size <= maxBytes && freshUntil + Math.max(revalidateMs, staleIfErrorMs) > now,
    };
  }

  const lru = new LRUCache<string, CachedAnswer, LookupContext>({
    maxSize: maxBytes,
    sizeCalculation: (answer) => answer.size,
    // Retention only; replaced per entry below. Fresh/stale is decided by the answer's own timestamps.
    ttl: Math.max(1, (options.ttlSeconds + Math.max(options.staleWhileRevalidateSeconds, options.staleIfErrorSeconds)) * 1000),
    ttlResolution: 0,
    perf: { now: clock },
    allowStale: false,
    // A failed refresh keeps the stale entry (for stale-if-error) and rejects every caller waiting on it.
    noDeleteOnFetchRejection: true,
    allowStaleOnFetchRejection: false,
    // A purge or an eviction during a load must not fail the callers waiting on it.
    ignoreFetchAbort: true,
    fetchMethod: async (e164, _stale, { options: fetchOptions, context }) => {
      const answer = toAnswer(e164, await load(e164, context), clock());
      // Kept until the later of its two stale windows ends; 1 ms when nothing may be kept.
      fetchOptions.ttl = Math.max(1, Math.max(answer.revalidateUntil, answer.staleIfErrorUntil) - answer.storedAt);
      return answer;
    },
  });

  function refreshInBackground(e164: string, context: LookupContext): void {
    // Joins a refresh already running instead of starting another; readers keep getting the stale value meanwhile.
    // The promise settles when the refresh does (allowStale would settle it at once with the stale value), so the
    // runtime keeps the refresh alive until then.
    const refresh = lru.fetch(e164, { forceRefresh: true, allowStale: false, context });
    if (options.background) options.background(refresh);
    else refresh.catch(() => {});
  }

  async function readSlow(e164: string, seen: CachedAnswer | undefined, now: number, context: LookupContext): Promise<CacheRead> {
    const stale = seen !== undefined && now < Math.max(seen.revalidateUntil, seen.staleIfErrorUntil) ? seen : undefined;
    if (stale !== undefined && now < stale.revalidateUntil) {
      refreshInBackground(e164, context);
      return { answer: stale, outcome: 'stale', collapsed: false, now };
    }
    const status: LRUCache.Status<string, CachedAnswer, LookupContext> = {};
    try {
      // Any entry still held here is past its freshness: it must not be answered as if it were fresh.
      const answer = await lru.fetch(e164, { forceRefresh: seen !== undefined, allowStale: false, status, context });
      if (answer === undefined) throw new Error('lookup cache: a load resolved without an answer');
      return { answer, outcome: stale ? 'revalidated' : 'miss', collapsed: status.fetch === 'inflight', now: clock() };
    } catch (err) {
      const at = clock();
      if (stale !== undefined && at < stale.staleIfErrorUntil) {
        return { answer: stale, outcome: 'stale_if_error', collapsed: status.fetch === 'inflight', now: at };
      }
      throw err;
    }
  }

  return {
    read(e164, context = UNNAMED_CALLER) {
      const now = clock();
      const seen = lru.get(e164, READ_STALE);
      if (seen !== undefined && now < seen.freshUntil) return Promise.resolve({ answer: seen, outcome: 'hit', collapsed: false, now });
      return readSlow(e164, seen, now, context);
    },
    readFresh(e164) {
      const now = clock();
      const seen = lru.get(e164, READ_STALE);
      return seen !== undefined && now < seen.freshUntil ? { answer: seen, outcome: 'hit', collapsed: false, now } : undefined;
    },
    readStale(e164) {
      const now = clock();
      const seen = lru.get(e164, READ_STALE);
      return seen !== undefined && now < seen.staleIfErrorUntil ? { answer: seen, outcome: 'stale_if_error', collapsed: false, now } : undefined;
    },
    delete: (e164) => lru.delete(e164),
    clear() {
      const count = lru.size;
      lru.clear();
      return count;
    },
    get entries() {
      return lru.size;
    },
    get bytes() {
      return lru.calculatedSize;
    },
    maxBytes,
  };
}
