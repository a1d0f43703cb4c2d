// Reads the Worker's bindings: the shared configuration (same names as on Node) plus the Workers-only settings
// and bindings (Durable Objects, Analytics Engine), validated like the rest with one line naming the variable.
import * as z from 'zod/mini';
import { ConfigError, parseConfig, SETTING_NAMES, type Config, type EnvSource } from '../../config.js';
import { configErrorOf, flag, int, setting, settingsReader, text } from '../../settings-table.js';
import { unknownSettings, type UnknownSetting } from '../../unknown-settings.js';
import type {
  AnalyticsEngineDataset,
  CounterObjectRpc,
  DurableObjectNamespace,
  UpstreamTokenObjectRpc,
} from './bindings.js';

/** Binding names, as `wrangler.toml` declares them. */
export const BINDINGS = { token: 'UPSTREAM_TOKEN', counters: 'COUNTERS', analytics: 'ANALYTICS' } as const;

export interface WorkerSettings {
  config: Config & { upstream: NonNullable<Config['upstream']> };
  /** How long an isolate waits for a Durable Object before it falls back to its own state. */
  durableObjectTimeoutMs: number;
  /** Host of the synthetic URLs the Cache API tier stores lookups under; undefined: the request's own host. */
  lookupCacheHost: string | undefined;
  /** `off` keeps lookups in each isolate's memory only. */
  lookupCacheApi: boolean;
  tokenObjects: DurableObjectNamespace<UpstreamTokenObjectRpc> | undefined;
  counterObjects: DurableObjectNamespace<CounterObjectRpc> | undefined;
  analytics: AnalyticsEngineDataset | undefined;
  /** Variables that look like settings but are none (a misspelling), for one warning each at start. */
  unknown: UnknownSetting[];
}

/** The settings only the Worker reads, besides the shared ones, in the shape of the fields they fill. */
const WORKER_SETTINGS = {
  durableObjectTimeoutMs: setting('DURABLE_OBJECT_TIMEOUT_MS', int(50, 30_000, 1_000)),
  lookupCacheHost: setting(
    'LOOKUP_CACHE_HOST',
    z.optional(text(z.regex(/^[a-z0-9.-]{1,253}$/i, 'must be a host name (e.g. gateway.example.com)'))),
  ),
  lookupCacheApi: setting('LOOKUP_CACHE_API', flag('on', 'off', true)),
};
const workerSettings = settingsReader(WORKER_SETTINGS);

export const WORKER_SETTING_NAMES: readonly string[] = workerSettings.names;

export function stringBindings(env: Record<string, unknown>): EnvSource {
  const out: EnvSource = {};
  for (const [key, value] of Object.entries(env)) if (typeof value === 'string') out[key] = value;
  return out;
}

const isNamespace = (v: unknown): boolean =>
  typeof v === 'object' && v !== null && typeof (v as { idFromName?: unknown }).idFromName === 'function';

/** Throws a ConfigError naming the first wrong variable or binding. */
export function readWorkerSettings(env: Record<string, unknown>): WorkerSettings {
  const strings = stringBindings(env);
  const config = parseConfig(strings);
  if (!config.upstream) {
    throw new ConfigError(
      'UPSTREAM_AUTH_URL',
      'the four UPSTREAM_* bindings are required on Workers (demo mode is Node only)',
    );
  }
  const parsed = workerSettings.read(strings);
  if (!parsed.ok) throw configErrorOf(parsed.problems);
  const own = parsed.values;
  for (const name of [BINDINGS.token, BINDINGS.counters]) {
    if (env[name] !== undefined && !isNamespace(env[name]))
      throw new ConfigError(name, 'must be a Durable Object namespace binding');
  }
  const analytics = env[BINDINGS.analytics];
  if (analytics !== undefined && typeof (analytics as { writeDataPoint?: unknown }).writeDataPoint !== 'function') {
    throw new ConfigError(BINDINGS.analytics, 'must be an Analytics Engine dataset binding');
  }
  const unknown = unknownSettings(strings, [...SETTING_NAMES, ...WORKER_SETTING_NAMES, ...Object.values(BINDINGS)]);
  return {
    unknown,
    // The shared stores' deadline (REDIS_TIMEOUT_MS on Node) is the Durable Object one here: a round trip to an
    // object in another region takes far longer than one to a Redis beside the replicas.
    config: {
      ...config,
      upstream: config.upstream,
      metrics: { ...config.metrics, port: 0 },
      redis: { ...config.redis, timeoutMs: own.durableObjectTimeoutMs },
    },
    durableObjectTimeoutMs: own.durableObjectTimeoutMs,
    lookupCacheHost: own.lookupCacheHost,
    lookupCacheApi: own.lookupCacheApi,
    tokenObjects: env[BINDINGS.token] as DurableObjectNamespace<UpstreamTokenObjectRpc> | undefined,
    counterObjects: env[BINDINGS.counters] as DurableObjectNamespace<CounterObjectRpc> | undefined,
    analytics: analytics as AnalyticsEngineDataset | undefined,
  };
}
