// What the Redis client's events tell, logged once per transition with the cause: never per retry, never a secret.
import { Redis, type Cluster } from 'ioredis';
import type { RedisConnection } from '../../config/config.js';
import type { Logger } from '../../observability/logger.js';
import { isMisconfiguration, redisFailureCause, redisFailureLine, type RedisFailureCause } from './failure-cause.js';
import type { RedisClient } from './redis-connection.js';

/**
 * What the client's events tell, logged on transitions: connected to failing (with the cause), and from one cause
 * to another, e.g. a Redis away at start that turns out to refuse the password; never once per retry. Logs the
 * kind, addresses and reply codes only, never the URL or the nodes' settings (a URL may hold a password).
 */
export interface ConnectionLog {
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

export const connectionLog = (logger: Logger, connection: RedisConnection): ConnectionLog => ({
  logger,
  connection,
  kind: connection.target.kind,
  up: false,
  starting: true,
  known: undefined,
  logged: undefined,
  sentinelSaid: undefined,
  closing: false,
});

/** Warns once per server kind that it wants no password although the settings give one. */
export function passwordWarnings({ logger, kind }: ConnectionLog): (server: 'redis' | 'sentinel') => void {
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

export function watchConnection(log: ConnectionLog, client: RedisClient): void {
  client.on('sentinelError', (err: Error) => {
    if (isMisconfiguration(redisFailureCause(err))) log.sentinelSaid = err;
  });
  client.on('ready', () => connected(log, client));
  client.on('error', (reported: Error) => failed(log, reported));
  client.on('close', () => {
    if (!log.up) return;
    log.up = false;
    log.logged = 'unreachable';
    log.logger.warn(
      { event: 'redis_closed', kind: log.kind },
      'redis connection closed; reconnecting in the background',
    );
  });
}

function connected(log: ConnectionLog, client: RedisClient): void {
  const { logger, kind } = log;
  Object.assign(log, { up: true, starting: false, known: undefined, logged: undefined, sentinelSaid: undefined });
  // Behind Sentinels, the primary it found (after a failover: the promoted one); an address, never a secret.
  const stream = client instanceof Redis ? client.stream : undefined;
  const primary = kind === 'sentinel' && stream ? `${stream.remoteAddress}:${stream.remotePort}` : undefined;
  logger.info({ event: 'redis_ready', kind, ...(primary ? { primary } : {}) }, 'redis connected');
}

function failed(log: ConnectionLog, reported: Error): void {
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
}

/**
 * A node that leaves a serving cluster (a master lost), once until it is connected again; not the seed nodes
 * dropped on each retry of a cluster that never came up (e.g. nodes not in cluster mode).
 */
export function watchClusterNodes(log: ConnectionLog, client: Cluster): void {
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

/** Resolves true once connected, false after `timeoutMs`, logging then the cause known at start. */
export function waitForReady(log: ConnectionLog, client: RedisClient, timeoutMs: number): Promise<boolean> {
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
