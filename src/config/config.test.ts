import { readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig, RESERVED_CLIENT_IDS, RETIRED_SETTINGS, SETTING_NAMES } from './config.js';
import { CONSOLE_CLIENT } from '../guard/cost-guard.js';
import { UNNAMED_CALLER } from '../lookup/lookup-cache.js';
import { readWorkerSettings } from '../runtime/workers/settings.js';

const full = {
  UPSTREAM_AUTH_URL: 'https://auth.example.test/',
  UPSTREAM_BASE_URL: 'https://api.example.test',
  UPSTREAM_CLIENT_ID: 'gw',
  UPSTREAM_CLIENT_SECRET: 'upstream-secret',
  GATEWAY_TOKEN_SECRET: 'x'.repeat(32),
  GATEWAY_CLIENTS: `crm:${'a'.repeat(64)},pbx:${'B'.repeat(64)}`,
};
/** What a Worker needs besides: its issuer, which it never takes from a request. */
const workerFull = { ...full, PUBLIC_BASE_URL: 'https://callerid.example.com' };

function errorOf(env: Record<string, string>): ConfigError {
  try {
    parseConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('configuration', () => {
  it('reads a full upstream configuration with defaults', () => {
    const c = parseConfig(full);
    expect(c.upstream).toMatchObject({
      authUrl: 'https://auth.example.test',
      clientId: 'gw',
      timeoutMs: 3000,
      expiresInUnit: 'seconds',
    });
    expect(c.port).toBe(8080);
    expect(c.host).toBe('0.0.0.0');
    expect(c.gatewayTokens.ttlSeconds).toBe(90000);
    expect([...c.clients.keys()]).toEqual(['crm', 'pbx']);
    expect(c.clients.get('pbx')).toBe('b'.repeat(64));
    expect(c.trustProxyHops).toBe(0);
  });

  it("reads the shared tier's entry bound", () => {
    expect(parseConfig(full).sharedCache).toEqual({ maxEntryBytes: 262_144 });
    expect(parseConfig({ ...full, CACHE_SHARED_MAX_ENTRY_BYTES: '4096' }).sharedCache).toEqual({
      maxEntryBytes: 4096,
    });
    expect(() => parseConfig({ ...full, CACHE_SHARED_MAX_ENTRY_BYTES: '10' })).toThrow(
      /CACHE_SHARED_MAX_ENTRY_BYTES: must be a whole number from 1024 to /,
    );
  });

  it('is demo mode when no upstream variable is set', () => {
    expect(parseConfig({}).upstream).toBeNull();
  });

  it.each([
    [{ ...full, UPSTREAM_CLIENT_SECRET: '' }, 'UPSTREAM_CLIENT_SECRET', /required/],
    [
      { UPSTREAM_AUTH_URL: 'https://a.test', UPSTREAM_CLIENT_ID: 'gw', UPSTREAM_CLIENT_SECRET: 's' },
      'UPSTREAM_BASE_URL',
      /required/,
    ],
    [{ ...full, UPSTREAM_BASE_URL: 'ftp://x' }, 'UPSTREAM_BASE_URL', /http/],
    [{ ...full, PORT: 'eighty' }, 'PORT', /whole number/],
    [{ ...full, PORT: '70000' }, 'PORT', /must be a whole number from 0 to 65535/],
    [{ ...full, UPSTREAM_TIMEOUT_MS: '-5' }, 'UPSTREAM_TIMEOUT_MS', /must be a whole number from 50 to 60000/],
    [{ ...full, GATEWAY_TOKEN_SECRET: 'short' }, 'GATEWAY_TOKEN_SECRET', /32 bytes/],
    [{ ...full, GATEWAY_TOKEN_SECRET: '' }, 'GATEWAY_TOKEN_SECRET', /required/],
    [{ ...full, GATEWAY_CLIENTS: 'crm:nothex' }, 'GATEWAY_CLIENTS', /sha256hex/],
    [{ ...full, GATEWAY_CLIENTS: '' }, 'GATEWAY_CLIENTS', /at least one/],
    [{ ...full, DEFAULT_REGION: 'XX' }, 'DEFAULT_REGION', /region/],
    [{ ...full, GATEWAY_ADMIN_CLIENTS: 'nobody' }, 'GATEWAY_ADMIN_CLIENTS', /not a client id/],
    [{ ...full, UPSTREAM_TOKEN_EXPIRES_IN_UNIT: 'hours' }, 'UPSTREAM_TOKEN_EXPIRES_IN_UNIT', /one of/],
  ])('stops with one line naming the variable (%#)', (env, variable, problem) => {
    const err = errorOf(env as Record<string, string>);
    expect(err.variable).toBe(variable);
    expect(err.message).toMatch(problem);
    expect(err.message).toContain(variable);
    expect(err.message).not.toContain('\n');
    expect(err.message).not.toContain('upstream-secret');
  });

  it('reports every wrong setting at once, one line each', () => {
    const err = errorOf({ ...full, LOG_LEVEL: 'verbose', CACHE_TTL_SECONDS: 'abc' });
    expect(err.problems.map((p) => p.variable).sort()).toEqual(['CACHE_TTL_SECONDS', 'LOG_LEVEL']);
    const lines = err.message.split('\n');
    expect(lines).toHaveLength(2);
    expect(lines).toContain('configuration error: LOG_LEVEL: must be one of debug, info, warn, error, silent');
    expect(lines).toContain('configuration error: CACHE_TTL_SECONDS: must be a whole number from 0 to 31536000');
  });

  it('names every missing upstream variable, and every wrong cross-field setting, at once', () => {
    const err = errorOf({
      UPSTREAM_AUTH_URL: 'https://a.test',
      GATEWAY_TOKEN_SECRET: 'x'.repeat(32),
      GATEWAY_CLIENTS: `crm:${'a'.repeat(64)}`,
      GATEWAY_ADMIN_CLIENTS: 'nobody',
    });
    expect(err.problems.map((p) => p.variable)).toEqual([
      'UPSTREAM_BASE_URL',
      'UPSTREAM_CLIENT_ID',
      'UPSTREAM_CLIENT_SECRET',
      'GATEWAY_ADMIN_CLIENTS',
    ]);
  });

  it('refuses the ids the gateway reserves for itself in GATEWAY_CLIENTS and GATEWAY_ADMIN_CLIENTS, one line each', () => {
    const err = errorOf({
      ...full,
      GATEWAY_CLIENTS: `crm:${'a'.repeat(64)},console:${'c'.repeat(64)},gateway:${'d'.repeat(64)}`,
      GATEWAY_ADMIN_CLIENTS: 'console',
    });
    expect(err.message.split('\n')).toEqual([
      'configuration error: GATEWAY_CLIENTS: "console", "gateway" are ids the gateway reserves for itself (console, gateway): choose another client id',
      'configuration error: GATEWAY_ADMIN_CLIENTS: "console" is an id the gateway reserves for itself (console, gateway): choose another client id',
    ]);
  });

  it('reserves every caller id the gateway itself uses', () => {
    expect(RESERVED_CLIENT_IDS).toContain(CONSOLE_CLIENT);
    expect(RESERVED_CLIENT_IDS).toContain(CONSOLE_CLIENT);
    expect(RESERVED_CLIENT_IDS).toContain(UNNAMED_CALLER.client);
  });

  it('refuses a headers timeout longer than the request timeout', () => {
    const err = errorOf({ ...full, HTTP_HEADERS_TIMEOUT_SECONDS: '60', HTTP_REQUEST_TIMEOUT_SECONDS: '30' });
    expect(err.variable).toBe('HTTP_HEADERS_TIMEOUT_SECONDS');
  });

  it('reads PUBLIC_BASE_URL as an issuer identifier: unset by default, a trailing slash dropped, no query, fragment or credentials', () => {
    expect(parseConfig(full).publicBaseUrl).toBeUndefined();
    expect(parseConfig({ ...full, PUBLIC_BASE_URL: ' https://callerid.example.com/ ' }).publicBaseUrl).toBe(
      'https://callerid.example.com',
    );
    expect(parseConfig({ ...full, PUBLIC_BASE_URL: 'https://example.com/callerid/' }).publicBaseUrl).toBe(
      'https://example.com/callerid',
    );
    for (const wrong of [
      'callerid.example.com',
      'ftp://example.com',
      'https://example.com/?a=1',
      'https://example.com#x',
      'https://u:p@example.com',
    ]) {
      const err = errorOf({ ...full, PUBLIC_BASE_URL: wrong });
      expect(err.variable, wrong).toBe('PUBLIC_BASE_URL');
      expect(err.problems, wrong).toHaveLength(1);
    }
  });

  it('accepts config/example.env as node --env-file reads it, once the commented secrets are filled in', () => {
    const example = parseEnv(readFileSync(new URL('../../config/example.env', import.meta.url), 'utf8')) as Record<
      string,
      string
    >;
    const config = parseConfig({
      ...example,
      UPSTREAM_CLIENT_SECRET: 's',
      GATEWAY_TOKEN_SECRET: 'x'.repeat(32),
      GATEWAY_CLIENTS: `crm:${'a'.repeat(64)}`,
    });
    expect(config.http).toEqual({
      maxBodyBytes: 4096,
      headersTimeoutSeconds: 10,
      requestTimeoutSeconds: 30,
      maxConnections: 10_000,
    });
    expect(config.upstream?.maxBodyBytes).toBe(1024 * 1024);
  });
});

describe('cost guard configuration', () => {
  it("has the documented defaults: a rate, the console's quota, no client quota, no budget", () => {
    expect(parseConfig(full).guard).toEqual({
      ratePerMinute: 600,
      quotaPerDay: undefined,
      quotas: new Map([['console', 1000]]),
      budgetPerDay: undefined,
      maxConcurrency: 32,
      maxQueue: 256,
      cooldownSeconds: 30,
      cooldownMaxSeconds: 3600,
      breakerFailures: 5,
      breakerOpenSeconds: 10,
      onStoreError: 'memory',
    });
  });

  it('reads quotas, overrides (the console included) and the budget', () => {
    const g = parseConfig({
      ...full,
      CLIENT_UPSTREAM_QUOTA_PER_DAY: '100',
      CLIENT_UPSTREAM_QUOTAS: 'pbx:5, console:0',
      UPSTREAM_BUDGET_PER_DAY: '1000',
      LIMITS_ON_STORE_ERROR: 'closed',
    }).guard;
    expect(g.quotaPerDay).toBe(100);
    expect(g.quotas).toEqual(
      new Map([
        ['pbx', 5],
        ['console', 0],
      ]),
    );
    expect(parseConfig({ ...full, CLIENT_UPSTREAM_QUOTAS: 'console:50' }).guard.quotas).toEqual(
      new Map([['console', 50]]),
    );
    expect(parseConfig({ ...full, CLIENT_UPSTREAM_QUOTAS: 'pbx:5' }).guard.quotas).toEqual(
      new Map([
        ['console', 1000],
        ['pbx', 5],
      ]),
    );
    expect(g.budgetPerDay).toBe(1000);
    expect(g.onStoreError).toBe('closed');
  });

  it.each([
    [{ CLIENT_UPSTREAM_QUOTAS: 'crm=5' }, 'CLIENT_UPSTREAM_QUOTAS', /id:N/],
    [{ CLIENT_UPSTREAM_QUOTAS: 'nobody:5' }, 'CLIENT_UPSTREAM_QUOTAS', /"nobody" is neither/],
    [{ UPSTREAM_BUDGET_PER_DAY: '-1' }, 'UPSTREAM_BUDGET_PER_DAY', /whole number/],
    [{ UPSTREAM_MAX_CONCURRENCY: '0' }, 'UPSTREAM_MAX_CONCURRENCY', /must be a whole number from 1 to /],
    [{ LIMITS_ON_STORE_ERROR: 'maybe' }, 'LIMITS_ON_STORE_ERROR', /memory, open, closed/],
  ])('refuses %o naming %s', (env, variable, problem) => {
    const err = errorOf({ ...full, ...env });
    expect(err.variable).toBe(variable);
    expect(err.message).toMatch(problem);
  });
});

describe('configuration of the PBX routes', () => {
  it('takes the upstream timeout as given and defaults the CNAM route to a 15-character name within 1 s', () => {
    const c = parseConfig({ ...full, UPSTREAM_TIMEOUT_MS: '2500' });
    expect(c.upstream?.timeoutMs).toBe(2500);
    expect(c.cnam).toEqual({ deadlineMs: 1000, maxLength: 15, fallback: '' });
    expect(c.batch).toEqual({ maxNumbers: 100 });
  });

  it('reads CNAM_* and BATCH_MAX_NUMBERS', () => {
    const c = parseConfig({
      ...full,
      CNAM_DEADLINE_MS: '800',
      CNAM_FALLBACK: 'Unknown caller',
      CNAM_MAX_LENGTH: '20',
      BATCH_MAX_NUMBERS: '10',
    });
    expect(c.cnam.deadlineMs).toBe(800);
    expect(c.cnam.fallback).toBe('Unknown caller');
    expect(c.cnam.maxLength).toBe(20);
    expect(c.batch.maxNumbers).toBe(10);
  });

  it('refuses a CNAM_FALLBACK that is not printable ASCII, and a BATCH_MAX_NUMBERS of 0', () => {
    expect(errorOf({ ...full, CNAM_FALLBACK: 'Unbekannt – ß' }).message).toMatch(/CNAM_FALLBACK/);
    expect(errorOf({ ...full, BATCH_MAX_NUMBERS: '0' }).message).toMatch(/BATCH_MAX_NUMBERS/);
  });
});

describe('configuration of Redis', () => {
  it('reads one of the three ways to reach Redis, with the ACL user, password and TLS for each', () => {
    expect(parseConfig(full).redis.connection).toBeNull();
    expect(parseConfig({ ...full, REDIS_URL: 'rediss://r:6380' }).redis.connection).toEqual({
      target: { kind: 'url', url: 'rediss://r:6380' },
      username: undefined,
      password: undefined,
      tls: { caFile: undefined },
    });
    expect(
      parseConfig({
        ...full,
        REDIS_SENTINELS: 's1:26379, [::1]:26380',
        REDIS_SENTINEL_MASTER: 'mymaster',
        REDIS_SENTINEL_PASSWORD: 'sentinel-pw',
        REDIS_USERNAME: 'gw',
        REDIS_PASSWORD: 'pw',
        REDIS_TLS: 'true',
        REDIS_TLS_CA_FILE: '/ca.pem',
      }).redis.connection,
    ).toEqual({
      target: {
        kind: 'sentinel',
        sentinels: [
          { host: 's1', port: 26379 },
          { host: '::1', port: 26380 },
        ],
        masterName: 'mymaster',
        username: undefined,
        password: 'sentinel-pw',
      },
      username: 'gw',
      password: 'pw',
      tls: { caFile: '/ca.pem' },
    });
    expect(parseConfig({ ...full, REDIS_CLUSTER_NODES: 'a:7000,b:7001' }).redis.connection?.target).toEqual({
      kind: 'cluster',
      nodes: [
        { host: 'a', port: 7000 },
        { host: 'b', port: 7001 },
      ],
    });
  });

  it('stops the start with one line for a wrong combination', () => {
    for (const [env, variable, words] of [
      [{ REDIS_URL: 'redis://r', REDIS_CLUSTER_NODES: 'a:1' }, 'REDIS_CLUSTER_NODES', 'set only one of'],
      [{ REDIS_SENTINELS: 'a:1' }, 'REDIS_SENTINEL_MASTER', 'is required with REDIS_SENTINELS'],
      [{ REDIS_SENTINEL_MASTER: 'm' }, 'REDIS_SENTINEL_MASTER', 'is only read with REDIS_SENTINELS'],
      [
        { REDIS_URL: 'redis://r', REDIS_SENTINEL_PASSWORD: 'p' },
        'REDIS_SENTINEL_PASSWORD',
        'is only read with REDIS_SENTINELS',
      ],
      [{ REDIS_URL: 'redis://r', REDIS_TLS_CA_FILE: '/ca' }, 'REDIS_TLS_CA_FILE', 'is only read with REDIS_TLS=true'],
      [{ REDIS_PASSWORD: 'x' }, 'REDIS_PASSWORD', 'is only read with REDIS_URL'],
      [{ REDIS_CLUSTER_NODES: 'a' }, 'REDIS_CLUSTER_NODES', 'host:port'],
      [{ REDIS_SENTINELS: 'a:70000', REDIS_SENTINEL_MASTER: 'm' }, 'REDIS_SENTINELS', 'host:port'],
    ] as const) {
      const err = errorOf({ ...full, ...env });
      expect(err.variable).toBe(variable);
      expect(err.message.split('\n')).toHaveLength(1);
      expect(err.message).toContain(words);
    }
  });
});

describe('names the gateway no longer reads', () => {
  it('stops the start with one line per old name, each pointing to what replaced it', () => {
    const err = errorOf({
      ...full,
      CONSOLE_RATE_KEY_PREFIX: 'callerid:console-rl',
      CONSOLE_UPSTREAM_QUOTA_PER_DAY: '50',
      QUOTA_ON_STORE_ERROR: 'closed',
      LOOKUP_DEADLINE_MS: '800',
      CACHE_SHARED_FILL_WAIT_MS: '0',
      UPSTREAM_RESULTS_PATH: 'results',
    });
    expect(err.message.split('\n')).toEqual([
      "configuration error: CONSOLE_RATE_KEY_PREFIX: is no longer read: the console limits' keys sit under REDIS_KEY_PREFIX",
      "configuration error: CONSOLE_UPSTREAM_QUOTA_PER_DAY: is no longer read: give the console's quota as console:N in CLIENT_UPSTREAM_QUOTAS (default 1000)",
      'configuration error: QUOTA_ON_STORE_ERROR: is no longer read: use LIMITS_ON_STORE_ERROR (the console limits, quotas and budget)',
      "configuration error: UPSTREAM_RESULTS_PATH: is no longer read: the gateway reads the upstream's one search body at fixed places (docs/configuration.md)",
      'configuration error: LOOKUP_DEADLINE_MS: is no longer read: a search waits up to UPSTREAM_TIMEOUT_MS unless its caller sends Prefer: wait=N',
      "configuration error: CACHE_SHARED_FILL_WAIT_MS: is no longer read: a miss waits up to UPSTREAM_TIMEOUT_MS for another replica's fill",
    ]);
  });

  it('names them beside the wrong values of current settings, all at once', () => {
    const err = errorOf({ ...full, CONSOLE_RATE_ON_STORE_ERROR: 'open', LOG_LEVEL: 'verbose' });
    expect(err.problems.map((p) => p.variable)).toEqual(['CONSOLE_RATE_ON_STORE_ERROR', 'LOG_LEVEL']);
  });

  it('treats an empty old name as unset, as it does every setting', () => {
    expect(parseConfig({ ...full, CONSOLE_RATE_KEY_PREFIX: '' }).upstream).not.toBeNull();
  });

  it('stops the Worker the same way, from its bindings', () => {
    expect(() => readWorkerSettings({ ...workerFull, CACHE_SHARED_FILL_WAIT_MS: '0' })).toThrow(
      new ConfigError(
        'CACHE_SHARED_FILL_WAIT_MS',
        "is no longer read: a miss waits up to UPSTREAM_TIMEOUT_MS for another replica's fill",
      ),
    );
  });

  it('refuses a Worker without PUBLIC_BASE_URL, naming it', () => {
    expect(() => readWorkerSettings(full)).toThrow(/^configuration error: PUBLIC_BASE_URL: is required on Workers/);
  });

  it('never retires a name that is still read', () => {
    expect(Object.keys(RETIRED_SETTINGS).filter((name) => SETTING_NAMES.includes(name))).toEqual([]);
  });
});

describe("the Worker's own settings", () => {
  it('reads them from the same kind of table, with their defaults', () => {
    const w = readWorkerSettings(workerFull);
    expect([w.durableObjectTimeoutMs, w.lookupCacheHost, w.lookupCacheApi]).toEqual([1000, undefined, true]);
    expect(w.config.sharedStoreTimeoutMs).toBe(1000);
    const set = readWorkerSettings({ ...workerFull, LOOKUP_CACHE_API: 'off', LOOKUP_CACHE_HOST: 'gw.example.com' });
    expect([set.lookupCacheApi, set.lookupCacheHost]).toEqual([false, 'gw.example.com']);
  });

  it('names every wrong one at once, one line each', () => {
    expect(() =>
      readWorkerSettings({ ...workerFull, DURABLE_OBJECT_TIMEOUT_MS: '10', LOOKUP_CACHE_API: 'maybe' }),
    ).toThrow(
      [
        'configuration error: DURABLE_OBJECT_TIMEOUT_MS: must be a whole number from 50 to 30000',
        'configuration error: LOOKUP_CACHE_API: must be one of on, off',
      ].join('\n'),
    );
  });
});
