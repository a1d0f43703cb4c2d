// The metrics object's arithmetic (metrics-totals.ts): pushes added once per isolate and sequence number, totals
// that survive a restart from storage, gauges merged across live isolates, and Node's series from the start.
import { describe, expect, it } from 'vitest';
import { createMetricsTotals } from './metrics-totals.js';
import type { MetricsBatch } from '../isolate-metrics.js';
import { sampleOf } from '../../../../test/helpers/metric-sample.js';

const REQUESTS = 'callerid_gateway_http_requests_total';
const batch = (isolate: string, seq: number, n: number, gauges: MetricsBatch['gauges'] = []): MetricsBatch => ({
  isolate,
  seq,
  intervalMs: 10_000,
  counters: [[REQUESTS, ['/v2/contacts/search', 'GET', '200'], n]],
  histograms: [],
  gauges,
});
const SEARCH_200 = `${REQUESTS}{route="/v2/contacts/search",method="GET",status="200"}`;

describe('metrics totals', () => {
  it('counts a retried push once, and each isolate by its own sequence', () => {
    const totals = createMetricsTotals();
    expect(totals.apply(batch('a', 1, 3), 0)).toEqual({ seq: 1, applied: true });
    expect(totals.apply(batch('a', 1, 3), 1)).toEqual({ seq: 1, applied: false });
    expect(totals.apply(batch('b', 1, 4), 2).applied).toBe(true);
    expect(totals.apply(batch('a', 2, 5), 3).applied).toBe(true);
    expect(sampleOf(totals.render(4), SEARCH_200)).toBe(12);
  });

  it('keeps totals and sequence numbers across a restart from what it stored', () => {
    const before = createMetricsTotals();
    before.apply(batch('a', 7, 10), 0);
    const after = createMetricsTotals(structuredClone(before.toStored()));
    expect(after.apply(batch('a', 7, 10), 1).applied).toBe(false);
    after.apply(batch('a', 8, 1), 2);
    expect(sampleOf(after.render(3), SEARCH_200)).toBe(11);
  });

  it("starts from Node's series at 0, omits per-process gauges, and merges gauges of live isolates", () => {
    const totals = createMetricsTotals();
    const empty = totals.render(0);
    expect(sampleOf(empty, 'callerid_gateway_cache_lookups_total{result="hit"}')).toBe(0);
    expect(sampleOf(empty, 'callerid_gateway_shared_store_up{store="counter"}')).toBe(1);
    expect(empty).not.toContain('callerid_gateway_cache_bytes');
    const gauges = (inFlight: number, up: number, expiry: number | null): MetricsBatch['gauges'] => [
      ['callerid_gateway_upstream_in_flight', [], inFlight],
      ['callerid_gateway_shared_store_up', ['counter'], up],
      ['callerid_gateway_upstream_token_expiry_timestamp_seconds', [], expiry],
      ['callerid_gateway_cache_bytes', [], 1234],
    ];
    totals.apply(batch('a', 1, 1, gauges(2, 1, 1000)), 0);
    totals.apply(batch('b', 1, 1, gauges(3, 0, null)), 0);
    const text = totals.render(1_000);
    expect(sampleOf(text, 'callerid_gateway_upstream_in_flight')).toBe(5);
    expect(sampleOf(text, 'callerid_gateway_shared_store_up{store="counter"}')).toBe(0);
    expect(sampleOf(text, 'callerid_gateway_upstream_token_expiry_timestamp_seconds')).toBe(1000);
    expect(text).not.toContain('callerid_gateway_cache_bytes');
    // An isolate silent for three of its intervals no longer counts in a sum.
    totals.apply(batch('a', 2, 1, gauges(1, 1, 1000)), 35_000);
    expect(sampleOf(totals.render(35_000), 'callerid_gateway_upstream_in_flight')).toBe(1);
  });

  it('refuses families it does not know and negative deltas', () => {
    const totals = createMetricsTotals();
    totals.apply(
      {
        ...batch('a', 1, -5),
        counters: [
          [REQUESTS, ['/x', 'GET', '200'], -5],
          ['made_up_total', [], 1],
        ],
      },
      0,
    );
    const text = totals.render(0);
    expect(text).not.toContain('made_up_total');
    expect(text).not.toContain('route="/x"');
  });
});
