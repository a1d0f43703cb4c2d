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

/** One label set of a histogram: `observe(value)` counts it in its bucket. */
export interface BoundHistogram {
  observe(value: number): void;
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
 */
export function boundHistogram<T extends string>(options: BoundHistogramOptions) {
  const { name, help, buckets } = options;
  type Series = { labels: LabelValues<T>; counts: number[]; sum: number; count: number; observe(v: number): void };
  const series = new Map<string, Series>();
  const collected = () => {
    type Value = {
      labels: Record<string, string | number | undefined>;
      value: number;
      metricName: string;
      exemplar?: null;
    };
    const values: Value[] = [];
    for (const s of series.values()) {
      let cumulative = 0;
      buckets.forEach((le, i) => {
        cumulative += s.counts[i]!;
        values.push({ labels: { le, ...s.labels }, value: cumulative, metricName: `${name}_bucket`, exemplar: null });
      });
      values.push(
        { labels: { le: '+Inf', ...s.labels }, value: s.count, metricName: `${name}_bucket`, exemplar: null },
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
          observe(v) {
            created.sum += v;
            created.count += 1;
            for (let i = 0; i < buckets.length; i++) {
              if (v <= buckets[i]!) {
                created.counts[i]! += 1;
                return;
              }
            }
          },
        };
        s = created;
        series.set(key, s);
      }
      return s;
    },
  };
}
