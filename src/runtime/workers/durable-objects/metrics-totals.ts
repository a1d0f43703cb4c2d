// The deployment's metric totals inside the metrics Durable Object: isolates' deltas added once each (by isolate id
// and sequence number), gauges merged across the isolates that pushed lately, and the Prometheus text format of
// it all with the families, help and series Node's registry exports (metric-families.ts).
import { FAMILIES, seedSeries, type GaugeFamily, type MetricFamily } from '../../../observability/metric-families.js';
import type { MetricsBatch } from '../isolate-metrics.js';

/** What is kept in storage: the totals and each isolate's last counted sequence number. */
export interface StoredTotals {
  counters: [string, string[], number][];
  histograms: [string, string[], number[], number, number][];
  isolates: [string, number, number][];
}

/** An isolate not heard from for this long is forgotten; a push it retries later than that would count twice. */
const ISOLATE_MEMORY_MS = 60 * 60 * 1000;
/** At most this many series in all: a bound on storage, far above what the closed label sets make. */
const MAX_SERIES = 20_000;

const FAMILY_LIST: readonly MetricFamily[] = Object.values(FAMILIES);
const BY_NAME = new Map(FAMILY_LIST.map((f) => [f.name, f]));
const key = (family: string, labels: readonly string[]) => `${family}\u0000${labels.join('\u0001')}`;

export interface MetricsTotals {
  /** Adds a batch unless this isolate's sequence number says it was counted; returns the isolate's last one. */
  apply(batch: MetricsBatch, now: number): { seq: number; applied: boolean };
  toStored(): StoredTotals;
  render(now: number): string;
}

interface CounterTotal {
  family: string;
  labels: string[];
  value: number;
}

interface HistogramTotal {
  family: string;
  labels: string[];
  counts: number[];
  sum: number;
  count: number;
}

interface MergedGauge {
  family: GaugeFamily;
  labels: string[];
  value: number;
}

/** The totals, the isolates' last sequence numbers, and each isolate's last gauges. */
interface Totals {
  counters: Map<string, CounterTotal>;
  histograms: Map<string, HistogramTotal>;
  isolates: Map<string, { seq: number; seenAt: number }>;
  gauges: Map<string, { seenAt: number; liveMs: number; values: MetricsBatch['gauges'] }>;
  seeds: ReturnType<typeof seedSeries>;
}

export function createMetricsTotals(stored?: StoredTotals): MetricsTotals {
  const t: Totals = {
    counters: new Map(),
    histograms: new Map(),
    isolates: new Map(),
    gauges: new Map(),
    seeds: seedSeries(),
  };
  for (const [family, labels, value] of t.seeds)
    if (family.type === 'counter')
      t.counters.set(key(family.name, labels), { family: family.name, labels: [...labels], value });
  if (stored) {
    for (const [f, l, v] of stored.counters) addCounter(t, f, l, v);
    for (const [f, l, c, sum, n] of stored.histograms) addHistogram(t, f, l, c, sum, n);
    for (const [id, seq, seenAt] of stored.isolates) t.isolates.set(id, { seq, seenAt });
  }
  return {
    apply: (batch, now) => apply(t, batch, now),
    toStored() {
      return {
        counters: [...t.counters.values()].map((s) => [s.family, s.labels, s.value]),
        histograms: [...t.histograms.values()].map((s) => [s.family, s.labels, s.counts, s.sum, s.count]),
        isolates: [...t.isolates].map(([id, s]) => [id, s.seq, s.seenAt]),
      };
    },
    render: (now) => render(t, now),
  };
}

const size = (t: Totals) => t.counters.size + t.histograms.size;

function addCounter(t: Totals, family: string, labels: string[], value: number): void {
  if (BY_NAME.get(family)?.type !== 'counter' || !(value >= 0)) return;
  const k = key(family, labels);
  const s = t.counters.get(k);
  if (s) s.value += value;
  else if (size(t) < MAX_SERIES) t.counters.set(k, { family, labels, value });
}

function addHistogram(t: Totals, family: string, labels: string[], counts: number[], sum: number, count: number) {
  const def = BY_NAME.get(family);
  if (def?.type !== 'histogram' || counts.length !== def.buckets.length + 1) return;
  const k = key(family, labels);
  let s = t.histograms.get(k);
  if (!s) {
    if (size(t) >= MAX_SERIES) return;
    s = { family, labels, counts: counts.map(() => 0), sum: 0, count: 0 };
    t.histograms.set(k, s);
  }
  counts.forEach((c, i) => (s.counts[i]! += c));
  s.sum += sum;
  s.count += count;
}

