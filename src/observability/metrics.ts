// The gateway's Prometheus metrics on Node, from the families of metric-families.ts on a registry the runtime passes in;
// implements the Telemetry port and records requests. Every label value comes from a closed set.
import { HTTP_METHODS } from './telemetry.js';
import { Counter, Gauge, Histogram, Registry, type Metric, type OpenMetricsContentType } from 'prom-client';
import {
  boundCounters,
  boundHistogram,
  type BoundCounter,
  type BoundHistogram,
  type TraceIds,
} from './bound-series.js';
import type { Telemetry } from './telemetry.js';
import { DROP_CAUSES } from './tracing/export-retry.js';
import type { DroppedSpans } from './tracing/span-batcher.js';
import { createGuardMetrics, type GuardStatus } from './guard-metrics.js';
import {
  CACHE_RESULTS,
  closedMethod as closedOf,
  CONSOLE_REFUSALS,
  FAMILIES as F,
  promOptions,
  SHARED_STORES,
  TOKEN_REFRESH_REASONS,
  TOKEN_REFRESH_RESULTS,
  UPSTREAM_ENDPOINTS,
  UPSTREAM_OUTCOMES,
} from './metric-families.js';

// Names, help, labels and buckets: metric-families.ts, shared with the Worker.

/** What the metrics read at scrape time instead of being told: the token's expiry, the cache's size. */
export interface MetricSources {
  /** Upstream token expiry (epoch ms, null when none held) and consecutive refresh failures. */
  tokenStatus?: () => { expiresAt: number | null; consecutiveFailures: number };
  cacheStats?: () => { entries: number; bytes: number };
  /** The cost guard's breaker, cooldown, concurrency and the day's quota and budget use. */
  guardStatus?: () => GuardStatus;
  /** Log lines dropped since the start because the log's reader did not take them (Node's stdout). */
  logLinesDropped?: () => number;
  /** Spans the trace exporter dropped since the start, by cause (queue full, export failed). */
  spansDropped?: () => DroppedSpans;
  /** Traces callers' contexts asked to record past TRACING_CALLER_SAMPLED_PER_SECOND since the start. */
  callerSampledCapped?: () => number;
}

/** The exposition formats: Prometheus's text format, and OpenMetrics (the text with exemplars, ending `# EOF`). */
export type MetricsFormat = 'text' | 'openmetrics';

export interface GatewayMetrics {
  readonly registry: Registry;
  readonly telemetry: Telemetry;
  /**
   * One finished request; `route` is the route template or telemetry.ts's UNMATCHED_ROUTE. `trace`, the request's
   * trace when the gateway records it, becomes the exemplar of the duration's bucket.
   */
  observeRequest(route: string, method: string, status: number, seconds: number, trace?: TraceIds): void;
  /** Adds scrape-time sources; later calls add to or replace earlier ones. */
  watch(sources: MetricSources): void;
  /** The registry in the Prometheus text format (by default) or in OpenMetrics. */
  render(format?: MetricsFormat): Promise<{ body: string; contentType: string }>;
}

/** What both runtimes expose beside their counting: the scrape's text (Node: its registry; Workers: the object's sum). */
export type MetricsEndpoint = Pick<GatewayMetrics, 'telemetry' | 'observeRequest' | 'watch' | 'render'>;

export interface MetricsOptions {
  registry: Registry;
}

export function createMetrics(options: MetricsOptions): GatewayMetrics {
  const { registry } = options;
  const sources: MetricSources = {};
  const requests = createRequestCounts(registry);
  createScrapeGauges(registry, sources);
  const events = createEventCounters(registry);
  const guard = createGuardMetrics(registry, () => sources.guardStatus?.());
  return {
    registry,
    telemetry: { ...guard, ...events },
    observeRequest: (route, method, status, seconds, trace) =>
      countRequest(requests, route, method, status, seconds, trace),
    watch(more) {
      Object.assign(sources, more);
    },
    async render(format = 'text') {
      const from = format === 'openmetrics' ? openMetricsView(registry) : registry;
      return { body: await from.metrics(), contentType: from.contentType };
    },
  };
}

/** What prom-client's registry reads of a metric: `getForPromString` where it has one (its Histogram), else `get`. */
interface Collected {
  get(): Promise<{ name: string }>;
  getForPromString?(): Promise<{ name: string }>;
}

