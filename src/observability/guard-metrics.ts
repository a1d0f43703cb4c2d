// The cost guard's Prometheus metrics (docs/cost-control.md): searches and upstream calls per caller,
// quota refusals, the breaker, cooldowns, and the day's quota and budget use. `client` is a registered id or
// `console` only: the guard checks it against GATEWAY_CLIENTS before reporting.
import { Counter, Gauge, type Registry } from 'prom-client';
import { boundCounters } from './bound-series.js';
import type { CallerLabel, QuotaScope, SearchResult, Telemetry } from './telemetry.js';

export const SEARCH_RESULTS: readonly SearchResult[] = [
  'hit',
  'miss',
  'stale',
  'coalesced',
  'stale_if_error',
  'rate_limited',
  'quota_exhausted',
  'budget_exhausted',
  'upstream_refused',
  'error',
];
export const QUOTA_SCOPES: readonly QuotaScope[] = ['quota', 'budget'];
export const BREAKER_STATES = ['closed', 'open', 'half_open'] as const;
export type BreakerStateName = (typeof BREAKER_STATES)[number];

/** Read at scrape time from the guard: no network on a scrape, only what this process last saw. */
export interface GuardStatus {
  breaker: BreakerStateName;
  cooldownSeconds: number;
  /** Epoch ms the cooldown ends; 0 when none runs. */
  cooldownUntil: number;
  inFlight: number;
  queued: number;
  /** Today's upstream calls per caller with a quota, as this process last saw the deployment's count. */
  quotas: { client: CallerLabel; used: number; limit: number }[];
  budget: { used: number; limit: number } | null;
}

export type GuardTelemetry = Pick<
  Telemetry,
  'clientSearch' | 'clientUpstreamCall' | 'quotaRejected' | 'breakerOpened' | 'upstreamCooldown'
>;

export function createGuardMetrics(
  registry: Registry,
  name: (n: string) => string,
  status: () => GuardStatus | undefined,
): GuardTelemetry {
  const registers = [registry];
  // Counted on every search, cache hits included: bound series, read by prom-client when it collects.
  const searches = boundCounters<'client' | 'result'>();
  new Counter({
    name: name('client_searches_total'),
    help: 'Searches per caller (registered client id or console) by result: the cache result, or the guard that refused it.',
    labelNames: ['client', 'result'] as const,
    registers,
    collect() {
      searches.fold(this);
    },
  });
  const upstreamCalls = new Counter({
    name: name('client_upstream_calls_total'),
    help: 'Upstream search calls made on behalf of each caller, whatever their outcome.',
    labelNames: ['client'] as const,
    registers,
  });
  const rejections = new Counter({
    name: name('quota_rejections_total'),
    help: "Upstream calls refused by a caller's daily quota (scope=quota) or the deployment's daily budget (scope=budget).",
    labelNames: ['client', 'scope'] as const,
    registers,
  });
  const opens = new Counter({
    name: name('upstream_breaker_opens_total'),
    help: 'Times the upstream circuit breaker opened.',
    registers,
  });
  const cooldowns = new Counter({
    name: name('upstream_cooldowns_total'),
    help: 'Upstream 429 answers that started a cooldown.',
    registers,
  });
  new Gauge({
    name: name('upstream_breaker_state'),
    help: 'The upstream circuit breaker: 1 for its current state (closed, open, half_open), 0 for the others.',
    labelNames: ['state'] as const,
    registers,
    collect() {
      const current = status()?.breaker ?? 'closed';
      for (const state of BREAKER_STATES) this.set({ state }, state === current ? 1 : 0);
    },
  });
  new Gauge({
    name: name('upstream_cooldown_end_timestamp_seconds'),
    help: 'Unix time the upstream may be called again after a 429 (0 when no cooldown runs).',
    registers,
    collect() {
      this.set((status()?.cooldownUntil ?? 0) / 1000);
    },
  });
  new Gauge({
    name: name('upstream_in_flight'),
    help: 'Upstream search calls in flight in this process (at most UPSTREAM_MAX_CONCURRENCY).',
    registers,
    collect() {
      this.set(status()?.inFlight ?? 0);
    },
  });
  new Gauge({
    name: name('upstream_queued'),
    help: 'Misses of this process waiting for an upstream slot (at most UPSTREAM_MAX_QUEUE).',
    registers,
    collect() {
      this.set(status()?.queued ?? 0);
    },
  });
  new Gauge({
    name: name('client_upstream_quota_used'),
    help: "Today's (UTC) upstream calls of each caller that has a quota, as this process last saw the deployment's count.",
    labelNames: ['client'] as const,
    registers,
    collect() {
      this.reset();
      for (const q of status()?.quotas ?? []) this.set({ client: q.client }, q.used);
    },
  });
  new Gauge({
    name: name('client_upstream_quota_limit'),
    help: 'The daily upstream quota of each caller that has one (CLIENT_UPSTREAM_QUOTA_PER_DAY, CLIENT_UPSTREAM_QUOTAS).',
    labelNames: ['client'] as const,
    registers,
    collect() {
      this.reset();
      for (const q of status()?.quotas ?? []) this.set({ client: q.client }, q.limit);
    },
  });
  new Gauge({
    name: name('upstream_budget_used'),
    help: "Today's (UTC) upstream calls of all callers together, as this process last saw them (0 without UPSTREAM_BUDGET_PER_DAY).",
    registers,
    collect() {
      this.set(status()?.budget?.used ?? 0);
    },
  });
  new Gauge({
    name: name('upstream_budget_limit'),
    help: 'UPSTREAM_BUDGET_PER_DAY (0 when unset).',
    registers,
    collect() {
      this.set(status()?.budget?.limit ?? 0);
    },
  });
  opens.inc(0);
  cooldowns.inc(0);
  // Label children kept per (client, result): the cache-hit path counts every hit here. Bounded by the
  // registered clients times the results.
  return {
    clientSearch(client, result) {
      searches.bind(`${client} ${result}`, { client, result }).inc();
    },
    clientUpstreamCall(client) {
      upstreamCalls.inc({ client });
    },
    quotaRejected(client, scope) {
      rejections.inc({ client, scope });
    },
    breakerOpened() {
      opens.inc();
    },
    upstreamCooldown() {
      cooldowns.inc();
    },
  };
}
