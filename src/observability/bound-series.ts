// Metric series bound once per label set and counted in plain numbers on the request path; prom-client reads
// them when it collects (every scrape), so the counts stay exact. prom-client's own inc()/observe() hash the
// label object and validate every label name on each call, which the hit-path profile showed per request.
import type { Counter, LabelValues, Registry } from 'prom-client';

/** One label set of a counter: `inc()` adds one, handed to the counter at its next collection. */
export interface BoundCounter {
  inc(): void;
}

/**
 * Counter series bound by key. The counter must be created with `collect() { series.fold(this) }` so that
 * what was counted since the last collection is added before prom-client reads it.
 */
export function boundCounters<T extends string>() {
  const series = new Map<string, { labels: LabelValues<T>; pending: number; inc(): void }>();
  return {
    /** The series of `labels`, created on first use; `key` must identify the labels (a closed set of them). */
    bind(key: string, labels: LabelValues<T>): BoundCounter {
      let s = series.get(key);
      if (s === undefined) {
        const created = {
          labels,
          pending: 0,
          inc() {
            created.pending += 1;
          },
        };
        s = created;
        series.set(key, s);
      }
      return s;
    },
    fold(counter: Counter<T>): void {
      for (const s of series.values()) {
        if (s.pending === 0) continue;
        counter.inc(s.labels, s.pending);
        s.pending = 0;
      }
    },
  };
}

/** The trace of a sampled observation: the ids its exemplar carries. */
export interface TraceIds {
  readonly traceId: string;
  readonly spanId: string;
}

/** One label set of a histogram: `observe(value)` counts it in its bucket. */
export interface BoundHistogram {
  /** With `trace`, the observation also becomes its bucket's exemplar (written in OpenMetrics only). */
  observe(value: number, trace?: TraceIds): void;
}

/** A bucket's last sampled observation. */
interface Sampled {
  trace: TraceIds;
  value: number;
  atMs: number;
}

/**
 * A bucket's exemplar as prom-client's registry writes it in OpenMetrics (` # {labels} value timestamp`, the timestamp
 * in seconds; the text format leaves it out). `trace_id` and `span_id` with their 32 and 16 hex digits make 63
 * characters, within OpenMetrics's 128 for an exemplar's label names and values.
 */
function exemplarOf(sampled: Sampled | undefined) {
  if (sampled === undefined) return null;
  return {
    labelSet: { trace_id: sampled.trace.traceId, span_id: sampled.trace.spanId },
    value: sampled.value,
    timestamp: sampled.atMs / 1000,
  };
}

export interface BoundHistogramOptions {
  name: string;
  help: string;
  /** Upper bounds, ascending (the `+Inf` bucket is implied). */
  buckets: readonly number[];
  registry: Registry;
}

/**
 * A histogram registered on `registry` whose series are bound by key; exported exactly as prom-client's Histogram
 * exports one (`_bucket` with `le` first, `_sum`, `_count`, by label set in the order the sets were first seen).
 * Each bucket (`+Inf` too) keeps the last observation made with a trace as its exemplar.
 */
export function boundHistogram<T extends string>(options: BoundHistogramOptions) {
  const { name, help, buckets } = options;
  type Series = {
    labels: LabelValues<T>;
    counts: number[];
    sum: number;
    count: number;
    /** By bucket, `+Inf` last; made at the first observation with a trace. */
    sampled: (Sampled | undefined)[] | undefined;
    observe(v: number, trace?: TraceIds): void;
  };
  const series = new Map<string, Series>();
  const collected = () => {
    type Value = {
      labels: Record<string, string | number | undefined>;
      value: number;
      metricName: string;
      exemplar?: ReturnType<typeof exemplarOf>;
    };
    const values: Value[] = [];
    for (const s of series.values()) {
      let cumulative = 0;
      buckets.forEach((le, i) => {
        cumulative += s.counts[i]!;
        const exemplar = exemplarOf(s.sampled?.[i]);
        values.push({ labels: { le, ...s.labels }, value: cumulative, metricName: `${name}_bucket`, exemplar });
      });
      const exemplar = exemplarOf(s.sampled?.[buckets.length]);
      values.push(
        { labels: { le: '+Inf', ...s.labels }, value: s.count, metricName: `${name}_bucket`, exemplar },
        { labels: { ...s.labels }, value: s.sum, metricName: `${name}_sum` },
        { labels: { ...s.labels }, value: s.count, metricName: `${name}_count` },
      );
    }
    return { name, help, type: 'histogram', aggregator: 'sum', values };
  };
  const metric = {
    name,
    help,
    type: 'histogram',
    aggregator: 'sum',
    get: () => Promise.resolve(collected()),
    reset() {
      for (const s of series.values()) {
        s.counts.fill(0);
        s.sum = 0;
        s.count = 0;
        s.sampled = undefined;
      }
    },
  };
  options.registry.registerMetric(metric as unknown as Parameters<Registry['registerMetric']>[0]);

  return {
    bind(key: string, labels: LabelValues<T>): BoundHistogram {
      let s = series.get(key);
      if (s === undefined) {
        const created: Series = {
          labels,
          counts: buckets.map(() => 0),
          sum: 0,
          count: 0,
          sampled: undefined,
          observe(v, trace) {
            created.sum += v;
            created.count += 1;
            let i = 0;
            while (i < buckets.length && !(v <= buckets[i]!)) i++;
            if (i < buckets.length) created.counts[i]! += 1;
            if (trace !== undefined) (created.sampled ??= [])[i] = { trace, value: v, atMs: Date.now() };
          },
        };
        s = created;
        series.set(key, s);
      }
      return s;
    },
  };
}
