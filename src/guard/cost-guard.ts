// The cost guard of the paid upstream, built once per process: the per-client rate, the guarded upstream load
// (cooldown, breaker, quotas, budget, concurrency), what each caller searched today, and its usage report.
import type { Clock } from '../base/clock.js';
import { createClientRate, type ClientRate } from '../limits/client-rate.js';
import type { RateLimitHeaderFormat } from '../limits/headers.js';
import type { SharedLimiters } from '../limits/limit.js';
import type { StoreHealth } from '../shared-state/store-health.js';
import type { GuardConfig } from '../config/config.js';
import type { LookupContext } from '../lookup/types.js';
import type { GuardStatus } from '../observability/guard-metrics.js';
import type { SearchCountResult, Telemetry } from '../observability/telemetry.js';
import type { RunInBackground } from '../shared-state/background.js';
import type { CounterStore } from '../shared-state/counter-store.js';
import { createBulkhead } from './bulkhead.js';
import {
  createCircuitBreaker,
  type BreakerSnapshot,
  createCooldown,
  createSharedPauses,
  localPausesOnly,
} from './pauses.js';
import {
  nextUtcMidnight,
  utcDay,
  createUpstreamCharges,
  QuotaExhaustedError,
  type DailyUse,
} from './upstream-charges.js';
import { createLocalCounters } from '../limits/local-counters.js';
import { guardUpstream, type CacheLoad, type UpstreamSearch } from './upstream-guard.js';
import type { Tracer } from '../observability/tracing/tracer.js';

export const CONSOLE_CLIENT = 'console';

interface CallerUsage {
  id: string;
  searches: number;
  upstreamCalls: number;
  quota: number | null;
  remaining: number | null;
}

interface UsageReport {
  day: string;
  resetsAt: string;
  clients: CallerUsage[];
  budget: { limit: number | null; used: number; remaining: number | null };
  breaker: BreakerSnapshot & { retryAfterSeconds: number };
  cooldown: { active: boolean; retryAfterSeconds: number };
  concurrency: { limit: number; inFlight: number; queued: number };
  store: CounterStore['kind'];
}

export interface CostGuard {
  rate: ClientRate;
  /** Wraps the upstream search into the cache's load. */
  /** `tracer`: spans of the wait for an upstream slot (absent: none). */
  guardLoad(search: UpstreamSearch, tracer?: Tracer): CacheLoad;
  /** One search answered or refused for `client`: metrics and today's search count (local, reconciled later). */
  countSearch(client: string, result: SearchCountResult, now?: number): void;
  /** True for a refusal by another caller's quota (the lookup is then retried as the caller's own). */
  othersFailure(err: unknown, context: LookupContext): boolean;
  usage(): Promise<UsageReport>;
  status(): GuardStatus;
}

export interface CostGuardOptions {
  config: GuardConfig;
  timeoutMs: number;
  /** Registered client ids, in GATEWAY_CLIENTS order: a list, or the live registry (a reloaded clients file). */
  clients: readonly string[] | RegisteredClients;
  /** A client's own searches per minute (the clients file), where it has one. */
  rateOf?: (client: string) => number | undefined;
  /** Usage counts (`memory` store-error mode: they keep counting here when the store is down). */
  counters: CounterStore;
  /** The client rate's shared limiter store and its health; absent, the rate holds per process. */
  limiters?: SharedLimiters | undefined;
  limiterHealth?: StoreHealth | undefined;
  /** RATELIMIT_HEADERS; default draft-11. */
  headerFormat?: RateLimitHeaderFormat;
  /** Quotas and budget (LIMITS_ON_STORE_ERROR applied). */
  quotaCounters: CounterStore;
  /**
   * The deployment's counter store (store-error mode `memory`), through which the replicas share an upstream 429's
   * cooldown and the breaker's opening. Absent (one process): both hold per process.
   */
  pauseCounters?: CounterStore;
  clock: Clock;
  telemetry: Telemetry;
  background: RunInBackground;
}

/** Reconciling the local counts with the store at most this often keeps it at a few commands per second. */
const SYNC_INTERVAL_MS = 250;
const secondsOf = (ms: number) => Math.ceil(ms / 1000);

/** The guard's parts, built once from its options. */
interface GuardParts {
  options: CostGuardOptions;
  local: ReturnType<typeof createLocalCounters>;
  charges: ReturnType<typeof createUpstreamCharges>;
  cooldown: ReturnType<typeof createCooldown>;
  breaker: ReturnType<typeof createCircuitBreaker>;
  bulkhead: ReturnType<typeof createBulkhead>;
  pauses: typeof localPausesOnly;
  days: SearchDays;
}

/**
 * The day's name, formatted once a day rather than once per search (the hit path counts every hit), and the last
 * searches key, kept as the hit path counts one client's searches over and over.
 */
interface SearchDays {
  day: { name: string; until: number };
  last: { client: string; day: string; key: string };
}

/** The registered clients as the guard reads them at each use: a reload adds to or removes from both. */
interface RegisteredClients {
  ids(): readonly string[];
  has(client: string): boolean;
}

const registeredOf = (clients: CostGuardOptions['clients']): RegisteredClients => {
  if (!Array.isArray(clients)) return clients as RegisteredClients;
  const set = new Set(clients as readonly string[]);
  return { ids: () => clients as readonly string[], has: (client) => set.has(client) };
};

