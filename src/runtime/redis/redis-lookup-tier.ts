// The lookup tier in Redis (Node replicas): answers under keyed hashes, encrypted, kept until their last stale window
// ends; fill leases with SET NX PX; a purge is recorded in Redis and announced on a channel every replica's
// subscriber hears. Cluster-safe: the keys of one number share a hash slot (`{hash}`), the numbers spread over all.
//
// Purges never walk the keyspace, and a purged value written back is not served:
// - a purge-all raises the generation that is part of every entry's key name: older entries are no longer read,
//   and Redis forgets them when their TTL ends;
// - a number's purge records its purge number beside the entry (same slot) and deletes the entry; a value is
//   sealed with the purge number it was written under in its authenticated data, so an older value does not open.
// Every purge takes the next number of one counter, which each replica reads every few seconds: a replica that
// missed a purge's message (its subscriber was away, e.g. during a failover) sees the gap and drops its local copies.
import { randomUUID } from 'node:crypto';
import type { Clock } from '../../base/clock.js';
import type { Logger } from '../../observability/logger.js';
import {
  TIER_ENTRY_VERSION,
  type LookupTier,
  type PurgeListener,
  type TierEntry,
} from '../../shared-state/lookup-tier.js';
import { StoreUnavailableError } from '../../shared-state/store-unavailable.js';
import type { RedisClient } from './redis-connection.js';
import { RELEASE_LEASE, TAKE_LEASE } from './lease-scripts.js';
import { createTokenSeal } from './token-seal.js';

export interface RedisLookupTierOptions {
  /** Commands: no offline queue, every command bounded by REDIS_TIMEOUT_MS (client.ts). */
  client: RedisClient;
  /** A second connection for SUBSCRIBE (a subscribed connection can send nothing else); without auto-resubscribe. */
  subscriber: RedisClient;
  /** REDIS_KEY_PREFIX: every key and the channel start with it. */
  keyPrefix: string;
  /** GATEWAY_TOKEN_SECRET, which every replica shares: the values' encryption key is derived from it. */
  secret: string;
  clock: Clock;
  /** Values larger than this are not written (the answer stays per process): CACHE_SHARED_MAX_ENTRY_BYTES. */
  maxEntryBytes: number;
  /**
   * The longest an entry is kept (the longest TTL and stale window): a number's purge record is kept this long,
   * after which any value written before it has ended its last stale window and is not served anyway.
   */
  maxRetentionMs: number;
  /** How often the purge counter is read and the subscriber PINGed, so missed purges are noticed. Default 5 s. */
  pingIntervalMs?: number;
  logger: Logger;
}

export interface RedisLookupTier extends LookupTier {
  /** Resolves true once subscribed to purges, false after `timeoutMs` (the gateway starts either way). */
  ready(timeoutMs: number): Promise<boolean>;
  close(): void;
  /** The key names of `hash` under the current generation (tests and operators looking at Redis). */
  keysOf(hash: string): { entry: string; purged: string; lease: string };
}

/** Hex of a keyed hash: the only thing a purge message may carry besides `*`. */
const KEY_HASH = /^[0-9a-f]{16,128}$/;
/** `{hash}:{purge number}` or `*:{purge number}`. */
const MESSAGE = /^([0-9a-f]{16,128}|\*):(\d{1,15})$/;

// A value that is not ours (another type, no TTL, malformed) is that key's problem: read as absent, overwritten.
const PURGES_OF = `
local function purges_of(key)
  local found = redis.pcall('HMGET', key, 'seq', 'all')
  if type(found) ~= 'table' or found.err then
    redis.call('DEL', key)
    return 0, 0
  end
  local seq = tonumber(found[1] or '0')
  local all = tonumber(found[2] or '0')
  if seq == nil or all == nil or seq < all then
    redis.call('DEL', key)
    return 0, 0
  end
  return seq, all
end
`;

