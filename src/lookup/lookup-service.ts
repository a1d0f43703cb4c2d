// The one lookup path shared by the API and the console: an E.164 number in, the upstream's JSON out,
// through the per-number cache, with what the cache did said in `Cache-Status` (RFC 9211) and `Age`.
import { GatewayError } from '../errors.js';
import { noopTelemetry, type CacheResult, type Telemetry } from '../observability/telemetry.js';
import type { CacheRead, LookupCache, LookupContext } from './lookup-cache.js';

export interface LookupResult {
  /** The upstream's JSON, byte for byte. */
  body: string;
  contentType: string;
  /** RFC 9211 `Cache-Status` value, when a cache took part. */
  cacheStatus?: string;
  /** Seconds since the answer was obtained from the upstream (`Age`). */
  ageSeconds?: number;
  /** What the cache did, in the closed set of the metrics and logs. */
  cache?: CacheResult;
}

export interface LookupService {
  /** `context` names the caller, who is charged if this lookup calls the upstream. */
  lookup(e164: string, context: LookupContext): Promise<LookupResult>;
  /** The answer when the cache holds a fresh one, synchronously (the hit path); otherwise undefined. */
  lookupFresh(e164: string): LookupResult | undefined;
}

export interface LookupServiceOptions {
  cache: LookupCache;
  telemetry?: Telemetry;
  /**
   * True when a failed read failed for a reason of another caller whose load this one joined (their quota):
   * the read is then made once more, as this caller's own.
   */
  othersFailure?: (err: unknown, context: LookupContext) => boolean;
}

/** The cache's name in `Cache-Status`. */
export const CACHE_NAME = 'callerid-gateway';

/** RFC 9211 `Cache-Status` for one read; `ttl` is the remaining freshness in seconds (negative when stale). */
export function cacheStatusOf(read: CacheRead): string {
  const { answer, now } = read;
  const ttl = Math.floor((answer.freshUntil - now) / 1000);
  switch (read.outcome) {
    case 'hit':
      // `detail=shared`: another replica fetched it (RFC 9211's `detail` names what the cache did, in its own terms).
      return `${CACHE_NAME}; hit; ttl=${ttl}${read.shared ? '; detail=shared' : ''}`;
    case 'miss':
    case 'revalidated':
      return `${CACHE_NAME}; fwd=${read.outcome === 'miss' ? 'miss' : 'stale'}; fwd-status=200${answer.stored ? '; stored' : ''}${read.collapsed ? '; collapsed' : ''}; ttl=${ttl}`;
    case 'stale':
      return `${CACHE_NAME}; fwd=stale; ttl=${ttl}; detail=stale-while-revalidate`;
    case 'stale_if_error':
      return `${CACHE_NAME}; fwd=stale; ttl=${ttl}; detail=stale-if-error`;
  }
}

function telemetryResult(read: CacheRead): CacheResult {
  switch (read.outcome) {
    case 'hit':
      return read.shared ? 'shared' : 'hit';
    case 'stale':
    case 'stale_if_error':
      return read.outcome;
    case 'miss':
    case 'revalidated':
      return read.collapsed ? 'coalesced' : 'miss';
  }
}

/** The upstream failure, carrying the `Cache-Status` of a lookup the cache could not answer. */
function withCacheStatus(err: unknown): unknown {
  if (!(err instanceof GatewayError)) return err;
  return new GatewayError(err.code, err.message, {
    headers: { ...err.headers, 'cache-status': `${CACHE_NAME}; fwd=miss; detail=${err.code.replaceAll('_', '-')}` },
    extensions: err.extensions,
    cause: err.cause ?? err,
  });
}

export function createLookupService(options: LookupServiceOptions): LookupService {
  const { cache } = options;
  const telemetry = options.telemetry ?? noopTelemetry;

  function resultOf(read: CacheRead): LookupResult {
    const cacheResult = telemetryResult(read);
    telemetry.cacheLookup(cacheResult);
    const { answer } = read;
    return {
      cache: cacheResult,
      body: answer.body,
      contentType: answer.contentType,
      cacheStatus: cacheStatusOf(read),
      ageSeconds: Math.max(0, Math.floor((read.now - answer.storedAt) / 1000)),
    };
  }

  return {
    async lookup(e164, context) {
      let read: CacheRead;
      try {
        try {
          read = await cache.read(e164, context);
        } catch (err) {
          if (!options.othersFailure?.(err, context)) throw err;
          read = await cache.read(e164, context);
        }
      } catch (err) {
        telemetry.cacheLookup('miss');
        throw withCacheStatus(err);
      }
      return resultOf(read);
    },
    lookupFresh(e164) {
      const read = cache.readFresh(e164);
      return read === undefined ? undefined : resultOf(read);
    },
  };
}