/**
 * The registry's metrics through a registry of OpenMetrics content type, which writes exemplars. It holds views of
 * them, not the metrics: prom-client's OpenMetrics rendering renames a counter in place (its `_total` taken off its
 * `name`, the family's name in OpenMetrics), which would take the suffix off the text format's next scrape too. A
 * view collects through its metric and carries the name it was given, so each series is counted once whatever
 * format reads it.
 */
function openMetricsView(registry: Registry): Registry<OpenMetricsContentType> {
  const view = new Registry<OpenMetricsContentType>();
  view.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
  for (const metric of registry.getMetricsAsArray()) {
    const source = metric as unknown as Collected;
    const collect = source.getForPromString ?? source.get;
    const { help, type, aggregator } = metric;
    const named = {
      name: metric.name,
      help,
      type,
      aggregator,
      get: async () => ({ ...(await collect.call(source)), name: named.name }),
    };
    view.registerMetric(named as unknown as Metric);
  }
  return view;
}

/** The bound series of one route, method and status: its request count and its duration histogram. */
interface RequestSeries {
  count: BoundCounter;
  duration: BoundHistogram;
}

/**
 * The request metrics, counted per request, the hit path included: their series are bound once per route, method
 * and status (bound-series.ts) and read by prom-client when it collects.
 */
interface RequestCounts {
  counts: ReturnType<typeof boundCounters<'route' | 'method' | 'status'>>;
  durations: ReturnType<typeof boundHistogram<'route' | 'method' | 'status'>>;
  /** Keyed by the closed method, so a client inventing methods cannot grow the map. */
  byKey: Map<string, RequestSeries>;
  /** The last series used, checked first: under load one route, method and status follow each other (the hit path's). */
  last: { route: string; method: string; status: number; series: RequestSeries | undefined };
}

function createRequestCounts(registry: Registry): RequestCounts {
  const counts = boundCounters<'route' | 'method' | 'status'>();
  new Counter({
    ...promOptions(F.httpRequests),
    registers: [registry],
    collect() {
      counts.fold(this);
    },
  });
  const durations = boundHistogram<'route' | 'method' | 'status'>({
    name: F.httpDuration.name,
    help: F.httpDuration.help,
    buckets: F.httpDuration.buckets,
    registry,
  });
  return { counts, durations, byKey: new Map(), last: { route: '', method: '', status: 0, series: undefined } };
}

function countRequest(
  requests: RequestCounts,
  route: string,
  method: string,
  status: number,
  seconds: number,
  trace: TraceIds | undefined,
): void {
  const { last } = requests;
  let series = last.series;
  if (series === undefined || route !== last.route || method !== last.method || status !== last.status) {
    series = seriesOf(requests, route, method, status);
    requests.last = { route, method, status, series };
  }
  series.count.inc();
  series.duration.observe(seconds, trace);
}

function seriesOf(requests: RequestCounts, route: string, method: string, status: number): RequestSeries {
  const known = closedMethod(method);
  const key = `${route} ${known} ${status}`;
  let series = requests.byKey.get(key);
  if (series === undefined) {
    const labels = { route, method: known, status: String(status) };
    series = { count: requests.counts.bind(key, labels), duration: requests.durations.bind(key, labels) };
    requests.byKey.set(key, series);
  }
  return series;
}

