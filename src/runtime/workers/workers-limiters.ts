// The limits' shared store on Workers: a rate-limiter-flexible store (a RateLimiterStoreAbstract subclass) whose
// keys are each counted by their own counter Durable Object, through the same calls as the counter store, so a
// limit is exact across every isolate and a slow or failing object is a store failure the limit's mode answers.
import RateLimiterRes from 'rate-limiter-flexible/lib/RateLimiterRes.js';
import RateLimiterStoreAbstract from 'rate-limiter-flexible/lib/RateLimiterStoreAbstract.js';
import type { LimitSpec, SharedLimiters } from '../../limits/limit.js';
import type { CounterState, CounterStore } from '../../shared-state/counter-store.js';

class DurableObjectLimiter extends RateLimiterStoreAbstract {
  constructor(
    spec: LimitSpec,
    private readonly counters: CounterStore,
  ) {
    super({
      storeClient: counters,
      keyPrefix: spec.keyPrefix,
      points: spec.points,
      duration: spec.durationSeconds,
      inMemoryBlockOnConsumed: 0,
    });
  }

  _getRateLimiterRes(_rlKey: string, changedPoints: number, state: CounterState): RateLimiterRes {
    return new RateLimiterRes(
      Math.max(this.points - state.count, 0),
      Math.max(0, state.resetAt - Date.now()),
      state.count,
      state.count === changedPoints,
    );
  }

  _upsert(rlKey: string, points: number, msDuration: number, forceExpire = false): Promise<CounterState> {
    // `set` and `block` (which overwrite a count) are not used by the gateway's limits.
    if (forceExpire) return Promise.reject(new Error('overwriting a count is not supported'));
    return this.counters.add(rlKey, points, msDuration);
  }

  _get(rlKey: string): Promise<CounterState | null> {
    return this.counters.get(rlKey);
  }

  async _delete(rlKey: string): Promise<boolean> {
    const state = await this.counters.get(rlKey);
    // Given back to nothing, the object deletes what it kept.
    if (state !== null) await this.counters.add(rlKey, -state.count, 1);
    return state !== null;
  }
}

export function createWorkerLimiters(counters: CounterStore): SharedLimiters {
  return { kind: 'durable-object', create: (spec) => new DurableObjectLimiter(spec, counters) };
}
