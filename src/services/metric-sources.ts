// Where the scrape-time gauges read from: the upstream token manager, the per-number cache's size, the cost guard,
// the trace exporter's drops, the tracer's capped caller traces.
import type { CostGuard } from '../guard/cost-guard.js';
import type { TokenManager } from '../upstream/token-manager.js';
import type { MetricSources } from '../observability/metrics.js';
import type { Tracing } from '../observability/tracing/tracing.js';

export interface MetricSourceServices {
  upstreamTokens: Pick<TokenManager, 'status'>;
  lookupCache?: { readonly entries: number; readonly bytes: number } | undefined;
  guard?: Pick<CostGuard, 'status'> | undefined;
  tracing?: Pick<Tracing, 'dropped' | 'callerSampledCapped'> | undefined;
}

export function metricSourcesOf(services: MetricSourceServices): MetricSources {
  const { upstreamTokens, lookupCache, guard, tracing } = services;
  const sources: MetricSources = { tokenStatus: () => upstreamTokens.status() };
  if (lookupCache !== undefined)
    sources.cacheStats = () => ({ entries: lookupCache.entries, bytes: lookupCache.bytes });
  if (guard !== undefined) sources.guardStatus = () => guard.status();
  if (tracing !== undefined) {
    sources.spansDropped = () => tracing.dropped();
    sources.callerSampledCapped = () => tracing.callerSampledCapped();
  }
  return sources;
}
