// The per-number cache of search answers: lru-cache bounded in bytes, one upstream load per number at a
// time (lru-cache's fetch), fresh / stale-while-revalidate / stale-if-error windows kept on the injected clock.
// With a shared tier (tiered-load.ts) a local miss reads it before the upstream; hits stay in memory.
import { LRUCache } from 'lru-cache';
import type { Clock } from '../base/clock.js';
import type { CacheResult } from '../observability/telemetry.js';
import type { Span } from '../observability/tracing/span.js';
import type { SpanContext } from '../observability/tracing/trace-context.js';
import type { Tracer } from '../observability/tracing/tracer.js';
import type { PurgeReach, TierEntry } from '../shared-state/lookup-tier.js';
import { hasListing, parsePath } from '../upstream/search-client.js';
import type { UpstreamAnswer } from '../upstream/search-client.js';
import type { CachedAnswer, LookupContext } from './types.js';
import { createTieredLoad, SharedStaleFallback, type SharedTierOptions } from './tiered-load.js';

export interface CacheRead {
  answer: CachedAnswer;
  /**
   * What the cache did, in the one set the metrics, the logs and `Cache-Status` share: `shared` a fresh answer of
   * the shared tier (another replica's upstream call), `coalesced` joined a load another caller had started.
   */
  result: CacheResult;
  /** For `miss` and `coalesced`: the load refreshed a stale entry past its revalidate window (`fwd=stale`). */
  revalidated?: boolean;
  /** Clock time of the read, for `Age` and `ttl=`. */
  now: number;
}

export interface LookupCache {
  /** The answer for an E.164 number: cached, or loaded once however many callers ask at the same time. */
  read(e164: string, context?: LookupContext): Promise<CacheRead>;
  /** A fresh hit, synchronously, or undefined when answering would need the upstream or a stale entry. */
  readFresh(e164: string, now?: number): CacheRead | undefined;
  /** The entry held past its freshness while it may still replace a failure (a caller's deadline passed), or undefined. */
  readStale(e164: string): CacheRead | undefined;
  /** Forgets one number (a load in flight still answers its callers but is not kept). */
  delete(e164: string): boolean;
  /** Forgets everything; returns how many entries there were. */
  clear(): number;
  /** Forgets one number here and in the shared tier, which tells every replica to forget it too. */
  purge(e164: string): Promise<PurgeResult>;
  /** Forgets everything here and in the shared tier, which tells every replica to do the same. */
  purgeAll(): Promise<PurgeResult>;
  /** How far a purge reaches, for the admin answer. */
  readonly purgeReach: PurgeReach;
  /** Entries held, including loads in flight. */
  readonly entries: number;
  /** Estimated bytes held, the figure bounded by `maxBytes`. */
  readonly bytes: number;
  readonly maxBytes: number;
}

/** The context of reads that name no caller (unit tests of the cache itself). */
export const UNNAMED_CALLER: LookupContext = { client: 'gateway' };

interface PurgeResult {
  /** Entries this process dropped. */
  purged: number;
  /** Whether the shared tier took the purge (and fanned it out); false when it did not answer; absent without one. */
  shared?: boolean;
}

export interface LookupCacheOptions {
  /**
   * Fetches a number from the upstream; rejects on any failure, which is never cached. `context` is the caller
   * that started the load (joiners of a load in flight are not charged for it).
   */
  load: (e164: string, context: LookupContext) => Promise<UpstreamAnswer>;
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
  /** The second tier shared by the deployment; absent: this process's LRU alone. */
  shared?: SharedTierOptions;
  /** A caller that joins another's load gets a `lookup wait` span, linked to that caller's lookup; default off. */
  tracer?: Tracer | undefined;
}

// The body's characters are counted at 1 or 2 bytes as V8 stores them; on top of that each entry costs its
// key, the answer object, lru-cache's slots and the key map's entry: the bench measured ~410 bytes per entry
// of live heap beyond the body (92,252 entries at 64 MiB counted with 256 used 77.5 MiB of heap).
const ENTRY_OVERHEAD_BYTES = 410;
/** The tier key's 32 characters and its slot, when entries carry one. */
const TIER_KEY_BYTES = 56;
const JSON_TYPE = 'application/json';

