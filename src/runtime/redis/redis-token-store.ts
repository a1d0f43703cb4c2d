// The token store of Node replicas: one sealed upstream token per client id in Redis, one refresh at a time
// under a lease (SET NX PX), a generation so that a 401 drops only the token it was about.
import { createHash, randomUUID } from 'node:crypto';
import { systemClock, type Clock } from '../../base/clock.js';
import { StoreUnavailableError } from '../../shared-state/store-unavailable.js';
import type { ObtainedToken, SharedToken, TokenRefreshOptions, TokenStore } from '../../shared-state/token-store.js';
import type { RedisClient } from './redis-connection.js';
import { RELEASE_LEASE, TAKE_LEASE } from './lease-scripts.js';
import { createTokenSeal } from './token-seal.js';

/** Format of the stored value; a reader ignores another (two releases side by side during a rollout). */
const TOKEN_VALUE_VERSION = '1';

// KEYS: value, generation. ARGV: version, sealed token, lowest generation (the publisher's clock), TTL ms.
// The generation never goes back, not even after Redis lost its data: it is at least the publisher's clock.
// A generation key that is not ours (another type, not a number) counts as 0: the floor still keeps it going up.
const PUBLISH = `
local held = redis.pcall('GET', KEYS[2])
local g = (type(held) == 'string' and tonumber(held) or 0) + 1
local floor = tonumber(ARGV[3])
if g < floor then g = floor end
local gs = string.format('%d', g)
redis.call('SET', KEYS[2], gs)
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'v', ARGV[1], 'g', gs, 'data', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return gs`;

// KEYS: value, generation, lease. ARGV: as PUBLISH. Publishes only when no token of this format is published and
// nobody holds the lease (a login under way will publish its own): -1 lease held, 0 one is published, else PUBLISH's.
const OFFER = `
if redis.call('PTTL', KEYS[3]) > 0 then return -1 end
if redis.pcall('HGET', KEYS[1], 'v') == ARGV[1] then return 0 end
${PUBLISH}`;

// KEYS: value. ARGV: generation.
const DROP_IF_CURRENT = `
if redis.pcall('HGET', KEYS[1], 'g') == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0`;

/** A reply about one key holding something that is not ours: that key is absent, the store is not down. */
const isForeignValue = (err: unknown) => err instanceof Error && /^WRONGTYPE\b/.test(err.message);

export interface RedisTokenStoreOptions {
  /** A client without an offline queue and with a command timeout (client.ts). */
  client: RedisClient;
  /** REDIS_KEY_PREFIX. */
  keyPrefix: string;
  /** The upstream client id: one token per id. Only a hash of it goes into the key. */
  clientId: string;
  /** GATEWAY_TOKEN_SECRET: the token is sealed under a key derived from it. */
  secret: string;
  /** Each command's bound (REDIS_TIMEOUT_MS), also enforced here in case the client has none. */
  timeoutMs: number;
  /** How long a refresh lease lives if its holder never gives it back (the login's timeout and some). */
  leaseMs: number;
  /** How often a waiter looks for the published token; default 25 ms. */
  pollMs?: number;
  clock?: Clock;
}

interface SealedToken {
  token: string;
  expiresAt: number;
  obtainedAt: number;
}

