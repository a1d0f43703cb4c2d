// The cost guard's Prometheus metrics (docs/cost-control.md): searches and upstream calls per caller,
// quota refusals, the breaker, cooldowns, and the day's quota and budget use. `client` is a registered id or
// `console` only: the guard checks it against GATEWAY_CLIENTS before reporting.
import { Counter, Gauge, type Registry } from 'prom-client';
import { boundCounters } from './bound-series.js';
import { BREAKER_STATES, FAMILIES as F, promOptions } from './metric-families.js';
import type { CallerLabel, Telemetry } from './telemetry.js';

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

export function createGuardMetrics(registry: Registry, status: () => GuardStatus | undefined): GuardTelemetry {
  const registers = [registry];
  // Counted on every search, cache hits included: bound series, read by prom-client when it collects.
  const searches = boundCounters<'client' | 'result'>();
  new Counter({
    ...promOptions(F.clientSearches),
    registers,
    collect() {
      searches.fold(this);
    },
  });
  const upstreamCalls = new Counter({
    ...promOptions(F.clientUpstreamCalls),
    registers,
  });
  const rejections = new Counter({
    ...promOptions(F.quotaRejections),
    registers,
  });
  const opens = new Counter({
    ...promOptions(F.breakerOpens),
    registers,
  });
  const cooldowns = new Counter({
    ...promOptions(F.cooldowns),
    registers,
  });
  createGuardGauges(registers, status);
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

/** The guard's gauges, read at scrape time from what this process last saw. */
function createGuardGauges(registers: Registry[], status: () => GuardStatus | undefined): void {
  new Gauge({
    ...promOptions(F.breakerState),
    registers,
    collect() {
      const current = status()?.breaker ?? 'closed';
      for (const state of BREAKER_STATES) this.set({ state }, state === current ? 1 : 0);
    },
  });
  new Gauge({
    ...promOptions(F.cooldownEnd),
    registers,
    collect() {
      this.set((status()?.cooldownUntil ?? 0) / 1000);
    },
  });
  new Gauge({
    ...promOptions(F.inFlight),
    registers,
    collect() {
      this.set(status()?.inFlight ?? 0);
    },
  });
  new Gauge({
    ...promOptions(F.queued),
    registers,
    collect() {
      this.set(status()?.queued ?? 0);
    },
  });
  new Gauge({
    ...promOptions(F.quotaUsed),
    registers,
    collect() {
      this.reset();
      for (const q of status()?.quotas ?? []) this.set({ client: q.client }, q.used);
    },
  });
  new Gauge({
    ...promOptions(F.quotaLimit),
    registers,
    collect() {
      this.reset();
      for (const q of status()?.quotas ?? []) this.set({ client: q.client }, q.limit);
    },
  });
  new Gauge({
    ...promOptions(F.budgetUsed),
    registers,
    collect() {
      this.set(status()?.budget?.used ?? 0);
    },
  });
  new Gauge({
    ...promOptions(F.budgetLimit),
    registers,
    collect() {
      this.set(status()?.budget?.limit ?? 0);
    },
  });
}
