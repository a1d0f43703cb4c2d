// The limits and the cost guard (docs/cost-control.md): rates per client, upstream quotas and the budget, the
// bulkhead and the breaker, what counted limits do while their store is down, and how rate limits are announced.
import * as z from 'zod/mini';
import { commaList, int, oneOf, optionalInt, setting } from './settings-table.js';

/** The console's daily upstream quota when CLIENT_UPSTREAM_QUOTAS has no `console:N` entry. */
export const CONSOLE_QUOTA_PER_DAY = 1000;

/** `id:N,id2:N`: a per-caller daily number (CLIENT_UPSTREAM_QUOTAS). */
const quotaList = z.pipe(
  z.optional(z.string()),
  z.transform((v, ctx) => {
    const quotas = new Map<string, number>();
    for (const entry of commaList(v)) {
      const m = /^([A-Za-z0-9._-]{1,64}):(\d{1,12})$/.exec(entry);
      if (!m) {
        ctx.issues.push({
          code: 'custom',
          message: 'each entry must be id:N (a whole number of upstream calls per day)',
          input: v,
        });
        return z.NEVER;
      }
      quotas.set(m[1]!, Number(m[2]));
    }
    return quotas;
  }),
);

/** What counted limits do while their shared store is down: count per process, allow all, or refuse (503). */
const storeErrorMode = oneOf(['memory', 'open', 'closed'], 'memory');

export const LIMIT_SETTINGS = {
  /** The cost guard (docs/cost-control.md). */
  guard: {
    /** Authenticated searches per registered client per minute, every answer counting. */
    ratePerMinute: setting('CLIENT_RATE_PER_MINUTE', int(1, 10_000_000, 600)),
    /** Upstream calls per registered client per UTC day, unless `quotas` names it. */
    quotaPerDay: setting('CLIENT_UPSTREAM_QUOTA_PER_DAY', optionalInt(0, 1_000_000_000)),
    /** Per-caller daily quotas; the console always has one ({@link CONSOLE_QUOTA_PER_DAY} unless named). */
    quotas: setting(
      'CLIENT_UPSTREAM_QUOTAS',
      z.pipe(
        quotaList,
        z.transform((q) => new Map([['console', CONSOLE_QUOTA_PER_DAY], ...q])),
      ),
    ),
    /** Upstream calls per UTC day for all callers together, the console included. */
    budgetPerDay: setting('UPSTREAM_BUDGET_PER_DAY', optionalInt(0, 1_000_000_000)),
    maxConcurrency: setting('UPSTREAM_MAX_CONCURRENCY', int(1, 10_000, 32)),
    maxQueue: setting('UPSTREAM_MAX_QUEUE', int(0, 100_000, 256)),
    cooldownSeconds: setting('UPSTREAM_COOLDOWN_SECONDS', int(1, 86_400, 30)),
    /** The longest pause an upstream Retry-After may impose; longer, non-finite or unreadable values are capped. */
    cooldownMaxSeconds: setting('UPSTREAM_COOLDOWN_MAX_SECONDS', int(1, 86_400, 3600)),
    breakerFailures: setting('UPSTREAM_BREAKER_FAILURES', int(1, 1_000, 5)),
    breakerOpenSeconds: setting('UPSTREAM_BREAKER_OPEN_SECONDS', int(1, 3_600, 10)),
    /** The console's rate limits, the quotas and the budget while the counter store is down (one failure, one mode). */
    onStoreError: setting('LIMITS_ON_STORE_ERROR', storeErrorMode),
  },
  rateLimitHeaders: setting('RATELIMIT_HEADERS', oneOf(['draft-11', 'draft-6', 'both'], 'draft-11')),
};
