// Tracing on Workers: spans exported through the Worker's fetch (createFetchHttp, the upstream calls' client) in the
// background, so an isolate sends them after the answer and the runtime keeps the export alive until it is done; the
// same in a Durable Object (its login span).
import type { TracingConfig } from '../../config/config.js';
import { createFetchHttp } from '../../base/upstream-http.js';
import { createTracing, type Tracing } from '../../observability/tracing/tracing.js';
import type { RunInBackground } from '../../shared-state/background.js';

/**
 * `config` is the configuration's `tracing` (null: off); `background` keeps an export alive: the current request's
 * `ctx.waitUntil` in an isolate, the object's own `waitUntil` in a Durable Object.
 */
export function createWorkerTracing(config: TracingConfig | null, background: RunInBackground): Tracing {
  return createTracing(config, {
    http: (maxBodyBytes) => createFetchHttp((input, init) => fetch(input, init), { maxBodyBytes }),
    background,
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    // Workers' clock moves only across I/O (a Spectre mitigation): spans measure time spent waiting, not CPU.
    now: Date.now,
  });
}
