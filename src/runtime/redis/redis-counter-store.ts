// The counter store in Redis (Node replicas): one count per key for the deployment. `consume` is one Lua
// script, so the check and the count are atomic across replicas and a refusal counts nothing.
import type { Clock } from '../../base/clock.js';
import type { CounterDecision, CounterState, CounterStore } from '../../shared-state/counter-store.js';
import { StoreUnavailableError } from '../../shared-state/store-unavailable.js';
import type { RedisClient } from './redis-connection.js';

export interface RedisCounterStoreOptions {
  client: RedisClient;
  /** REDIS_KEY_PREFIX; keys are `${keyPrefix}:ctr:${key}`. */
  keyPrefix: string;
  /** REDIS_TIMEOUT_MS: a command without an answer after this long is a StoreUnavailableError. */
  timeoutMs: number;
  clock: Clock;
}

// A key without a TTL (PTTL -1, never written by us) or missing (-2) is a window not yet open.
// Returns {allowed, count, pttl}.
// A key's count, or nil when the key holds anything else (a malformed or foreign value, another type): such a key
// is that key's problem, treated as absent and overwritten, never an error that would mark the whole store down.
const COUNT_OF = `
local function count_of(key)
  local value = redis.pcall('GET', key)
  if type(value) == 'table' and value.err then return nil end
  local n = tonumber(value or '0')
  if n == nil or n ~= math.floor(n) or n < 0 then return nil end
  return n
end
`;

const CONSUME = `${COUNT_OF}
local points = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local window = tonumber(ARGV[3])
local ttl = redis.call('PTTL', KEYS[1])
local count = 0
local opens = ttl <= 0
if not opens then
  count = count_of(KEYS[1])
  if count == nil then opens = true; count = 0; ttl = window end
end
if opens then ttl = window end
if count + points > limit then return {0, count, ttl} end
if opens then
  redis.call('SET', KEYS[1], points, 'PX', window)
else
  redis.call('INCRBY', KEYS[1], points)
end
return {1, count + points, ttl}
`;

const ADD = `${COUNT_OF}
local points = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local ttl = redis.call('PTTL', KEYS[1])
if ttl <= 0 or count_of(KEYS[1]) == nil then
  local count = math.max(0, points)
  redis.call('SET', KEYS[1], count, 'PX', window)
  return {count, window}
end
local count = redis.call('INCRBY', KEYS[1], points)
if count <= 0 and points < 0 then
  -- Given back to nothing: the key goes, so keys an outsider invents do not pile up.
  redis.call('DEL', KEYS[1])
  count = 0
end
return {count, ttl}
`;

const GET = `${COUNT_OF}
local ttl = redis.call('PTTL', KEYS[1])
if ttl <= 0 then return nil end
local count = count_of(KEYS[1])
if count == nil then return nil end
return {count, ttl}
`;

interface CounterCommands {
  calleridCounterConsume(
    key: string,
    points: number,
    limit: number,
    windowMs: number,
  ): Promise<[number, number, number]>;
  calleridCounterAdd(key: string, points: number, windowMs: number): Promise<[number, number]>;
  calleridCounterGet(key: string): Promise<[number, number] | null>;
}

export function createRedisCounterStore(options: RedisCounterStoreOptions): CounterStore {
  const { client, keyPrefix, timeoutMs, clock } = options;
  // defineCommand sends EVALSHA and loads the script on NOSCRIPT by itself (a restarted Redis included).
  client.defineCommand('calleridCounterConsume', { numberOfKeys: 1, lua: CONSUME });
  client.defineCommand('calleridCounterAdd', { numberOfKeys: 1, lua: ADD });
  client.defineCommand('calleridCounterGet', { numberOfKeys: 1, lua: GET });
  const commands = client as unknown as CounterCommands;
  const keyOf = (key: string) => `${keyPrefix}:ctr:${key}`;

  /** Bounds one command by REDIS_TIMEOUT_MS whatever the client's own settings, and names every failure alike. */
  async function bounded<T>(command: () => Promise<T>): Promise<T> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new StoreUnavailableError('counter', `redis did not answer within ${timeoutMs} ms`)),
        timeoutMs,
      );
    });
    try {
      return await Promise.race([command(), timeout]);
    } catch (err) {
      if (err instanceof StoreUnavailableError) throw err;
      throw new StoreUnavailableError(
        'counter',
        `redis counter command failed: ${err instanceof Error ? err.message.slice(0, 200) : 'unknown'}`,
        { cause: err },
      );
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    kind: 'redis',
    async consume(key, points, limit, windowMs): Promise<CounterDecision> {
      const [allowed, count, ttl] = await bounded(() =>
        commands.calleridCounterConsume(
          keyOf(key),
          points,
          Math.min(limit, Number.MAX_SAFE_INTEGER),
          Math.max(1, Math.ceil(windowMs)),
        ),
      );
      return { allowed: allowed === 1, count, resetAt: clock() + ttl };
    },
    async add(key, points, windowMs): Promise<CounterState> {
      const [count, ttl] = await bounded(() =>
        commands.calleridCounterAdd(keyOf(key), points, Math.max(1, Math.ceil(windowMs))),
      );
      return { count, resetAt: clock() + ttl };
    },
    async get(key) {
      const found = await bounded(() => commands.calleridCounterGet(keyOf(key)));
      return found === null ? null : { count: found[0], resetAt: clock() + found[1] };
    },
  };
}
