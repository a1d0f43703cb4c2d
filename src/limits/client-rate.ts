// CLIENT_RATE_PER_MINUTE: searches per registered client per clock minute, every answer counting (cache hits on
// Node's search door too). Counted on this process at once and reconciled with the limit's store in the
// background (its rate-limiter-flexible limiter: RateLimiterRedis, the Durable Object store, or memory): never a
// network round trip per search.
import type { Clock } from '../base/clock.js';
import { createLocalCounters } from './local-counters.js';
import type { RunInBackground } from '../shared-state/background.js';
import type { StoreHealth } from '../shared-state/store-health.js';
import {
  createRateLimitFields,
  type RateLimitFields,
  type RateLimitHeaderFormat,
  type RateLimitState,
} from './headers.js';
import { createLimit, type SharedLimiters } from './limit.js';

interface RateDecision {
  allowed: boolean;
  state: RateLimitState;
}

export interface ClientRate {
  /** Counts one search of `client` (a refusal counts nothing); synchronous. `now` (default the clock) saves a read. */
  take(client: string, now?: number): RateDecision;
  /** Whether a `take` now would be allowed, counting nothing. */
  allows(client: string, now?: number): boolean;
  /** The RateLimit header fields of the `client` policy. */
  readonly fields: RateLimitFields;
  /** Sends the counts taken here to the store now (what the background does every 250 ms). */
  sync(): Promise<void>;
}

export interface ClientRateOptions {
  /** CLIENT_RATE_PER_MINUTE: every client's rate but those with their own. */
  perMinute: number;
  /** A client's own rate (the clients file's `rate_per_minute`), read at each search so a reload applies at once. */
  perMinuteOf?: ((client: string) => number | undefined) | undefined;
  clock: Clock;
  background: RunInBackground;
  /** The runtime's shared limiter store; while it is down the counts stay here. Absent: per process. */
  shared?: SharedLimiters | undefined;
  health?: StoreHealth | undefined;
  headerFormat: RateLimitHeaderFormat;
}

const CLIENT_POLICY = 'client';
const MINUTE_MS = 60_000;
/** Reconciling the local counts with the store at most this often keeps it at a few commands per second. */
const SYNC_INTERVAL_MS = 250;

export function createClientRate(options: ClientRateOptions): ClientRate {
  const { perMinute, clock } = options;
  const limit = createLimit({
    spec: { keyPrefix: 'rate', points: perMinute, durationSeconds: 60 },
    shared: options.shared,
    mode: 'memory',
    health: options.health,
    clock,
  });
  const counters = createLocalCounters({
    store: limit,
    clock,
    background: options.background,
    intervalMs: SYNC_INTERVAL_MS,
  });
  // Clock-aligned windows: every replica agrees on where a minute starts without asking the store. The last key is
  // kept: under load one client asks again within its minute, and the hit path checks and takes for each request.
  let last = { client: '', minute: Number.NaN, key: '' };
  const keyOf = (client: string, minute: number): string => {
    if (client !== last.client || minute !== last.minute) last = { client, minute, key: `${client}:${minute}` };
    return last.key;
  };
  const limitOf = (client: string): number => options.perMinuteOf?.(client) ?? perMinute;
  return {
    fields: policyFields(perMinute, options.headerFormat),
    allows(client, now = clock()) {
      return counters.peek(keyOf(client, Math.floor(now / MINUTE_MS)), now) < limitOf(client);
    },
    take(client, now = clock()) {
      const minute = Math.floor(now / MINUTE_MS);
      const resetAt = (minute + 1) * MINUTE_MS;
      const limit = limitOf(client);
      const d = counters.take(keyOf(client, minute), limit, resetAt, now);
      const resetSeconds = Math.max(1, Math.ceil((d.resetAt - now) / 1000));
      return {
        allowed: d.allowed,
        state: { policy: CLIENT_POLICY, limit, remaining: Math.max(0, limit - d.count), resetSeconds },
      };
    },
    sync: counters.sync,
  };
}

/**
 * The `client` policy's fields, its quota the limit of the state they describe: a client with a rate of its own is
 * told its own quota in `RateLimit-Policy`. The fields of each quota are made once.
 */
function policyFields(perMinute: number, format: RateLimitHeaderFormat): RateLimitFields {
  const byQuota = new Map<number, RateLimitFields>();
  const fieldsOf = (quota: number): RateLimitFields => {
    let fields = byQuota.get(quota);
    if (fields === undefined) {
      fields = createRateLimitFields([{ name: CLIENT_POLICY, quota, windowSeconds: 60 }], format);
      byQuota.set(quota, fields);
    }
    return fields;
  };
  const usual = fieldsOf(perMinute);
  return {
    policies: usual.policies,
    headers: (state) => (state.limit === perMinute ? usual : fieldsOf(state.limit)).headers(state),
    nearest: (...states) => usual.nearest(...states),
  };
}
