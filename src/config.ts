// Configuration: the environment names of docs/configuration.md, validated once at start-up into a typed object.
import { isSupportedCountry, type CountryCode } from 'libphonenumber-js/min';
import * as z from 'zod/mini';

export type EnvSource = Record<string, string | undefined>;

export interface ConfigProblem {
  variable: string;
  problem: string;
}

/** Every wrong setting found at once, one line each, so a newcomer fixes them in one go. */
export class ConfigError extends Error {
  /** The first wrong variable. */
  readonly variable: string;
  readonly problems: ConfigProblem[];
  constructor(variable: string, problem: string, more: ConfigProblem[] = []) {
    const problems = [{ variable, problem }, ...more];
    super(problems.map((p) => `configuration error: ${p.variable}: ${p.problem}`).join('\n'));
    this.name = 'ConfigError';
    this.variable = variable;
    this.problems = problems;
  }
}

function configErrorOf(problems: ConfigProblem[]): ConfigError {
  const [first, ...more] = problems;
  return new ConfigError(first!.variable, first!.problem, more);
}

/**
 * Caller ids the gateway uses for itself: `console` (the web console's searches, its quota and metrics label) and
 * `gateway` (reads that name no caller). A registered client under one of them would spend their budgets.
 */
export const RESERVED_CLIENT_IDS: readonly string[] = ['console', 'gateway'];

const UPSTREAM_VARS = [
  'UPSTREAM_AUTH_URL',
  'UPSTREAM_BASE_URL',
  'UPSTREAM_CLIENT_ID',
  'UPSTREAM_CLIENT_SECRET',
] as const;

// zod/mini: the same validation as zod's classic API, but tree-shakable, so the Worker bundle carries only the
// checks used here (the classic API alone was over half of the Worker's bundle).

/** Trimmed text (`z.trim()` overwrites the value before the checks after it). */
const text = (...checks: z.core.$ZodCheck<string>[]) => z.string().check(z.trim(), ...checks);

// One message for every way a number can be wrong: it says what is allowed.
const wholeNumber = (min: number, max: number) => {
  const allowed = `must be a whole number from ${min} to ${max}`;
  return z.pipe(
    z.pipe(text(z.regex(/^\d+$/, allowed)), z.transform(Number)),
    z.int().check(z.gte(min, allowed), z.lte(max, allowed)),
  );
};

/** A whole-number setting from `min` to `max`, `fallback` when unset (the Worker's own settings use it too). */
export const int = (min: number, max: number, fallback: number) => z._default(wholeNumber(min, max), fallback);

