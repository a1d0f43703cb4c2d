// The Node-only Redis client for shared state: one server (REDIS_URL), a primary found through Sentinels
// (REDIS_SENTINELS), or a Cluster (REDIS_CLUSTER_NODES), all through ioredis. Built so that a Redis outage makes a
// command fail within a fraction of a second instead of holding a request, and so that a hung Redis costs one
// timeout: after a command fails, every command on this client fails at once until a background PING answers.
import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import { Cluster, Command, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { RedisConnection } from '../../config.js';
import type { Logger } from '../../observability/logger.js';

/** A standalone or Sentinel-managed client, or a Cluster: the commands the stores send are the same on both. */
export type RedisClient = Redis | Cluster;

export interface NodeRedis {
  client: RedisClient;
  /** Resolves true once connected, false after `timeoutMs`; the gateway starts either way. */
  ready(timeoutMs: number): Promise<boolean>;
  /** Another connection with the same settings (a pub/sub subscriber can send nothing else); closed with this one. */
  duplicate(overrides?: Partial<RedisOptions>): RedisClient;
  close(): Promise<void>;
}

export interface NodeRedisOptions {
  /** Fail a command that got no answer after this long (a Redis that accepts but hangs). Default 500; REDIS_TIMEOUT_MS. */
  commandTimeoutMs?: number;
  connectTimeoutMs?: number;
  /** After a failed command, how often a background PING asks whether Redis answers again. Default 1000. */
  retryAfterMs?: number;
}

/**
 * Replies that are Redis itself not serving (a failover under way, a replica answering, a dataset loading): the
 * client stops asking as after a timeout. Any other error reply (a script's, WRONGTYPE) is about one key or command.
 */
const UNAVAILABLE_REPLY = /^(CLUSTERDOWN|LOADING|READONLY|MASTERDOWN|TRYAGAIN|NOAUTH|NOPERM|BUSY)\b/;

function connectionSettings(connection: RedisConnection, options: NodeRedisOptions): RedisOptions {
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
    lazyConnect: false,
  };
}

function createClient(connection: RedisConnection, settings: RedisOptions): RedisClient {
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
  };
  return new Cluster(target.nodes, cluster);
}

/** A cluster node's connection settings: reconnecting and queueing are the Cluster's own. */
function clusterNodeSettings(settings: RedisOptions): RedisOptions {
  const { retryStrategy: _retry, enableOfflineQueue: _queue, ...node } = settings;
  return node;
}

/**
 * Makes every command on `client` fail at once while Redis is known not to answer: the first failure (a timeout, a
 * closed connection, a failover reply) closes the gate and fails the commands already waiting for an answer, and a
 * PING every `retryAfterMs` in the background opens it again. A hung Redis thus costs a request one timeout at most,
 * whichever store sends its commands and however they interleave: a command sent just before the first timeout
 * (e.g. the next one of a request whose store gave up on its own timer a moment earlier) does not wait out its own.
 */
function gateCommands(client: RedisClient, retryAfterMs: number): { close(): void } {
  let closed = false;
  let stopped = false;
  let probe: ReturnType<typeof setTimeout> | undefined;
  const send = client.sendCommand.bind(client) as (command: Command, ...rest: unknown[]) => unknown;
  const isFailure = (err: unknown) =>
    !(err instanceof Error && err.name === 'ReplyError' && !UNAVAILABLE_REPLY.test(err.message));
  /** Sent through the gate and not answered yet. */
  const waiting = new Set<Command>();
  let probing = false;
  // One PING at a time, until one is answered.
  const schedule = () => {
    if (stopped || probing) return;
    probing = true;
    probe = setTimeout(() => {
      const ping = new Command('ping');
      send(ping);
      ping.promise.then(
        () => {
          probing = false;
          closed = false;
        },
        () => {
          probing = false;
          if (closed) schedule();
        },
      );
    }, retryAfterMs);
    probe.unref();
  };
  const trip = (err: unknown) => {
    if (closed) return;
    closed = true;
    const reason = err instanceof Error ? err.message.slice(0, 200) : 'unknown';
    // An answer that comes later for one of them is dropped by ioredis, as after its own timeout.
    for (const command of waiting)
      command.reject(new Error(`redis failed another command (${reason}); not waiting for this one`));
    waiting.clear();
    schedule();
  };
  const gated = (command: Command, ...rest: unknown[]): unknown => {
    // Not ready: the client's own connection set-up (INFO, AUTH) goes through; ioredis refuses anything else.
    if (closed && client.status === 'ready') {
      command.reject(new Error('redis failed less than a retry interval ago; asking again in the background'));
      return command.promise;
    }
    const result = send(command, ...rest);
    waiting.add(command);
    command.promise.then(
      () => waiting.delete(command),
      (err: unknown) => {
        waiting.delete(command);
        if (isFailure(err)) trip(err);
      },
    );
    return result;
  };
  (client as { sendCommand: typeof gated }).sendCommand = gated;
  // (Re)connected: it answered the ready check just now.
  client.on('ready', () => {
    closed = false;
  });
  return {
    close() {
      stopped = true;
      clearTimeout(probe);
    },
  };
}

