// Shared state in Redis (docs/configuration.md, "Redis"): one server, a primary behind Sentinels, or a Cluster, with
// its credentials, TLS, key prefix and timeout; the connection is resolved after reading (exactly one way, or none).
import * as z from 'zod/mini';
import {
  commaList,
  flag,
  int,
  optionalText,
  setting,
  text,
  type ConfigProblem,
  type SettingValues,
} from './settings-table.js';

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

const keyPrefix = text(z.regex(/^[A-Za-z0-9:._-]{1,64}$/, 'must be 1-64 of A-Z a-z 0-9 : . _ -'));

/** Shared state in Redis; `connection` is resolved into one {@link RedisConnection} (or null) after reading. */
export const REDIS_SETTINGS = {
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
};

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

type RedisSettings = SettingValues<typeof REDIS_SETTINGS.redis.connection>;

/** Exactly one of REDIS_URL, REDIS_SENTINELS (with REDIS_SENTINEL_MASTER), REDIS_CLUSTER_NODES, or none of them. */
export function redisConnectionOf(r: RedisSettings, problems: ConfigProblem[]): RedisConnection | null {
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
