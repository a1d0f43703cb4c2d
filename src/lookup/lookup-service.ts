// The one lookup path shared by the API and the console: an E.164 number in, the upstream's JSON out,
// through the per-number cache, with what the cache did said in `Cache-Status` (RFC 9211) and `Age`.
import { GatewayError } from '../base/errors.js';
import { noopTelemetry, type CacheResult, type Telemetry } from '../observability/telemetry.js';
import type { Span } from '../observability/tracing/span.js';
import { disabledTracer, type Tracer } from '../observability/tracing/tracer.js';
import { inProcess, type RunInBackground } from '../shared-state/background.js';
import type { CacheRead, LookupCache } from './lookup-cache.js';
import type { LookupContext } from './types.js';

export interface LookupResult {
  /** The upstream's JSON, byte for byte. */
  body: string;
  /** The body's length in UTF-8 bytes, when the cache knows it. */
  bodyBytes?: number;
  contentType: string;
  /** RFC 9211 `Cache-Status` value, when a cache took part. */
  cacheStatus?: string;
  /** Seconds since the answer was obtained from the upstream (`Age`). */
  ageSeconds?: number;
  /** What the cache did, in the closed set of the metrics and logs. */
  cache?: CacheResult;
}

interface LookupOptions {
  /**
   * How long the caller waits (Prefer: wait, else the route's default). When it passes first the caller gets a stale
   * entry or a `deadline_exceeded` error, while the upstream call goes on (up to UPSTREAM_TIMEOUT_MS) and fills
   * the cache. Absent, or not shorter than the upstream timeout: the lookup's own bounds apply.
   */
  deadlineMs?: number;
}

export interface LookupService {
  /** `context` names the caller, who is charged if this lookup calls the upstream. */
  lookup(e164: string, context: LookupContext, options?: LookupOptions): Promise<LookupResult>;
  /** An upstream read this caller stopped waiting for, kept alive until it settles (Workers: waitUntil). */
  /** The answer when the cache holds a fresh one, synchronously (the hit path); otherwise undefined. */
  lookupFresh(e164: string, now?: number): LookupResult | undefined;
}

export interface LookupServiceOptions {
  cache: LookupCache;
  telemetry?: Telemetry;
  /**
   * True when a failed read failed for a reason of another caller whose load this one joined (their quota):
   * the read is then made once more, as this caller's own.
   */
  othersFailure?: (err: unknown, context: LookupContext) => boolean;
  /** Keeps a read whose caller's deadline passed alive until it has filled the cache; default in process. */
  background?: RunInBackground;
  /** UPSTREAM_TIMEOUT_MS: a deadline at least this long needs no timer of its own. */
  upstreamTimeoutMs?: number;
  /** Each lookup that is no fresh hit gets a `lookup` span under its caller's; default off. */
  tracer?: Tracer;
}

/** Ends a lookup's span with what the cache did, or with the error that ended it. */
function endLookupSpan(span: Span, lookup: Promise<LookupResult>): Promise<LookupResult> {
  return lookup.then(
    (result) => {
      if (result.cache !== undefined) span.setAttribute('cache.status', result.cache);
      span.end();
      return result;
    },
    (err: unknown) => {
      span.setAttribute('error.type', err instanceof GatewayError ? err.code : 'exception');
      span.setStatus({ code: 'error' });
      span.end();
      throw err;
    },
  );
}

/** The cache's name in `Cache-Status`. */
const CACHE_NAME = 'callerid-gateway';

/** Whole seconds since the upstream gave the answer: the `Age` header (RFC 9111, rounded down). */
const ageOf = (read: CacheRead): number => Math.max(0, Math.floor((read.now - read.answer.storedAt) / 1000));

/**
 * The remaining freshness in whole seconds (negative when stale), from the same rounded age as `Age`, so that
 * `Age` + `ttl` is always the entry's lifetime (a 2 s lifetime read 3.5 s on: `Age: 3`, `ttl=-1`).
 */
const ttlOf = (read: CacheRead): number =>
  Math.round((read.answer.freshUntil - read.answer.storedAt) / 1000) - ageOf(read);

/** RFC 9211 `Cache-Status` for one read. */
function cacheStatusOf(read: CacheRead): string {
  const { answer } = read;
  const ttl = ttlOf(read);
  switch (read.result) {
    case 'hit':
      return `${CACHE_NAME}; hit; ttl=${ttl}`;
    case 'shared':
      // `detail=shared`: another replica fetched it (RFC 9211's `detail` names what the cache did, in its own terms).
      return `${CACHE_NAME}; hit; ttl=${ttl}; detail=shared`;
    case 'miss':
    case 'coalesced':
      return `${CACHE_NAME}; fwd=${read.revalidated ? 'stale' : 'miss'}; fwd-status=200${answer.stored ? '; stored' : ''}${read.result === 'coalesced' ? '; collapsed' : ''}; ttl=${ttl}`;
    case 'stale':
      return `${CACHE_NAME}; fwd=stale; ttl=${ttl}; detail=stale-while-revalidate`;
    case 'stale_if_error':
      return `${CACHE_NAME}; fwd=stale; ttl=${ttl}; detail=stale-if-error`;
  }
}

