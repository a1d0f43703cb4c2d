// The gateway's metric families as data, the one definition both runtimes count with: Node's prom-client
// registry (metrics.ts, guard-metrics.ts) and the Worker's isolates and metrics Durable Object (src/runtime/workers),
// which cannot carry prom-client in their bundle. Names, help, label names, buckets, the series that exist from the
// start at 0, and how a gauge of many isolates is merged into one figure.
import type {
  CacheResult,
  ConsoleRefusal,
  SharedStoreName,
  TokenRefreshReason,
  TokenRefreshResult,
  UpstreamEndpoint,
  UpstreamOutcome,
} from './telemetry.js';
import { DROP_CAUSES } from './tracing/export-retry.js';

const METRIC_PREFIX = 'callerid_gateway_';

// The closed label sets: the series of these exist from the start at 0, so rate() and ratios work before the first event.
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
export const SHARED_STORES: readonly SharedStoreName[] = ['token', 'lookup', 'counter'];
export const CONSOLE_REFUSALS: readonly ConsoleRefusal[] = ['mobile', 'rate_limited', 'not_allowed'];
export const BREAKER_STATES = ['closed', 'open', 'half_open'] as const;

/** Seconds; the cache-hit path is sub-millisecond, a search through the upstream up to its timeout. */
const REQUEST_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;
const UPSTREAM_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30] as const;

/**
 * How the Worker's metrics object merges one gauge reported by many isolates (Node has one process per target):
 * `sum` of what each counts, `max`/`min` of readings of one deployment-wide figure (the freshest, or the worst),
 * `process`: a figure of one process's memory, Node's alone (not exported by the Worker).
 */
type GaugeMerge = 'sum' | 'max' | 'min' | 'process';

interface FamilyBase<L extends string> {
  name: string;
  help: string;
  labelNames: readonly L[];
}
export interface CounterFamily<L extends string = string> extends FamilyBase<L> {
  type: 'counter';
}
export interface HistogramFamily<L extends string = string> extends FamilyBase<L> {
  type: 'histogram';
  buckets: readonly number[];
}
export interface GaugeFamily<L extends string = string> extends FamilyBase<L> {
  type: 'gauge';
  merge: GaugeMerge;
  /** The value of an unlabelled gauge nobody reported (Node's default when its source is absent). */
  empty?: number;
}
export type MetricFamily = CounterFamily | HistogramFamily | GaugeFamily;

const counter = <L extends string>(name: string, help: string, labelNames: readonly L[]): CounterFamily<L> => ({
  type: 'counter',
  name: METRIC_PREFIX + name,
  help,
  labelNames,
});
const histogram = <L extends string>(
  name: string,
  help: string,
  labelNames: readonly L[],
  buckets: readonly number[],
): HistogramFamily<L> => ({ type: 'histogram', name: METRIC_PREFIX + name, help, labelNames, buckets });
const gauge = <L extends string>(
  name: string,
  help: string,
  labelNames: readonly L[],
  merge: GaugeMerge,
  empty?: number,
): GaugeFamily<L> => ({ type: 'gauge', name: METRIC_PREFIX + name, help, labelNames, merge, empty });

