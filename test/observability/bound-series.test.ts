// Bound series are exported exactly as prom-client exports the same observations made through its own Counter
// and Histogram: same text, same numbers, counted between scrapes and after them.
import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { boundCounters, boundHistogram } from '../../src/observability/bound-series.js';

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
  const observe = ([labels, value]: [Record<L, string>, number]) => {
    refCounter.inc(labels);
    refHistogram.observe(labels, value);
    const key = `${labels.route} ${labels.status}`;
    counters.bind(key, labels).inc();
    histogram.bind(key, labels).observe(value);
  };
  return { reference, bound, observe };
}

describe('bound series', () => {
  it("export the same text as prom-client's Counter and Histogram for the same observations", async () => {
    const { reference, bound, observe } = pair();
    OBSERVATIONS.slice(0, 3).forEach(observe);
    expect(await bound.metrics()).toBe(await reference.metrics());
    // Counted after a scrape: added to what was folded before, nothing lost or counted twice.
    OBSERVATIONS.slice(3).forEach(observe);
    const text = await bound.metrics();
    expect(text).toBe(await reference.metrics());
    expect(text).toContain('x_total{route="/a",status="200"} 4');
    expect(text).toContain('x_seconds_bucket{le="0.01",route="/b",status="404"} 1');
    expect(text).toContain('x_seconds_count{route="/b",status="404"} 2');
    expect(await bound.metrics()).toBe(text);
  });

  it('read as JSON the same as prom-client', async () => {
    const { reference, bound, observe } = pair();
    OBSERVATIONS.forEach(observe);
    expect(await bound.getMetricsAsJSON()).toEqual(await reference.getMetricsAsJSON());
  });
});
