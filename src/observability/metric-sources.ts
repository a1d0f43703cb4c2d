// Where the scrape-time gauges read from: the upstream token manager and the per-number cache's size.
import type { TokenManager } from '../upstream/token-manager.js';
import type { MetricSources } from './metrics.js';

export interface MetricSourceServices {
  upstreamTokens: Pick<TokenManager, 'status'>;
  lookupCache?: { readonly entries: number; readonly bytes: number } | undefined;
}

export function metricSourcesOf(services: MetricSourceServices): MetricSources {
  const { upstreamTokens, lookupCache } = services;
  const sources: MetricSources = { tokenStatus: () => upstreamTokens.status() };
  if (lookupCache !== undefined) sources.cacheStats = () => ({ entries: lookupCache.entries, bytes: lookupCache.bytes });
  return sources;
}
