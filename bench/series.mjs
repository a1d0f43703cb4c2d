// `npm run bench:series`: one gateway warming its cache under a skewed (Zipf-like) stream of 2,000 numbers, second by
// second: the share of answers from the cache, the upstream calls the simulator counts, and the latency the client
// sees (p50, p99). Writes bench/cache-warmup.svg (the README's Performance picture) and prints the series.
// Bounded: 20 s of load (--quick: 8 s), 16 requests in flight, all to 127.0.0.1.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { benchLogin, BENCH_UPSTREAM_CLIENTS, benchGatewayEnv, build, createHarness, here, log } from './harness.mjs';
import { renderChart } from './svg-chart.mjs';
import { seededRandom, shuffle, zipfPicker } from './zipf.mjs';

const quick = process.argv.includes('--quick');
const SECONDS = quick ? 8 : 20;
const CONCURRENCY = 16;
const RANKS = 2000;
const ZIPF_S = 1.0;
const UPSTREAM_LATENCY_MS = 20;
const OUT = join(here, 'cache-warmup.svg');

build();
const { startChild } = createHarness();
const { startSimulatorServer } = await import('../dist/simulator/server.js');

const rnd = seededRandom(20260301);
// Two fiction ranges (Ofcom drama numbers): London landlines and mobiles, shuffled into one ranking.
const numbers = shuffle(
  [
    ...Array.from({ length: 1000 }, (_, i) => `+44207946${String(i).padStart(4, '0')}`),
    ...Array.from({ length: 1000 }, (_, i) => `+447700900${String(i).padStart(3, '0')}`),
  ],
  rnd,
);
const nextNumber = zipfPicker(numbers.slice(0, RANKS), ZIPF_S, rnd);

const simulator = await startSimulatorServer({ clients: BENCH_UPSTREAM_CLIENTS });
simulator.controls.setFaults({ latencyMs: UPSTREAM_LATENCY_MS });
const gateway = await startChild('servers/gateway.mjs', { ...benchGatewayEnv(simulator.url), LOG_LEVEL: 'warn' });
const token = await benchLogin(gateway.url);
const headers = { authorization: `Bearer ${token}` };

log(
  `${SECONDS} s of Zipf traffic (s = ${ZIPF_S}, ${RANKS} numbers, ${CONCURRENCY} in flight, upstream latency ${UPSTREAM_LATENCY_MS} ms)`,
);
const buckets = Array.from({ length: SECONDS }, () => ({
  requests: 0,
  fromCache: 0,
  latencies: [],
  upstream: 0,
  errors: 0,
}));
const start = performance.now();
const end = start + SECONDS * 1000;
const upstreamAt = [simulator.controls.stats().searchCalls];
const sampler = setInterval(() => upstreamAt.push(simulator.controls.stats().searchCalls), 1000);

async function worker() {
  while (performance.now() < end) {
    const t0 = performance.now();
    const res = await fetch(`${gateway.url}/v2/contacts/search?what=${encodeURIComponent(nextNumber())}`, { headers });
    await res.arrayBuffer();
    const t1 = performance.now();
    const bucket = buckets[Math.min(SECONDS - 1, Math.floor((t1 - start) / 1000))];
    bucket.requests++;
    bucket.latencies.push(t1 - t0);
    if (res.status !== 200) bucket.errors++;
    // hit, or shared/stale answers: no upstream call of this request's own.
    if (/^callerid-gateway; (hit|fwd=stale)/.test(res.headers.get('cache-status') ?? '')) bucket.fromCache++;
  }
}
await Promise.all(Array.from({ length: CONCURRENCY }, worker));
clearInterval(sampler);
upstreamAt.push(simulator.controls.stats().searchCalls);
for (let s = 0; s < SECONDS; s++) buckets[s].upstream = (upstreamAt[s + 1] ?? upstreamAt.at(-1)) - upstreamAt[s];

const quantile = (list, q) => {
  const sorted = [...list].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : NaN;
};
const x = buckets.map((_, s) => s + 1);
const hitRatio = buckets.map((b) => (b.requests ? (100 * b.fromCache) / b.requests : NaN));
const upstream = buckets.map((b) => b.upstream);
const requests = buckets.map((b) => b.requests);
const p50 = buckets.map((b) => quantile(b.latencies, 0.5));
const p99 = buckets.map((b) => quantile(b.latencies, 0.99));
const errors = buckets.reduce((n, b) => n + b.errors, 0);

console.log('second  requests  from-cache%  upstream-calls  p50-ms  p99-ms');
buckets.forEach((b, s) =>
  console.log(
    `${String(s + 1).padStart(6)}  ${String(b.requests).padStart(8)}  ${hitRatio[s].toFixed(1).padStart(11)}  ${String(upstream[s]).padStart(14)}  ${p50[s].toFixed(2).padStart(6)}  ${p99[s].toFixed(2).padStart(6)}`,
  ),
);
console.log(`errors: ${errors}; distinct numbers called upstream: ${upstreamAt.at(-1) - upstreamAt[0]}`);

writeFileSync(
  OUT,
  renderChart({
    title: 'Cache warm-up: one gateway, Zipf traffic over 2,000 numbers',
    subtitle: `npm run bench:series: ${CONCURRENCY} requests in flight, simulator upstream with ${UPSTREAM_LATENCY_MS} ms latency, ${new Date().toISOString().slice(0, 10)}`,
    xLabel: 'seconds since the first request',
    x,
    panels: [
      {
        title: 'Answers from the cache',
        unit: '%',
        max: 100,
        series: [{ name: 'hit ratio', color: '#1d6b3c', values: hitRatio }],
      },
      {
        title: 'Per second: requests answered and upstream calls made',
        unit: '',
        series: [
          { name: 'requests', color: '#1f5fbf', values: requests },
          { name: 'upstream calls', color: '#a32222', values: upstream },
        ],
      },
      {
        title: 'Latency seen by the client',
        unit: ' ms',
        series: [
          { name: 'p50', color: '#1f5fbf', values: p50 },
          { name: 'p99', color: '#8a5300', values: p99 },
        ],
      },
    ],
  }),
);
log(`wrote ${OUT}`);
await simulator.close();
process.exit(0);
