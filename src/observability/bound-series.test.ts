// Bound series are exported exactly as prom-client exports the same observations made through its own Counter
// and Histogram: same text, same numbers, counted between scrapes and after them. A histogram's observations with a
// trace become its buckets' exemplars, written in OpenMetrics and nowhere else.
import { Counter, Histogram, Registry, type OpenMetricsContentType } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { boundCounters, boundHistogram, type TraceIds } from './bound-series.js';

const BUCKETS = [0.001, 0.01, 0.1, 1];
type L = 'route' | 'status';
const OBSERVATIONS: Array<[Record<L, string>, number]> = [
  [{ route: '/a', status: '200' }, 0.0004],
  [{ route: '/a', status: '200' }, 0.001],
  [{ route: '/a', status: '200' }, 0.05],
  [{ route: '/b', status: '404' }, 7],
  [{ route: '/a', status: '200' }, 0.5],
  [{ route: '/b', status: '404' }, 0.002],
];

function pair() {
  const reference = new Registry();
  const refCounter = new Counter<L>({
    name: 'x_total',
    help: 'h',
    labelNames: ['route', 'status'],
    registers: [reference],
  });
  const refHistogram = new Histogram<L>({
    name: 'x_seconds',
    help: 'h',
    labelNames: ['route', 'status'],
    buckets: BUCKETS,
    registers: [reference],
  });
  const bound = new Registry();
  const counters = boundCounters<L>();
  new Counter<L>({
    name: 'x_total',
    help: 'h',
    labelNames: ['route', 'status'],
    registers: [bound],
    collect() {
      counters.fold(this);
    },
  });
  const histogram = boundHistogram<L>({ name: 'x_seconds', help: 'h', buckets: BUCKETS, registry: bound });
  const observe = ([labels, value]: [Record<L, string>, number], trace?: TraceIds) => {
    refCounter.inc(labels);
    refHistogram.observe(labels, value);
    const key = `${labels.route} ${labels.status}`;
    counters.bind(key, labels).inc();
    histogram.bind(key, labels).observe(value, trace);
  };
  return { reference, bound, observe };
}

/** A trace's ids as the tracer draws them: 32 and 16 hex digits. */
const traceOf = (digit: string): TraceIds => ({ traceId: digit.repeat(32), spanId: digit.repeat(16) });

/** The lines of `text` that carry an exemplar, without the exemplar's timestamp. */
const exemplarLines = (text: string) =>
  text
    .split('\n')
    .filter((line) => line.includes(' # {'))
    .map((line) => line.replace(/ [\d.]+$/, ''));

describe('bound series', () => {
  it("export the same text as prom-client's Counter and Histogram for the same observations", async () => {
    const { reference, bound, observe } = pair();
    OBSERVATIONS.slice(0, 3).forEach((o) => observe(o));
    expect(await bound.metrics()).toBe(await reference.metrics());
    // Counted after a scrape: added to what was folded before, nothing lost or counted twice.
    OBSERVATIONS.slice(3).forEach((o) => observe(o));
    const text = await bound.metrics();
    expect(text).toBe(await reference.metrics());
    expect(text).toContain('x_total{route="/a",status="200"} 4');
    expect(text).toContain('x_seconds_bucket{le="0.01",route="/b",status="404"} 1');
    expect(text).toContain('x_seconds_count{route="/b",status="404"} 2');
    expect(await bound.metrics()).toBe(text);
  });

  it('read as JSON the same as prom-client', async () => {
    const { reference, bound, observe } = pair();
    OBSERVATIONS.forEach((o) => observe(o));
    expect(await bound.getMetricsAsJSON()).toEqual(await reference.getMetricsAsJSON());
  });

  it('keep the last traced observation of each bucket, +Inf included, as its exemplar', async () => {
    const { bound, observe } = pair();
    const a = { route: '/a', status: '200' };
    const before = Date.now() / 1000;
    observe([a, 0.0004], traceOf('1')); // the 0.001 bucket
    observe([a, 0.001], traceOf('2')); // the same bucket (le is inclusive): its exemplar now
    observe([a, 0.05]); // untraced: counted, no exemplar
    observe([{ route: '/b', status: '404' }, 7], traceOf('3')); // above the last bound: the +Inf bucket
    observe([a, 0.5], traceOf('4')); // the 1 bucket
    observe([a, 0.0004]); // untraced in the 0.001 bucket: its exemplar stays (prom-client issue #616 empties it)
    const openMetrics = new Registry<OpenMetricsContentType>();
    openMetrics.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
    openMetrics.registerMetric(bound.getSingleMetric('x_seconds')!);
    const text = await openMetrics.metrics();
    expect(exemplarLines(text)).toEqual([
      `x_seconds_bucket{le="0.001",route="/a",status="200"} 3 # {trace_id="${'2'.repeat(32)}",span_id="${'2'.repeat(16)}"} 0.001`,
      `x_seconds_bucket{le="1",route="/a",status="200"} 5 # {trace_id="${'4'.repeat(32)}",span_id="${'4'.repeat(16)}"} 0.5`,
      `x_seconds_bucket{le="+Inf",route="/b",status="404"} 1 # {trace_id="${'3'.repeat(32)}",span_id="${'3'.repeat(16)}"} 7`,
    ]);
    // The exemplar's timestamp: Unix seconds, when it was observed.
    const at = Number(/ ([\d.]+)$/.exec(text.split('\n').find((l) => l.includes(' # {'))!)![1]);
    expect(at).toBeGreaterThanOrEqual(Math.floor(before));
    expect(at).toBeLessThanOrEqual(Date.now() / 1000);
    // OpenMetrics limits an exemplar's label names and values to 128 UTF-8 characters in all.
    const labelSet = /# \{(.*)\}/.exec(exemplarLines(text)[0]!)![1]!;
    expect(labelSet.replace(/[="{},]/g, '').length).toBe(63);
    bound.resetMetrics();
    expect(exemplarLines(await openMetrics.metrics())).toEqual([]);
  });

  it('leave the text format as it is with traced observations', async () => {
    const { reference, bound, observe } = pair();
    OBSERVATIONS.forEach((o, i) => observe(o, traceOf(String(i + 1))));
    const text = await bound.metrics();
    expect(text).toBe(await reference.metrics());
    expect(text).not.toContain(' # {');
  });
});