// KEYS: purges. ARGV: this replica's last known seq and all. Never goes back, not even after Redis lost its data
// (a failover that lost the last writes, a restart): it is raised to what this replica knew. Returns {seq, all}.
const SYNC = `${PURGES_OF}
local seq, all = purges_of(KEYS[1])
local known_seq = tonumber(ARGV[1])
local known_all = tonumber(ARGV[2])
if known_seq > seq or known_all > all then
  if known_seq > seq then seq = known_seq end
  if known_all > all then all = known_all end
  redis.call('HSET', KEYS[1], 'seq', string.format('%d', seq), 'all', string.format('%d', all))
end
return {seq, all}`;

// KEYS: purges. ARGV: as SYNC, then 1 for a purge-all. Returns {seq, all} after taking the next purge number.
const NEXT_PURGE = `${PURGES_OF}
local seq, all = purges_of(KEYS[1])
if tonumber(ARGV[1]) > seq then seq = tonumber(ARGV[1]) end
if tonumber(ARGV[2]) > all then all = tonumber(ARGV[2]) end
seq = seq + 1
if ARGV[3] == '1' then all = seq end
redis.call('HSET', KEYS[1], 'seq', string.format('%d', seq), 'all', string.format('%d', all))
return {seq, all}`;

// KEYS: purge record, entry (one slot). ARGV: purge number, how long the record is kept.
const PURGE_NUMBER = `
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('DEL', KEYS[2])
return 1`;

// KEYS: entry, purge record (one slot). ARGV: value, PX, the purge number the value was sealed under ('' for none).
// Writes only if no purge of the number came since the value was sealed.
const SET_UNLESS_PURGED = `
local purged = redis.pcall('GET', KEYS[2])
if type(purged) ~= 'string' then purged = '' end
if purged ~= ARGV[3] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1`;

/** The values' own key (HKDF info), apart from the token's. */
const SEAL_KEY_INFO = 'callerid-gateway lookup-tier seal v1';

/** What Redis holds: the version in clear, everything else (body, times) sealed with AES-256-GCM (token-seal.ts). */
interface StoredValue {
  v: number;
  data: string;
}

interface TierCommands {
  calleridTierSync(purges: string, seq: number, all: number): Promise<[number, number]>;
  calleridTierNextPurge(purges: string, seq: number, all: number, everything: '0' | '1'): Promise<[number, number]>;
  calleridTierPurgeNumber(purged: string, entry: string, seq: number, keepMs: number): Promise<number>;
  calleridTierSet(entry: string, purged: string, value: string, px: number, sealedUnder: string): Promise<number>;
  calleridTierLease(lease: string, owner: string, px: number): Promise<number>;
  calleridTierRelease(lease: string, owner: string): Promise<number>;
}

/** One replica's tier: its connections and keys, and what it knows of the purges. */
interface Tier {
  options: RedisLookupTierOptions;
  commands: TierCommands;
  purgesKey: string;
  channel: string;
  sealer: ReturnType<typeof createTokenSeal>;
  /** This replica's name on the fill leases it takes. */
  owner: string;
  listeners: Set<PurgeListener>;
  keepPurgeMs: number;
  subscribed: boolean;
  /** The last purge number and the generation (the last purge-all's number) this replica knows; null: not yet read. */
  known: { seq: number; all: number } | null;
}

export function createRedisLookupTier(options: RedisLookupTierOptions): RedisLookupTier {
  const { client, subscriber } = options;
  const t: Tier = {
    options,
    commands: defineCommands(client),
    purgesKey: `${options.keyPrefix}:lookup-purges`,
    channel: `${options.keyPrefix}:lookup-purge`,
    sealer: createTokenSeal(options.secret, SEAL_KEY_INFO),
    owner: randomUUID(),
    listeners: new Set(),
    keepPurgeMs: Math.max(1, Math.ceil(options.maxRetentionMs)),
    subscribed: false,
    known: null,
  };
  const ping = listen(t);
  return {
    kind: 'redis',
    keysOf: (hash) => keysOf(t, hash, t.known?.all ?? 0),
    get: (hash) => get(t, hash),
    set: (hash, entry) => set(t, hash, entry),
    delete: (hash) => purge(t, false, hash),
    clear: () => purge(t, true),
    async lease(hash, ms) {
      const { lease } = keysOf(t, hash, 0);
      return (await command(() => t.commands.calleridTierLease(lease, t.owner, Math.max(1, Math.ceil(ms))))) === 1;
    },
    async release(hash) {
      await command(() => t.commands.calleridTierRelease(keysOf(t, hash, 0).lease, t.owner));
    },
    onPurge(listener) {
      t.listeners.add(listener);
    },
    ready: (timeoutMs) => ready(t, timeoutMs),
    close() {
      clearInterval(ping);
      subscriber.disconnect(false);
    },
  };
}

