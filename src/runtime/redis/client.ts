// The Node-only Redis client for shared state (one server, Sentinels or a Cluster): built, connected, kept connecting.
// Built so that a Redis outage makes a command fail within a fraction of a second instead of holding a request, and
// so that a hung Redis costs one timeout: after a command fails, every command on this client fails at once until a
// background PING answers (command-gate.ts). Redis set up wrongly (failure-cause.ts) is logged with its cause, once
// per transition (connection-log.ts), and ioredis's warnings about a password Redis does not want never reach stderr
// (unneeded-password.ts).
import { Cluster, type RedisOptions } from 'ioredis';
import type { RedisConnection } from '../../config/config.js';
import type { Logger } from '../../observability/logger.js';
import { gateCommands } from './command-gate.js';
import {
  connectionLog,
  passwordWarnings,
  waitForReady,
  watchClusterNodes,
  watchConnection,
  type ConnectionLog,
} from './connection-log.js';
import {
  clusterNodeSettings,
  connectionSettings,
  createClient,
  type ConnectionTimes,
  type RedisClient,
} from './redis-connection.js';
import { unneededPasswordHook } from './unneeded-password.js';

export interface NodeRedis {
  client: RedisClient;
  /** Resolves true once connected, false after `timeoutMs`; the gateway starts either way. */
  ready(timeoutMs: number): Promise<boolean>;
  /** Another connection with the same settings (a pub/sub subscriber can send nothing else); closed with this one. */
  duplicate(overrides?: Partial<RedisOptions>): RedisClient;
  close(): Promise<void>;
}

export interface NodeRedisOptions extends ConnectionTimes {
  /** After a failed command, how often a background PING asks whether Redis answers again. Default 1000. */
  retryAfterMs?: number;
}

/** One NodeRedis: its main client, the copies made of it, and what watches them. */
interface Clients {
  client: RedisClient;
  settings: RedisOptions;
  log: ConnectionLog;
  gate: { close(): void };
  /** Hooks a client not connecting yet, then connects it. */
  connect: (client: RedisClient) => void;
  duplicates: RedisClient[];
}

/** `target`: from the configuration, or a URL alone (`redis://…`). */
export function createNodeRedis(
  target: RedisConnection | string,
  logger: Logger,
  options: NodeRedisOptions = {},
): NodeRedis {
  const clients = start(connectionOf(target), logger, options);
  return {
    client: clients.client,
    duplicate: (overrides = {}) => duplicate(clients, overrides),
    ready: (timeoutMs) => waitForReady(clients.log, clients.client, timeoutMs),
    close: async () => close(clients),
  };
}

const connectionOf = (target: RedisConnection | string): RedisConnection =>
  typeof target === 'string'
    ? { target: { kind: 'url', url: target }, username: undefined, password: undefined, tls: null }
    : target;

function start(connection: RedisConnection, logger: Logger, options: NodeRedisOptions): Clients {
  const settings = connectionSettings(connection, options);
  const client = createClient(connection, settings);
  const gate = gateCommands(client, options.retryAfterMs ?? 1000);
  const log = connectionLog(logger, connection);
  const acceptUnneededPassword = unneededPasswordHook(passwordWarnings(log));
  const connect = (target: RedisClient) => {
    acceptUnneededPassword(target);
    target.connect().catch(() => {});
  };
  watchConnection(log, client);
  if (client instanceof Cluster) watchClusterNodes(log, client);
  connect(client);
  revive(log, client);
  return { client, settings, log, gate, connect, duplicates: [] };
}

function duplicate(clients: Clients, overrides: Partial<RedisOptions>): RedisClient {
  const { client, settings, log } = clients;
  const copy =
    client instanceof Cluster
      ? client.duplicate(undefined, { redisOptions: { ...clusterNodeSettings(settings), ...overrides } })
      : client.duplicate(overrides);
  // Its outages are the main connection's too, which logs them; without a listener ioredis prints each error.
  copy.on('error', () => {});
  revive(log, copy);
  clients.connect(copy);
  clients.duplicates.push(copy);
  return copy;
}

function close({ log, gate, duplicates, client }: Clients): void {
  log.closing = true;
  gate.close();
  for (const copy of duplicates) copy.disconnect(false);
  client.disconnect(false);
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