/** Every family, in the order a scrape lists them. */
export const FAMILIES = {
  httpRequests: counter('http_requests_total', 'HTTP requests answered, by route template, method and status code.', [
    'route',
    'method',
    'status',
  ]),
  httpDuration: histogram(
    'http_request_duration_seconds',
    'Time from receiving a request to its response being ready, by route template, method and status code.',
    ['route', 'method', 'status'],
    REQUEST_BUCKETS,
  ),
  cacheLookups: counter(
    'cache_lookups_total',
    'Search cache lookups by result: hit, miss, stale (served while revalidating), coalesced (joined an in-flight miss), stale_if_error, shared (fresh from the shared tier: fetched by another replica).',
    ['result'],
  ),
  cacheEntries: gauge('cache_entries', 'Entries held in the search cache.', [], 'process'),
  cacheBytes: gauge(
    'cache_bytes',
    'Bytes held in the search cache (as the cache counts them against its bound).',
    [],
    'process',
  ),
  upstreamRequests: counter(
    'upstream_requests_total',
    'Calls to the upstream by endpoint (token, search) and outcome.',
    ['endpoint', 'outcome'],
  ),
  upstreamDuration: histogram(
    'upstream_request_duration_seconds',
    'Duration of calls to the upstream by endpoint, whatever their outcome.',
    ['endpoint'],
    UPSTREAM_BUCKETS,
  ),
  upstreamTimeouts: counter(
    'upstream_timeouts_total',
    'Calls to the upstream that got no answer within the timeout, by endpoint.',
    ['endpoint'],
  ),
  tokenRefreshes: counter(
    'upstream_token_refreshes_total',
    'Upstream token refreshes by result and reason (cold, ahead, expired, unauthorized).',
    ['result', 'reason'],
  ),
  unauthorizedRefreshes: counter(
    'upstream_token_unauthorized_refreshes_total',
    'Upstream token refreshes triggered by the upstream refusing the held token (401).',
    [],
  ),
  tokenExpiry: gauge(
    'upstream_token_expiry_timestamp_seconds',
    'Unix time the held upstream token expires (NaN when none is held); time() - this is how long ago it did.',
    [],
    'max',
    Number.NaN,
  ),
  tokenFailures: gauge(
    'upstream_token_consecutive_failures',
    'Upstream token refreshes that failed in a row since the last success.',
    [],
    'max',
    0,
  ),
  // The Node logger's (a pipe whose reader does not read); the Worker's console does not drop, so 0 there.
  logLinesDropped: counter(
    'log_lines_dropped_total',
    'Log lines dropped because the reader of the log (stdout) did not take them: past the bound of what waits, or once it had gone.',
    [],
  ),
  // The trace exporter's (observability/tracing/): spans that never reached the collector.
  traceSpansDropped: counter(
    'trace_spans_dropped_total',
    'Spans dropped instead of exported, by cause: queue_full, refused (a status not tried again), unavailable (429, 502, 503, 504 past the retries), unreachable, timeout, bad_answer (encoded or too large).',
    ['cause'],
  ),
  // The tracer's (observability/tracing/sampler.ts): what callers asked the gateway to record past its bound.
  traceCallerSampledCapped: counter(
    'trace_caller_sampled_capped_total',
    "Traces a caller's context asked to record (its sampled flag, or a trace id in the ratio) past TRACING_CALLER_SAMPLED_PER_SECOND: the sampler's ratio decided them instead.",
    [],
  ),
  consoleRefusals: counter(
    'console_refusals_total',
    'Console requests refused, by reason (mobile, rate_limited, not_allowed).',
    ['reason'],
  ),
  sharedStoreUp: gauge(
    'shared_store_up',
    'Whether the shared store (Redis, Durable Object, Cache API) of each piece of state answers (1) or this process runs on its own state (0); 1 when none is configured.',
    ['store'],
    'min',
  ),
  sharedStoreFallbacks: counter(
    'shared_store_fallbacks_total',
    'Operations that fell back to per-process state because their shared store failed, by store (token, lookup, counter).',
    ['store'],
  ),
  keySetFetches: counter(
    'idp_fetches_total',
    "Fetches of a trusted issuer's discovery document or JWK set, by the issuer's place in the clients file's issuers, the document and the outcome.",
    ['issuer', 'document', 'outcome'],
  ),
  clientSearches: counter(
    'client_searches_total',
    'Searches per caller (registered client id or console) by result: the cache result, or the guard that refused it.',
    ['client', 'result'],
  ),
  clientUpstreamCalls: counter(
    'client_upstream_calls_total',
    'Upstream search calls made on behalf of each caller, whatever their outcome.',
    ['client'],
  ),
  quotaRejections: counter(
    'quota_rejections_total',
    "Upstream calls refused by a caller's daily quota (scope=quota) or the deployment's daily budget (scope=budget).",
    ['client', 'scope'],
  ),
  breakerOpens: counter('upstream_breaker_opens_total', 'Times the upstream circuit breaker opened.', []),
  cooldowns: counter('upstream_cooldowns_total', 'Upstream 429 answers that started a cooldown.', []),
  breakerState: gauge(
    'upstream_breaker_state',
    'The upstream circuit breaker: 1 for its current state (closed, open, half_open), 0 for the others.',
    ['state'],
    'max',
  ),
  cooldownEnd: gauge(
    'upstream_cooldown_end_timestamp_seconds',
    'Unix time the upstream may be called again after a 429 (0 when no cooldown runs).',
    [],
    'max',
    0,
  ),
  inFlight: gauge(
    'upstream_in_flight',
    'Upstream search calls in flight in this process (at most UPSTREAM_MAX_CONCURRENCY).',
    [],
    'sum',
    0,
  ),
  queued: gauge(
    'upstream_queued',
    'Misses of this process waiting for an upstream slot (at most UPSTREAM_MAX_QUEUE).',
    [],
    'sum',
    0,
  ),
  quotaUsed: gauge(
    'client_upstream_quota_used',
    "Today's (UTC) upstream calls of each caller that has a quota, as this process last saw the deployment's count.",
    ['client'],
    'max',
  ),
  quotaLimit: gauge(
    'client_upstream_quota_limit',
    'The daily upstream quota of each caller that has one (CLIENT_UPSTREAM_QUOTA_PER_DAY, CLIENT_UPSTREAM_QUOTAS).',
    ['client'],
    'max',
  ),
  budgetUsed: gauge(
    'upstream_budget_used',
    "Today's (UTC) upstream calls of all callers together, as this process last saw them (0 without UPSTREAM_BUDGET_PER_DAY).",
    [],
    'max',
    0,
  ),
  budgetLimit: gauge('upstream_budget_limit', 'UPSTREAM_BUDGET_PER_DAY (0 when unset).', [], 'max', 0),
} as const;