function defineCommands(client: RedisClient): TierCommands {
  for (const [name, numberOfKeys, lua] of [
    ['calleridTierSync', 1, SYNC],
    ['calleridTierNextPurge', 1, NEXT_PURGE],
    ['calleridTierPurgeNumber', 2, PURGE_NUMBER],
    ['calleridTierSet', 2, SET_UNLESS_PURGED],
    ['calleridTierLease', 1, TAKE_LEASE],
    ['calleridTierRelease', 1, RELEASE_LEASE],
  ] as const) {
    client.defineCommand(name, { numberOfKeys, lua });
  }
  return client as unknown as TierCommands;
}

function keysOf({ options }: Tier, hash: string, all: number) {
  const prefix = options.keyPrefix;
  return {
    entry: `${prefix}:lookup:${all}:{${hash}}`,
    purged: `${prefix}:lookup-purged:{${hash}}`,
    lease: `${prefix}:lookup-fill:{${hash}}`,
  };
}

async function command<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    throw new StoreUnavailableError('lookup', `redis: ${err instanceof Error ? err.message.slice(0, 200) : 'failed'}`, {
      cause: err,
    });
  }
}

function notify(t: Tier, hash: string | null): void {
  for (const listener of t.listeners) listener(hash);
}

/**
 * Takes in a purge number heard (`heard`: its message), taken by this replica (`step` 1) or read (`step` 0);
 * a number beyond the last known plus `step` means purges this replica did not hear of.
 */
function learn(t: Tier, seq: number, all: number, heard: string | null | undefined, step: 0 | 1): void {
  const before = t.known;
  // A number's message says nothing of the generation: until the counter was read, only pass it on.
  if (before === null && typeof heard === 'string') return notify(t, heard);
  t.known = { seq: Math.max(before?.seq ?? 0, seq), all: Math.max(before?.all ?? 0, all) };
  const gap = before !== null && seq > before.seq + step;
  if (gap) notify(t, null);
  else if (heard !== undefined) notify(t, heard);
}

async function sync(t: Tier): Promise<{ seq: number; all: number }> {
  const [seq, all] = await command(() =>
    t.commands.calleridTierSync(t.purgesKey, t.known?.seq ?? 0, t.known?.all ?? 0),
  );
  learn(t, seq, all, undefined, 0);
  return t.known!;
}

/** The generation to read and write under; unknown until the counter was read once (then the tier is skipped). */
function generation(t: Tier): number {
  if (t.known !== null) return t.known.all;
  void sync(t).catch(() => {});
  throw new StoreUnavailableError('lookup', 'the purge generation has not been read from redis yet');
}

function seal(t: Tier, context: string, entry: TierEntry): string {
  const { v: _v, ...rest } = entry;
  const stored: StoredValue = { v: TIER_ENTRY_VERSION, data: t.sealer.seal(JSON.stringify(rest), context) };
  return JSON.stringify(stored);
}

/** The entry in a stored value, or undefined for another version or anything that does not open (another secret). */
function open(t: Tier, context: string, raw: string): TierEntry | undefined {
  try {
    const stored = JSON.parse(raw) as StoredValue;
    if (stored.v !== TIER_ENTRY_VERSION || typeof stored.data !== 'string') return undefined;
    const plain = t.sealer.open(stored.data, context);
    if (plain === null) return undefined;
    const entry: TierEntry = { ...(JSON.parse(plain) as Omit<TierEntry, 'v'>), v: TIER_ENTRY_VERSION };
    return isEntry(entry) ? entry : undefined;
  } catch {
    return undefined;
  }
}

// Bound to its key (which names the number and the generation) and to the number's last purge: a value copied
// under another number's key, or written back after a purge, does not open.
const sealContext = (entryKey: string, purged: string | null) => `${entryKey}|purged:${purged ?? ''}`;

