// The lookup tier in Redis (Node replicas): answers under keyed hashes, encrypted, kept until their last stale window
// ends; fill leases with SET NX PX; a purge is deleted and announced on a channel every replica's subscriber hears.
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Clock } from '../../clock.js';
import type { Logger } from '../../observability/logger.js';
import {
  TIER_ENTRY_VERSION,
  type LookupTier,
  type PurgeListener,
  type TierEntry,
} from '../../shared-state/lookup-tier.js';
import { StoreUnavailableError } from '../../shared-state/store-unavailable.js';
import { createTokenSeal } from './token-seal.js';

export interface RedisLookupTierOptions {
  /** Commands: no offline queue, every command bounded by REDIS_TIMEOUT_MS (client.ts). */
  client: Redis;
  /** A second connection for SUBSCRIBE (a subscribed connection can send nothing else); without auto-resubscribe. */
  subscriber: Redis;
  /** REDIS_KEY_PREFIX: keys `{prefix}:lookup:{hash}`, leases `{prefix}:lookup-fill:{hash}`, channel `{prefix}:lookup-purge`. */
  keyPrefix: string;
  /** GATEWAY_TOKEN_SECRET, which every replica shares: the values' encryption key is derived from it. */
  secret: string;
  clock: Clock;
  /** Values larger than this are not written (the answer stays per process): CACHE_SHARED_MAX_ENTRY_BYTES. */
  maxEntryBytes: number;
  /** How often the subscriber PINGs, so a silently dead subscription is noticed and purges are not missed for long. */
  pingIntervalMs?: number;
  logger: Logger;
}

export interface RedisLookupTier extends LookupTier {
  /** Resolves true once subscribed to purges, false after `timeoutMs` (the gateway starts either way). */
  ready(timeoutMs: number): Promise<boolean>;
  close(): void;
}

/** Hex of a keyed hash: the only thing a purge message may carry besides `*`. */
const KEY_HASH = /^[0-9a-f]{16,128}$/;
const ALL = '*';
const SCAN_COUNT = 500;
// Deletes the lease only if this process still holds it (it may have expired and been taken by another).
const RELEASE_IF_HELD =
  "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

/** The values' own key (HKDF info), apart from the token's. */
const SEAL_KEY_INFO = 'callerid-gateway lookup-tier seal v1';

/** What Redis holds: the version in clear, everything else (body, times) sealed with AES-256-GCM (token-seal.ts). */
interface StoredValue {
  v: number;
  data: string;
}

