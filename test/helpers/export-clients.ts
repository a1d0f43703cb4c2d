// The runtime a test's tracing exports with: the in-process loop and the high-resolution clock, and one of the two
// HTTP clients the runtimes export through (Node's undici Agent, the fetch client Workers use).
import { createFetchHttp } from '../../src/base/upstream-http.js';
import type { ExportHttp } from '../../src/observability/tracing/otlp-http.js';
import type { TracingRuntime } from '../../src/observability/tracing/tracing.js';
import { createNodeHttp } from '../../src/runtime/node/http.js';
import { inProcess } from '../../src/shared-state/background.js';

/** Node's client, as `createNodeTracing` builds it. */
export const nodeExportHttp: ExportHttp = (maxBodyBytes) => createNodeHttp({ maxBodyBytes });

/** The fetch client over `fetchFn` (Node's global fetch by default), as `createWorkerTracing` builds it over the Worker's. */
export const fetchExportHttp =
  (fetchFn: typeof fetch = (input, init) => fetch(input, init)): ExportHttp =>
  (maxBodyBytes) =>
    createFetchHttp(fetchFn, { maxBodyBytes });

/** Both clients by name, for a test that holds on each runtime. */
export const EXPORT_CLIENTS: [string, ExportHttp][] = [
  ["Node's undici client", nodeExportHttp],
  ['the fetch client', fetchExportHttp()],
];

export function tracingRuntime(http: ExportHttp = nodeExportHttp): TracingRuntime {
  return {
    http,
    background: inProcess,
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    now: () => performance.timeOrigin + performance.now(),
  };
}
