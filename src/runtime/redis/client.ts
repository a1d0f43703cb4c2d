// The Node-only Redis client for shared state (the console's rate limits): built so that a Redis outage
// makes a command fail within a fraction of a second instead of holding a request.
import { Redis, type RedisOptions } from 'ioredis';
import type { Logger } from '../../observability/logger.js';

export interface NodeRedis {
  client: Redis;
  /** Resolves true once connected, false after `timeoutMs`; the gateway starts either way. */
  ready(timeoutMs: number): Promise<boolean>;
  /** Another connection with the same settings (a pub/sub subscriber can send nothing else); closed with this one. */
  duplicate(overrides?: Partial<RedisOptions>): Redis;
  close(): Promise<void>;
}

export interface NodeRedisOptions {
  /** Fail a command that got no answer after this long (a Redis that accepts but hangs). Default 500; REDIS_TIMEOUT_MS. */
  commandTimeoutMs?: number;
  connectTimeoutMs?: number;
}

export function createNodeRedis(url: string, logger: Logger, options: NodeRedisOptions = {}): NodeRedis {
  const client = new Redis(url, {
    // Not connected: fail at once (the limiter's store-error mode decides) rather than queue behind a reconnect.
    enableOfflineQueue: false,
    connectTimeout: options.connectTimeoutMs ?? 1000,
    commandTimeout: options.commandTimeoutMs ?? 500,
    maxRetriesPerRequest: 1,
    // Keep trying in the background, at most every 2 s, so the shared limits come back by themselves.
    retryStrategy: (times) => Math.min(times * 200, 2000),
    lazyConnect: false,
  });
  // The URL may hold a password: log only that it is Redis, never the URL.
  let up = false;
  client.on('ready', () => {
    up = true;
    logger.info({ event: 'redis_ready' }, 'redis connected');
  });
  client.on('error', (err: Error) => {
    if (!up) return;
    up = false;
    logger.warn(
      { event: 'redis_error', reason: err.message.slice(0, 200) },
      'redis unreachable; reconnecting in the background',
    );
  });
  client.on('close', () => {
    if (!up) return;
    up = false;
    logger.warn({ event: 'redis_closed' }, 'redis connection closed; reconnecting in the background');
  });

  const duplicates: Redis[] = [];

  return {
    client,
    duplicate(overrides) {
      const copy = client.duplicate(overrides);
      // Its outages are the main connection's too, which logs them; without a listener ioredis prints each error.
      copy.on('error', () => {});
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
            { event: 'redis_unavailable_at_start' },
            'redis not reachable at start; the console limits use the configured store-error mode until it is',
          );
          done(false);
        }, timeoutMs);
        client.once('ready', onReady);
      });
    },
    async close() {
      for (const copy of duplicates) copy.disconnect(false);
      client.disconnect(false);
    },
  };
}
