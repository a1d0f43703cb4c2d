// Configuration: the settings of docs/configuration.md in one table (environment name, parser with its default,
// place in the Config object), validated once at start-up into a typed object, plus the checks across settings.
import { isSupportedCountry, type CountryCode } from 'libphonenumber-js/min';
import * as z from 'zod/mini';
import {
  configErrorOf,
  flag,
  int,
  oneOf,
  optionalInt,
  optionalText,
  setting,
  settingsReader,
  text,
  textOr,
  type ConfigProblem,
  type EnvSource,
  type SettingValues,
} from './settings-table.js';

export { ConfigError, type ConfigProblem, type EnvSource } from './settings-table.js';

/**
 * Caller ids the gateway uses for itself: `console` (the web console's searches, its quota and metrics label) and
 * `gateway` (reads that name no caller). A registered client under one of them would spend their budgets.
 */
export const RESERVED_CLIENT_IDS: readonly string[] = ['console', 'gateway'];

/** The console's daily upstream quota when CLIENT_UPSTREAM_QUOTAS has no `console:N` entry. */
const CONSOLE_QUOTA_PER_DAY = 1000;

const httpUrl = z.pipe(
  text(
    z.refine((v) => URL.canParse(v), 'must be an absolute URL'),
    z.refine((v) => /^https?:\/\//i.test(v), 'must be an http(s) URL'),
  ),
  z.transform((v) => v.replace(/\/+$/, '')),
);

/**
 * The gateway's public base URL, its OAuth issuer identifier (RFC 8414 section 2): an http(s) URL without query,
 * fragment or credentials; a trailing slash is dropped.
 */
const baseUrl = z.pipe(
  httpUrl,
  z.string().check(
    z.refine((v) => {
      const url = new URL(v);
      return !v.includes('?') && !v.includes('#') && !url.username && !url.password;
    }, 'must be a base URL without query, fragment or credentials, e.g. https://callerid.example.com'),
  ),
);

const commaList = (v: string | undefined): string[] =>
  (v ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

const idList = z.pipe(z.optional(z.string()), z.transform(commaList));

const clientList = z.pipe(
  z.optional(z.string()),
  z.transform((v, ctx) => {
    const clients = new Map<string, string>();
    for (const entry of commaList(v)) {
      const m = /^([A-Za-z0-9._-]{1,64}):([0-9a-fA-F]{64})$/.exec(entry);
      if (!m) {
        ctx.issues.push({ code: 'custom', message: 'each entry must be id:sha256hex (64 hex digits)', input: v });
        return z.NEVER;
      }
      if (clients.has(m[1]!)) {
        ctx.issues.push({ code: 'custom', message: `client id "${m[1]}" appears twice`, input: v });
        return z.NEVER;
      }
      clients.set(m[1]!, m[2]!.toLowerCase());
    }
    return clients;
  }),
);

/** `id:N,id2:N`: a per-caller daily number (CLIENT_UPSTREAM_QUOTAS). */
const quotaList = z.pipe(
  z.optional(z.string()),
  z.transform((v, ctx) => {
    const quotas = new Map<string, number>();
    for (const entry of commaList(v)) {
      const m = /^([A-Za-z0-9._-]{1,64}):(\d{1,12})$/.exec(entry);
      if (!m) {
        ctx.issues.push({
          code: 'custom',
          message: 'each entry must be id:N (a whole number of upstream calls per day)',
          input: v,
        });
        return z.NEVER;
      }
      quotas.set(m[1]!, Number(m[2]));
    }
    return quotas;
  }),
);

/** `host:port,host:port` (REDIS_SENTINELS, REDIS_CLUSTER_NODES): at least one; IPv6 hosts in brackets. */
const hostPortList = z.pipe(
  z.optional(z.string()),
  z.transform((v, ctx) => {
    const nodes: { host: string; port: number }[] = [];
    for (const entry of commaList(v)) {
      const m = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9._-]{1,253}):(\d{1,5})$/.exec(entry);
      const port = Number(m?.[2]);
      if (!m || port < 1 || port > 65_535) {
        ctx.issues.push({ code: 'custom', message: 'each entry must be host:port (port 1 to 65535)', input: v });
        return z.NEVER;
      }
      nodes.push({ host: m[1]!.replace(/^\[|\]$/g, ''), port });
    }
    return nodes.length > 0 ? nodes : undefined;
  }),
);

const secretKey = z
  .string()
  .check(z.refine((v) => new TextEncoder().encode(v).length >= 32, 'must be at least 32 bytes'));