export function createRedisLookupTier(options: RedisLookupTierOptions): RedisLookupTier {
  const { client, subscriber, clock, logger, maxEntryBytes } = options;
  const entryKey = (hash: string) => `${options.keyPrefix}:lookup:${hash}`;
  const leaseKey = (hash: string) => `${options.keyPrefix}:lookup-fill:${hash}`;
  const channel = `${options.keyPrefix}:lookup-purge`;
  const sealer = createTokenSeal(options.secret, SEAL_KEY_INFO);
  const owner = randomUUID();
  const listeners = new Set<PurgeListener>();
  let subscribed = false;

  const unavailable = (err: unknown) =>
    new StoreUnavailableError('lookup', `redis: ${err instanceof Error ? err.message.slice(0, 200) : 'failed'}`, {
      cause: err,
    });
  async function command<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      throw unavailable(err);
    }
  }

  function seal(hash: string, entry: TierEntry): string {
    const { v: _v, ...rest } = entry;
    // Bound to its key, so a value copied under another number's key does not open.
    const stored: StoredValue = { v: TIER_ENTRY_VERSION, data: sealer.seal(JSON.stringify(rest), hash) };
    return JSON.stringify(stored);
  }

  /** The entry in a stored value, or undefined for another version or anything that does not open (another secret). */
  function open(hash: string, raw: string): TierEntry | undefined {
    try {
      const stored = JSON.parse(raw) as StoredValue;
      if (stored.v !== TIER_ENTRY_VERSION || typeof stored.data !== 'string') return undefined;
      const plain = sealer.open(stored.data, hash);
      if (plain === null) return undefined;
      const entry: TierEntry = { ...(JSON.parse(plain) as Omit<TierEntry, 'v'>), v: TIER_ENTRY_VERSION };
      return isEntry(entry) ? entry : undefined;
    } catch {
      return undefined;
    }
  }

  const notify = (hash: string | null) => {
    for (const listener of listeners) listener(hash);
  };

  // Subscribes on every (re)connect; each time, purges may have been missed while it was away: say so (`null`).
  async function subscribe(): Promise<void> {
    try {
      await subscriber.subscribe(channel);
      subscribed = true;
      notify(null);
      logger.info(
        { event: 'lookup_tier_subscribed' },
        'listening for cache purges from every replica; local copies dropped in case some were missed',
      );
    } catch {
      subscriber.disconnect(true);
    }
  }
  subscriber.on('ready', () => void subscribe());
  subscriber.on('message', (from: string, message: string) => {
    if (from !== channel) return;
    if (message === ALL) notify(null);
    else if (KEY_HASH.test(message)) notify(message);
  });
  subscriber.on('close', () => {
    subscribed = false;
  });
  if (subscriber.status === 'ready') void subscribe();
  const ping = setInterval(() => {
    if (subscriber.status === 'ready') subscriber.ping().catch(() => subscriber.disconnect(true));
  }, options.pingIntervalMs ?? 5000);
  ping.unref();

  return {
    kind: 'redis',
    async get(hash) {
      const raw = await command(() => client.get(entryKey(hash)));
      return raw === null ? undefined : open(hash, raw);
    },
    async set(hash, entry) {
      // Redis forgets it by itself when the later stale window ends: retention is the TTL, not an eviction.
      const retainMs = Math.max(entry.revalidateUntil, entry.staleIfErrorUntil) - clock();
      if (retainMs <= 0) return;
      const value = seal(hash, entry);
      if (Buffer.byteLength(value) > maxEntryBytes) return;
      await command(() => client.set(entryKey(hash), value, 'PX', Math.ceil(retainMs)));
    },
    async delete(hash) {
      const results = await command(() => client.multi().del(entryKey(hash)).publish(channel, hash).exec());
      const failed = results?.find(([err]) => err !== null);
      if (results === null || failed !== undefined)
        throw unavailable(failed?.[0] ?? new Error('transaction discarded'));
    },
    async clear() {
      // SCAN rather than a generation in the key names: memory is freed now, and a read needs no generation first.
      let cursor = '0';
      do {
        const [next, keys] = await command(() =>
          client.scan(cursor, 'MATCH', `${options.keyPrefix}:lookup:*`, 'COUNT', SCAN_COUNT),
        );
        if (keys.length > 0) await command(() => client.unlink(...keys));
        cursor = next;
      } while (cursor !== '0');
      await command(() => client.publish(channel, ALL));
    },
    async lease(hash, ms) {
      return (await command(() => client.set(leaseKey(hash), owner, 'PX', Math.max(1, Math.ceil(ms)), 'NX'))) === 'OK';
    },
    async release(hash) {
      await command(() => client.eval(RELEASE_IF_HELD, 1, leaseKey(hash), owner));
    },
    onPurge(listener) {
      listeners.add(listener);
    },
    ready(timeoutMs) {
      if (subscribed) return Promise.resolve(true);
      return new Promise((resolve) => {
        const started = Date.now();
        const check = setInterval(() => {
          if (subscribed || Date.now() - started >= timeoutMs) {
            clearInterval(check);
            resolve(subscribed);
          }
        }, 10);
      });
    },
    close() {
      clearInterval(ping);
      subscriber.disconnect(false);
    },
  };
}

function isEntry(e: TierEntry): boolean {
  const times = [e.storedAt, e.ttlSeconds, e.freshUntil, e.revalidateUntil, e.staleIfErrorUntil];
  return (
    typeof e.body === 'string' &&
    typeof e.contentType === 'string' &&
    typeof e.listed === 'boolean' &&
    times.every(Number.isFinite)
  );
}
