// Daily upstream quotas per caller and the deployment's daily budget, counted in the counter store: a call is
// reserved before it is made (so a burst cannot overshoot, across replicas too) and refunded when it failed.
import type { Clock } from '../base/clock.js';
import { GatewayError } from '../base/errors.js';
import type { Telemetry } from '../observability/telemetry.js';
import type { CounterStore } from '../shared-state/counter-store.js';

// The UTC day that daily quotas and the budget count in: its name (part of the counter key) and its end.
const DAY_MS = 86_400_000;

/** `YYYY-MM-DD` of the UTC day `now` falls in. */
export function utcDay(now: number): string {
  return new Date(now).toISOString().slice(0, 10);
}

/** Epoch ms of the next UTC midnight after `now` (a quota's reset). */
export function nextUtcMidnight(now: number): number {
  return (Math.floor(now / DAY_MS) + 1) * DAY_MS;
}

/** Whole seconds until the next UTC midnight, at least 1: a `Retry-After` for a daily limit. */
function secondsUntilNextUtcMidnight(now: number): number {
  return Math.max(1, Math.ceil((nextUtcMidnight(now) - now) / 1000));
}

/** A caller's quota refused a load; callers who joined that load are not refused by someone else's quota. */
export class QuotaExhaustedError extends GatewayError {
  constructor(
    readonly client: string,
    detail: string,
    retryAfterSeconds: number,
  ) {
    super('quota_exhausted', detail, { headers: { 'retry-after': String(retryAfterSeconds) } });
  }
}

interface Reservation {
  /** Gives the call back (it failed, or was never made): not charged. */
  refund(): Promise<void>;
}

export interface DailyUse {
  used: number;
  /** Null: no limit configured. */
  limit: number | null;
}

export interface UpstreamCharges {
  /**
   * Reserves one upstream call for `client` and for the budget. Throws GatewayError `quota_exhausted` (429),
   * `budget_exhausted` (503), or `unavailable` (503) when the store is down and LIMITS_ON_STORE_ERROR=closed.
   */
  reserve(client: string): Promise<Reservation>;
  /** Today's charged calls of `client` and its quota (reads the store). */
  usage(client: string): Promise<DailyUse>;
  budget(): Promise<DailyUse>;
  /** The quota of `client`, if it has one. */
  quotaOf(client: string): number | undefined;
  /** What this process last saw of today's use, for the metrics (no network). */
  lastSeen(): {
    quotas: { client: string; used: number; limit: number }[];
    budget: { used: number; limit: number } | null;
  };
}

export interface UpstreamChargesOptions {
  /** The counter store with LIMITS_ON_STORE_ERROR applied. */
  store: CounterStore;
  clock: Clock;
  telemetry: Telemetry;
  /** CLIENT_UPSTREAM_QUOTA_PER_DAY: every registered client's default. */
  defaultQuota: number | undefined;
  /** CLIENT_UPSTREAM_QUOTAS: overrides, `console` included. */
  quotas: ReadonlyMap<string, number>;
  budget: number | undefined;
  /** Registered client ids; the console gets a quota only from `quotas`. */
  isRegistered: (client: string) => boolean;
}

/** Without a limit the call is still counted (usage), under a limit nothing reaches. */
const UNLIMITED = Number.MAX_SAFE_INTEGER;
const STORE_DOWN_RETRY_SECONDS = '10';

export function createUpstreamCharges(options: UpstreamChargesOptions): UpstreamCharges {
  const { store, clock, telemetry } = options;
  const seen = new Map<string, { day: string; used: number }>();

  const quotaOf = (client: string): number | undefined =>
    options.quotas.get(client) ?? (options.isRegistered(client) ? options.defaultQuota : undefined);
  const quotaKey = (client: string, day: string) => `quota:${client}:${day}`;
  const budgetKey = (day: string) => `budget:${day}`;
  const BUDGET = '\0budget';

  function note(who: string, day: string, used: number): void {
    seen.set(who, { day, used });
  }

  return {
    async reserve(client) {
      const now = clock();
      const day = utcDay(now);
      const quota = quotaOf(client);
      const q = await consume(store, quotaKey(client, day), quota ?? UNLIMITED, now);
      if (quota !== undefined) note(client, day, q.count);
      if (!q.allowed) {
        telemetry.quotaRejected(client, 'quota');
        throw new QuotaExhaustedError(
          client,
          `This client's upstream quota for today (${quota} calls) is spent; cached answers are still served. It resets at 00:00 UTC.`,
          secondsUntilNextUtcMidnight(now),
        );
      }
      let b;
      try {
        b = await consume(store, budgetKey(day), options.budget ?? UNLIMITED, now);
      } catch (err) {
        await refund(store, quotaKey(client, day), now);
        throw err;
      }
      if (options.budget !== undefined) note(BUDGET, day, b.count);
      if (!b.allowed) {
        await refund(store, quotaKey(client, day), now);
        telemetry.quotaRejected(client, 'budget');
        throw new GatewayError(
          'budget_exhausted',
          "The gateway's upstream budget for today is spent; cached answers are still served. It resets at 00:00 UTC.",
          {
            headers: { 'retry-after': String(secondsUntilNextUtcMidnight(now)) },
          },
        );
      }
      let refunded = false;
      return {
        async refund() {
          if (refunded) return;
          refunded = true;
          const at = clock();
          await Promise.all([refund(store, quotaKey(client, day), at), refund(store, budgetKey(day), at)]);
        },
      };
    },
    async usage(client) {
      return { used: await read(store, quotaKey(client, utcDay(clock()))), limit: quotaOf(client) ?? null };
    },
    async budget() {
      return { used: await read(store, budgetKey(utcDay(clock()))), limit: options.budget ?? null };
    },
    quotaOf,
    lastSeen() {
      const today = utcDay(clock());
      const used = (who: string) => {
        const s = seen.get(who);
        return s !== undefined && s.day === today ? s.used : 0;
      };
      const quotas: { client: string; used: number; limit: number }[] = [];
      for (const client of seen.keys()) {
        const limit = client === BUDGET ? undefined : quotaOf(client);
        if (limit !== undefined) quotas.push({ client, used: used(client), limit });
      }
      return { quotas, budget: options.budget === undefined ? null : { used: used(BUDGET), limit: options.budget } };
    },
  };
}

async function consume(store: CounterStore, key: string, limit: number, now: number) {
  try {
    return await store.consume(key, 1, limit, nextUtcMidnight(now) - now);
  } catch (err) {
    throw new GatewayError(
      'unavailable',
      'Upstream calls are paused because quotas cannot be checked right now; cached answers are still served.',
      {
        headers: { 'retry-after': STORE_DOWN_RETRY_SECONDS },
        cause: err,
      },
    );
  }
}

/** Best effort: a refund lost to a store outage charges one call too many, never one too few. */
async function refund(store: CounterStore, key: string, now: number): Promise<void> {
  await store.add(key, -1, Math.max(1, nextUtcMidnight(now) - now)).catch(() => {});
}

async function read(store: CounterStore, key: string): Promise<number> {
  try {
    return (await store.get(key))?.count ?? 0;
  } catch {
    return 0;
  }
}
