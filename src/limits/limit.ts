// One rate limit on rate-limiter-flexible: a fixed window of `points` per `durationSeconds` for each key, counted in
// the runtime's shared limiter store (RateLimiterRedis on Node with Redis, a Durable Object store on Workers) or,
// for one process, in a RateLimiterMemory. While the shared store cannot answer, the limit's store-error mode
// decides: `memory` goes on counting on this process from what the store last answered for the key plus what this
// process took since (fallback-counts.ts), never from zero, `open` counts nothing, `closed` refuses; the shared store
// is skipped for a second after a failure (a hung store costs one timeout, not one per request) and used again by
// itself once it answers. A key's count here also bounds the store's answer: what this process took while the store
// was down is not forgotten when it answers again.
import type { RateLimiterAbstract, RateLimiterRes as LimiterRes } from 'rate-limiter-flexible';
import RateLimiterMemory from 'rate-limiter-flexible/lib/RateLimiterMemory.js';
import RateLimiterRes from 'rate-limiter-flexible/lib/RateLimiterRes.js';
import type { Clock } from '../base/clock.js';
import type { CounterState } from '../shared-state/counter-store.js';
import type { CounterStoreErrorMode } from '../shared-state/fallback-counter-store.js';
import type { StoreHealth } from '../shared-state/store-health.js';
import { StoreUnavailableError } from '../shared-state/store-unavailable.js';
import { createFallbackCounts } from './fallback-counts.js';

export interface LimitSpec {
  /** Where the keys of this limit live, e.g. `callerid:console-rl:addr`; several deployments can share a store. */
  keyPrefix: string;
  points: number;
  durationSeconds: number;
}

/** The runtime's shared limiter store: one limiter per limit, exact across the deployment. */
export interface SharedLimiters {
  readonly kind: 'redis' | 'durable-object';
  create(spec: LimitSpec): RateLimiterAbstract;
}

interface LimitDecision extends CounterState {
  allowed: boolean;
}

export interface Limit {
  readonly spec: LimitSpec;
  /** Counts `points` on `key` and says whether the limit allows them; in `closed` mode a store failure throws. */
  consume(key: string, points?: number): Promise<LimitDecision>;
  /** The key's count, or null when its window is not open. Never throws. */
  get(key: string): Promise<CounterState | null>;
  /** Gives `points` back; a key given back to nothing is deleted, so keys an outsider invents do not pile up. */
  reward(key: string, points?: number): Promise<void>;
  /** Counts `points` without a limit (counts taken locally, sent in the background). */
  add(key: string, points: number): Promise<CounterState>;
}

export interface LimitOptions {
  spec: LimitSpec;
  /** Absent: the limit holds per process, in memory. */
  shared?: SharedLimiters | undefined;
  mode: CounterStoreErrorMode;
  /** The shared store's health, shared with its other users (one log line and one metric move per transition). */
  health?: StoreHealth | undefined;
  clock: Clock;
  /** Told of each operation the shared store failed, after the mode decided. */
  onStoreError?: (err: StoreUnavailableError) => void;
}

const RETRY_AFTER_MS = 1_000;
/** Keys each shared limit remembers for its fallback (src/limits/fallback-counts.ts); about 230 bytes each. */
const FALLBACK_KEYS = 10_000;

export function createLimit(options: LimitOptions): Limit {
  const { spec, mode, clock } = options;
  const limiterOptions = { keyPrefix: spec.keyPrefix, points: spec.points, duration: spec.durationSeconds };
  const isShared = options.shared !== undefined;
  const limiter: RateLimiterAbstract = options.shared?.create(spec) ?? new RateLimiterMemory(limiterOptions);
  const windowMs = spec.durationSeconds * 1000;
  // `memory` mode: what the shared store last said of each key, and what this process took since.
  const counts =
    isShared && mode === 'memory' ? createFallbackCounts({ windowMs, maxKeys: FALLBACK_KEYS, clock }) : undefined;
  let skipUntil = 0;

  const stateOf = (res: LimiterRes): CounterState => ({
    count: Math.max(0, res.consumedPoints),
    resetAt: clock() + Math.max(0, res.msBeforeNext),
  });
  const decisionOf = (res: LimiterRes, allowed: boolean): LimitDecision => ({ allowed, ...stateOf(res) });
  const uncounted = (): CounterState => ({ count: 0, resetAt: clock() + windowMs });

  /** Runs `op` on the limiter; while a shared one is down, `here` (`memory` mode), `notCounted` or a refusal. */
  async function run<T>(op: () => Promise<T>, here: () => T, notCounted: () => T): Promise<T> {
    if (!isShared) return op();
    let failure: StoreUnavailableError;
    if (clock() < skipUntil) {
      failure = new StoreUnavailableError('counter', 'shared limiter store is down; retrying shortly');
    } else {
      try {
        const result = await op();
        skipUntil = 0;
        options.health?.up();
        return result;
      } catch (err) {
        failure =
          err instanceof StoreUnavailableError
            ? err
            : new StoreUnavailableError('counter', 'shared limiter store failed', { cause: err });
        skipUntil = clock() + RETRY_AFTER_MS;
        options.health?.down(failure);
      }
    }
    options.onStoreError?.(failure);
    if (mode === 'closed') throw failure;
    return mode === 'memory' ? here() : notCounted();
  }

  // rate-limiter-flexible rejects a refusal with its RateLimiterRes, a store failure with an Error.
  const consumed = (key: string, points: number) =>
    limiter.consume(key, points).then(
      (res) => decisionOf(res, true),
      (res: unknown) => {
        if (res instanceof RateLimiterRes) return decisionOf(res, false);
        throw res;
      },
    );

  return {
    spec,
    consume: (key, points = 1) =>
      run(
        async () => {
          const decision = await consumed(key, points);
          if (counts === undefined) return decision;
          // Taken here while the store was down, and perhaps never counted there: the stricter count decides.
          const here = counts.seen(key, points, decision) + points;
          return here > spec.points ? { ...decision, allowed: false, count: Math.max(decision.count, here) } : decision;
        },
        () => {
          const state = counts!.add(key, points);
          return { allowed: state.count <= spec.points, ...state };
        },
        () => ({ allowed: true, ...uncounted() }),
      ),
    get: (key) =>
      run(
        async () => {
          const res = await limiter.get(key);
          return res === null ? null : stateOf(res);
        },
        () => counts!.get(key),
        () => null,
      ).catch(() => null),
    async reward(key, points = 1) {
      counts?.reward(key, points);
      await run(
        async () => {
          const res = await limiter.reward(key, points);
          if (res.consumedPoints <= 0) await limiter.delete(key);
        },
        () => undefined,
        () => undefined,
      ).catch(() => undefined);
    },
    add: (key, points) =>
      run(
        async () => {
          const state = stateOf(await limiter.penalty(key, points));
          counts?.seen(key, points, state);
          return state;
        },
        () => counts!.add(key, points),
        () => uncounted(),
      ),
  };
}
