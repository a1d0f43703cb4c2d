// The ioredis client of one server, of a primary behind Sentinels or of a Cluster, set to fail fast while Redis is away.
import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { RedisConnection } from '../../config/config.js';

/** A standalone or Sentinel-managed client, or a Cluster: the commands the stores send are the same on both. */
export type RedisClient = Redis | Cluster;

export interface ConnectionTimes {
  /** Fail a command that got no answer after this long (a Redis that accepts but hangs). Default 500; REDIS_TIMEOUT_MS. */
  commandTimeoutMs?: number;
  connectTimeoutMs?: number;
}

export function connectionSettings(connection: RedisConnection, options: ConnectionTimes): RedisOptions {
  const tls: ConnectionOptions | undefined = connection.tls
    ? connection.tls.caFile
      ? { ca: [readFileSync(connection.tls.caFile, 'utf8')] }
      : {}
    : undefined;
  return {
    ...(connection.username !== undefined ? { username: connection.username } : {}),
    ...(connection.password !== undefined ? { password: connection.password } : {}),
    ...(tls ? { tls } : {}),
    // Not connected: fail at once (the store's fallback decides) rather than queue behind a reconnect.
    enableOfflineQueue: false,
    connectTimeout: options.connectTimeoutMs ?? 1000,
    commandTimeout: options.commandTimeoutMs ?? 500,
    maxRetriesPerRequest: 1,
    // Keep trying in the background, at most every 2 s, so sharing comes back by itself.
    retryStrategy: (times) => Math.min(times * 200, 2000),
    // Connected by createNodeRedis once its hooks are on (see unneeded-password.ts).
    lazyConnect: true,
  };
}

export function createClient(connection: RedisConnection, settings: RedisOptions): RedisClient {
  const { target } = connection;
  if (target.kind === 'url') return new Redis(target.url, settings);
  if (target.kind === 'sentinel') {
    return new Redis({
      ...settings,
      sentinels: target.sentinels,
      name: target.masterName,
      role: 'master',
      ...(target.username !== undefined ? { sentinelUsername: target.username } : {}),
      ...(target.password !== undefined ? { sentinelPassword: target.password } : {}),
      // TLS to the primary found through the Sentinels, and to the Sentinels themselves.
      ...(settings.tls ? { enableTLSForSentinelMode: true, sentinelTLS: settings.tls } : {}),
      // Told by the Sentinels of a promotion at once, rather than when the old primary's connection fails.
      failoverDetector: true,
      sentinelRetryStrategy: (times) => Math.min(times * 200, 2000),
    });
  }
  const cluster: ClusterOptions = {
    redisOptions: clusterNodeSettings(settings),
    enableOfflineQueue: false,
    clusterRetryStrategy: (times) => Math.min(times * 200, 2000),
    // Reads on the masters only: a replica may lag behind a lease or a count.
    scaleReads: 'master',
    // A failover moves slots: ask again soon, and not for longer than a command may take.
    retryDelayOnFailover: 100,
    retryDelayOnClusterDown: 100,
    retryDelayOnTryAgain: 100,
    slotsRefreshTimeout: Math.max(500, settings.commandTimeout ?? 500),
    lazyConnect: true,
  };
  return new Cluster(target.nodes, cluster);
}

/** A cluster node's connection settings: reconnecting and queueing are the Cluster's own. */
export function clusterNodeSettings(settings: RedisOptions): RedisOptions {
  const { retryStrategy: _retry, enableOfflineQueue: _queue, ...node } = settings;
  return node;
}
