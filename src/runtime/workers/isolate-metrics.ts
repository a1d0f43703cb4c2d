// One isolate's metrics on Workers: counted in plain numbers with the families of metric-families.ts (the ones Node
// registers), pushed as deltas to the metrics Durable Object through ctx.waitUntil, never on an answer's path. A
// push carries the isolate's id and a sequence number; an unanswered push is sent again as it was (same number,
// same deltas), so the object counts it once.
import {
  BREAKER_STATES,
  closedMethod,
  FAMILIES as F,
  SHARED_STORES,
  type MetricFamily,
} from '../../observability/metric-families.js';
import type { MetricSources, MetricsEndpoint } from '../../observability/metrics.js';
import { HTTP_METHODS, type Telemetry } from '../../observability/telemetry.js';
import type { ExecutionContext, MetricsBatch, PushAnswer } from './bindings.js';
import { DROP_CAUSES } from '../../observability/tracing/export-retry.js';

export type { MetricsBatch, PushAnswer };

export interface IsolateMetricsOptions {
  isolate: string;
  intervalMs: number;
  /** Push sooner than the interval once this many requests were counted since the last push. */
  maxRequests: number;
  push(batch: MetricsBatch): Promise<PushAnswer>;
  /** The deployment's /metrics text, from the object. */
  read(): Promise<string>;
  now(): number;
  onPushError?(err: unknown): void;
}

export interface IsolateMetrics {
  endpoint: MetricsEndpoint;
  /** After an answer: schedules a push on `ctx.waitUntil` when one is due or the batch is large. */
  afterRequest(ctx: ExecutionContext): void;
  /** Pushes what is pending now (one at a time); resolves when the object has it or the push failed. */
  flush(): Promise<void>;
}

const key = (family: string, labels: readonly string[]) => `${family}\u0000${labels.join('\u0001')}`;

interface CounterSeries {
  family: string;
  labels: string[];
  value: number;
}

interface HistogramSeries {
  family: string;
  buckets: readonly number[];
  labels: string[];
  counts: number[];
  sum: number;
  count: number;
}

/** What one isolate counted since its last push, and where its pushes stand. */
interface Isolate {
  options: IsolateMetricsOptions;
  counters: Map<string, CounterSeries>;
  histograms: Map<string, HistogramSeries>;
  storeUp: Map<string, number>;
  sources: MetricSources;
  /** The tracing counts as far as pushes carried them (their sources count from the isolate's start), by series. */
  tracingPushed: Map<string, number>;
  requestsPending: number;
  seq: number;
  /** Sent and not yet acknowledged: sent again, unchanged, before anything newer. */
  unacked: MetricsBatch | undefined;
  lastPush: number;
  scheduled: boolean;
  running: Promise<void> | undefined;
}

export function createIsolateMetrics(options: IsolateMetricsOptions): IsolateMetrics {
  const iso: Isolate = {
    options,
    counters: new Map(),
    histograms: new Map(),
    storeUp: new Map(SHARED_STORES.map((s) => [s, 1])),
    sources: {},
    tracingPushed: new Map(),
    requestsPending: 0,
    seq: 0,
    unacked: undefined,
    lastPush: 0,
    scheduled: false,
    running: undefined,
  };
  return {
    endpoint: {
      telemetry: telemetryOf(iso),
      observeRequest(route, method, status, seconds) {
        const labels = [route, closedMethod(method, HTTP_METHODS), String(status)];
        count(iso, F.httpRequests, labels);
        observe(iso, F.httpDuration, labels, seconds);
        iso.requestsPending += 1;
      },
      watch(more) {
        Object.assign(iso.sources, more);
      },
      render: () => render(iso),
    },
    afterRequest: (ctx) => afterRequest(iso, ctx),
    flush: () => flush(iso),
  };
}

function count(iso: Isolate, family: MetricFamily, labels: string[], by = 1): void {
  const k = key(family.name, labels);
  const s = iso.counters.get(k);
  if (s) s.value += by;
  else iso.counters.set(k, { family: family.name, labels, value: by });
}

function observe(iso: Isolate, family: MetricFamily & { buckets: readonly number[] }, labels: string[], v: number) {
  const k = key(family.name, labels);
  let s = iso.histograms.get(k);
  if (!s) {
    s = { family: family.name, buckets: family.buckets, labels, counts: family.buckets.map(() => 0), sum: 0, count: 0 };
    s.counts.push(0);
    iso.histograms.set(k, s);
  }
  let i = 0;
  while (i < s.buckets.length && v > s.buckets[i]!) i++;
  s.counts[i]! += 1;
  s.sum += v;
  s.count += 1;
}

function telemetryOf(iso: Isolate): Telemetry {
  const c = (family: MetricFamily, labels: string[]): void => count(iso, family, labels);
  return {
    upstreamCall(endpoint, outcome, seconds) {
      c(F.upstreamRequests, [endpoint, outcome]);
      observe(iso, F.upstreamDuration, [endpoint], seconds);
      if (outcome === 'timeout') c(F.upstreamTimeouts, [endpoint]);
    },
    tokenRefresh(result, reason) {
      c(F.tokenRefreshes, [result, reason]);
      if (reason === 'unauthorized') c(F.unauthorizedRefreshes, []);
    },
    cacheLookup: (result) => c(F.cacheLookups, [result]),
    consoleRefused: (reason) => c(F.consoleRefusals, [reason]),
    sharedStore: (store, up) => void iso.storeUp.set(store, up ? 1 : 0),
    sharedStoreFallback: (store) => c(F.sharedStoreFallbacks, [store]),
    clientSearch: (client, result) => c(F.clientSearches, [client, result]),
    clientUpstreamCall: (client) => c(F.clientUpstreamCalls, [client]),
    quotaRejected: (client, scope) => c(F.quotaRejections, [client, scope]),
    breakerOpened: () => c(F.breakerOpens, []),
    upstreamCooldown: () => c(F.cooldowns, []),
    keySetFetch: (issuer, document, outcome) => c(F.keySetFetches, [issuer, document, outcome]),
  };
}