export function createCostGuard(options: CostGuardOptions): CostGuard {
  const { config, clock, telemetry } = options;
  const registered = registeredOf(options.clients);
  const labelOf = (client: string) => (registered.has(client) || client === CONSOLE_CLIENT ? client : undefined);
  const g = partsOf(options, registered);
  const { cooldown, breaker, bulkhead, charges } = g;
  return {
    rate: createClientRate({
      perMinute: config.ratePerMinute,
      perMinuteOf: options.rateOf,
      clock,
      background: options.background,
      shared: options.limiters,
      health: options.limiterHealth,
      headerFormat: options.headerFormat ?? 'draft-11',
    }),
    guardLoad: (search, tracer) =>
      guardUpstream(search, {
        cooldown,
        breaker,
        bulkhead,
        charges,
        pauses: g.pauses,
        clock,
        telemetry,
        timeoutMs: options.timeoutMs,
        labelOf,
        tracer,
      }),
    countSearch(client, result, now = clock()) {
      const label = labelOf(client);
      if (label === undefined) return;
      telemetry.clientSearch(label, result);
      g.local.add(searchesKey(g.days, label, now), 1, g.days.day.until, now);
    },
    othersFailure: (err, context) => err instanceof QuotaExhaustedError && err.client !== context.client,
    usage: () => usage(g),
    status() {
      const seen = charges.lastSeen();
      return {
        breaker: breaker.snapshot().state,
        cooldownSeconds: cooldown.remainingMs() / 1000,
        cooldownUntil: cooldown.remainingMs() > 0 ? clock() + cooldown.remainingMs() : 0,
        inFlight: bulkhead.inFlight,
        queued: bulkhead.queued,
        quotas: seen.quotas,
        budget: seen.budget,
      };
    },
  };
}

function partsOf(options: CostGuardOptions, registered: RegisteredClients): GuardParts {
  const { config, clock, telemetry } = options;
  const cooldown = createCooldown({
    defaultMs: config.cooldownSeconds * 1000,
    maxMs: config.cooldownMaxSeconds * 1000,
    clock,
    onStart: () => telemetry.upstreamCooldown(),
  });
  const breaker = createCircuitBreaker({
    failures: config.breakerFailures,
    openMs: config.breakerOpenSeconds * 1000,
    clock,
    onOpen: () => telemetry.breakerOpened(),
  });
  return {
    options,
    local: createLocalCounters({
      store: options.counters,
      clock,
      background: options.background,
      intervalMs: SYNC_INTERVAL_MS,
    }),
    charges: createUpstreamCharges({
      store: options.quotaCounters,
      clock,
      telemetry,
      defaultQuota: config.quotaPerDay,
      quotas: config.quotas,
      budget: config.budgetPerDay,
      isRegistered: (client) => registered.has(client),
    }),
    cooldown,
    breaker,
    bulkhead: createBulkhead({ max: config.maxConcurrency, maxQueue: config.maxQueue, clock }),
    pauses: options.pauseCounters
      ? createSharedPauses({
          store: options.pauseCounters,
          clock,
          onLearn: (kind, ms) => (kind === 'cooldown' ? cooldown.learn(ms) : breaker.openFor(ms)),
        })
      : localPausesOnly,
    days: { day: { name: '', until: 0 }, last: { client: '', day: '', key: '' } },
  };
}

function dayOf(days: SearchDays, now: number): string {
  if (now >= days.day.until || now < days.day.until - 86_400_000) {
    days.day = { name: utcDay(now), until: nextUtcMidnight(now) };
  }
  return days.day.name;
}

function searchesKey(days: SearchDays, client: string, now: number): string {
  const name = dayOf(days, now);
  if (client !== days.last.client || name !== days.last.day)
    days.last = { client, day: name, key: `searches:${client}:${name}` };
  return days.last.key;
}

async function callerUsage(g: GuardParts, id: string): Promise<CallerUsage> {
  const key = searchesKey(g.days, id, g.options.clock());
  const [{ used, limit }, stored]: [DailyUse, number] = await Promise.all([
    g.charges.usage(id),
    g.options.counters.get(key).then(
      (s) => s?.count ?? 0,
      () => 0,
    ),
  ]);
  // The store has every replica's reconciled count; this process may know of searches not yet sent.
  return {
    id,
    searches: Math.max(stored, g.local.peek(key)),
    upstreamCalls: used,
    quota: limit,
    remaining: limit === null ? null : Math.max(0, limit - used),
  };
}

async function usage(g: GuardParts): Promise<UsageReport> {
  const { options, breaker, cooldown, bulkhead } = g;
  const now = options.clock();
  // This process's count of today's searches is reconciled first, so the figure includes it.
  await g.local.sync();
  const [clients, budget] = await Promise.all([
    Promise.all([...registeredOf(options.clients).ids(), CONSOLE_CLIENT].map((id) => callerUsage(g, id))),
    g.charges.budget(),
  ]);
  const b = breaker.snapshot();
  const cool = cooldown.remainingMs();
  return {
    day: utcDay(now),
    resetsAt: new Date(nextUtcMidnight(now)).toISOString(),
    clients,
    budget: {
      limit: budget.limit,
      used: budget.used,
      remaining: budget.limit === null ? null : Math.max(0, budget.limit - budget.used),
    },
    breaker: { ...b, retryAfterSeconds: secondsOf(b.retryInMs) },
    cooldown: { active: cool > 0, retryAfterSeconds: secondsOf(cool) },
    concurrency: { limit: options.config.maxConcurrency, inFlight: bulkhead.inFlight, queued: bulkhead.queued },
    store: options.quotaCounters.kind,
  };
}