/** `target`: from the configuration, or a URL alone (`redis://…`). */
export function createNodeRedis(
  target: RedisConnection | string,
  logger: Logger,
  options: NodeRedisOptions = {},
): NodeRedis {
  const connection: RedisConnection =
    typeof target === 'string'
      ? { target: { kind: 'url', url: target }, username: undefined, password: undefined, tls: null }
      : target;
  const settings = connectionSettings(connection, options);
  const client = createClient(connection, settings);
  const gate = gateCommands(client, options.retryAfterMs ?? 1000);
  const kind = connection.target.kind;
  // Log the kind only, never the URL or the nodes' settings (a URL may hold a password).
  let up = false;
  client.on('ready', () => {
    up = true;
    // Behind Sentinels, the primary it found (after a failover: the promoted one); an address, never a secret.
    const stream = client instanceof Redis ? client.stream : undefined;
    const primary = kind === 'sentinel' && stream ? `${stream.remoteAddress}:${stream.remotePort}` : undefined;
    logger.info({ event: 'redis_ready', kind, ...(primary ? { primary } : {}) }, 'redis connected');
  });
  client.on('error', (err: Error) => {
    if (!up) return;
    up = false;
    logger.warn(
      { event: 'redis_error', kind, reason: err.message.slice(0, 200) },
      'redis unreachable; reconnecting in the background',
    );
  });
  client.on('close', () => {
    if (!up) return;
    up = false;
    logger.warn({ event: 'redis_closed', kind }, 'redis connection closed; reconnecting in the background');
  });
  if (client instanceof Cluster) {
    client.on('-node', () =>
      logger.warn({ event: 'redis_node_lost', kind }, 'a cluster node left; its slots are looked up again'),
    );
  }

  // ioredis gives up for good ('end') in a few races, e.g. the Sentinels announcing the promotion while it is
  // asking them for the primary: unless this client is being closed, start connecting again a moment later.
  let closing = false;
  const revive = (target: RedisClient) =>
    target.on('end', () => {
      if (closing) return;
      logger.warn({ event: 'redis_reconnect', kind }, 'redis client stopped reconnecting; connecting again');
      setTimeout(() => {
        if (!closing && target.status === 'end') target.connect().catch(() => {});
      }, 1000).unref();
    });
  revive(client);

  const duplicates: RedisClient[] = [];

  return {
    client,
    duplicate(overrides = {}) {
      const copy =
        client instanceof Cluster
          ? client.duplicate(undefined, { redisOptions: { ...clusterNodeSettings(settings), ...overrides } })
          : client.duplicate(overrides);
      // Its outages are the main connection's too, which logs them; without a listener ioredis prints each error.
      copy.on('error', () => {});
      revive(copy);
      duplicates.push(copy);
      return copy;
    },
    ready(timeoutMs) {
      if (client.status === 'ready') return Promise.resolve(true);
      return new Promise((resolve) => {
        const done = (ok: boolean) => {
          clearTimeout(timer);
          client.off('ready', onReady);
          resolve(ok);
        };
        const onReady = () => done(true);
        const timer = setTimeout(() => {
          logger.warn(
            { event: 'redis_unavailable_at_start', kind },
            'redis not reachable at start; shared state falls back per process until it is',
          );
          done(false);
        }, timeoutMs);
        client.once('ready', onReady);
      });
    },
    async close() {
      closing = true;
      gate.close();
      for (const copy of duplicates) copy.disconnect(false);
      client.disconnect(false);
    },
  };
}
