// The Node-only Redis client for shared state: one server (REDIS_URL), a primary found through Sentinels
// (REDIS_SENTINELS), or a Cluster (REDIS_CLUSTER_NODES), all through ioredis. Built so that a Redis outage makes a
// command fail within a fraction of a second instead of holding a request, and so that a hung Redis costs one
// timeout: after a command fails, every command on this client fails at once until a background PING answers.
// Redis set up wrongly (failure-cause.ts) is logged with its cause, once per transition, and ioredis's warnings
// about a password Redis does not want never reach stderr.
import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import { Cluster, Command, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { RedisConnection } from '../../config/config.js';
import type { Logger } from '../../observability/logger.js';
import { isMisconfiguration, redisFailureCause, redisFailureLine, type RedisFailureCause } from './failure-cause.js';

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
    // Connected by createNodeRedis once its hooks are on (see acceptUnneededPassword).
    lazyConnect: true,
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
    lazyConnect: true,
  };
  return new Cluster(target.nodes, cluster);
}

/** A cluster node's connection settings: reconnecting and queueing are the Cluster's own. */
function clusterNodeSettings(settings: RedisOptions): RedisOptions {
  const { retryStrategy: _retry, enableOfflineQueue: _queue, ...node } = settings;
  return node;
}

/** AUTH's reply from a server that wants no password (Redis 6 and later, and before). */
const NO_PASSWORD_WANTED = /without any password configured|no password is set/;

type AuthWithCallback = (...args: unknown[]) => unknown;
const hooked = new WeakSet<Redis>();

/**
 * A password configured for a server that wants none: ioredis goes on without it but prints `[WARN] … a password was
 * supplied` on stderr for every connection. Such an AUTH reply is taken here as the success it is for the connection,
 * so ioredis prints nothing, and `unneeded` is told (the caller logs one line of its own). Hooks the connections of
 * `client`, the Sentinels' (Sentinel mode) and the nodes' (Cluster); `client` must not be connecting yet.
 */
function acceptUnneededPassword(client: RedisClient, unneeded: (server: 'redis' | 'sentinel') => void): void {
  const hook = (connection: Redis, server: 'redis' | 'sentinel') => {
    // A copy made through a hooked connection's duplicate() is hooked already.
    if (hooked.has(connection)) return;
    hooked.add(connection);
    const target = connection as unknown as { auth: AuthWithCallback; duplicate: (...args: unknown[]) => Redis };
    // A Cluster asks a node for its slots on a copy of the node's connection.
    const duplicate = target.duplicate.bind(connection);
    target.duplicate = (...args: unknown[]) => {
      const copy = duplicate(...args);
      hook(copy, server);
      return copy;
    };
    const auth = target.auth.bind(connection);
    target.auth = (...args: unknown[]) => {
      const callback = args.at(-1);
      // ioredis's own AUTH on connecting passes a callback; a caller's AUTH goes through as it is.
      if (typeof callback !== 'function') return auth(...args);
      return auth(...args.slice(0, -1), (err: Error | null, result: unknown) => {
        if (err && NO_PASSWORD_WANTED.test(err.message)) {
          unneeded(server);
          return callback(null, 'OK');
        }
        return callback(err, result);
      });
    };
  };
  if (client instanceof Cluster) {
    // Each node's connection is made (lazily) before '+node' and connects after it.
    client.on('+node', (node: Redis) => hook(node, 'redis'));
    return;
  }
  hook(client, 'redis');
  // Sentinel mode: every connection to a Sentinel (asking for the primary, watching for failovers) is made here.
  const connector = (client as unknown as { connector?: { connectToSentinel?: (...args: unknown[]) => Redis } })
    .connector;
  const connectToSentinel = connector?.connectToSentinel?.bind(connector);
  if (connector && connectToSentinel) {
    connector.connectToSentinel = (...args: unknown[]) => {
      const sentinel = connectToSentinel(...args);
      hook(sentinel, 'sentinel');
      return sentinel;
    };
  }
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

/**
 * What the client's events tell, logged on transitions: connected to failing (with the cause), and from one cause
 * to another, e.g. a Redis away at start that turns out to refuse the password; never once per retry. Logs the
 * kind, addresses and reply codes only, never the URL or the nodes' settings (a URL may hold a password).
 */
interface ConnectionLog {
  logger: Logger;
  connection: RedisConnection;
  kind: RedisConnection['target']['kind'];
  up: boolean;
  /** Until the first connection or until ready() gives up, which logs the cause known then. */
  starting: boolean;
  /** The cause seen since the last connection: a misconfiguration stays it until another one is seen. */
  known: { cause: RedisFailureCause; err: Error } | undefined;
  logged: RedisFailureCause | undefined;
  /**
   * A Sentinel's own reply (no such master, a refused password) in this round of asking them; the round's failure
   * ("All sentinels are unreachable") is reported with it, unless another Sentinel named the primary meanwhile.
   */
  sentinelSaid: Error | undefined;
  /** Set by close(): a client that gives up is no longer revived. */
  closing: boolean;
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
  const log: ConnectionLog = {
    logger,
    connection,
    kind: connection.target.kind,
    up: false,
    starting: true,
    known: undefined,
    logged: undefined,
    sentinelSaid: undefined,
    closing: false,
  };
  const unneeded = passwordWarnings(log);
  const connect = (target: RedisClient) => {
    acceptUnneededPassword(target, unneeded);
    target.connect().catch(() => {});
  };
  watchConnection(log, client);
  if (client instanceof Cluster) watchClusterNodes(log, client);
  connect(client);
  revive(log, client);

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
      revive(log, copy);
      connect(copy);
      duplicates.push(copy);
      return copy;
    },
    ready: (timeoutMs) => ready(log, client, timeoutMs),
    async close() {
      log.closing = true;
      gate.close();
      for (const copy of duplicates) copy.disconnect(false);
      client.disconnect(false);
    },
  };
}

