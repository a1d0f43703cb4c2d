// The limits' shared store on Node with Redis: rate-limiter-flexible's RateLimiterRedis, one per limit, on the
// gateway's ioredis client. Its increment script is the package's own with two changes: a malformed or foreign
// value in a key (text, a fraction, another type) is that key's problem, treated as absent and overwritten rather
// than an error that would mark the store down; and a count given back to nothing deletes its key.
import RateLimiterRedis from 'rate-limiter-flexible/lib/RateLimiterRedis.js';
import type { LimitSpec, SharedLimiters } from '../../limits/limit.js';
import type { RedisClient } from './redis-connection.js';

// KEYS[1] the key; ARGV[1] points (negative: given back), ARGV[2] the window in seconds. Returns {count, pttl}.
const INCREMENT = `
local points = tonumber(ARGV[1])
local ttl = redis.call('PTTL', KEYS[1])
local count = nil
if ttl > 0 then
  local value = redis.pcall('GET', KEYS[1])
  if type(value) ~= 'table' then
    count = tonumber(value or '0')
    if count ~= nil and (count ~= math.floor(count) or count < 0) then count = nil end
  end
end
if count == nil then
  count = 0
  ttl = 1000 * tonumber(ARGV[2])
end
count = count + points
if count <= 0 then
  redis.call('DEL', KEYS[1])
  return {0, ttl}
end
redis.call('SET', KEYS[1], count, 'PX', ttl)
return {count, ttl}
`;

export interface RedisLimitersOptions {
  client: RedisClient;
  /** REDIS_KEY_PREFIX; keys are `${keyPrefix}:ctr:${limit's prefix}:${key}`, beside the counter store's. */
  keyPrefix: string;
}

export function createRedisLimiters(options: RedisLimitersOptions): SharedLimiters {
  return {
    kind: 'redis',
    create: (spec: LimitSpec) =>
      new RateLimiterRedis({
        storeClient: options.client,
        keyPrefix: `${options.keyPrefix}:ctr:${spec.keyPrefix}`,
        points: spec.points,
        duration: spec.durationSeconds,
        // Not connected: fail at once, and the limit's store-error mode answers.
        rejectIfRedisNotReady: true,
        // The in-memory block of the package would refuse on this process alone without asking the store.
        inMemoryBlockOnConsumed: 0,
        customIncrTtlLuaScript: INCREMENT,
      }),
  };
}