/** The gauges as Node's registry reads them at a scrape, from the same sources (metric-sources.ts). */
function gauges({ storeUp, sources }: Isolate): MetricsBatch['gauges'] {
  const out: MetricsBatch['gauges'] = [];
  const num = (v: number) => (Number.isFinite(v) ? v : null);
  for (const [store, up] of storeUp) out.push([F.sharedStoreUp.name, [store], up]);
  const token = sources.tokenStatus?.();
  if (token) {
    out.push([F.tokenExpiry.name, [], token.expiresAt === null ? null : token.expiresAt / 1000]);
    out.push([F.tokenFailures.name, [], token.consecutiveFailures]);
  }
  const guard = sources.guardStatus?.();
  if (guard) {
    for (const state of BREAKER_STATES) out.push([F.breakerState.name, [state], state === guard.breaker ? 1 : 0]);
    out.push([F.cooldownEnd.name, [], num(guard.cooldownUntil / 1000)]);
    out.push([F.inFlight.name, [], guard.inFlight], [F.queued.name, [], guard.queued]);
    for (const q of guard.quotas) {
      out.push([F.quotaUsed.name, [q.client], q.used], [F.quotaLimit.name, [q.client], q.limit]);
    }
    out.push([F.budgetUsed.name, [], guard.budget?.used ?? 0], [F.budgetLimit.name, [], guard.budget?.limit ?? 0]);
  }
  return out;
}

/** The tracing counters an isolate's sources count from its start: each batch carries what grew since the last. */
function pushTracingCounts(iso: Isolate, batch: MetricsBatch): void {
  const dropped = iso.sources.spansDropped?.();
  const counts: [string, string[], number][] = [
    ...DROP_CAUSES.map((cause): [string, string[], number] => [
      F.traceSpansDropped.name,
      [cause],
      dropped?.[cause] ?? 0,
    ]),
    [F.traceCallerSampledCapped.name, [], iso.sources.callerSampledCapped?.() ?? 0],
  ];
  for (const [family, labels, count] of counts) {
    const key = `${family}|${labels.join('|')}`;
    const pushed = iso.tracingPushed.get(key) ?? 0;
    if (count > pushed) batch.counters.push([family, labels, count - pushed]);
    iso.tracingPushed.set(key, count);
  }
}

/** Takes what was counted since the last batch into a new one (the counts start again from 0). */
function takeBatch(iso: Isolate): MetricsBatch {
  const batch: MetricsBatch = {
    isolate: iso.options.isolate,
    seq: ++iso.seq,
    intervalMs: iso.options.intervalMs,
    counters: [],
    histograms: [],
    gauges: gauges(iso),
  };
  for (const s of iso.counters.values()) if (s.value > 0) batch.counters.push([s.family, s.labels, s.value]);
  pushTracingCounts(iso, batch);
  for (const s of iso.histograms.values())
    if (s.count > 0) batch.histograms.push([s.family, s.labels, s.counts, s.sum, s.count]);
  iso.counters.clear();
  iso.histograms.clear();
  iso.requestsPending = 0;
  return batch;
}

async function pushOnce(iso: Isolate): Promise<void> {
  iso.lastPush = iso.options.now();
  // An unanswered batch goes again as it was: the object has counted it already or not at all.
  const batch = iso.unacked ?? takeBatch(iso);
  iso.unacked = batch;
  try {
    const answer = await iso.options.push(batch);
    if (answer.seq >= batch.seq) iso.unacked = undefined;
  } catch (err) {
    iso.options.onPushError?.(err);
  }
}

function flush(iso: Isolate): Promise<void> {
  iso.running ??= pushOnce(iso).finally(() => {
    iso.running = undefined;
  });
  return iso.running;
}

async function render(iso: Isolate): Promise<{ body: string; contentType: string }> {
  // This isolate's own counts first, so a scrape through it includes them. A push already under way, or a kept
  // batch sent again, carries none of the newest counts: they take one more push (and a failed one, one retry).
  await flush(iso);
  for (let more = 0; more < 2 && (iso.unacked !== undefined || iso.counters.size + iso.histograms.size > 0); more++) {
    await flush(iso);
  }
  return { body: await iso.options.read(), contentType: 'text/plain; version=0.0.4; charset=utf-8' };
}

function afterRequest(iso: Isolate, ctx: ExecutionContext): void {
  const { options } = iso;
  if (iso.requestsPending >= options.maxRequests) {
    ctx.waitUntil(flush(iso));
    return;
  }
  if (iso.scheduled) return;
  iso.scheduled = true;
  // One timer per isolate: the push waits out the interval inside this answer's waitUntil.
  const wait = Math.max(0, iso.lastPush + options.intervalMs - options.now());
  ctx.waitUntil(
    new Promise<void>((resolve) => setTimeout(resolve, wait)).then(async () => {
      iso.scheduled = false;
      await flush(iso);
    }),
  );
}
