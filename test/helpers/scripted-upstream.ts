// A scripted upstream loader for the lookup cache's tests (answer, hold, or fail each load) and telemetry that
// records what the cache reported.
import { GatewayError } from '../../src/base/errors.js';
import type { UpstreamAnswer } from '../../src/upstream/search-client.js';
import { noopTelemetry, type CacheResult, type Telemetry } from '../../src/observability/telemetry.js';

export const listed = (what: string, name = 'Hartley Zoë'): string =>
  `{"query":{"what":"${what}"},"total":1,"results":[{"displayName":"${name}","provider":{"id":"swissdir"}}]}`;
export const unlisted = (what: string): string => `{"query":{"what":"${what}"},"total":0,"results":[]}`;

/** The cache settings the tests reason about: 1 MiB, 600 s fresh, 60 s negative, 30 s revalidate, 1 h stale-if-error. */
export const WINDOWS = {
  maxBytes: 1024 * 1024,
  ttlSeconds: 600,
  negativeTtlSeconds: 60,
  staleWhileRevalidateSeconds: 30,
  staleIfErrorSeconds: 3600,
  resultsPath: 'results',
} as const;

interface Deferred {
  resolve(answer: UpstreamAnswer): void;
  reject(err: unknown): void;
}

export type LoadMode = 'answer' | 'defer' | 'fail';

export function scriptedUpstream() {
  const calls: string[] = [];
  const pending: Deferred[] = [];
  let mode: LoadMode = 'answer';
  let bodyFor = (e164: string): string => listed(e164);
  const load = (e164: string): Promise<UpstreamAnswer> => {
    calls.push(e164);
    if (mode === 'fail') return Promise.reject(new GatewayError('upstream_error', 'the upstream answered 500'));
    if (mode === 'defer') return new Promise((resolve, reject) => pending.push({ resolve, reject }));
    return Promise.resolve({ body: bodyFor(e164), contentType: 'application/json' });
  };
  return {
    load,
    calls,
    pending,
    setMode: (m: LoadMode) => void (mode = m),
    setBody: (f: (e164: string) => string) => void (bodyFor = f),
  };
}

/** Cache results in order, and shared-store transitions and fallbacks as `"<store> up|down|fallback"`. */
export function cacheTelemetry() {
  const results: CacheResult[] = [];
  const storeEvents: string[] = [];
  const telemetry: Telemetry = {
    ...noopTelemetry,
    cacheLookup: (result) => void results.push(result),
    sharedStore: (store, up) => void storeEvents.push(`${store} ${up ? 'up' : 'down'}`),
    sharedStoreFallback: (store) => void storeEvents.push(`${store} fallback`),
  };
  return { telemetry, results, storeEvents };
}