/** Warns once per server kind that it wants no password although the settings give one. */
function passwordWarnings({ logger, kind }: ConnectionLog): (server: 'redis' | 'sentinel') => void {
  const told = new Set<string>();
  return (server) => {
    if (told.has(server)) return;
    told.add(server);
    const setting = server === 'sentinel' ? 'REDIS_SENTINEL_PASSWORD' : 'REDIS_PASSWORD (or the URL)';
    logger.warn(
      { event: 'redis_password_unneeded', kind, server },
      `${server === 'sentinel' ? 'the Sentinels want' : 'Redis wants'} no password, but ${setting} gives one; connected without it`,
    );
  };
}

function logFailure(
  log: ConnectionLog,
  event: string,
  cause: RedisFailureCause,
  err: Error | undefined,
  message: string,
): void {
  log.logged = cause;
  const fields = { event, kind: log.kind, cause, ...(err ? { reason: err.message.slice(0, 200) } : {}) };
  if (isMisconfiguration(cause)) log.logger.error(fields, message);
  else log.logger.warn(fields, message);
}

const lineOf = (log: ConnectionLog, cause: RedisFailureCause) => redisFailureLine(cause, log.connection.target);

function watchConnection(log: ConnectionLog, client: RedisClient): void {
  const { logger, kind } = log;
  client.on('sentinelError', (err: Error) => {
    if (isMisconfiguration(redisFailureCause(err))) log.sentinelSaid = err;
  });
  client.on('ready', () => {
    Object.assign(log, { up: true, starting: false, known: undefined, logged: undefined, sentinelSaid: undefined });
    // Behind Sentinels, the primary it found (after a failover: the promoted one); an address, never a secret.
    const stream = client instanceof Redis ? client.stream : undefined;
    const primary = kind === 'sentinel' && stream ? `${stream.remoteAddress}:${stream.remotePort}` : undefined;
    logger.info({ event: 'redis_ready', kind, ...(primary ? { primary } : {}) }, 'redis connected');
  });
  client.on('error', (reported: Error) => {
    const err = log.sentinelSaid && /sentinels are unreachable/i.test(reported.message) ? log.sentinelSaid : reported;
    log.sentinelSaid = undefined;
    const cause = redisFailureCause(err);
    if (!log.known || isMisconfiguration(cause)) log.known = { cause, err };
    const known = log.known;
    if (log.up) {
      log.up = false;
      logFailure(
        log,
        'redis_error',
        known.cause,
        known.err,
        `${lineOf(log, known.cause)}; reconnecting in the background`,
      );
      return;
    }
    if (log.starting || known.cause === log.logged) return;
    logFailure(log, 'redis_error', known.cause, known.err, lineOf(log, known.cause));
  });
  client.on('close', () => {
    if (!log.up) return;
    log.up = false;
    log.logged = 'unreachable';
    logger.warn({ event: 'redis_closed', kind }, 'redis connection closed; reconnecting in the background');
  });
}

/**
 * A node that leaves a serving cluster (a master lost), once until it is connected again; not the seed nodes
 * dropped on each retry of a cluster that never came up (e.g. nodes not in cluster mode).
 */
function watchClusterNodes(log: ConnectionLog, client: Cluster): void {
  const lost = new Set<string>();
  const addressOf = (node: Redis) => `${node.options.host}:${node.options.port}`;
  client.on('+node', (node: Redis) => node.once('ready', () => lost.delete(addressOf(node))));
  client.on('-node', (node: Redis) => {
    const address = addressOf(node);
    if (!log.up || lost.has(address)) return;
    lost.add(address);
    log.logger.warn(
      { event: 'redis_node_lost', kind: log.kind, node: address },
      'a cluster node left; its slots are looked up again',
    );
  });
}

/**
 * ioredis gives up for good ('end') in a few races, e.g. the Sentinels announcing the promotion while it is
 * asking them for the primary: unless this client is being closed, start connecting again a moment later.
 */
function revive(log: ConnectionLog, target: RedisClient): void {
  target.on('end', () => {
    if (log.closing) return;
    log.logger.warn(
      { event: 'redis_reconnect', kind: log.kind },
      'redis client stopped reconnecting; connecting again',
    );
    setTimeout(() => {
      if (!log.closing && target.status === 'end') target.connect().catch(() => {});
    }, 1000).unref();
  });
}

function ready(log: ConnectionLog, client: RedisClient, timeoutMs: number): Promise<boolean> {
  if (client.status === 'ready') return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      clearTimeout(timer);
      client.off('ready', onReady);
      resolve(ok);
    };
    const onReady = () => done(true);
    const timer = setTimeout(() => {
      if (log.starting) {
        log.starting = false;
        const cause = log.known?.cause ?? 'unreachable';
        logFailure(log, 'redis_unavailable_at_start', cause, log.known?.err, `at start: ${lineOf(log, cause)}`);
      }
      done(false);
    }, timeoutMs);
    client.once('ready', onReady);
  });
}
