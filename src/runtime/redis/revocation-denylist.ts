// The Redis denylist's shape (runtime/redis/redis-revocations.ts): its two scripts, and each entry's field name and JSON.
import type { Revocation } from '../../auth/revocations.js';

// KEYS: data, order, ends. ARGV: now (ms), member, entry JSON, its end (ms), the channel, then the members the entry
// replaces. Sweeps up to 200 expired entries and the replaced ones, writes this one under the next revision, keeps
// the keys as long as their longest entry, and tells every replica. Returns the revision.
export const ADD = `
local gone = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', ARGV[1], 'LIMIT', 0, 200)
for i = 6, #ARGV do gone[#gone + 1] = ARGV[i] end
if #gone > 0 then
  redis.call('HDEL', KEYS[1], unpack(gone))
  redis.call('ZREM', KEYS[2], unpack(gone))
  redis.call('ZREM', KEYS[3], unpack(gone))
end
local seq = redis.call('HINCRBY', KEYS[1], '#seq', 1)
redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
redis.call('ZADD', KEYS[2], seq, ARGV[2])
redis.call('ZADD', KEYS[3], ARGV[4], ARGV[2])
local last = redis.call('ZRANGE', KEYS[3], -1, -1, 'WITHSCORES')
for i = 1, 3 do redis.call('PEXPIREAT', KEYS[i], last[2]) end
redis.call('PUBLISH', ARGV[5], seq .. ' ' .. ARGV[3])
return seq`;

// KEYS: data, order. ARGV: the last revision the replica holds, how many entries to read. Returns the current
// revision, then revision and entry JSON pairs written after the one held, oldest first.
export const SINCE = `
local out = { tonumber(redis.call('HGET', KEYS[1], '#seq') or '0') }
local found = redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. ARGV[1], '+inf', 'WITHSCORES', 'LIMIT', 0, ARGV[2])
if #found == 0 then return out end
local members = {}
for i = 1, #found, 2 do members[#members + 1] = found[i] end
local values = redis.call('HMGET', KEYS[1], unpack(members))
for i = 1, #members do
  out[#out + 1] = tonumber(found[2 * i])
  out[#out + 1] = values[i] or ''
end
return out`;

const ID = /^[A-Za-z0-9._-]{1,64}$/;
const JTI = /^[A-Za-z0-9-]{1,64}$/;

/** A revocation as the denylist and the channel carry it; anything else (not ours, malformed) is undefined. */
export function parseRevocation(text: string): Revocation | undefined {
  let v: Partial<Record<string, unknown>>;
  try {
    v = JSON.parse(text) as Partial<Record<string, unknown>>;
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null || !Number.isFinite(v.until)) return undefined;
  if (typeof v.clientId !== 'string' || !ID.test(v.clientId)) return undefined;
  const { clientId } = v;
  const until = v.until as number;
  if (v.kind === 'token' && typeof v.jti === 'string' && JTI.test(v.jti) && Number.isFinite(v.issuedAt))
    return { kind: 'token', jti: v.jti, clientId, issuedAt: v.issuedAt as number, until };
  if (v.kind === 'client' && Number.isFinite(v.before))
    return { kind: 'client', clientId, before: v.before as number, until };
  return undefined;
}

/** The entry's field in the denylist: a token's by its `jti`, a client's cut by the client (one cut per client). */
export const memberOf = (r: Revocation): string => (r.kind === 'token' ? `t:${r.jti}` : `c:${r.clientId}`);

export const entryOf = (r: Revocation): string =>
  JSON.stringify(
    r.kind === 'token'
      ? { kind: r.kind, jti: r.jti, clientId: r.clientId, issuedAt: r.issuedAt, until: r.until }
      : { kind: r.kind, clientId: r.clientId, before: r.before, until: r.until },
  );