/**
 * The body's length in UTF-8 bytes (its `Content-Length`) and in memory (1 byte a character where every one fits in
 * Latin-1, as V8 then stores it, else 2), counted in one pass without encoding a copy of it.
 */
export function bodyLengths(body: string): { utf8: number; memory: number } {
  let utf8 = body.length;
  let oneByte = true;
  for (let i = 0; i < body.length; i++) {
    const c = body.charCodeAt(i);
    if (c < 0x80) continue;
    if (c > 0xff) oneByte = false;
    if (c < 0x800) utf8 += 1;
    else if (c >= 0xd800 && c <= 0xdbff && (body.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      // A surrogate pair: 4 bytes for its 2 code units.
      utf8 += 2;
      i++;
    } else utf8 += 2; // 3 bytes, a lone surrogate's U+FFFD included
  }
  return { utf8, memory: oneByte ? body.length : body.length * 2 };
}

/** Reads that see stale values too: our own windows decide, lru-cache's TTL only ends retention. */
const READ_STALE = { allowStale: true } as const;

/** The cache's settings and parts, shared by the functions below. */
interface Shape {
  options: LookupCacheOptions;
  clock: Clock;
  resultsPath: string[];
  revalidateMs: number;
  staleIfErrorMs: number;
}

/** A shape with its entries: the LRU, and the shared tier's loads when there is one. */
interface Store extends Shape {
  lru: LRUCache<string, CachedAnswer, LookupContext>;
  tiered: ReturnType<typeof createTieredLoad> | undefined;
  loaders: Loaders;
}

/** The span context of each load in flight whose caller's span is recorded: what the callers joining it link to. */
type Loaders = Map<string, SpanContext>;

export function createLookupCache(options: LookupCacheOptions): LookupCache {
  const { clock, maxBytes } = options;
  const shape: Shape = {
    options,
    clock,
    resultsPath: parsePath(options.resultsPath),
    revalidateMs: options.staleWhileRevalidateSeconds * 1000,
    staleIfErrorMs: options.staleIfErrorSeconds * 1000,
  };
  const tiered =
    options.shared === undefined
      ? undefined
      : createTieredLoad(options.shared, {
          clock,
          upstream: async (e164, context, key) =>
            toAnswer(shape, e164, await options.load(e164, context), clock(), key),
          fromShared: (e164, entry, key) => answerOf(shape, e164, entry, 'shared', key),
        });
  const loaders: Loaders = new Map();
  const store: Store = { ...shape, tiered, loaders, lru: createLru(shape, tiered, loaders) };
  const { lru } = store;
  options.shared?.tier.onPurge((key) => purgedElsewhere(store, key));

  return {
    read(e164, context = UNNAMED_CALLER) {
      const now = clock();
      const seen = lru.get(e164, READ_STALE);
      if (seen !== undefined && now < seen.freshUntil) return Promise.resolve({ answer: seen, result: 'hit', now });
      return readSlow(store, e164, seen, now, context);
    },
    readFresh(e164, now = clock()) {
      const seen = lru.get(e164, READ_STALE);
      return seen !== undefined && now < seen.freshUntil ? { answer: seen, result: 'hit', now } : undefined;
    },
    readStale(e164) {
      const now = clock();
      const seen = lru.get(e164, READ_STALE);
      return seen !== undefined && now < seen.staleIfErrorUntil
        ? { answer: seen, result: 'stale_if_error', now }
        : undefined;
    },
    delete: (e164) => lru.delete(e164),
    clear: () => clear(lru),
    async purge(e164) {
      const purged = lru.delete(e164) ? 1 : 0;
      return tiered === undefined ? { purged } : { purged, shared: await tiered.purge(e164) };
    },
    async purgeAll() {
      const purged = clear(lru);
      return tiered === undefined ? { purged } : { purged, shared: await tiered.purgeAll() };
    },
    get entries() {
      return lru.size;
    },
    get bytes() {
      return lru.calculatedSize;
    },
    maxBytes,
    purgeReach: options.shared === undefined ? 'process' : (options.shared.tier.purgeReach ?? 'deployment'),
  };
}

/** The answer as this process holds it; a shared entry keeps the windows of the replica that fetched it (true `Age`). */
function answerOf(
  { options, clock }: Shape,
  e164: string,
  from: Omit<TierEntry, 'v'>,
  origin: CachedAnswer['origin'],
  tierKey: string | undefined,
): CachedAnswer {
  const { body, revalidateUntil, staleIfErrorUntil } = from;
  const lengths = bodyLengths(body);
  const size = ENTRY_OVERHEAD_BYTES + e164.length + lengths.memory + (tierKey === undefined ? 0 : TIER_KEY_BYTES);
  return {
    body,
    bodyBytes: lengths.utf8,
    // One shared string for the usual type instead of one copy per entry.
    contentType: from.contentType === JSON_TYPE ? JSON_TYPE : from.contentType,
    storedAt: from.storedAt,
    ttlSeconds: from.ttlSeconds,
    freshUntil: from.freshUntil,
    revalidateUntil,
    staleIfErrorUntil,
    listed: from.listed,
    size,
    stored: size <= options.maxBytes && Math.max(revalidateUntil, staleIfErrorUntil) > clock(),
    origin,
    tierKey,
  };
}

function toAnswer(shape: Shape, e164: string, loaded: UpstreamAnswer, now: number, tierKey?: string): CachedAnswer {
  const { options } = shape;
  const listed = loaded.listed ?? hasListing(loaded.body, shape.resultsPath);
  const ttlSeconds = listed ? options.ttlSeconds : options.negativeTtlSeconds;
  const freshUntil = now + ttlSeconds * 1000;
  const entry: Omit<TierEntry, 'v'> = {
    body: loaded.body,
    contentType: loaded.contentType,
    storedAt: now,
    ttlSeconds,
    freshUntil,
    revalidateUntil: freshUntil + shape.revalidateMs,
    staleIfErrorUntil: freshUntil + shape.staleIfErrorMs,
    listed,
  };
  return answerOf(shape, e164, entry, 'upstream', tierKey);
}

/** Loads `e164` for the caller of `context`, its span known to those who join the load meanwhile. */
async function loadOnce(
  shape: Shape,
  tiered: Store['tiered'],
  loaders: Loaders,
  e164: string,
  stale: CachedAnswer | undefined,
  context: LookupContext,
): Promise<CachedAnswer> {
  const { options, clock } = shape;
  const loader = context.span?.recording === true ? context.span.context : undefined;
  if (loader !== undefined) loaders.set(e164, loader);
  try {
    return tiered === undefined
      ? toAnswer(shape, e164, await options.load(e164, context), clock())
      : await tiered.load(e164, stale, context);
  } finally {
    if (loader !== undefined && loaders.get(e164) === loader) loaders.delete(e164);
  }
}

function createLru(
  shape: Shape,
  tiered: Store['tiered'],
  loaders: Loaders,
): LRUCache<string, CachedAnswer, LookupContext> {
  const { options, clock } = shape;
  return new LRUCache<string, CachedAnswer, LookupContext>({
    maxSize: options.maxBytes,
    sizeCalculation: (answer) => answer.size,
    // Retention only; replaced per entry below. Fresh/stale is decided by the answer's own timestamps.
    ttl: Math.max(
      1,
      (options.ttlSeconds + Math.max(options.staleWhileRevalidateSeconds, options.staleIfErrorSeconds)) * 1000,
    ),
    ttlResolution: 0,
    perf: { now: clock },
    allowStale: false,
    // A failed refresh keeps the stale entry (for stale-if-error) and rejects every caller waiting on it.
    noDeleteOnFetchRejection: true,
    allowStaleOnFetchRejection: false,
    // A purge or an eviction during a load must not fail the callers waiting on it.
    ignoreFetchAbort: true,
    fetchMethod: async (e164, stale, { options: fetchOptions, context }) => {
      const answer = await loadOnce(shape, tiered, loaders, e164, stale, context);
      // Kept until the later of its two stale windows ends; 1 ms when nothing may be kept.
      fetchOptions.ttl = Math.max(
        1,
        Math.max(answer.revalidateUntil, answer.staleIfErrorUntil) -
          (answer.origin === 'shared' ? clock() : answer.storedAt),
      );
      return answer;
    },
  });
}

/**
 * A purge made on any replica: one number by its tier key (a loop over the entries, only on a purge, so entries
 * carry no side index), or everything (`null`), also after a reconnect that may have lost messages.
 */
function purgedElsewhere({ lru, tiered }: Store, key: string | null): void {
  if (key === null) {
    lru.clear();
    return;
  }
  const loading = tiered?.inFlight(key);
  if (loading !== undefined) lru.delete(loading);
  let match: string | undefined;
  lru.forEach((answer, e164) => {
    if (answer.tierKey === key) match = e164;
  });
  if (match !== undefined) lru.delete(match);
}

function clear(lru: Store['lru']): number {
  const count = lru.size;
  lru.clear();
  return count;
}

function refreshInBackground({ lru, options }: Store, e164: string, context: LookupContext): void {
  // Joins a refresh already running instead of starting another; readers keep getting the stale value meanwhile.
  // The promise settles when the refresh does (allowStale would settle it at once with the stale value), so the
  // runtime keeps the refresh alive until then.
  const refresh = lru.fetch(e164, { forceRefresh: true, allowStale: false, context });
  if (options.background) options.background(refresh);
  else refresh.catch(() => {});
}

async function readSlow(
  store: Store,
  e164: string,
  seen: CachedAnswer | undefined,
  now: number,
  context: LookupContext,
): Promise<CacheRead> {
  const stale = seen !== undefined && now < Math.max(seen.revalidateUntil, seen.staleIfErrorUntil) ? seen : undefined;
  if (stale !== undefined && now < stale.revalidateUntil) {
    refreshInBackground(store, e164, context);
    return { answer: stale, result: 'stale', now };
  }
  const status: LRUCache.Status<string, CachedAnswer, LookupContext> = {};
  let wait: Span | undefined;
  try {
    // Any entry still held here is past its freshness: it must not be answered as if it were fresh.
    const loading = store.lru.fetch(e164, { forceRefresh: seen !== undefined, allowStale: false, status, context });
    // lru-cache says at once whether the load was already in flight: this caller then waits on another's.
    if (status.fetch === 'inflight') wait = waitSpan(store, e164, context);
    const answer = await loading;
    wait?.end();
    if (answer === undefined) throw new Error('lookup cache: a load resolved without an answer');
    const at = store.clock();
    if (answer.origin === 'upstream') {
      const result = status.fetch === 'inflight' ? 'coalesced' : 'miss';
      return { answer, result, revalidated: stale !== undefined, now: at };
    }
    if (at < answer.freshUntil) return { answer, result: 'shared', now: at };
    // The shared tier's copy is stale (the caller had none): answered at once while this process refreshes it.
    refreshInBackground(store, e164, context);
    return { answer, result: 'stale', now: at };
  } catch (err) {
    wait?.setStatus({ code: 'error' });
    wait?.end();
    return staleIfError(store.clock(), err, stale);
  }
}

/** The span of a wait on the load another caller started, linked to that caller's lookup span when it is recorded. */
function waitSpan({ options, loaders }: Store, e164: string, context: LookupContext): Span | undefined {
  if (options.tracer === undefined || context.span?.recording !== true) return undefined;
  const span = options.tracer.startSpan('lookup wait', context.span);
  const loader = loaders.get(e164);
  if (loader !== undefined) span.addLink({ context: loader });
  return span;
}

/** A failed load: the later-lasting of the caller's stale entry and the shared tier's, while it may stand in. */
function staleIfError(at: number, err: unknown, stale: CachedAnswer | undefined): CacheRead {
  const shared = err instanceof SharedStaleFallback ? err.answer : undefined;
  const fallback =
    shared !== undefined && (stale === undefined || shared.staleIfErrorUntil > stale.staleIfErrorUntil)
      ? shared
      : stale;
  if (fallback !== undefined && at < fallback.staleIfErrorUntil) {
    return { answer: fallback, result: 'stale_if_error', now: at };
  }
  throw shared !== undefined ? (err as SharedStaleFallback).failure : err;
}