const keyPrefix = text(z.regex(/^[A-Za-z0-9:._-]{1,64}$/, 'must be 1-64 of A-Z a-z 0-9 : . _ -'));

/** Empty means unset. */
const optionalSecret = z.pipe(
  z.optional(z.string()),
  z.transform((v) => (v ? v : undefined)),
);

const region = z.optional(
  z.pipe(
    text(
      z.toUpperCase(),
      z.refine((v) => isSupportedCountry(v), 'must be an ISO 3166-1 alpha-2 region known to libphonenumber, e.g. CH'),
    ),
    z.transform((v) => v as CountryCode),
  ),
);

/** What counted limits do while their shared store is down: count per process, allow all, or refuse (503). */
const storeErrorMode = oneOf(['memory', 'open', 'closed'], 'memory');

// OpenTelemetry tracing, read under the OpenTelemetry SDK's own variable names (its "Environment Variable
// Specification"); docs/configuration.md, "Tracing". Off unless an endpoint is set.

/** OTEL_TRACES_SAMPLER's names. */
const SAMPLER_NAMES = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;

/** `key=value,key2=value2`, values percent-encoded (OTEL_EXPORTER_OTLP_HEADERS); may hold a secret: never echoed. */
const otlpHeaders = z.pipe(
  z.optional(z.string()),
  z.transform((v, ctx) => {
    const headers: Record<string, string> = {};
    for (const entry of commaList(v)) {
      const eq = entry.indexOf('=');
      const name = entry.slice(0, eq).trim().toLowerCase();
      let value: string | undefined;
      try {
        value = decodeURIComponent(entry.slice(eq + 1).trim());
      } catch {
        value = undefined;
      }
      if (eq < 1 || !/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(name) || value === undefined || /[\0\r\n]/.test(value)) {
        ctx.issues.push({
          code: 'custom',
          message: 'each entry must be name=value (value percent-encoded)',
          input: '',
        });
        return z.NEVER;
      }
      headers[name] = value;
    }
    return headers;
  }),
);

const samplerRatio = z.optional(
  z.pipe(text(z.regex(/^(0(\.\d+)?|1(\.0+)?|\.\d+)$/, 'must be a number from 0 to 1')), z.transform(Number)),
);

