-- Shared by the bench scripts: prints one JSON line wrk's runner parses (latencies in microseconds).
function done(summary, latency, requests)
  io.write(string.format(
    'BENCH_JSON {"requests":%d,"durationUs":%d,"errors":%d,"non2xx":%d,"p50":%d,"p99":%d,"max":%d}\n',
    summary.requests, summary.duration,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    summary.errors.status,
    latency:percentile(50), latency:percentile(99), latency.max))
end