function apply(t: Totals, batch: MetricsBatch, now: number): { seq: number; applied: boolean } {
  const known = t.isolates.get(batch.isolate);
  if (known && batch.seq <= known.seq) {
    known.seenAt = now;
    return { seq: known.seq, applied: false };
  }
  for (const [f, l, v] of batch.counters) addCounter(t, f, l, v);
  for (const [f, l, c, sum, n] of batch.histograms) addHistogram(t, f, l, c, sum, n);
  t.isolates.set(batch.isolate, { seq: batch.seq, seenAt: now });
  t.gauges.set(batch.isolate, { seenAt: now, liveMs: batch.intervalMs, values: batch.gauges });
  for (const [id, s] of t.isolates) if (now - s.seenAt > ISOLATE_MEMORY_MS) t.isolates.delete(id);
  for (const [id, g] of t.gauges) if (now - g.seenAt > ISOLATE_MEMORY_MS) t.gauges.delete(id);
  return { seq: batch.seq, applied: true };
}

/** The gauges of the isolates that pushed within three of their intervals, else of the last one that pushed. */
function mergedGauges(t: Totals, now: number): Map<string, MergedGauge> {
  let live = [...t.gauges.values()].filter((g) => now - g.seenAt <= 3 * g.liveMs);
  if (live.length === 0) {
    const latest = [...t.gauges.values()].sort((a, b) => b.seenAt - a.seenAt)[0];
    live = latest ? [latest] : [];
  }
  const merged = new Map<string, MergedGauge>();
  for (const [family, labels, value] of t.seeds)
    if (family.type === 'gauge') merged.set(key(family.name, labels), { family, labels: [...labels], value });
  const seen = new Set<string>();
  for (const g of live) {
    for (const [name, labels, raw] of g.values) {
      const family = BY_NAME.get(name);
      if (family?.type !== 'gauge' || family.merge === 'process') continue;
      const value = raw === null ? Number.NaN : raw;
      const k = key(name, labels);
      const s = merged.get(k);
      if (!s || !seen.has(k)) {
        seen.add(k);
        merged.set(k, { family, labels, value });
        continue;
      }
      s.value = mergeValue(family, s.value, value);
    }
  }
  return merged;
}

/** Two isolates' values of one gauge as its family merges them; NaN (unknown) gives way to a known value. */
function mergeValue(family: GaugeFamily, a: number, b: number): number {
  if (family.merge === 'sum') return a + b;
  if (Number.isNaN(a)) return b;
  if (Number.isNaN(b)) return a;
  return family.merge === 'max' ? Math.max(a, b) : Math.min(a, b);
}

function render(t: Totals, now: number): string {
  const gaugeValues = mergedGauges(t, now);
  const lines: string[] = [];
  for (const family of FAMILY_LIST) {
    if (family.type === 'gauge' && family.merge === 'process') continue;
    lines.push(`# HELP ${family.name} ${escapeHelp(family.help)}`, `# TYPE ${family.name} ${family.type}`);
    if (family.type === 'counter') renderValues(lines, family, t.counters.values(), 0);
    else if (family.type === 'histogram') renderHistograms(lines, family, t.histograms.values());
    else renderValues(lines, family, gaugeValues.values(), family.empty);
  }
  return lines.join('\n') + '\n';
}

/** A counter's or gauge's series; a family without labels and without series shows `empty` (if any). */
function renderValues(
  lines: string[],
  family: MetricFamily,
  series: Iterable<{ family: string | MetricFamily; labels: string[]; value: number }>,
  empty: number | undefined,
): void {
  let any = false;
  for (const s of series) {
    if ((typeof s.family === 'string' ? s.family : s.family.name) !== family.name) continue;
    any = true;
    lines.push(`${family.name}${labelText(family.labelNames, s.labels)} ${num(s.value)}`);
  }
  if (!any && family.labelNames.length === 0 && empty !== undefined) lines.push(`${family.name} ${num(empty)}`);
}

function renderHistograms(
  lines: string[],
  family: MetricFamily & { buckets: readonly number[] },
  series: Iterable<HistogramTotal>,
): void {
  const names = family.labelNames;
  for (const s of series) {
    if (s.family !== family.name) continue;
    let cumulative = 0;
    family.buckets.forEach((le, i) => {
      cumulative += s.counts[i]!;
      lines.push(`${family.name}_bucket${labelText(['le', ...names], [num(le), ...s.labels])} ${cumulative}`);
    });
    lines.push(`${family.name}_bucket${labelText(['le', ...names], ['+Inf', ...s.labels])} ${s.count}`);
    lines.push(`${family.name}_sum${labelText(names, s.labels)} ${num(s.sum)}`);
    lines.push(`${family.name}_count${labelText(names, s.labels)} ${s.count}`);
  }
}

/** As the text format (and prom-client) write numbers. */
function num(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}

function escapeHelp(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

function labelText(names: readonly string[], values: readonly string[]): string {
  if (names.length === 0) return '';
  const pairs = names.map(
    (n, i) => `${n}="${(values[i] ?? '').replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"')}"`,
  );
  return `{${pairs.join(',')}}`;
}