const TRACING_SETTINGS = {
  disabled: setting(
    'OTEL_SDK_DISABLED',
    z.pipe(
      z.optional(text(z.toLowerCase())),
      z.transform((v) => v === 'true'),
    ),
  ),
  endpoint: setting('OTEL_EXPORTER_OTLP_ENDPOINT', z.optional(httpUrl)),
  /** Used as given; the endpoint above gets `/v1/traces` appended. */
  tracesEndpoint: setting(
    'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
    z.optional(text(z.refine((v) => /^https?:\/\//i.test(v) && URL.canParse(v), 'must be an http(s) URL'))),
  ),
  /** OTLP/HTTP only: no gRPC. */
  protocol: setting('OTEL_EXPORTER_OTLP_PROTOCOL', oneOf(['http/protobuf', 'http/json'], 'http/protobuf')),
  headers: setting('OTEL_EXPORTER_OTLP_HEADERS', otlpHeaders),
  timeoutMs: setting('OTEL_EXPORTER_OTLP_TIMEOUT', int(1, 60_000, 10_000)),
  serviceName: setting('OTEL_SERVICE_NAME', textOr('callerid-gateway')),
  sampler: setting('OTEL_TRACES_SAMPLER', oneOf(SAMPLER_NAMES, 'parentbased_always_on')),
  samplerArg: setting('OTEL_TRACES_SAMPLER_ARG', samplerRatio),
  scheduleDelayMs: setting('OTEL_BSP_SCHEDULE_DELAY', int(0, 60_000, 5_000)),
  maxQueueSize: setting('OTEL_BSP_MAX_QUEUE_SIZE', int(1, 100_000, 2_048)),
  maxExportBatchSize: setting('OTEL_BSP_MAX_EXPORT_BATCH_SIZE', int(1, 100_000, 512)),
  /** The gateway's own: traces a second (per process) a caller's context may start recording beyond the ratio. */
  callerSampledPerSecond: setting('TRACING_CALLER_SAMPLED_PER_SECOND', int(0, 1_000_000, 100)),
};

/**
 * Where and how spans are exported, or null with tracing off (OTEL_SDK_DISABLED=true, or no endpoint). The ratio is
 * OTEL_TRACES_SAMPLER_ARG for the `traceidratio` samplers (1 when unset) and ignored by the others.
 */
function tracingConfigOf(t: SettingValues<typeof TRACING_SETTINGS>, problems: ConfigProblem[]) {
  if (t.maxExportBatchSize > t.maxQueueSize) {
    problems.push({
      variable: 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE',
      problem: `must be at most OTEL_BSP_MAX_QUEUE_SIZE (${t.maxQueueSize})`,
    });
  }
  const url = t.tracesEndpoint ?? (t.endpoint === undefined ? undefined : `${t.endpoint}/v1/traces`);
  if (t.disabled || url === undefined) return null;
  return {
    url,
    protocol: t.protocol,
    headers: t.headers,
    timeoutMs: t.timeoutMs,
    serviceName: t.serviceName,
    sampler: {
      name: t.sampler,
      ratio: t.sampler.endsWith('traceidratio') ? (t.samplerArg ?? 1) : 1,
      callerPerSecond: t.callerSampledPerSecond,
    },
    batch: {
      scheduleDelayMs: t.scheduleDelayMs,
      maxQueueSize: t.maxQueueSize,
      maxExportBatchSize: t.maxExportBatchSize,
    },
  };
}

/** Every setting, in the shape of {@link Config}; the comments say what the code does with a value. */
const SETTINGS = {
  port: setting('PORT', int(0, 65535, 8080)),
  host: setting('HOST', textOr('0.0.0.0')),
  /** The base URL clients reach the gateway at (the OAuth issuer); undefined (development only): each request's origin. */
  publicBaseUrl: setting('PUBLIC_BASE_URL', z.optional(baseUrl)),
  /** The upstream's addresses and credentials: all four, or none (demo mode, Node only). */
  upstream: {
    authUrl: setting('UPSTREAM_AUTH_URL', z.optional(httpUrl)),
    baseUrl: setting('UPSTREAM_BASE_URL', z.optional(httpUrl)),
    clientId: setting('UPSTREAM_CLIENT_ID', optionalText),
    clientSecret: setting('UPSTREAM_CLIENT_SECRET', optionalText),
    /**
     * One bound for a whole upstream lookup (token wait, search, the retry after a 401), hence also the longest a
     * caller waits (the default and the ceiling of `Prefer: wait`) and a miss waits for another replica's fill.
     */
    timeoutMs: setting('UPSTREAM_TIMEOUT_MS', int(50, 60_000, 3000)),
    expiresInUnit: setting('UPSTREAM_TOKEN_EXPIRES_IN_UNIT', oneOf(['seconds', 'milliseconds'], 'seconds')),
    refreshAheadSeconds: setting('UPSTREAM_TOKEN_REFRESH_AHEAD_SECONDS', int(0, 86_400, 300)),
    /** A bigger search or token answer is a 502, and is not read past this many bytes. */
    maxBodyBytes: setting('UPSTREAM_MAX_BODY_BYTES', int(1024, 256 * 1024 ** 2, 1024 ** 2)),
  },
  gatewayTokens: {
    /** Undefined only in demo mode before the runtime fills it in. */
    secret: setting('GATEWAY_TOKEN_SECRET', z.optional(secretKey)),
    previousSecrets: setting('GATEWAY_TOKEN_PREVIOUS_SECRETS', z.pipe(idList, z.array(secretKey))),
    ttlSeconds: setting('GATEWAY_TOKEN_TTL_SECONDS', int(60, 31_536_000, 90_000)),
  },
  /** How many single-token revocations the list holds (docs/security.md): per client, and in total. */
  revocations: {
    perClient: setting('REVOCATIONS_PER_CLIENT_MAX', int(1, 5000, 1000)),
    total: setting('REVOCATIONS_MAX', int(1, 1_000_000, 20_000)),
  },
  /** Client id to lowercase hex SHA-256 of its secret. */
  clients: setting('GATEWAY_CLIENTS', clientList),
  /** Path of the clients file (JSON, config/clients-file.schema.json) on Node, read by the runtime; instead of GATEWAY_CLIENTS. */
  clientsFile: setting('GATEWAY_CLIENTS_FILE', optionalText),
  /**
   * A bigger clients file is refused (at start, or on reload with the last good clients kept) and not read past this.
   * Reading one at the bound (well over a thousand clients) holds the event loop 10-20 ms; one of 1 MiB 100-300 ms.
   */
  clientsFileMaxBytes: setting('GATEWAY_CLIENTS_FILE_MAX_BYTES', int(1024, 64 * 1024 ** 2, 256 * 1024)),
  adminClients: setting(
    'GATEWAY_ADMIN_CLIENTS',
    z.pipe(
      idList,
      z.transform((ids) => new Set(ids)),
    ),
  ),
  defaultRegion: setting('DEFAULT_REGION', region),
  console: {
    provider: setting('CONSOLE_PROVIDER', optionalText),
    rate: {
      perAddress: setting('CONSOLE_RATE_PER_ADDRESS', int(1, 1_000_000, 10)),
      total: setting('CONSOLE_RATE_TOTAL', int(1, 10_000_000, 300)),
      windowSeconds: setting('CONSOLE_RATE_WINDOW_SECONDS', int(1, 86_400, 60)),
    },
  },
  rateLimitHeaders: setting('RATELIMIT_HEADERS', oneOf(['draft-11', 'draft-6', 'both'], 'draft-11')),
  /** Shared state in Redis; `connection` is resolved into one {@link RedisConnection} (or null) after reading. */
  redis: {
    connection: {
      url: setting(
        'REDIS_URL',
        z.pipe(
          z.optional(text(z.refine((v) => !v || /^rediss?:\/\//.test(v), 'must start with redis:// or rediss://'))),
          z.transform((v) => (v ? v : undefined)),
        ),
      ),
      sentinels: setting('REDIS_SENTINELS', hostPortList),
      sentinelMaster: setting('REDIS_SENTINEL_MASTER', optionalText),
      sentinelUsername: setting('REDIS_SENTINEL_USERNAME', optionalText),
      sentinelPassword: setting('REDIS_SENTINEL_PASSWORD', optionalText),
      clusterNodes: setting('REDIS_CLUSTER_NODES', hostPortList),
      username: setting('REDIS_USERNAME', optionalText),
      password: setting('REDIS_PASSWORD', optionalText),
      tls: setting('REDIS_TLS', flag('true', 'false', false)),
      tlsCaFile: setting('REDIS_TLS_CA_FILE', optionalText),
    },
    /** Prefix of every key, so several deployments can share one Redis. */
    keyPrefix: setting('REDIS_KEY_PREFIX', z._default(keyPrefix, 'callerid')),
    timeoutMs: setting('REDIS_TIMEOUT_MS', int(10, 10_000, 250)),
  },
  /** The cost guard (docs/cost-control.md). */
  guard: {
    /** Authenticated searches per registered client per minute, every answer counting. */
    ratePerMinute: setting('CLIENT_RATE_PER_MINUTE', int(1, 10_000_000, 600)),
    /** Upstream calls per registered client per UTC day, unless `quotas` names it. */
    quotaPerDay: setting('CLIENT_UPSTREAM_QUOTA_PER_DAY', optionalInt(0, 1_000_000_000)),
    /** Per-caller daily quotas; the console always has one ({@link CONSOLE_QUOTA_PER_DAY} unless named). */
    quotas: setting(
      'CLIENT_UPSTREAM_QUOTAS',
      z.pipe(
        quotaList,
        z.transform((q) => new Map([['console', CONSOLE_QUOTA_PER_DAY], ...q])),
      ),
    ),
    /** Upstream calls per UTC day for all callers together, the console included. */
    budgetPerDay: setting('UPSTREAM_BUDGET_PER_DAY', optionalInt(0, 1_000_000_000)),
    maxConcurrency: setting('UPSTREAM_MAX_CONCURRENCY', int(1, 10_000, 32)),
    maxQueue: setting('UPSTREAM_MAX_QUEUE', int(0, 100_000, 256)),
    cooldownSeconds: setting('UPSTREAM_COOLDOWN_SECONDS', int(1, 86_400, 30)),
    /** The longest pause an upstream Retry-After may impose; longer, non-finite or unreadable values are capped. */
    cooldownMaxSeconds: setting('UPSTREAM_COOLDOWN_MAX_SECONDS', int(1, 86_400, 3600)),
    breakerFailures: setting('UPSTREAM_BREAKER_FAILURES', int(1, 1_000, 5)),
    breakerOpenSeconds: setting('UPSTREAM_BREAKER_OPEN_SECONDS', int(1, 3_600, 10)),
    /** The console's rate limits, the quotas and the budget while the counter store is down (one failure, one mode). */
    onStoreError: setting('LIMITS_ON_STORE_ERROR', storeErrorMode),
  },
  trustProxyHops: setting('TRUST_PROXY_HOPS', int(0, 10, 0)),
  cache: {
    maxBytes: setting('CACHE_MAX_BYTES', int(1024, 16 * 1024 ** 3, 64 * 1024 ** 2)),
    ttlSeconds: setting('CACHE_TTL_SECONDS', int(0, 31_536_000, 86_400)),
    negativeTtlSeconds: setting('CACHE_NEGATIVE_TTL_SECONDS', int(0, 31_536_000, 3_600)),
    staleWhileRevalidateSeconds: setting('CACHE_STALE_WHILE_REVALIDATE_SECONDS', int(0, 86_400, 300)),
    staleIfErrorSeconds: setting('CACHE_STALE_IF_ERROR_SECONDS', int(0, 31_536_000, 86_400)),
  },
  sharedCache: {
    /** Larger answers are kept per process only, never written to the shared tier. */
    maxEntryBytes: setting('CACHE_SHARED_MAX_ENTRY_BYTES', int(1024, 64 * 1024 ** 2, 256 * 1024)),
  },
  log: {
    level: setting('LOG_LEVEL', oneOf(['debug', 'info', 'warn', 'error', 'silent'], 'info')),
    hashKey: setting('LOG_HASH_KEY', optionalSecret),
  },
  metrics: {
    token: setting('METRICS_TOKEN', optionalSecret),
    // On a listener of its own by default (9464, OpenTelemetry's Prometheus port): its labels name every client id,
    // which no anonymous caller of the API port should learn. 0: on the API port.
    port: setting('METRICS_PORT', int(0, 65535, 9464)),
    // Loopback by default, as OpenTelemetry's Prometheus exporter: a container or a pod sets 0.0.0.0 to be scraped.
    host: setting('METRICS_HOST', textOr('127.0.0.1')),
  },
  shutdownTimeoutSeconds: setting('SHUTDOWN_TIMEOUT_SECONDS', int(0, 600, 10)),
  /** Bounds an outsider can push against (docs/security.md). */
  http: {
    maxBodyBytes: setting('REQUEST_MAX_BODY_BYTES', int(256, 1024 ** 2, 4096)),
    headersTimeoutSeconds: setting('HTTP_HEADERS_TIMEOUT_SECONDS', int(1, 600, 10)),
    requestTimeoutSeconds: setting('HTTP_REQUEST_TIMEOUT_SECONDS', int(1, 3600, 30)),
    maxConnections: setting('HTTP_MAX_CONNECTIONS', int(1, 1_000_000, 10_000)),
  },
  login: {
    failuresPerClient: setting('LOGIN_FAILURES_PER_CLIENT', int(1, 10_000, 5)),
    failuresPerAddress: setting('LOGIN_FAILURES_PER_ADDRESS', int(1, 100_000, 20)),
    failureWindowSeconds: setting('LOGIN_FAILURE_WINDOW_SECONDS', int(1, 86_400, 900)),
  },
  // While the phone rings (docs/pbx.md): the CNAM route's deadline, the plain-text caller name, batches.
  cnam: {
    /** A ringing phone's wait, not the upstream's: shorter than UPSTREAM_TIMEOUT_MS by default. */
    deadlineMs: setting('CNAM_DEADLINE_MS', int(0, 60_000, 1000)),
    maxLength: setting('CNAM_MAX_LENGTH', int(1, 255, 15)),
    fallback: setting(
      'CNAM_FALLBACK',
      z._default(
        z
          .string()
          .check(z.refine((v) => /^[\x20-\x7e]{0,64}$/.test(v), 'must be at most 64 printable ASCII characters')),
        '',
      ),
    ),
  },
  batch: { maxNumbers: setting('BATCH_MAX_NUMBERS', int(1, 1000, 100)) },
  docs: { enabled: setting('DOCS_ENABLED', flag('true', 'false', true)) },
  tracing: TRACING_SETTINGS,
};

const settings = settingsReader(SETTINGS);

/** Every variable the configuration reads. */
export const SETTING_NAMES: readonly string[] = settings.names;

/**
 * Names the gateway no longer reads, each with where its job went. One of them set stops the start with that line:
 * silently ignoring it would change the deployment's behaviour without a word.
 */
export const RETIRED_SETTINGS: Readonly<Record<string, string>> = {
  CONSOLE_RATE_KEY_PREFIX: "is no longer read: the console limits' keys sit under REDIS_KEY_PREFIX",
  CONSOLE_UPSTREAM_QUOTA_PER_DAY: `is no longer read: give the console's quota as console:N in CLIENT_UPSTREAM_QUOTAS (default ${CONSOLE_QUOTA_PER_DAY})`,
  CONSOLE_RATE_ON_STORE_ERROR: 'is no longer read: use LIMITS_ON_STORE_ERROR (the console limits, quotas and budget)',
  QUOTA_ON_STORE_ERROR: 'is no longer read: use LIMITS_ON_STORE_ERROR (the console limits, quotas and budget)',
  ...Object.fromEntries(
    [
      'UPSTREAM_RESULTS_PATH',
      'UPSTREAM_PROVIDER_PATH',
      'UPSTREAM_TOTAL_PATH',
      'UPSTREAM_PROVIDER_NAME_PATH',
      'UPSTREAM_DISPLAY_NAME_PATH',
    ].map((name) => [
      name,
      "is no longer read: the gateway reads the upstream's one search body at fixed places (docs/configuration.md)",
    ]),
  ),
  LOOKUP_DEADLINE_MS:
    'is no longer read: a search waits up to UPSTREAM_TIMEOUT_MS unless its caller sends Prefer: wait=N',
  CACHE_SHARED_FILL_WAIT_MS: "is no longer read: a miss waits up to UPSTREAM_TIMEOUT_MS for another replica's fill",
};

/**
 * The validated configuration, typed from the table of settings through {@link parseConfig}: one source, no
 * hand-written copy of its shape.
 */
export type Config = ReturnType<typeof parseConfig>;
/** The cost guard (docs/cost-control.md). */
export type GuardConfig = Config['guard'];
/** OpenTelemetry tracing; null in {@link Config} when it is off. */
export type TracingConfig = NonNullable<Config['tracing']>;

/** How the gateway reaches Redis: one server (or a proxy), a primary behind Sentinels, or a Cluster. */
export type RedisTarget =
  | { kind: 'url'; url: string }
  | {
      kind: 'sentinel';
      sentinels: { host: string; port: number }[];
      masterName: string;
      /** The Sentinels' own credentials (REDIS_SENTINEL_USERNAME, REDIS_SENTINEL_PASSWORD), when they want any. */
      username: string | undefined;
      password: string | undefined;
    }
  | { kind: 'cluster'; nodes: { host: string; port: number }[] };

export interface RedisConnection {
  target: RedisTarget;
  /** ACL user and password (REDIS_USERNAME, REDIS_PASSWORD); with REDIS_URL they may also be in the URL. */
  username: string | undefined;
  password: string | undefined;
  /** TLS to Redis: `rediss://` or REDIS_TLS=true; `caFile` adds a CA (REDIS_TLS_CA_FILE) to the system's. */
  tls: { caFile: string | undefined } | null;
}

type RedisSettings = SettingValues<typeof SETTINGS.redis.connection>;

/** Exactly one of REDIS_URL, REDIS_SENTINELS (with REDIS_SENTINEL_MASTER), REDIS_CLUSTER_NODES, or none of them. */
function redisConnectionOf(r: RedisSettings, problems: ConfigProblem[]): RedisConnection | null {
  const ways = (
    [
      ['REDIS_URL', r.url],
      ['REDIS_SENTINELS', r.sentinels],
      ['REDIS_CLUSTER_NODES', r.clusterNodes],
    ] as const
  )
    .filter(([, value]) => value !== undefined)
    .map(([name]) => name);
  if (ways.length > 1) {
    problems.push({
      variable: ways[1]!,
      problem: `set only one of REDIS_URL, REDIS_SENTINELS, REDIS_CLUSTER_NODES (${ways.join(' and ')} are set)`,
    });
    return null;
  }
  if (r.sentinels !== undefined && r.sentinelMaster === undefined) {
    problems.push({
      variable: 'REDIS_SENTINEL_MASTER',
      problem: "is required with REDIS_SENTINELS (the master's name)",
    });
    return null;
  }
  const sentinelOnly = (
    [
      ['REDIS_SENTINEL_MASTER', r.sentinelMaster],
      ['REDIS_SENTINEL_USERNAME', r.sentinelUsername],
      ['REDIS_SENTINEL_PASSWORD', r.sentinelPassword],
    ] as const
  ).find(([, value]) => value !== undefined);
  if (sentinelOnly !== undefined && r.sentinels === undefined) {
    problems.push({ variable: sentinelOnly[0], problem: 'is only read with REDIS_SENTINELS (host:port,...)' });
    return null;
  }
  const tlsWanted = r.tls || r.url?.startsWith('rediss://') === true;
  if (r.tlsCaFile !== undefined && !tlsWanted) {
    problems.push({
      variable: 'REDIS_TLS_CA_FILE',
      problem: 'is only read with REDIS_TLS=true or a rediss:// REDIS_URL',
    });
    return null;
  }
  const target: RedisTarget | null = r.url
    ? { kind: 'url', url: r.url }
    : r.sentinels
      ? {
          kind: 'sentinel',
          sentinels: r.sentinels,
          masterName: r.sentinelMaster!,
          username: r.sentinelUsername,
          password: r.sentinelPassword,
        }
      : r.clusterNodes
        ? { kind: 'cluster', nodes: r.clusterNodes }
        : null;
  if (target === null) {
    const stray = (
      [
        ['REDIS_USERNAME', r.username],
        ['REDIS_PASSWORD', r.password],
        ['REDIS_TLS_CA_FILE', r.tlsCaFile],
      ] as const
    ).find(([, value]) => value !== undefined);
    if (stray !== undefined || r.tls) {
      problems.push({
        variable: stray?.[0] ?? 'REDIS_TLS',
        problem: 'is only read with REDIS_URL, REDIS_SENTINELS or REDIS_CLUSTER_NODES',
      });
    }
    return null;
  }
  return {
    target,
    username: r.username,
    password: r.password,
    tls: tlsWanted ? { caFile: r.tlsCaFile } : null,
  };
}

/** Validates `env`; throws a {@link ConfigError} naming every wrong variable. */
/** What the configuration requires besides valid values; Workers have no demo mode, so there the upstream is required. */
export interface ParseOptions {
  /** The four UPSTREAM_* variables (and so the gateway's own token secret and clients) must be set. */
  upstreamRequired?: boolean;
  /**
   * Why PUBLIC_BASE_URL is required (`NODE_ENV=production` on Node, always on Workers), when it is: the issuer of
   * the OAuth metadata must not come from the request.
   */
  publicBaseUrlRequiredBy?: string;
}

const UPSTREAM_VARS = ['UPSTREAM_AUTH_URL', 'UPSTREAM_BASE_URL', 'UPSTREAM_CLIENT_ID', 'UPSTREAM_CLIENT_SECRET'];

/**
 * Required settings that are missing, judged by `has` (the raw input when a value is wrong, the read values
 * otherwise), so a start names every missing setting beside every wrong one.
 */
function missingSettings(has: (name: string) => boolean, options: ParseOptions): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const present = UPSTREAM_VARS.filter(has);
  const required = options.upstreamRequired === true;
  if (required || (present.length > 0 && present.length < UPSTREAM_VARS.length)) {
    for (const missing of UPSTREAM_VARS.filter((name) => !has(name))) {
      problems.push({
        variable: missing,
        problem:
          present.length === 0
            ? 'is required (all four upstream variables; demo mode is Node only)'
            : `is required when ${present.join(', ')} ${present.length > 1 ? 'are' : 'is'} set (all four upstream variables${required ? '' : ', or none for demo mode'})`,
      });
    }
  }
  if (required || present.length === UPSTREAM_VARS.length) {
    if (!has('GATEWAY_TOKEN_SECRET'))
      problems.push({
        variable: 'GATEWAY_TOKEN_SECRET',
        problem: 'is required (at least 32 bytes) when an upstream is configured',
      });
    if (options.publicBaseUrlRequiredBy !== undefined && !has('PUBLIC_BASE_URL'))
      problems.push({
        variable: 'PUBLIC_BASE_URL',
        problem: `is required ${options.publicBaseUrlRequiredBy}: the base URL clients reach the gateway at, its OAuth issuer (e.g. https://callerid.example.com)`,
      });
    if (!has('GATEWAY_CLIENTS') && !has('GATEWAY_CLIENTS_FILE') && !has('GATEWAY_CLIENTS_JSON'))
      problems.push({
        variable: 'GATEWAY_CLIENTS',
        problem: 'must list at least one internal client (id:sha256hex), or set GATEWAY_CLIENTS_FILE',
      });
  }
  return problems;
}

/** The clients come from one place: the file, or GATEWAY_CLIENTS and GATEWAY_ADMIN_CLIENTS. */
function clientSourceConflicts(v: SettingValues<typeof SETTINGS>): ConfigProblem[] {
  if (v.clientsFile === undefined) return [];
  const also = (
    [
      ['GATEWAY_CLIENTS', v.clients.size > 0],
      ['GATEWAY_ADMIN_CLIENTS', v.adminClients.size > 0],
    ] as const
  ).filter(([, set]) => set);
  return also.map(([variable]) => ({
    variable,
    problem: 'is set beside GATEWAY_CLIENTS_FILE: give every client and its admin flag in the file alone',
  }));
}

/** Validates `env`; throws a {@link ConfigError} naming every wrong, missing or retired variable at once. */
export function parseConfig(env: EnvSource, options: ParseOptions = {}) {
  const retired = Object.keys(RETIRED_SETTINGS)
    .filter((name) => env[name] !== undefined && env[name] !== '')
    .map((name) => ({ variable: name, problem: RETIRED_SETTINGS[name]! }));
  const read = settings.read(env);
  if (!read.ok || retired.length > 0) {
    const wrong = read.ok ? [] : read.problems;
    const named = new Set(wrong.map((p) => p.variable));
    // A wrong value is not a missing one: only what is absent altogether is added.
    const missing = missingSettings((name) => (env[name] ?? '') !== '' || named.has(name), options);
    throw configErrorOf([...retired, ...wrong, ...missing]);
  }
  const v = read.values;
  const u = v.upstream;
  const values: Record<string, unknown> = {
    UPSTREAM_AUTH_URL: u.authUrl,
    UPSTREAM_BASE_URL: u.baseUrl,
    UPSTREAM_CLIENT_ID: u.clientId,
    UPSTREAM_CLIENT_SECRET: u.clientSecret,
    GATEWAY_TOKEN_SECRET: v.gatewayTokens.secret,
    PUBLIC_BASE_URL: v.publicBaseUrl,
    GATEWAY_CLIENTS_FILE: v.clientsFile,
    GATEWAY_CLIENTS_JSON: env.GATEWAY_CLIENTS_JSON || undefined,
  };
  const problems: ConfigProblem[] = missingSettings(
    (name) => (name === 'GATEWAY_CLIENTS' ? v.clients.size > 0 : values[name] !== undefined),
    options,
  );
  // Null unless all four upstream variables are set: demo mode (Node only), or a start refused below.
  const upstream =
    u.authUrl !== undefined && u.baseUrl !== undefined && u.clientId !== undefined && u.clientSecret !== undefined
      ? { ...u, authUrl: u.authUrl, baseUrl: u.baseUrl, clientId: u.clientId, clientSecret: u.clientSecret }
      : null;
  for (const [variable, ids] of [
    ['GATEWAY_CLIENTS', [...v.clients.keys()]],
    ['GATEWAY_ADMIN_CLIENTS', [...v.adminClients]],
  ] as const) {
    const reserved = ids.filter((id) => RESERVED_CLIENT_IDS.includes(id));
    if (reserved.length > 0) {
      problems.push({
        variable,
        problem: `${reserved.map((id) => `"${id}"`).join(', ')} ${reserved.length > 1 ? 'are ids' : 'is an id'} the gateway reserves for itself (${RESERVED_CLIENT_IDS.join(', ')}): choose another client id`,
      });
    }
  }
  problems.push(...clientSourceConflicts(v));
  const unknownQuota = [...v.guard.quotas.keys()].find((id) => id !== 'console' && !v.clients.has(id));
  if (unknownQuota !== undefined && v.clients.size > 0) {
    problems.push({
      variable: 'CLIENT_UPSTREAM_QUOTAS',
      problem: `"${unknownQuota}" is neither a client id in GATEWAY_CLIENTS nor "console"`,
    });
  }
  const unknownAdmin = [...v.adminClients].find((id) => !v.clients.has(id));
  if (unknownAdmin !== undefined && v.clients.size > 0) {
    problems.push({
      variable: 'GATEWAY_ADMIN_CLIENTS',
      problem: `"${unknownAdmin}" is not a client id in GATEWAY_CLIENTS`,
    });
  }
  const connection = redisConnectionOf(v.redis.connection, problems);
  // Node refuses a headers timeout longer than the whole-request timeout.
  if (v.http.headersTimeoutSeconds > v.http.requestTimeoutSeconds) {
    problems.push({
      variable: 'HTTP_HEADERS_TIMEOUT_SECONDS',
      problem: `must be at most HTTP_REQUEST_TIMEOUT_SECONDS (${v.http.requestTimeoutSeconds})`,
    });
  }
  if (v.guard.cooldownSeconds > v.guard.cooldownMaxSeconds) {
    problems.push({
      variable: 'UPSTREAM_COOLDOWN_SECONDS',
      problem: `must be at most UPSTREAM_COOLDOWN_MAX_SECONDS (${v.guard.cooldownMaxSeconds})`,
    });
  }
  const tracing = tracingConfigOf(v.tracing, problems);
  if (problems.length > 0) throw configErrorOf(problems);

  return {
    ...v,
    upstream,
    tracing,
    redis: { ...v.redis, connection },
    /**
     * The bound of one call to a shared store (token, lookup tier, counters): REDIS_TIMEOUT_MS on Node, where the
     * stores are Redis; the Worker's settings set DURABLE_OBJECT_TIMEOUT_MS here.
     */
    sharedStoreTimeoutMs: v.redis.timeoutMs,
  };
}
