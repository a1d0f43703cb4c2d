// The Lua scripts of a lease in Redis (a token refresh, a lookup fill): one holder at a time, given back only by it.

/**
 * KEYS: lease. ARGV: holder id, PX. Returns 1 when taken. Our leases always have a TTL: a key without one (or of
 * another type) is not ours and would block every holder; it is replaced.
 */
export const TAKE_LEASE = `
if redis.call('PTTL', KEYS[1]) == -1 or redis.call('TYPE', KEYS[1]).ok ~= 'string' then
  redis.call('DEL', KEYS[1])
end
if redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') then return 1 end
return 0`;

/** KEYS: lease. ARGV: holder id. Only the holder gives a lease back; an expired one may already be another's. */
export const RELEASE_LEASE = `
if redis.pcall('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;
