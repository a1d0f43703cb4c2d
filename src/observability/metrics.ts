// The gateway's Prometheus metrics, declared as data in one place on a registry the runtime passes in;
// implements the Telemetry port and records requests. Every label value comes from a closed set.
import { HTTP_METHODS, UNMATCHED_ROUTE } from './telemetry.js';
export { HTTP_METHODS, UNMATCHED_ROUTE };
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { boundCounters, boundHistogram, type BoundCounter, type BoundHistogram } from './bound-series.js';
import type {
  CacheResult,
  ConsoleRefusal,
  RateLimitScope,
  SharedStoreName,
  Telemetry,
  TokenRefreshReason,
  TokenRefreshResult,
  UpstreamEndpoint,
  UpstreamOutcome,
} from './telemetry.js';
import { createGuardMetrics, type GuardStatus } from './guard-metrics.js';

export const METRIC_PREFIX = 'callerid_gateway_';

export const CACHE_RESULTS: readonly CacheResult[] = ['hit', 'miss', 'stale', 'coalesced', 'stale_if_error', 'shared'];
export const UPSTREAM_ENDPOINTS: readonly UpstreamEndpoint[] = ['token', 'search'];
export const UPSTREAM_OUTCOMES: readonly UpstreamOutcome[] = [
  'ok',
  'unauthorized',
  'client_error',
  'server_error',
  'timeout',
  'network',
  'malformed',
  'rate_limited',
];
export const TOKEN_REFRESH_RESULTS: readonly TokenRefreshResult[] = ['ok', 'error'];
export const TOKEN_REFRESH_REASONS: readonly TokenRefreshReason[] = ['cold', 'ahead', 'expired', 'unauthorized'];
export const RATE_LIMIT_SCOPES: readonly RateLimitScope[] = ['address', 'total'];
export const SHARED_STORES: readonly SharedStoreName[] = ['token', 'lookup', 'counter'];
export const CONSOLE_REFUSALS: readonly ConsoleRefusal[] = ['mobile', 'rate_limited', 'not_allowed'];
/** Methods outside this set (any string a client sends) are counted as "other". */

/** Seconds; the cache-hit path is sub-millisecond, a search through the upstream up to its timeout. */
const REQUEST_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const UPSTREAM_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** What the metrics read at scrape time instead of being told: the token's expiry, the cache's size. */
export interface MetricSources {
  /** Upstream token expiry (epoch ms, null when none held) and consecutive refresh failures. */
  tokenStatus?: () => { expiresAt: number | null; consecutiveFailures: number };
  cacheStats?: () => { entries: number; bytes: number };
  /** The cost guard's breaker, cooldown, concurrency and the day's quota and budget use. */
  guardStatus?: () => GuardStatus;
  /** Log lines dropped since the start because the log's reader did not take them (Node's stdout). */
  logLinesDropped?: () => number;
}

export interface GatewayMetrics {
  readonly registry: Registry;
  readonly telemetry: Telemetry;
  /** One finished request; `route` is the route template or {@link UNMATCHED_ROUTE}. */
  observeRequest(route: string, method: string, status: number, seconds: number): void;
  /** Adds scrape-time sources; later calls add to or replace earlier ones. */
  watch(sources: MetricSources): void;
  /** The registry in the Prometheus text format. */
  render(): Promise<{ body: string; contentType: string }>;
}

export interface MetricsOptions {
  registry: Registry;
}