const httpUrl = z.pipe(
  text(
    z.refine((v) => URL.canParse(v), 'must be an absolute URL'),
    z.refine((v) => /^https?:\/\//i.test(v), 'must be an http(s) URL'),
  ),
  z.transform((v) => v.replace(/\/+$/, '')),
);

const optionalText = z.pipe(
  z.optional(text()),
  z.transform((v) => (v ? v : undefined)),
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

/** Unset means "no limit". */
const optionalInt = (min: number, max: number) => z.optional(wholeNumber(min, max));

const secretKey = z
  .string()
  .check(z.refine((v) => new TextEncoder().encode(v).length >= 32, 'must be at least 32 bytes'));

/** Trimmed, non-empty text with a default. */
const textOr = (fallback: string) => z._default(text(z.minLength(1)), fallback);

const KEY_PREFIX = text(z.regex(/^[A-Za-z0-9:._-]{1,64}$/, 'must be 1-64 of A-Z a-z 0-9 : . _ -'));

/** Empty means unset. */
const optionalSecret = z.pipe(
  z.optional(z.string()),
  z.transform((v) => (v ? v : undefined)),
);

const schema = z.object({
  PORT: int(0, 65535, 8080),
  HOST: textOr('0.0.0.0'),
  UPSTREAM_AUTH_URL: z.optional(httpUrl),
  UPSTREAM_BASE_URL: z.optional(httpUrl),
  UPSTREAM_CLIENT_ID: optionalText,
  UPSTREAM_CLIENT_SECRET: optionalText,
  UPSTREAM_TIMEOUT_MS: int(50, 60_000, 3000),
  UPSTREAM_TOKEN_EXPIRES_IN_UNIT: z._default(z.enum(['seconds', 'milliseconds']), 'seconds'),
  UPSTREAM_TOKEN_REFRESH_AHEAD_SECONDS: int(0, 86_400, 300),
  UPSTREAM_MAX_BODY_BYTES: int(1024, 256 * 1024 ** 2, 1024 ** 2),
  GATEWAY_TOKEN_SECRET: z.optional(secretKey),
  GATEWAY_TOKEN_PREVIOUS_SECRETS: z.pipe(idList, z.array(secretKey)),
  GATEWAY_CLIENTS: clientList,
  GATEWAY_TOKEN_TTL_SECONDS: int(60, 31_536_000, 90_000),
  GATEWAY_ADMIN_CLIENTS: idList,
  DEFAULT_REGION: z.optional(
    z.pipe(
      text(
        z.toUpperCase(),
        z.refine((v) => isSupportedCountry(v), 'must be an ISO 3166-1 alpha-2 region known to libphonenumber, e.g. CH'),
      ),
      z.transform((v) => v as CountryCode),
    ),
  ),
  CONSOLE_PROVIDER: optionalText,
  CONSOLE_RATE_PER_ADDRESS: int(1, 1_000_000, 10),
  CONSOLE_RATE_TOTAL: int(1, 10_000_000, 300),
  CONSOLE_RATE_WINDOW_SECONDS: int(1, 86_400, 60),
  CONSOLE_RATE_ON_STORE_ERROR: z._default(z.enum(['memory', 'open', 'closed']), 'memory'),
  CONSOLE_RATE_KEY_PREFIX: z._default(KEY_PREFIX, 'callerid:console-rl'),
  RATELIMIT_HEADERS: z._default(z.enum(['draft-11', 'draft-6', 'both']), 'draft-11'),
  UPSTREAM_RESULTS_PATH: textOr('results'),
  UPSTREAM_PROVIDER_PATH: textOr('provider.id'),
  UPSTREAM_TOTAL_PATH: textOr('total'),
  UPSTREAM_PROVIDER_NAME_PATH: textOr('provider.name'),
  REDIS_URL: z.pipe(
    z.optional(text(z.refine((v) => !v || /^rediss?:\/\//.test(v), 'must start with redis:// or rediss://'))),
    z.transform((v) => (v ? v : undefined)),
  ),
  REDIS_SENTINELS: hostPortList,
  REDIS_SENTINEL_MASTER: optionalText,
  REDIS_SENTINEL_USERNAME: optionalText,
  REDIS_SENTINEL_PASSWORD: optionalText,
  REDIS_CLUSTER_NODES: hostPortList,
  REDIS_USERNAME: optionalText,
  REDIS_PASSWORD: optionalText,
  REDIS_TLS: z._default(z.enum(['true', 'false']), 'false'),
  REDIS_TLS_CA_FILE: optionalText,
  REDIS_KEY_PREFIX: z._default(KEY_PREFIX, 'callerid'),
  REDIS_TIMEOUT_MS: int(10, 10_000, 250),
  CLIENT_RATE_PER_MINUTE: int(1, 10_000_000, 600),
  CLIENT_UPSTREAM_QUOTA_PER_DAY: optionalInt(0, 1_000_000_000),
  CLIENT_UPSTREAM_QUOTAS: quotaList,
  CONSOLE_UPSTREAM_QUOTA_PER_DAY: int(0, 1_000_000_000, 1000),
  UPSTREAM_BUDGET_PER_DAY: optionalInt(0, 1_000_000_000),
  UPSTREAM_MAX_CONCURRENCY: int(1, 10_000, 32),
  UPSTREAM_MAX_QUEUE: int(0, 100_000, 256),
  UPSTREAM_COOLDOWN_SECONDS: int(1, 86_400, 30),
  UPSTREAM_COOLDOWN_MAX_SECONDS: int(1, 86_400, 3600),
  UPSTREAM_BREAKER_FAILURES: int(1, 1_000, 5),
  UPSTREAM_BREAKER_OPEN_SECONDS: int(1, 3_600, 10),
  QUOTA_ON_STORE_ERROR: z._default(z.enum(['memory', 'open', 'closed']), 'memory'),
  TRUST_PROXY_HOPS: int(0, 10, 0),
  CACHE_MAX_BYTES: int(1024, 16 * 1024 ** 3, 64 * 1024 ** 2),
  CACHE_TTL_SECONDS: int(0, 31_536_000, 86_400),
  CACHE_NEGATIVE_TTL_SECONDS: int(0, 31_536_000, 3_600),
  CACHE_STALE_WHILE_REVALIDATE_SECONDS: int(0, 86_400, 300),
  CACHE_STALE_IF_ERROR_SECONDS: int(0, 31_536_000, 86_400),
  // -1 stands for "not set": UPSTREAM_TIMEOUT_MS then (resolved below).
  CACHE_SHARED_FILL_WAIT_MS: int(0, 60_000, -1),
  CACHE_SHARED_MAX_ENTRY_BYTES: int(1024, 64 * 1024 ** 2, 256 * 1024),
  LOG_LEVEL: z._default(z.enum(['debug', 'info', 'warn', 'error', 'silent']), 'info'),
  LOG_HASH_KEY: optionalSecret,
  METRICS_TOKEN: optionalSecret,
  METRICS_PORT: int(0, 65535, 0),
  SHUTDOWN_TIMEOUT_SECONDS: int(0, 600, 10),
  REQUEST_MAX_BODY_BYTES: int(256, 1024 ** 2, 4096),
  HTTP_HEADERS_TIMEOUT_SECONDS: int(1, 600, 10),
  HTTP_REQUEST_TIMEOUT_SECONDS: int(1, 3600, 30),
  HTTP_MAX_CONNECTIONS: int(1, 1_000_000, 10_000),
  LOGIN_FAILURES_PER_CLIENT: int(1, 10_000, 5),
  LOGIN_FAILURES_PER_ADDRESS: int(1, 100_000, 20),
  LOGIN_FAILURE_WINDOW_SECONDS: int(1, 86_400, 900),
  // While the phone rings (README "For PBXs"): deadlines, the plain-text caller name, batches.
  LOOKUP_DEADLINE_MS: optionalInt(0, 60_000),
  CNAM_DEADLINE_MS: int(0, 60_000, 1000),
  CNAM_MAX_LENGTH: int(1, 255, 15),
  CNAM_FALLBACK: z._default(
    z.string().check(z.refine((v) => /^[\x20-\x7e]{0,64}$/.test(v), 'must be at most 64 printable ASCII characters')),
    '',
  ),
  UPSTREAM_DISPLAY_NAME_PATH: textOr('displayName'),
  BATCH_MAX_NUMBERS: int(1, 1000, 100),
  DOCS_ENABLED: z._default(z.enum(['true', 'false']), 'true'),
});

/**
 * The validated configuration, typed from the schema through the mapping in {@link parseConfig}: one source, no
 * hand-written copy of its shape.
 */
export type Config = ReturnType<typeof parseConfig>;
/** The upstream's addresses and credentials; null in {@link Config} when none is set (demo mode, Node only). */
export type UpstreamConfig = NonNullable<Config['upstream']>;
/** The cost guard (docs/cost-control.md). */
export type GuardConfig = Config['guard'];

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

type ParsedEnv = z.output<typeof schema>;

/** Exactly one of REDIS_URL, REDIS_SENTINELS (with REDIS_SENTINEL_MASTER), REDIS_CLUSTER_NODES, or none of them. */
function redisConnectionOf(e: ParsedEnv, problems: ConfigProblem[]): RedisConnection | null {
  const ways = (['REDIS_URL', 'REDIS_SENTINELS', 'REDIS_CLUSTER_NODES'] as const).filter(
    (name) => e[name] !== undefined,
  );
  if (ways.length > 1) {
    problems.push({
      variable: ways[1]!,
      problem: `set only one of REDIS_URL, REDIS_SENTINELS, REDIS_CLUSTER_NODES (${ways.join(' and ')} are set)`,
    });
    return null;
  }
  if (e.REDIS_SENTINELS !== undefined && e.REDIS_SENTINEL_MASTER === undefined) {
    problems.push({
      variable: 'REDIS_SENTINEL_MASTER',
      problem: "is required with REDIS_SENTINELS (the master's name)",
    });
    return null;
  }
  const sentinelOnly = (['REDIS_SENTINEL_MASTER', 'REDIS_SENTINEL_USERNAME', 'REDIS_SENTINEL_PASSWORD'] as const).find(
    (n) => e[n] !== undefined,
  );
  if (sentinelOnly !== undefined && e.REDIS_SENTINELS === undefined) {
    problems.push({ variable: sentinelOnly, problem: 'is only read with REDIS_SENTINELS (host:port,...)' });
    return null;
  }
  const tlsWanted = e.REDIS_TLS === 'true' || e.REDIS_URL?.startsWith('rediss://') === true;
  if (e.REDIS_TLS_CA_FILE !== undefined && !tlsWanted) {
    problems.push({
      variable: 'REDIS_TLS_CA_FILE',
      problem: 'is only read with REDIS_TLS=true or a rediss:// REDIS_URL',
    });
    return null;
  }
  const target: RedisTarget | null = e.REDIS_URL
    ? { kind: 'url', url: e.REDIS_URL }
    : e.REDIS_SENTINELS
      ? {
          kind: 'sentinel',
          sentinels: e.REDIS_SENTINELS,
          masterName: e.REDIS_SENTINEL_MASTER!,
          username: e.REDIS_SENTINEL_USERNAME,
          password: e.REDIS_SENTINEL_PASSWORD,
        }
      : e.REDIS_CLUSTER_NODES
        ? { kind: 'cluster', nodes: e.REDIS_CLUSTER_NODES }
        : null;
  if (target === null) {
    const stray = (['REDIS_USERNAME', 'REDIS_PASSWORD', 'REDIS_TLS_CA_FILE'] as const).find((n) => e[n] !== undefined);
    if (stray !== undefined || e.REDIS_TLS === 'true') {
      problems.push({
        variable: stray ?? 'REDIS_TLS',
        problem: 'is only read with REDIS_URL, REDIS_SENTINELS or REDIS_CLUSTER_NODES',
      });
    }
    return null;
  }
  return {
    target,
    username: e.REDIS_USERNAME,
    password: e.REDIS_PASSWORD,
    tls: tlsWanted ? { caFile: e.REDIS_TLS_CA_FILE } : null,
  };
}

/** Every variable the configuration reads. */
export const SETTING_NAMES: readonly string[] = Object.keys(schema.shape);

/** What the configuration requires besides valid values; Workers have no demo mode, so there the upstream is required. */
export interface ParseOptions {
  /** The four UPSTREAM_* variables (and so the gateway's own token secret and clients) must be set. */
  upstreamRequired?: boolean;
}

/**
 * Required settings that are missing, judged by `has` (the raw input when a value is wrong, the parsed values
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
    if (!has('GATEWAY_CLIENTS'))
      problems.push({ variable: 'GATEWAY_CLIENTS', problem: 'must list at least one internal client (id:sha256hex)' });
  }
  return problems;
}

/** Validates `env`; throws a {@link ConfigError} naming every wrong or missing variable. */
export function parseConfig(env: EnvSource, options: ParseOptions = {}) {
  const input: EnvSource = {};
  for (const key of Object.keys(schema.shape)) {
    const value = env[key];
    if (value !== undefined && value !== '') input[key] = value;
  }
  const result = schema.safeParse(input);
  if (!result.success) {
    const problems: ConfigProblem[] = [];
    for (const issue of result.error.issues) {
      const variable = String(issue.path[0] ?? 'environment');
      if (problems.some((p) => p.variable === variable)) continue;
      problems.push({
        variable,
        problem: issue.code === 'invalid_value' ? `must be one of ${issue.values.join(', ')}` : issue.message,
      });
    }
    const wrong = new Set(problems.map((p) => p.variable));
    // A wrong value is not a missing one: only what is absent altogether is added.
    for (const missing of missingSettings((name) => input[name] !== undefined || wrong.has(name), options))
      problems.push(missing);
    throw configErrorOf(problems);
  }
  const e = result.data;
  const problems: ConfigProblem[] = missingSettings(
    (name) => (name === 'GATEWAY_CLIENTS' ? e.GATEWAY_CLIENTS.size > 0 : e[name as keyof ParsedEnv] !== undefined),
    options,
  );
  const present = UPSTREAM_VARS.filter((name) => e[name] !== undefined);
  // Null when not all four upstream variables are set: demo mode (Node only), or a start refused above.
  const upstream =
    present.length !== UPSTREAM_VARS.length
      ? null
      : {
          authUrl: e.UPSTREAM_AUTH_URL!,
          baseUrl: e.UPSTREAM_BASE_URL!,
          clientId: e.UPSTREAM_CLIENT_ID!,
          clientSecret: e.UPSTREAM_CLIENT_SECRET!,
          timeoutMs: e.UPSTREAM_TIMEOUT_MS,
          expiresInUnit: e.UPSTREAM_TOKEN_EXPIRES_IN_UNIT,
          refreshAheadSeconds: e.UPSTREAM_TOKEN_REFRESH_AHEAD_SECONDS,
          /** A bigger search or token answer is a 502, and is not read past this many bytes. */
          maxBodyBytes: e.UPSTREAM_MAX_BODY_BYTES,
        };
  for (const [variable, ids] of [
    ['GATEWAY_CLIENTS', [...e.GATEWAY_CLIENTS.keys()]],
    ['GATEWAY_ADMIN_CLIENTS', e.GATEWAY_ADMIN_CLIENTS],
  ] as const) {
    const reserved = ids.filter((id) => RESERVED_CLIENT_IDS.includes(id));
    if (reserved.length > 0) {
      problems.push({
        variable,
        problem: `${reserved.map((id) => `"${id}"`).join(', ')} ${reserved.length > 1 ? 'are ids' : 'is an id'} the gateway reserves for itself (${RESERVED_CLIENT_IDS.join(', ')}): choose another client id`,
      });
    }
  }
  const unknownQuota = [...e.CLIENT_UPSTREAM_QUOTAS.keys()].find(
    (id) => id !== 'console' && !e.GATEWAY_CLIENTS.has(id),
  );
  if (unknownQuota !== undefined && e.GATEWAY_CLIENTS.size > 0) {
    problems.push({
      variable: 'CLIENT_UPSTREAM_QUOTAS',
      problem: `"${unknownQuota}" is neither a client id in GATEWAY_CLIENTS nor "console"`,
    });
  }
  const unknownAdmin = e.GATEWAY_ADMIN_CLIENTS.find((id) => !e.GATEWAY_CLIENTS.has(id));
  if (unknownAdmin !== undefined && e.GATEWAY_CLIENTS.size > 0) {
    problems.push({
      variable: 'GATEWAY_ADMIN_CLIENTS',
      problem: `"${unknownAdmin}" is not a client id in GATEWAY_CLIENTS`,
    });
  }
  const redisConnection = redisConnectionOf(e, problems);
  // Node refuses a headers timeout longer than the whole-request timeout.
  if (e.HTTP_HEADERS_TIMEOUT_SECONDS > e.HTTP_REQUEST_TIMEOUT_SECONDS) {
    problems.push({
      variable: 'HTTP_HEADERS_TIMEOUT_SECONDS',
      problem: `must be at most HTTP_REQUEST_TIMEOUT_SECONDS (${e.HTTP_REQUEST_TIMEOUT_SECONDS})`,
    });
  }
  if (e.UPSTREAM_COOLDOWN_SECONDS > e.UPSTREAM_COOLDOWN_MAX_SECONDS) {
    problems.push({
      variable: 'UPSTREAM_COOLDOWN_SECONDS',
      problem: `must be at most UPSTREAM_COOLDOWN_MAX_SECONDS (${e.UPSTREAM_COOLDOWN_MAX_SECONDS})`,
    });
  }
  if (problems.length > 0) throw configErrorOf(problems);

  return {
    port: e.PORT,
    host: e.HOST,
    upstream,
    gatewayTokens: {
      /** Undefined only in demo mode before the runtime fills it in. */
      secret: e.GATEWAY_TOKEN_SECRET,
      previousSecrets: e.GATEWAY_TOKEN_PREVIOUS_SECRETS,
      ttlSeconds: e.GATEWAY_TOKEN_TTL_SECONDS,
    },
    /** Client id to lowercase hex SHA-256 of its secret. */
    clients: e.GATEWAY_CLIENTS,
    adminClients: new Set(e.GATEWAY_ADMIN_CLIENTS),
    defaultRegion: e.DEFAULT_REGION,
    console: {
      provider: e.CONSOLE_PROVIDER,
      rate: {
        perAddress: e.CONSOLE_RATE_PER_ADDRESS,
        total: e.CONSOLE_RATE_TOTAL,
        windowSeconds: e.CONSOLE_RATE_WINDOW_SECONDS,
        onStoreError: e.CONSOLE_RATE_ON_STORE_ERROR,
        /** Prefix of the Redis keys, so several deployments can share one Redis. */
        keyPrefix: e.CONSOLE_RATE_KEY_PREFIX,
      },
    },
    /** Where the gateway reads the two things it needs from the upstream's (otherwise opaque) search JSON. */
    upstreamBody: {
      resultsPath: e.UPSTREAM_RESULTS_PATH,
      providerPath: e.UPSTREAM_PROVIDER_PATH,
      totalPath: e.UPSTREAM_TOTAL_PATH,
      providerNamePath: e.UPSTREAM_PROVIDER_NAME_PATH,
    },
    /** Shared state in Redis: how to reach it (null: none), key prefix (several deployments can share one Redis), command timeout. */
    redis: { connection: redisConnection, keyPrefix: e.REDIS_KEY_PREFIX, timeoutMs: e.REDIS_TIMEOUT_MS },
    guard: {
      /** Authenticated searches per registered client per minute, every answer counting. */
      ratePerMinute: e.CLIENT_RATE_PER_MINUTE,
      /** Upstream calls per caller per UTC day: the override of CLIENT_UPSTREAM_QUOTAS, else this default. */
      quotaPerDay: e.CLIENT_UPSTREAM_QUOTA_PER_DAY,
      /** CLIENT_UPSTREAM_QUOTAS, with the console's quota (its `console:N`, else CONSOLE_UPSTREAM_QUOTA_PER_DAY). */
      quotas: new Map([['console', e.CONSOLE_UPSTREAM_QUOTA_PER_DAY], ...e.CLIENT_UPSTREAM_QUOTAS]),
      /** Upstream calls per UTC day for all callers together, the console included. */
      budgetPerDay: e.UPSTREAM_BUDGET_PER_DAY,
      maxConcurrency: e.UPSTREAM_MAX_CONCURRENCY,
      maxQueue: e.UPSTREAM_MAX_QUEUE,
      cooldownSeconds: e.UPSTREAM_COOLDOWN_SECONDS,
      /** The longest pause an upstream Retry-After may impose; longer, non-finite or unreadable values are capped. */
      cooldownMaxSeconds: e.UPSTREAM_COOLDOWN_MAX_SECONDS,
      breakerFailures: e.UPSTREAM_BREAKER_FAILURES,
      breakerOpenSeconds: e.UPSTREAM_BREAKER_OPEN_SECONDS,
      onStoreError: e.QUOTA_ON_STORE_ERROR,
    },
    trustProxyHops: e.TRUST_PROXY_HOPS,
    rateLimitHeaders: e.RATELIMIT_HEADERS,
    cache: {
      maxBytes: e.CACHE_MAX_BYTES,
      ttlSeconds: e.CACHE_TTL_SECONDS,
      negativeTtlSeconds: e.CACHE_NEGATIVE_TTL_SECONDS,
      staleWhileRevalidateSeconds: e.CACHE_STALE_WHILE_REVALIDATE_SECONDS,
      staleIfErrorSeconds: e.CACHE_STALE_IF_ERROR_SECONDS,
    },
    sharedCache: {
      /** How long a miss waits for another replica's upstream call for the same number; default UPSTREAM_TIMEOUT_MS. */
      fillWaitMs: e.CACHE_SHARED_FILL_WAIT_MS < 0 ? e.UPSTREAM_TIMEOUT_MS : e.CACHE_SHARED_FILL_WAIT_MS,
      /** Larger answers are kept per process only, never written to the shared tier. */
      maxEntryBytes: e.CACHE_SHARED_MAX_ENTRY_BYTES,
    },
    log: { level: e.LOG_LEVEL, hashKey: e.LOG_HASH_KEY },
    metrics: { token: e.METRICS_TOKEN, port: e.METRICS_PORT },
    shutdownTimeoutSeconds: e.SHUTDOWN_TIMEOUT_SECONDS,
    /** Bounds an outsider can push against (docs/security.md). */
    http: {
      maxBodyBytes: e.REQUEST_MAX_BODY_BYTES,
      headersTimeoutSeconds: e.HTTP_HEADERS_TIMEOUT_SECONDS,
      requestTimeoutSeconds: e.HTTP_REQUEST_TIMEOUT_SECONDS,
      maxConnections: e.HTTP_MAX_CONNECTIONS,
    },
    login: {
      failuresPerClient: e.LOGIN_FAILURES_PER_CLIENT,
      failuresPerAddress: e.LOGIN_FAILURES_PER_ADDRESS,
      failureWindowSeconds: e.LOGIN_FAILURE_WINDOW_SECONDS,
    },
    lookupDeadlineMs: e.LOOKUP_DEADLINE_MS ?? e.UPSTREAM_TIMEOUT_MS,
    cnam: {
      deadlineMs: e.CNAM_DEADLINE_MS,
      maxLength: e.CNAM_MAX_LENGTH,
      fallback: e.CNAM_FALLBACK,
      displayNamePath: e.UPSTREAM_DISPLAY_NAME_PATH,
    },
    batch: { maxNumbers: e.BATCH_MAX_NUMBERS },
    docs: { enabled: e.DOCS_ENABLED === 'true' },
  };
}
