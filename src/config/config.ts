// Configuration: every setting of docs/configuration.md, one table per concern (*-settings.ts: environment name,
// parser with its default, place in the Config object), validated once at start-up into a typed object, plus the
// checks across settings.
import { configErrorOf, settingsReader, type ConfigProblem, type EnvSource } from './settings-table.js';
import { CLIENT_SETTINGS, clientSourceConflicts, RESERVED_CLIENT_IDS } from './client-settings.js';
import { CONSOLE_SETTINGS } from './console-settings.js';
import { HTTP_SETTINGS } from './http-settings.js';
import { LIMIT_SETTINGS } from './limit-settings.js';
import { LOOKUP_SETTINGS } from './lookup-settings.js';
import { REDIS_SETTINGS, redisConnectionOf } from './redis-settings.js';
import { RETIRED_SETTINGS } from './retired-settings.js';
import { TLS_SETTINGS, tlsConflicts } from './tls-settings.js';
import { TRACING_SETTINGS, tracingConfigOf } from './tracing-settings.js';
import { UPSTREAM_SETTINGS, UPSTREAM_VARS } from './upstream-settings.js';

export { ConfigError, type ConfigProblem, type EnvSource } from './settings-table.js';
export { RESERVED_CLIENT_IDS } from './client-settings.js';
export { RETIRED_SETTINGS } from './retired-settings.js';
export type { RedisConnection, RedisTarget } from './redis-settings.js';

/** Every setting, in the shape of {@link Config}; the comments of each table say what the code does with a value. */
const SETTINGS = {
  ...HTTP_SETTINGS,
  ...UPSTREAM_SETTINGS,
  ...CLIENT_SETTINGS,
  ...CONSOLE_SETTINGS,
  ...LIMIT_SETTINGS,
  ...REDIS_SETTINGS,
  ...LOOKUP_SETTINGS,
  ...TLS_SETTINGS,
  tracing: TRACING_SETTINGS,
};

const settings = settingsReader(SETTINGS);

/** Every variable the configuration reads. */
export const SETTING_NAMES: readonly string[] = settings.names;

/**
 * The validated configuration, typed from the table of settings through {@link parseConfig}: one source, no
 * hand-written copy of its shape.
 */
export type Config = ReturnType<typeof parseConfig>;
/** The cost guard (docs/cost-control.md). */
export type GuardConfig = Config['guard'];
/** OpenTelemetry tracing; null in {@link Config} when it is off. */
export type TracingConfig = NonNullable<Config['tracing']>;

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
  problems.push(...tlsConflicts(v.tls, v.trustProxyHops));
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
