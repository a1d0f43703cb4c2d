// The shared state of a deployment in Redis on Node (REDIS_URL, Sentinel or Cluster): one client, and each store of
// the gateway's on it, ready before the first request; none without Redis.
import type { Clock } from '../../base/clock.js';
import type { Config } from '../../config/config.js';
import type { Logger } from '../../observability/logger.js';
import type { RuntimeDeps } from '../../services/services.js';
import { createNodeRedis } from '../redis/client.js';
import { createRedisCounterStore } from '../redis/redis-counter-store.js';
import { createRedisLimiters } from '../redis/redis-limiters.js';
import { createRedisLookupTier } from '../redis/redis-lookup-tier.js';
import { startRedisRevocations } from '../redis/redis-revocations.js';
import { createRedisTokenStore } from '../redis/redis-token-store.js';

/** The shared state of a deployment in Redis (REDIS_URL and its kin), each adapter ready; none without Redis. */
export type RedisParts = Pick<RuntimeDeps, 'counters' | 'limiters' | 'lookupTier' | 'revocations' | 'tokenStore'> & {
  close(): Promise<void>;
};

export async function startRedisParts(config: Config, logger: Logger, clock: Clock): Promise<RedisParts> {
  const { connection, keyPrefix } = config.redis;
  const commandTimeoutMs = config.sharedStoreTimeoutMs;
  const redis = connection ? createNodeRedis(connection, logger, { commandTimeoutMs }) : undefined;
  await redis?.ready(2000);
  const secret = config.gatewayTokens.secret;
  // The lookup cache's shared tier: answers and fill leases in Redis, purges heard on a subscriber connection of its own.
  const lookupTier =
    redis && secret
      ? createRedisLookupTier({
          client: redis.client,
          subscriber: redis.duplicate({ autoResubscribe: false }),
          keyPrefix,
          secret,
          clock,
          maxEntryBytes: config.sharedCache.maxEntryBytes,
          maxRetentionMs: maxRetentionMsOf(config),
          logger,
        })
      : undefined;
  await lookupTier?.ready(2000);
  // Revoked gateway tokens for every replica: loaded before the first request, then heard as they are published.
  const revocations = await startRedisRevocations(redis, {
    keyPrefix,
    clock,
    logger,
    bounds: config.revocations,
    readyMs: 2000,
  });
  const upstream = config.upstream;
  return {
    // Limits, quotas and the budget hold for every replica sharing this Redis.
    counters: redis && createRedisCounterStore({ client: redis.client, keyPrefix, timeoutMs: commandTimeoutMs, clock }),
    // The rate limits (rate-limiter-flexible's RateLimiterRedis) hold for every replica too.
    limiters: redis && createRedisLimiters({ client: redis.client, keyPrefix }),
    lookupTier,
    revocations,
    tokenStore:
      redis && upstream && secret
        ? createRedisTokenStore({
            client: redis.client,
            keyPrefix,
            clientId: upstream.clientId,
            secret,
            timeoutMs: commandTimeoutMs,
            // The holder's login may take the upstream timeout; publishing it one more Redis command.
            leaseMs: upstream.timeoutMs + 2 * commandTimeoutMs,
            clock,
          })
        : undefined,
    async close() {
      lookupTier?.close();
      revocations?.close();
      await redis?.close();
    },
  };
}

/** The longest an answer is kept in the shared tier: the longest TTL and the longest stale window after it. */
function maxRetentionMsOf(config: Config): number {
  const { ttlSeconds, negativeTtlSeconds, staleWhileRevalidateSeconds, staleIfErrorSeconds } = config.cache;
  return (Math.max(ttlSeconds, negativeTtlSeconds) + Math.max(staleWhileRevalidateSeconds, staleIfErrorSeconds)) * 1000;
}