// Subscribes on every (re)connect; each time, purges may have been missed while it was away: say so (`null`).
async function subscribe(t: Tier): Promise<void> {
  const { subscriber, logger } = t.options;
  try {
    await subscriber.subscribe(t.channel);
    t.subscribed = true;
    notify(t, null);
    logger.info(
      { event: 'lookup_tier_subscribed' },
      'listening for cache purges from every replica; local copies dropped in case some were missed',
    );
  } catch {
    subscriber.disconnect(true);
  }
}

/** Hears the purges of every replica, and reads the purge counter every few seconds; returns that timer. */
function listen(t: Tier): ReturnType<typeof setInterval> {
  const { subscriber } = t.options;
  const isCluster = 'nodes' in subscriber && typeof subscriber.nodes === 'function';
  subscriber.on('ready', () => void subscribe(t));
  subscriber.on('message', (from: string, message: string) => {
    if (from !== t.channel) return;
    const m = MESSAGE.exec(message);
    if (m === null) return;
    const seq = Number(m[2]);
    if (m[1] === '*') learn(t, seq, seq, null, 1);
    else if (KEY_HASH.test(m[1]!)) learn(t, seq, 0, m[1]!, 1);
  });
  subscriber.on('close', () => {
    t.subscribed = false;
  });
  if (subscriber.status === 'ready') void subscribe(t);
  void sync(t).catch(() => {});
  const ping = setInterval(() => {
    sync(t).catch(() => {});
    // A Cluster moves its subscription to another node by itself; the purge counter above tells of a gap meanwhile.
    if (!isCluster && subscriber.status === 'ready') subscriber.ping().catch(() => subscriber.disconnect(true));
  }, t.options.pingIntervalMs ?? 5000);
  ping.unref();
  return ping;
}

async function purge(t: Tier, everything: boolean, hash?: string): Promise<void> {
  const [seq, all] = await command(() =>
    t.commands.calleridTierNextPurge(t.purgesKey, t.known?.seq ?? 0, t.known?.all ?? 0, everything ? '1' : '0'),
  );
  if (hash !== undefined) {
    const keys = keysOf(t, hash, all);
    await command(() => t.commands.calleridTierPurgeNumber(keys.purged, keys.entry, seq, t.keepPurgeMs));
  }
  // Learnt before it is announced, so this replica's own message finds no gap.
  learn(t, seq, all, undefined, 1);
  await command(() => t.options.client.publish(t.channel, `${hash ?? '*'}:${seq}`));
}

async function get(t: Tier, hash: string): Promise<TierEntry | undefined> {
  const keys = keysOf(t, hash, generation(t));
  // MGET answers nil for a key of another type: such a key is absent, not an error.
  const [raw, purged] = await command(() => t.options.client.mget(keys.entry, keys.purged));
  return raw == null ? undefined : open(t, sealContext(keys.entry, purged ?? null), raw);
}

async function set(t: Tier, hash: string, entry: TierEntry): Promise<void> {
  // Redis forgets it by itself when the later stale window ends: retention is the TTL, not an eviction.
  const retainMs = Math.max(entry.revalidateUntil, entry.staleIfErrorUntil) - t.options.clock();
  if (retainMs <= 0) return;
  const keys = keysOf(t, hash, generation(t));
  const [purged] = await command(() => t.options.client.mget(keys.purged));
  const value = seal(t, sealContext(keys.entry, purged ?? null), entry);
  if (Buffer.byteLength(value) > t.options.maxEntryBytes) return;
  await command(() => t.commands.calleridTierSet(keys.entry, keys.purged, value, Math.ceil(retainMs), purged ?? ''));
}

/** Whether the subscription and the purge counter are both in place, within `timeoutMs`. */
function ready(t: Tier, timeoutMs: number): Promise<boolean> {
  const isReady = (): boolean => t.subscribed && t.known !== null;
  if (isReady()) return Promise.resolve(true);
  return new Promise((resolve) => {
    const started = Date.now();
    const check = setInterval(() => {
      if (isReady() || Date.now() - started >= timeoutMs) {
        clearInterval(check);
        resolve(isReady());
      }
    }, 10);
  });
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