/** `Cache-Status` of a stale entry answered because the caller's deadline passed before the upstream answered. */
const deadlineStatusOf = (read: CacheRead): string => `${CACHE_NAME}; fwd=stale; ttl=${ttlOf(read)}; detail=deadline`;

/** The upstream failure, carrying the `Cache-Status` of a lookup the cache could not answer. */
function deadlinePassed(ms: number): GatewayError {
  return new GatewayError(
    'deadline_exceeded',
    `No answer within the caller's deadline of ${ms} ms; the lookup goes on and fills the cache, so asking again shortly is answered from it.`,
    {
      headers: { 'cache-status': `${CACHE_NAME}; fwd=miss; detail=deadline` },
    },
  );
}

/**
 * Failures the gateway answered without sending the search upstream: a guard refused it (quota, budget, rate, a
 * full queue, an open breaker, a cooldown) or no token could be had. RFC 9211's `fwd` says the request went
 * forward, so these say only why, in `detail`.
 */
const NOT_FORWARDED = new Set([
  'quota_exhausted',
  'budget_exhausted',
  'too_many_requests',
  'upstream_busy',
  'upstream_unavailable',
  'upstream_rate_limited',
  'token_unavailable',
]);

function withCacheStatus(err: unknown): unknown {
  if (!(err instanceof GatewayError)) return err;
  const detail = `detail=${err.code.replaceAll('_', '-')}`;
  const status = NOT_FORWARDED.has(err.code) ? `${CACHE_NAME}; ${detail}` : `${CACHE_NAME}; fwd=miss; ${detail}`;
  return new GatewayError(err.code, err.message, {
    headers: { ...err.headers, 'cache-status': status },
    extensions: err.extensions,
    cause: err.cause ?? err,
  });
}

export function createLookupService(options: LookupServiceOptions): LookupService {
  const { cache } = options;
  const telemetry = options.telemetry ?? noopTelemetry;
  const background = options.background ?? inProcess;
  const upstreamTimeoutMs = options.upstreamTimeoutMs ?? Number.POSITIVE_INFINITY;
  const tracer = options.tracer ?? disabledTracer;

  function resultOf(read: CacheRead, count = true): LookupResult {
    const cacheResult = read.result;
    if (count) telemetry.cacheLookup(cacheResult);
    const { answer } = read;
    return {
      cache: cacheResult,
      body: answer.body,
      bodyBytes: answer.bodyBytes,
      contentType: answer.contentType,
      cacheStatus: cacheStatusOf(read),
      ageSeconds: ageOf(read),
    };
  }

  /** One read as this caller's own; a failure carries the `Cache-Status` of a lookup the cache could not answer. */
  async function read(e164: string, context: LookupContext): Promise<CacheRead> {
    try {
      try {
        return await cache.read(e164, context);
      } catch (err) {
        if (!options.othersFailure?.(err, context)) throw err;
        return await cache.read(e164, context);
      }
    } catch (err) {
      throw withCacheStatus(err);
    }
  }

  async function readNow(e164: string, context: LookupContext): Promise<LookupResult> {
    try {
      return resultOf(await read(e164, context));
    } catch (err) {
      telemetry.cacheLookup('miss');
      throw err;
    }
  }

  /** The read, or what the cache holds once `ms` have passed; the read itself is never abandoned. */
  function readBy(e164: string, context: LookupContext, ms: number): Promise<LookupResult> {
    const reading = read(e164, context);
    return new Promise((resolve, reject) => {
      let waiting = true;
      const timer = setTimeout(() => {
        waiting = false;
        // The caller stops waiting, the upstream call does not: it goes on and fills the cache for the next caller.
        background(reading);
        const stale = cache.readStale(e164);
        telemetry.cacheLookup(stale === undefined ? 'miss' : 'stale');
        if (stale === undefined) reject(deadlinePassed(ms));
        else resolve({ ...resultOf(stale, false), cache: 'stale', cacheStatus: deadlineStatusOf(stale) });
      }, ms);
      reading.then(
        (r) => {
          if (!waiting) return;
          clearTimeout(timer);
          resolve(resultOf(r));
        },
        (err: unknown) => {
          if (!waiting) return;
          clearTimeout(timer);
          telemetry.cacheLookup('miss');
          reject(err);
        },
      );
    });
  }

  function lookup(e164: string, context: LookupContext, ms: number | undefined): Promise<LookupResult> {
    if (ms === undefined || ms >= upstreamTimeoutMs) return readNow(e164, context);
    // A fresh hit needs no timer.
    const fresh = cache.readFresh(e164);
    return fresh === undefined ? readBy(e164, context, ms) : Promise.resolve(resultOf(fresh));
  }

  return {
    lookup(e164, context, lookupOptions) {
      const span = tracer.startSpan('lookup', context.span);
      if (!span.recording) return lookup(e164, context, lookupOptions?.deadlineMs);
      return endLookupSpan(span, lookup(e164, { client: context.client, span }, lookupOptions?.deadlineMs));
    },
    lookupFresh(e164, now) {
      const read = cache.readFresh(e164, now);
      return read === undefined ? undefined : resultOf(read);
    },
  };
}
