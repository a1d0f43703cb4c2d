// Tracing on Workers: spans exported with the Worker's fetch under the current request's ctx.waitUntil, so an
// isolate sends them after the answer and the runtime keeps the export alive until it is done.
import type { TracingConfig } from '../../config.js';
import { createTracing, type Tracing } from '../../observability/tracing/tracing.js';
import type { RequestScopes } from './request-scope.js';

/** `config` is the configuration's `tracing` (null: off); `scopes` the isolate's request scopes. */
export function createWorkerTracing(config: TracingConfig | null, scopes: RequestScopes): Tracing {
  return createTracing(config, {
    fetch: (url, init) => fetch(url, init),
    background: scopes.background,
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    // Workers' clock moves only across I/O (a Spectre mitigation): spans measure time spent waiting, not CPU.
    now: Date.now,
  });
}
