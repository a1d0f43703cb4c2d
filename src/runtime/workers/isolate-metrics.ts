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

export function createIsolateMetrics(options: IsolateMetricsOptions): IsolateMetrics {
  const { intervalMs, maxRequests, now } = options;
  const counters = new Map<string, { family: string; labels: string[]; value: number }>();
  const histograms = new Map<
    string,
    { family: string; buckets: readonly number[]; labels: string[]; counts: number[]; sum: number; count: number }
  >();
  const storeUp = new Map<string, number>(SHARED_STORES.map((s) => [s, 1]));
  const sources: MetricSources = {};
  let requestsPending = 0;
  let seq = 0;
  /** Sent and not yet acknowledged: sent again, unchanged, before anything newer. */
  let unacked: MetricsBatch | undefined;
  let lastPush = 0;
  let scheduled = false;
  let running: Promise<void> | undefined;

  const count = (family: MetricFamily, labels: string[], by = 1) => {
    const k = key(family.name, labels);
    const s = counters.get(k);
    if (s) s.value += by;
    else counters.set(k, { family: family.name, labels, value: by });
  };
  const observe = (family: MetricFamily & { buckets: readonly number[] }, labels: string[], v: number) => {
    const k = key(family.name, labels);
    let s = histograms.get(k);
    if (!s) {
      s = {
        family: family.name,
        buckets: family.buckets,
        labels,
        counts: family.buckets.map(() => 0),
        sum: 0,
        count: 0,
      };
      s.counts.push(0);
      histograms.set(k, s);
    }
    let i = 0;
    while (i < s.buckets.length && v > s.buckets[i]!) i++;
    s.counts[i]! += 1;
    s.sum += v;
    s.count += 1;
  };

  const telemetry: Telemetry = {
    upstreamCall(endpoint, outcome, seconds) {
      count(F.upstreamRequests, [endpoint, outcome]);
      observe(F.upstreamDuration, [endpoint], seconds);
      if (outcome === 'timeout') count(F.upstreamTimeouts, [endpoint]);
    },
    tokenRefresh(result, reason) {
      count(F.tokenRefreshes, [result, reason]);
      if (reason === 'unauthorized') count(F.unauthorizedRefreshes, []);
    },
    cacheLookup: (result) => count(F.cacheLookups, [result]),
    consoleRefused: (reason) => count(F.consoleRefusals, [reason]),
    sharedStore: (store, up) => void storeUp.set(store, up ? 1 : 0),
    sharedStoreFallback: (store) => count(F.sharedStoreFallbacks, [store]),
    clientSearch: (client, result) => count(F.clientSearches, [client, result]),
    clientUpstreamCall: (client) => count(F.clientUpstreamCalls, [client]),
    quotaRejected: (client, scope) => count(F.quotaRejections, [client, scope]),
    breakerOpened: () => count(F.breakerOpens, []),
    upstreamCooldown: () => count(F.cooldowns, []),
  };

  /** The gauges as Node's registry reads them at a scrape, from the same sources (metric-sources.ts). */
  const gauges = (): MetricsBatch['gauges'] => {
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
  };

  /** Takes what was counted since the last batch into a new one (the counts start again from 0). */
  const takeBatch = (): MetricsBatch => {
    const batch: MetricsBatch = {
      isolate: options.isolate,
      seq: ++seq,
      intervalMs,
      counters: [],
      histograms: [],
      gauges: gauges(),
    };
    for (const s of counters.values()) if (s.value > 0) batch.counters.push([s.family, s.labels, s.value]);
    for (const s of histograms.values())
      if (s.count > 0) batch.histograms.push([s.family, s.labels, s.counts, s.sum, s.count]);
    counters.clear();
    histograms.clear();
    requestsPending = 0;
    return batch;
  };

  const pushOnce = async (): Promise<void> => {
    lastPush = now();
    // An unanswered batch goes again as it was: the object has counted it already or not at all.
    const batch = unacked ?? takeBatch();
    unacked = batch;
    try {
      const answer = await options.push(batch);
      if (answer.seq >= batch.seq) unacked = undefined;
    } catch (err) {
      options.onPushError?.(err);
    }
  };

  const flush = (): Promise<void> => {
    running ??= pushOnce().finally(() => {
      running = undefined;
    });
    return running;
  };

  return {
    endpoint: {
      telemetry,
      observeRequest(route, method, status, seconds) {
        const labels = [route, closedMethod(method, HTTP_METHODS), String(status)];
        count(F.httpRequests, labels);
        observe(F.httpDuration, labels, seconds);
        requestsPending += 1;
      },
      watch(more) {
        Object.assign(sources, more);
      },
      async render() {
        // This isolate's own counts first, so a scrape through it includes them. A push already under way, or a kept
        // batch sent again, carries none of the newest counts: they take one more push (and a failed one, one retry).
        await flush();
        for (let more = 0; more < 2 && (unacked !== undefined || counters.size + histograms.size > 0); more++) {
          await flush();
        }
        return { body: await options.read(), contentType: 'text/plain; version=0.0.4; charset=utf-8' };
      },
    },
    afterRequest(ctx) {
      if (requestsPending >= maxRequests) {
        ctx.waitUntil(flush());
        return;
      }
      if (scheduled) return;
      scheduled = true;
      // One timer per isolate: the push waits out the interval inside this answer's waitUntil.
      const wait = Math.max(0, lastPush + intervalMs - now());
      ctx.waitUntil(
        new Promise<void>((resolve) => setTimeout(resolve, wait)).then(async () => {
          scheduled = false;
          await flush();
        }),
      );
    },
    flush,
  };
}
