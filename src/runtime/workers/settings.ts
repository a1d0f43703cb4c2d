// Reads the Worker's bindings: the shared configuration (same names as on Node) plus the Workers-only settings
// and bindings (Durable Objects, Analytics Engine), validated like the rest: one start names every wrong setting.
import * as z from 'zod/mini';
import {
  ConfigError,
  parseConfig,
  RESERVED_CLIENT_IDS,
  SETTING_NAMES,
  type Config,
  type ConfigProblem,
  type EnvSource,
} from '../../config/config.js';
import { readClientsFile, type ClientsFileContents } from '../../auth/clients-file.js';
import { configErrorOf, flag, int, setting, settingsReader, text } from '../../config/settings-table.js';
import { unknownSettings, type UnknownSetting } from '../../config/unknown-settings.js';
import type {
  AnalyticsEngineDataset,
  CounterObjectRpc,
  DurableObjectNamespace,
  MetricsObjectRpc,
  RevocationObjectRpc,
  UpstreamTokenObjectRpc,
} from './bindings.js';

/** The one metrics object of the deployment (docs/workers.md, "Metrics": sharding on paper). */
export const METRICS_OBJECT = 'deployment';

/** Binding names, as `wrangler.toml` declares them. */
const BINDINGS = {
  token: 'UPSTREAM_TOKEN',
  counters: 'COUNTERS',
  metrics: 'METRICS',
  revocations: 'REVOCATIONS',
  analytics: 'ANALYTICS',
  /** The clients file's JSON as a secret (`wrangler secret put GATEWAY_CLIENTS_JSON < clients.json`). */
  clients: 'GATEWAY_CLIENTS_JSON',
} as const;

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
  /** The deployment's metrics (MetricsObject): isolates push their counts, GET /metrics reads the sum. */
  metricsObjects: DurableObjectNamespace<MetricsObjectRpc> | undefined;
  /** The deployment's revoked gateway tokens (RevocationObject); absent: revocations hold in one isolate. */
  revocationObjects: DurableObjectNamespace<RevocationObjectRpc> | undefined;
  /** An isolate pushes its counts at most this often (ms)... */
  metricsPushIntervalMs: number;
  /** ...or sooner, once it has counted this many requests since its last push. */
  metricsPushMaxRequests: number;
  analytics: AnalyticsEngineDataset | undefined;
  /** The clients of GATEWAY_CLIENTS_JSON; undefined: GATEWAY_CLIENTS and its companion variables. */
  clients: ClientsFileContents['clients'] | undefined;
  /** The trusted issuers of GATEWAY_CLIENTS_JSON; none without it. */
  issuers: ClientsFileContents['issuers'];
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
  // At most 20 s: the push waits in ctx.waitUntil, which keeps an isolate's work for 30 s after its answer.
  metricsPushIntervalSeconds: setting('METRICS_PUSH_INTERVAL_SECONDS', int(1, 20, 10)),
  metricsPushMaxRequests: setting('METRICS_PUSH_MAX_REQUESTS', int(1, 100_000, 1_000)),
};
const workerSettings = settingsReader(WORKER_SETTINGS);

export const WORKER_SETTING_NAMES: readonly string[] = workerSettings.names;

function stringBindings(env: Record<string, unknown>): EnvSource {
  const out: EnvSource = {};
  for (const [key, value] of Object.entries(env)) if (typeof value === 'string') out[key] = value;
  return out;
}

const isNamespace = (v: unknown): boolean =>
  typeof v === 'object' && v !== null && typeof (v as { idFromName?: unknown }).idFromName === 'function';

/** Throws one ConfigError naming every wrong or missing variable and binding, as Node does at its start. */
export function readWorkerSettings(env: Record<string, unknown>): WorkerSettings {
  const strings = stringBindings(env);
  const problems: ConfigProblem[] = [];
  let config: Config | undefined;
  try {
    config = parseConfig(strings, { upstreamRequired: true, publicBaseUrlRequiredBy: 'on Workers' });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    problems.push(...err.problems);
  }
  const parsed = workerSettings.read(strings);
  if (!parsed.ok) problems.push(...parsed.problems);
  for (const name of [BINDINGS.token, BINDINGS.counters, BINDINGS.metrics, BINDINGS.revocations]) {
    if (env[name] !== undefined && !isNamespace(env[name]))
      problems.push({ variable: name, problem: 'must be a Durable Object namespace binding' });
  }
  const file = clientsOf(strings, problems);
  const analytics = env[BINDINGS.analytics];
  if (analytics !== undefined && typeof (analytics as { writeDataPoint?: unknown }).writeDataPoint !== 'function') {
    problems.push({ variable: BINDINGS.analytics, problem: 'must be an Analytics Engine dataset binding' });
  }
  if (problems.length > 0 || !config?.upstream || !parsed.ok) throw configErrorOf(problems);
  const own = parsed.values;
  const unknown = unknownSettings(strings, [...SETTING_NAMES, ...WORKER_SETTING_NAMES, ...Object.values(BINDINGS)]);
  return {
    unknown,
    // The shared stores' deadline (REDIS_TIMEOUT_MS on Node) is the Durable Object one here: a round trip to an
    // object in another region takes far longer than one to a Redis beside the replicas.
    config: {
      ...config,
      upstream: config.upstream,
      metrics: { ...config.metrics, port: 0 },
      sharedStoreTimeoutMs: own.durableObjectTimeoutMs,
    },
    durableObjectTimeoutMs: own.durableObjectTimeoutMs,
    lookupCacheHost: own.lookupCacheHost,
    lookupCacheApi: own.lookupCacheApi,
    tokenObjects: env[BINDINGS.token] as DurableObjectNamespace<UpstreamTokenObjectRpc> | undefined,
    counterObjects: env[BINDINGS.counters] as DurableObjectNamespace<CounterObjectRpc> | undefined,
    metricsObjects: env[BINDINGS.metrics] as DurableObjectNamespace<MetricsObjectRpc> | undefined,
    revocationObjects: env[BINDINGS.revocations] as DurableObjectNamespace<RevocationObjectRpc> | undefined,
    metricsPushIntervalMs: own.metricsPushIntervalSeconds * 1000,
    metricsPushMaxRequests: own.metricsPushMaxRequests,
    analytics: analytics as AnalyticsEngineDataset | undefined,
    clients: file?.clients,
    issuers: file?.issuers ?? [],
  };
}

/** The clients and issuers of GATEWAY_CLIENTS_JSON (the clients file's format), its one problem named, or undefined when unset. */
function clientsOf(strings: EnvSource, problems: ConfigProblem[]): ClientsFileContents | undefined {
  const json = strings[BINDINGS.clients];
  if (json === undefined || json === '') return undefined;
  for (const variable of ['GATEWAY_CLIENTS', 'GATEWAY_ADMIN_CLIENTS'])
    if (strings[variable])
      problems.push({ variable, problem: `is set beside ${BINDINGS.clients}: give every client in the JSON alone` });
  const read = readClientsFile(json, RESERVED_CLIENT_IDS);
  if (read.ok) return { clients: read.clients, issuers: read.issuers };
  problems.push({ variable: BINDINGS.clients, problem: read.problem });
  return undefined;
}