/** A series as label values in the family's label order, with its start value. */
export type SeedSeries = readonly [family: MetricFamily, labelValues: readonly string[], value: number];

/** The series Node creates at start (0, or 1 for a store that answers): the Worker's object starts from the same. */
export function seedSeries(): SeedSeries[] {
  const seeds: SeedSeries[] = [];
  for (const result of CACHE_RESULTS) seeds.push([FAMILIES.cacheLookups, [result], 0]);
  for (const endpoint of UPSTREAM_ENDPOINTS) {
    for (const outcome of UPSTREAM_OUTCOMES) seeds.push([FAMILIES.upstreamRequests, [endpoint, outcome], 0]);
    seeds.push([FAMILIES.upstreamTimeouts, [endpoint], 0]);
  }
  for (const result of TOKEN_REFRESH_RESULTS)
    for (const reason of TOKEN_REFRESH_REASONS) seeds.push([FAMILIES.tokenRefreshes, [result, reason], 0]);
  for (const reason of CONSOLE_REFUSALS) seeds.push([FAMILIES.consoleRefusals, [reason], 0]);
  for (const store of SHARED_STORES) {
    seeds.push([FAMILIES.sharedStoreUp, [store], 1]);
    seeds.push([FAMILIES.sharedStoreFallbacks, [store], 0]);
  }
  for (const cause of DROP_CAUSES) seeds.push([FAMILIES.traceSpansDropped, [cause], 0]);
  for (const state of BREAKER_STATES) seeds.push([FAMILIES.breakerState, [state], state === 'closed' ? 1 : 0]);
  return seeds;
}

/** Options for prom-client's Counter, Gauge and Histogram from a family (Node). */
export function promOptions<L extends string>(family: FamilyBase<L> & { buckets?: readonly number[] }) {
  const options = { name: family.name, help: family.help, labelNames: family.labelNames };
  return family.buckets ? { ...options, buckets: [...family.buckets] } : options;
}

/** Methods counted by name; any other is `other` (a label set an outsider cannot grow). */
export function closedMethod(method: string, methods: readonly string[]): string {
  return methods.includes(method) ? method : 'other';
}
