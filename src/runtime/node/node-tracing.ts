// Tracing on Node: the host's OpenTelemetry SDK when the process runs under one (zero-code instrumentation), else
// spans exported from the process itself through the upstream calls' client (undici's pooled Agent, a pool of the
// exporter's own), batched by a timer that keeps no process alive (shutdown flushes what is queued), timed by the
// high-resolution clock.
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TracingConfig } from '../../config/config.js';
import { inProcess } from '../../shared-state/background.js';
import { createTracing, type Tracing } from '../../observability/tracing/tracing.js';
import type { UpstreamHttp } from '../../base/upstream-http.js';
import { createNodeHttp } from './http.js';

/** `config` is the configuration's `tracing` (null: off). */
export function createNodeTracing(config: TracingConfig | null): Tracing {
  return createTracing(config, {
    // A connection that does not open within the export timeout is given up on with it.
    http: (maxBodyBytes) => createNodeHttp({ maxBodyBytes, connectTimeoutMs: config?.timeoutMs }),
    background: inProcess,
    sleep: (ms) => sleep(ms, undefined, { ref: false }),
    // Sub-millisecond spans (a hit) would all last 0 ms by Date.now.
    now: () => performance.timeOrigin + performance.now(),
  });
}

/**
 * `http` as the gateway's upstream calls use it: under a host's SDK, its instrumentation of undici leaves these
 * requests alone (the gateway's client span is theirs, with the number redacted, and its `traceparent` the only one).
 */
export function quietUnderHost(tracing: Tracing, http: UpstreamHttp): UpstreamHttp {
  const { untraced } = tracing;
  if (untraced === undefined) return http;
  return { request: (req) => untraced(() => http.request(req)), close: http.close && (() => http.close!()) };
}