/** The gauges read at scrape time from `sources`: the cache's size, the token's expiry, dropped log lines and spans. */
function createScrapeGauges(registry: Registry, sources: MetricSources): void {
  const registers = [registry];
  new Gauge({
    ...promOptions(F.cacheEntries),
    registers,
    collect() {
      this.set(sources.cacheStats?.().entries ?? 0);
    },
  });
  new Gauge({
    ...promOptions(F.cacheBytes),
    registers,
    collect() {
      this.set(sources.cacheStats?.().bytes ?? 0);
    },
  });
  new Gauge({
    ...promOptions(F.tokenExpiry),
    registers,
    collect() {
      const expiresAt = sources.tokenStatus?.().expiresAt ?? null;
      this.set(expiresAt === null ? Number.NaN : expiresAt / 1000);
    },
  });
  new Gauge({
    ...promOptions(F.tokenFailures),
    registers,
    collect() {
      this.set(sources.tokenStatus?.().consecutiveFailures ?? 0);
    },
  });
  new Counter({
    ...promOptions(F.logLinesDropped),
    registers,
    collect() {
      // The logger counts; the counter shows its count (it only grows).
      this.reset();
      this.inc(sources.logLinesDropped?.() ?? 0);
    },
  });
  new Counter({
    ...promOptions(F.traceSpansDropped),
    registers,
    collect() {
      this.reset();
      const dropped = sources.spansDropped?.();
      for (const cause of DROP_CAUSES) this.inc({ cause }, dropped?.[cause] ?? 0);
    },
  });
  new Counter({
    ...promOptions(F.traceCallerSampledCapped),
    registers,
    collect() {
      this.reset();
      this.inc(sources.callerSampledCapped?.() ?? 0);
    },
  });
}

/** The counters told of events (the cost guard's aside), every series of a closed set present from the start. */
function createEventCounters(registry: Registry): Omit<Telemetry, keyof ReturnType<typeof createGuardMetrics>> {
  const registers = [registry];
  // Counted on every search, cache hits included: bound series.
  const cacheLookupSeries = boundCounters<'result'>();
  const cacheLookups = new Counter({
    ...promOptions(F.cacheLookups),
    registers,
    collect() {
      cacheLookupSeries.fold(this);
    },
  });
  const upstreamCalls = new Counter({ ...promOptions(F.upstreamRequests), registers });
  const upstreamDuration = new Histogram({ ...promOptions(F.upstreamDuration), registers });
  const upstreamTimeouts = new Counter({ ...promOptions(F.upstreamTimeouts), registers });
  const tokenRefreshes = new Counter({ ...promOptions(F.tokenRefreshes), registers });
  const unauthorizedRefreshes = new Counter({ ...promOptions(F.unauthorizedRefreshes), registers });
  const consoleRefused = new Counter({ ...promOptions(F.consoleRefusals), registers });
  const sharedStoreUp = new Gauge({ ...promOptions(F.sharedStoreUp), registers });
  const sharedStoreFallbacks = new Counter({ ...promOptions(F.sharedStoreFallbacks), registers });
  const keySetFetches = new Counter({ ...promOptions(F.keySetFetches), registers });

  // Every series of a closed set exists from the start at 0, so rate() and ratios work before the first event.
  for (const result of CACHE_RESULTS) cacheLookups.inc({ result }, 0);
  for (const endpoint of UPSTREAM_ENDPOINTS) {
    upstreamTimeouts.inc({ endpoint }, 0);
    for (const outcome of UPSTREAM_OUTCOMES) upstreamCalls.inc({ endpoint, outcome }, 0);
  }
  for (const result of TOKEN_REFRESH_RESULTS)
    for (const reason of TOKEN_REFRESH_REASONS) tokenRefreshes.inc({ result, reason }, 0);
  for (const reason of CONSOLE_REFUSALS) consoleRefused.inc({ reason }, 0);
  for (const store of SHARED_STORES) {
    sharedStoreUp.set({ store }, 1);
    sharedStoreFallbacks.inc({ store }, 0);
  }

  return {
    upstreamCall(endpoint, outcome, seconds) {
      upstreamCalls.inc({ endpoint, outcome });
      upstreamDuration.observe({ endpoint }, seconds);
      if (outcome === 'timeout') upstreamTimeouts.inc({ endpoint });
    },
    tokenRefresh(result, reason) {
      tokenRefreshes.inc({ result, reason });
      if (reason === 'unauthorized') unauthorizedRefreshes.inc();
    },
    cacheLookup(result) {
      cacheLookupSeries.bind(result, { result }).inc();
    },
    consoleRefused(reason) {
      consoleRefused.inc({ reason });
    },
    sharedStore(store, up) {
      sharedStoreUp.set({ store }, up ? 1 : 0);
    },
    sharedStoreFallback(store) {
      sharedStoreFallbacks.inc({ store });
    },
    keySetFetch(issuer, document, outcome) {
      keySetFetches.inc({ issuer, document, outcome });
    },
  };
}

function closedMethod(method: string): string {
  return closedOf(method, HTTP_METHODS);
}