export function createRedisTokenStore(
  options: RedisTokenStoreOptions,
): TokenStore & { readonly keys: { value: string; generation: string; lease: string } } {
  const { client, timeoutMs, leaseMs } = options;
  const clock = options.clock ?? systemClock;
  const pollMs = options.pollMs ?? 25;
  const seal = createTokenSeal(options.secret);
  const id = createHash('sha256').update(options.clientId).digest('hex').slice(0, 16);
  // One hash tag for the three keys, so the scripts that touch two of them also run on Redis Cluster.
  const base = `${options.keyPrefix}:token:{${id}}`;
  const keys = { value: base, generation: `${base}:generation`, lease: `${base}:lease` };
  const sealContext = `${keys.value}|v${TOKEN_VALUE_VERSION}`;

  const command = <T>(name: string, run: () => Promise<T>): Promise<T> => bounded(timeoutMs, name, run);

  async function read(): Promise<SharedToken | null> {
    const [v, g, data] = await command('read', () =>
      client.hmget(keys.value, 'v', 'g', 'data').catch((err: unknown) => {
        if (isForeignValue(err)) return [null, null, null];
        throw err;
      }),
    );
    if (v !== TOKEN_VALUE_VERSION || g == null || data == null) return null;
    const opened = seal.open(data, sealContext);
    if (opened === null) return null;
    const token = parseSealed(opened);
    const generation = Number(g);
    if (token === null || !Number.isSafeInteger(generation) || token.expiresAt <= clock()) return null;
    return { ...token, generation };
  }

  /** PUBLISH's arguments after its keys: version, sealed token, lowest generation, TTL. */
  function publishArgs(obtained: ObtainedToken): string[] {
    const sealed = seal.seal(
      JSON.stringify({ token: obtained.token, expiresAt: obtained.expiresAt, obtainedAt: obtained.obtainedAt }),
      sealContext,
    );
    const ttlMs = Math.max(1, Math.ceil(obtained.expiresAt - clock()));
    return [TOKEN_VALUE_VERSION, sealed, String(clock()), String(ttlMs)];
  }

  async function publish(obtained: ObtainedToken): Promise<SharedToken> {
    const g = await command('publish', () =>
      client.eval(PUBLISH, 2, keys.value, keys.generation, ...publishArgs(obtained)),
    );
    return { ...obtained, generation: Number(g) };
  }

  async function offer(obtained: ObtainedToken): Promise<SharedToken | null> {
    if (obtained.expiresAt <= clock()) return read();
    const g = Number(
      await command('offer', () =>
        client.eval(OFFER, 3, keys.value, keys.generation, keys.lease, ...publishArgs(obtained)),
      ),
    );
    if (g === -1) return null;
    // Another token is published (it may be one this replica cannot open: then null, and it keeps its own).
    if (g === 0) return read();
    return { ...obtained, generation: g };
  }

  async function tryLease(): Promise<string | null> {
    const leaseId = randomUUID();
    const taken = await command('lease', () => client.eval(TAKE_LEASE, 1, keys.lease, leaseId, String(leaseMs)));
    return taken === 1 ? leaseId : null;
  }

  function release(leaseId: string): void {
    // Not awaited: the lease expires by itself if this fails, and the caller already has its token.
    command('release', () => client.eval(RELEASE_LEASE, 1, keys.lease, leaseId)).catch(() => {});
  }

  return {
    kind: 'redis',
    keys,
    read,
    offer,
    async refresh(obtain, wanted) {
      // Real time, not the injected clock: this bounds real waiting.
      const waitUntil = Date.now() + wanted.waitMs;
      for (;;) {
        const published = await read();
        if (satisfies(published, wanted, clock())) return published;
        const leaseId = await tryLease();
        if (leaseId !== null) {
          try {
            // Another replica may have published and released between our read and our lease.
            const again = await read();
            if (satisfies(again, wanted, clock())) return again;
            return await publish(await obtain());
          } finally {
            release(leaseId);
          }
        }
        if (Date.now() >= waitUntil) {
          // The holder is slower than we may wait: log in ourselves rather than fail; the later publish wins.
          return await publish(await obtain());
        }
        await new Promise((resolve) => setTimeout(resolve, pollMs));
      }
    },
    async dropIfCurrent(generation) {
      const dropped = await command('drop', () => client.eval(DROP_IF_CURRENT, 1, keys.value, String(generation)));
      return dropped === 1;
    },
  };
}

/** One command, bounded by `timeoutMs`; any failure is the store's unavailability. */
async function bounded<T>(timeoutMs: number, name: string, run: () => Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([run(), bound]);
  } catch (err) {
    const reason = err instanceof Error ? err.message.slice(0, 200) : 'unknown';
    throw new StoreUnavailableError('token', `redis ${name} failed: ${reason}`, { cause: err });
  } finally {
    clearTimeout(timer);
  }
}

const satisfies = (token: SharedToken | null, wanted: TokenRefreshOptions, now: number): token is SharedToken =>
  token !== null &&
  (wanted.newerThan === null || token.generation > wanted.newerThan) &&
  token.expiresAt - now >= wanted.validForMs;

function parseSealed(text: string): SealedToken | null {
  try {
    const value = JSON.parse(text) as Partial<SealedToken>;
    if (typeof value.token !== 'string' || value.token === '') return null;
    if (typeof value.expiresAt !== 'number' || typeof value.obtainedAt !== 'number') return null;
    return { token: value.token, expiresAt: value.expiresAt, obtainedAt: value.obtainedAt };
  } catch {
    return null;
  }
}