export function createMetrics(options: MetricsOptions): GatewayMetrics {
  const { registry } = options;
  const sources: MetricSources = {};
  const registers = [registry];
  const name = (n: string) => METRIC_PREFIX + n;

  // The request metrics are counted per request, the hit path included: their series are bound once per route,
  // method and status (bound-series.ts) and read by prom-client when it collects.
  const requestSeries = boundCounters<'route' | 'method' | 'status'>();
  new Counter({
    name: name('http_requests_total'),
    help: 'HTTP requests answered, by route template, method and status code.',
    labelNames: ['route', 'method', 'status'] as const,
    registers,
    collect() {
      requestSeries.fold(this);
    },
  });
  const durationSeries = boundHistogram<'route' | 'method' | 'status'>({
    name: name('http_request_duration_seconds'),
    help: 'Time from receiving a request to its response being ready, by route template, method and status code.',
    buckets: REQUEST_BUCKETS,
    registry,
  });
  // Counted on every search, cache hits included: bound series too.
  const cacheLookupSeries = boundCounters<'result'>();
  const cacheLookups = new Counter({
    name: name('cache_lookups_total'),
    help: 'Search cache lookups by result: hit, miss, stale (served while revalidating), coalesced (joined an in-flight miss), stale_if_error, shared (fresh from the shared tier: fetched by another replica).',
    labelNames: ['result'] as const,
    registers,
    collect() {
      cacheLookupSeries.fold(this);
    },
  });
  new Gauge({
    name: name('cache_entries'),
    help: 'Entries held in the search cache.',
    registers,
    collect() {
      const stats = sources.cacheStats?.();
      this.set(stats ? stats.entries : 0);
    },
  });
  new Gauge({
    name: name('cache_bytes'),
    help: 'Bytes held in the search cache (as the cache counts them against its bound).',
    registers,
    collect() {
      const stats = sources.cacheStats?.();
      this.set(stats ? stats.bytes : 0);
    },
  });
  const upstreamCalls = new Counter({
    name: name('upstream_requests_total'),
    help: 'Calls to the upstream by endpoint (token, search) and outcome.',
    labelNames: ['endpoint', 'outcome'] as const,
    registers,
  });
  const upstreamDuration = new Histogram({
    name: name('upstream_request_duration_seconds'),
    help: 'Duration of calls to the upstream by endpoint, whatever their outcome.',
    labelNames: ['endpoint'] as const,
    buckets: UPSTREAM_BUCKETS,
    registers,
  });
  const upstreamTimeouts = new Counter({
    name: name('upstream_timeouts_total'),
    help: 'Calls to the upstream that got no answer within the timeout, by endpoint.',
    labelNames: ['endpoint'] as const,
    registers,
  });
  const tokenRefreshes = new Counter({
    name: name('upstream_token_refreshes_total'),
    help: 'Upstream token refreshes by result and reason (cold, ahead, expired, unauthorized).',
    labelNames: ['result', 'reason'] as const,
    registers,
  });
  const unauthorizedRefreshes = new Counter({
    name: name('upstream_token_unauthorized_refreshes_total'),
    help: 'Upstream token refreshes triggered by the upstream refusing the held token (401).',
    registers,
  });
  new Gauge({
    name: name('upstream_token_expiry_timestamp_seconds'),
    help: 'Unix time the held upstream token expires (NaN when none is held); time() - this is how long ago it did.',
    registers,
    collect() {
      const expiresAt = sources.tokenStatus?.().expiresAt ?? null;
      this.set(expiresAt === null ? Number.NaN : expiresAt / 1000);
    },
  });
  new Gauge({
    name: name('upstream_token_consecutive_failures'),
    help: 'Upstream token refreshes that failed in a row since the last success.',
    registers,
    collect() {
      this.set(sources.tokenStatus?.().consecutiveFailures ?? 0);
    },
  });
  const consoleRefused = new Counter({
    name: name('console_refusals_total'),
    help: 'Console requests refused, by reason (mobile, rate_limited, not_allowed).',
    labelNames: ['reason'] as const,
    registers,
  });

  new Counter({
    name: name('log_lines_dropped_total'),
    help: 'Log lines dropped because the reader of the log (stdout) did not take them: past the bound of what waits, or once it had gone.',
    registers,
    collect() {
      // The logger counts; the counter shows its count (it only grows).
      this.reset();
      this.inc(sources.logLinesDropped?.() ?? 0);
    },
  });

  const sharedStoreUp = new Gauge({
    name: name('shared_store_up'),
    help: 'Whether the shared store (Redis, Durable Object, Cache API) of each piece of state answers (1) or this process runs on its own state (0); 1 when none is configured.',
    labelNames: ['store'] as const,
    registers,
  });
  const sharedStoreFallbacks = new Counter({
    name: name('shared_store_fallbacks_total'),
    help: 'Operations that fell back to per-process state because their shared store failed, by store (token, lookup, counter).',
    labelNames: ['store'] as const,
    registers,
  });

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

  // Keyed by the closed method, so a client inventing methods cannot grow the map.
  const requestRecorders = new Map<string, RequestRecorder>();
  // The last series used, checked first: under load one route, method and status follow each other (the hit path's).
  let last = { route: '', method: '', status: 0, recorder: undefined as RequestRecorder | undefined };
  const recorderFor = (route: string, method: string, status: number): RequestRecorder => {
    if (last.recorder !== undefined && route === last.route && method === last.method && status === last.status)
      return last.recorder;
    const recorder = seriesOf(route, method, status);
    last = { route, method, status, recorder };
    return recorder;
  };
  const seriesOf = (route: string, method: string, status: number): RequestRecorder => {
    const known = closedMethod(method);
    const key = `${route} ${known} ${status}`;
    let recorder = requestRecorders.get(key);
    if (recorder === undefined) {
      const labels = { route, method: known, status: String(status) };
      recorder = { count: requestSeries.bind(key, labels), duration: durationSeries.bind(key, labels) };
      requestRecorders.set(key, recorder);
    }
    return recorder;
  };

  const guard = createGuardMetrics(registry, name, () => sources.guardStatus?.());

  const telemetry: Telemetry = {
    ...guard,
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
  };

  return {
    registry,
    telemetry,
    observeRequest(route, method, status, seconds) {
      const recorder = recorderFor(route, method, status);
      recorder.count.inc();
      recorder.duration.observe(seconds);
    },
    watch(more) {
      Object.assign(sources, more);
    },
    async render() {
      return { body: await registry.metrics(), contentType: registry.contentType };
    },
  };
}

interface RequestRecorder {
  count: BoundCounter;
  duration: BoundHistogram;
}

function closedMethod(method: string): string {
  return (HTTP_METHODS as readonly string[]).includes(method) ? method : 'other';
}
