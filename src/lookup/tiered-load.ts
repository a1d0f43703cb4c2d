// The shared second tier behind the per-process LRU (docs/scaling.md, "Lookups and purges across replicas"): what one process does when its
// LRU has no fresh answer. It reads the tier first, fills it under a per-number lease so that concurrent misses on
// different replicas make one upstream call, and goes on alone (one upstream call of its own) whenever the tier
// fails or is slow, until it answers again.
import type { Clock } from '../base/clock.js';
import type { RunInBackground } from '../shared-state/background.js';
import { TIER_ENTRY_VERSION, type LookupTier, type TierEntry } from '../shared-state/lookup-tier.js';
import type { StoreHealth } from '../shared-state/store-health.js';
import type { Span } from '../observability/tracing/span.js';
import type { Tracer } from '../observability/tracing/tracer.js';
import { StoreUnavailableError } from '../shared-state/store-unavailable.js';
import type { CachedAnswer, LookupContext } from './types.js';

export interface SharedTierOptions {
  tier: LookupTier;
  /** The tier's key of a number: a keyed hash, never the number itself. */
  keyOf(e164: string): Promise<string>;
  health: StoreHealth;
  /** Where the write to the tier after an upstream call runs (Workers: waitUntil). */
  background: RunInBackground;
  /** Bound of one tier call (REDIS_TIMEOUT_MS); past it this process goes on alone. */
  timeoutMs: number;
  /** How long a miss waits for another replica's fill before calling the upstream itself. */
  fillWaitMs: number;
  /** Lifetime of a fill lease: longer than one upstream call, so a filler that died blocks nobody for long. */
  leaseMs: number;
  /** Step of that wait; default 20 ms. */
  pollMs?: number;
  /** After a failed tier call, how long the tier is skipped before it is asked again; default 1 s. */
  retryMs?: number;
  /** A `lookup <tier kind>` span of each read of the tier, under a recorded lookup's span; absent: none. */
  tracer?: Tracer | undefined;
}

/** An upstream call failed while the shared tier held a copy still inside its stale-if-error window. */
export class SharedStaleFallback extends Error {
  constructor(
    readonly answer: CachedAnswer,
    readonly failure: unknown,
  ) {
    super('the upstream failed; the shared tier holds a stale copy', { cause: failure });
    this.name = 'SharedStaleFallback';
  }
}

export interface TieredLoad {
  /**
   * An answer for a number this process holds no fresh copy of (`local`: its stale copy, if any): a fresh copy from
   * the tier, a copy another replica just filled, or one upstream call. Rejects with the upstream's error, wrapped
   * in {@link SharedStaleFallback} when the tier had a stale copy that may replace it.
   */
  load(e164: string, local: CachedAnswer | undefined, context: LookupContext): Promise<CachedAnswer>;
  /** The number a load in flight is for, by tier key (a purge must reach loads not yet in the LRU). */
  inFlight(key: string): string | undefined;
  /** Removes a number from the tier, which tells every replica; false when the tier did not answer. */
  purge(e164: string): Promise<boolean>;
  purgeAll(): Promise<boolean>;
}

export interface TieredLoadDeps {
  clock: Clock;
  /** One upstream call, as an answer carrying its tier key. */
  upstream(e164: string, context: LookupContext, key: string): Promise<CachedAnswer>;
  /** A tier entry as an answer of this process, with its original timestamps. */
  fromShared(e164: string, entry: TierEntry, key: string): CachedAnswer;
}

const FAILED = Symbol('tier failed');
type Tried<T> = T | typeof FAILED;

/** A whole-deployment clear walks the tier's keys: bounded far above one command. */
const CLEAR_BOUND_MS = 30_000;

/** One process's view of the tier: its settings and parts, the loads in flight, and when the tier may be asked again. */
interface Tiered extends TieredLoadDeps {
  options: SharedTierOptions;
  tier: LookupTier;
  pollMs: number;
  retryMs: number;
  /** Loads in flight by tier key: the number, and how many (a purge may start a second one beside an orphaned first). */
  loading: Map<string, { e164: string; count: number }>;
  /** Until then the tier is not asked: it just failed (a hung Redis would cost every call its full timeout). */
  skipUntil: number;
}

export function createTieredLoad(options: SharedTierOptions, deps: TieredLoadDeps): TieredLoad {
  const t: Tiered = {
    ...deps,
    options,
    tier: options.tier,
    pollMs: Math.max(1, options.pollMs ?? 20),
    retryMs: options.retryMs ?? 1000,
    loading: new Map(),
    skipUntil: 0,
  };
  return {
    async load(e164, local, context) {
      const key = await options.keyOf(e164);
      const mark = t.loading.get(key) ?? { e164, count: 0 };
      mark.count++;
      t.loading.set(key, mark);
      try {
        return await loadShared(t, e164, key, local, context);
      } finally {
        if (--mark.count === 0) t.loading.delete(key);
      }
    },
    inFlight: (key) => t.loading.get(key)?.e164,
    async purge(e164) {
      const key = await options.keyOf(e164);
      return (await attempt(t, () => t.tier.delete(key))) !== FAILED;
    },
    async purgeAll() {
      return (await attempt(t, () => t.tier.clear(), Math.max(CLEAR_BOUND_MS, options.timeoutMs))) !== FAILED;
    },
  };
}

/**
 * One tier call, bounded in time; a failure marks the store down (once per transition), is never thrown, and
 * makes the next calls for `retryMs` skip the tier at once: a hung store costs one timeout, not one per call.
 * The first call after that window tries again.
 */
async function attempt<T>(t: Tiered, work: () => Promise<T>, boundMs = t.options.timeoutMs): Promise<Tried<T>> {
  const { health } = t.options;
  if (t.clock() < t.skipUntil) {
    health.down(new StoreUnavailableError('lookup', 'skipped: the shared tier failed less than a retry interval ago'));
    return FAILED;
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StoreUnavailableError('lookup', `no answer within ${boundMs} ms`)), boundMs);
  });
  try {
    const result = await Promise.race([work(), late]);
    health.up();
    return result;
  } catch (err) {
    t.skipUntil = t.clock() + t.retryMs;
    health.down(err);
    return FAILED;
  } finally {
    clearTimeout(timer);
  }
}

const isFresh = (t: Tiered, entry: Tried<TierEntry | undefined>): entry is TierEntry =>
  entry !== FAILED && entry !== undefined && t.clock() < entry.freshUntil;

/** Waits for the lease holder's entry in short steps; takes the lease over if it is given back without one. */
async function waitForFill(t: Tiered, key: string): Promise<TierEntry | 'leased' | 'alone'> {
  const { tier, pollMs } = t;
  for (let waited = 0; waited < t.options.fillWaitMs; waited += pollMs) {
    await new Promise((resolve) => setTimeout(resolve, pollMs));
    const entry = await attempt(t, () => tier.get(key));
    if (isFresh(t, entry)) return entry;
    if (entry === FAILED) return 'alone';
    const leased = await attempt(t, () => tier.lease(key, t.options.leaseMs));
    if (leased === FAILED) return 'alone';
    if (leased) return 'leased';
  }
  // The holder is slow rather than gone: call the upstream beside it rather than fail the caller.
  return 'alone';
}

function share(t: Tiered, key: string, answer: CachedAnswer, leased: boolean): void {
  const entry: TierEntry = {
    v: TIER_ENTRY_VERSION,
    body: answer.body,
    contentType: answer.contentType,
    storedAt: answer.storedAt,
    ttlSeconds: answer.ttlSeconds,
    freshUntil: answer.freshUntil,
    revalidateUntil: answer.revalidateUntil,
    staleIfErrorUntil: answer.staleIfErrorUntil,
    listed: answer.listed,
  };
  t.options.background(
    (async () => {
      // What this process would not keep (larger than its cache, nothing to retain) is not shared either.
      if (answer.stored) await attempt(t, () => t.tier.set(key, entry));
      if (leased) await attempt(t, () => t.tier.release(key));
    })(),
  );
}

/** Calls the upstream once for the deployment: under the fill lease, or after waiting for whoever holds it. */
async function fill(t: Tiered, e164: string, key: string, context: LookupContext): Promise<CachedAnswer> {
  const { tier, options } = t;
  const release = (): void => options.background(attempt(t, () => tier.release(key)));
  let leased: Tried<boolean> = await attempt(t, () => tier.lease(key, options.leaseMs));
  if (leased === false) {
    const waited = await waitForFill(t, key);
    if (typeof waited === 'object') return t.fromShared(e164, waited, key);
    leased = waited === 'leased' ? true : FAILED;
  }
  if (leased === true) {
    // The previous holder may have stored its answer and given the lease back between our read and our lease.
    const again = await attempt(t, () => tier.get(key));
    if (isFresh(t, again)) {
      release();
      return t.fromShared(e164, again, key);
    }
  }
  let answer: CachedAnswer;
  try {
    answer = await t.upstream(e164, context, key);
  } catch (err) {
    if (leased === true) release();
    throw err;
  }
  if (options.health.isUp) share(t, key, answer, leased === true);
  return answer;
}

/** The span of one read of the tier, when the lookup it serves is recorded. */
function tierSpan(t: Tiered, context: LookupContext): Span | undefined {
  const { tracer } = t.options;
  return tracer !== undefined && context.span?.recording === true
    ? tracer.startSpan(`lookup ${t.tier.kind}`, context.span)
    : undefined;
}

/** Ends a tier read's span with what it found: `hit`, `absent`, or the store's failure. */
function endTierSpan(span: Span, found: Tried<TierEntry | undefined>): void {
  if (found === FAILED) {
    span.setAttribute('error.type', 'store_unavailable');
    span.setStatus({ code: 'error' });
  } else span.setAttribute('lookup.tier.result', found === undefined ? 'absent' : 'found');
  span.end();
}

async function loadShared(
  t: Tiered,
  e164: string,
  key: string,
  local: CachedAnswer | undefined,
  context: LookupContext,
): Promise<CachedAnswer> {
  const span = tierSpan(t, context);
  const found = await attempt(t, () => t.tier.get(key));
  if (span !== undefined) endTierSpan(span, found);
  if (found === FAILED) return t.upstream(e164, context, key);
  const now = t.clock();
  if (found !== undefined) {
    if (now < found.freshUntil) return t.fromShared(e164, found, key);
    // A caller with no copy of its own gets the shared stale one at once; its refresh comes back here with it.
    if (local === undefined && now < found.revalidateUntil) return t.fromShared(e164, found, key);
  }
  const fallback =
    found !== undefined &&
    now < found.staleIfErrorUntil &&
    (local === undefined || found.staleIfErrorUntil > local.staleIfErrorUntil)
      ? found
      : undefined;
  try {
    return await fill(t, e164, key, context);
  } catch (err) {
    if (fallback !== undefined) throw new SharedStaleFallback(t.fromShared(e164, fallback, key), err);
    throw err;
  }
}
