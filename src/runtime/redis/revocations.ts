// Revoked gateway tokens shared through Redis (Node replicas). The denylist is three keys in one hash slot: each
// entry's JSON (a hash that also holds the revision counter), its revision (a sorted set scored by the revision
// that wrote it) and its end (a sorted set scored by expiry, which each write sweeps). Every write takes the next
// revision and PUBLISHes it with the entry; a replica adds what it hears to its in-memory list and reads from Redis
// only the entries written after the last revision it holds: at start, on a gap in the revisions it hears, on every
// resubscribe, and every few seconds (one HGET and an empty range when nothing changed). The hit path only reads the
// in-memory list. A revocation Redis did not take is kept and pushed again, with backoff, until Redis takes it.
import type { Clock } from '../../clock.js';
import type { Logger } from '../../observability/logger.js';
import {
  RevocationList,
  type HeldRevocation,
  type Revocation,
  type RevocationBounds,
  type Revocations,
} from '../../auth/revocations.js';
import type { RedisClient } from './client.js';

interface RedisRevocationsOptions {
  /** A client without an offline queue and with a command timeout (client.ts). */
  client: RedisClient;
  /** A second connection for SUBSCRIBE (a subscribed connection can send nothing else); without auto-resubscribe. */
  subscriber: RedisClient;
  /** REDIS_KEY_PREFIX. */
  keyPrefix: string;
  clock: Clock;
  logger: Logger;
  bounds: RevocationBounds;
  /** How often the revision is compared and the subscriber PINGed; default 5 s. */
  syncIntervalMs?: number;
}

interface RedisRevocations extends Revocations {
  /** Resolves true once the denylist is loaded and the subscriber listens, false after `timeoutMs`. */
  ready(timeoutMs: number): Promise<boolean>;
  close(): void;
}

// KEYS: data, order, ends. ARGV: now (ms), member, entry JSON, its end (ms), the channel, then the members the entry
// replaces. Sweeps up to 200 expired entries and the replaced ones, writes this one under the next revision, keeps
// the keys as long as their longest entry, and tells every replica. Returns the revision.
const ADD = `
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
const SINCE = `
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

/** Entries read per round trip while catching up: the parsing between two reads stays well under a millisecond. */
const PAGE = 500;
const RETRY_FIRST_MS = 250;
const RETRY_MAX_MS = 30_000;

const ID = /^[A-Za-z0-9._-]{1,64}$/;
const JTI = /^[A-Za-z0-9-]{1,64}$/;

/** A revocation as the denylist and the channel carry it; anything else (not ours, malformed) is undefined. */
function parseRevocation(text: string): Revocation | undefined {
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
const memberOf = (r: Revocation): string => (r.kind === 'token' ? `t:${r.jti}` : `c:${r.clientId}`);

const entryOf = (r: Revocation): string =>
  JSON.stringify(
    r.kind === 'token'
      ? { kind: r.kind, jti: r.jti, clientId: r.clientId, issuedAt: r.issuedAt, until: r.until }
      : { kind: r.kind, clientId: r.clientId, before: r.before, until: r.until },
  );

/** The replica's revocations through `redis`, loaded before it answers (at most `readyMs`); undefined without Redis. */
export async function startRedisRevocations(
  redis: { client: RedisClient; duplicate(overrides: { autoResubscribe: boolean }): RedisClient } | undefined,
  options: Omit<RedisRevocationsOptions, 'client' | 'subscriber'> & { readyMs: number },
): Promise<RedisRevocations | undefined> {
  if (redis === undefined) return undefined;
  const revocations = createRedisRevocations({
    ...options,
    client: redis.client,
    subscriber: redis.duplicate({ autoResubscribe: false }),
  });
  await revocations.ready(options.readyMs);
  return revocations;
}

/** What one replica holds of the denylist, and what it has yet to push there. */
interface ReplicaState {
  readonly options: RedisRevocationsOptions;
  readonly keys: { data: string; order: string; ends: string; channel: string };
  readonly list: RevocationList;
  /** The highest revision up to which this replica holds every entry. */
  seq: number;
  subscribed: boolean;
  catchingUp: Promise<void> | undefined;
  /** Revocations Redis has not taken yet, by member (a newer cut of a client replaces the older one). */
  readonly pending: Map<string, HeldRevocation>;
  retryMs: number;
  retry: ReturnType<typeof setTimeout> | undefined;
  closed: boolean;
}

function learn(state: ReplicaState, text: string): void {
  const revocation = parseRevocation(text);
  if (revocation !== undefined) state.list.add(revocation);
}

/** Reads the entries written after the revision this replica holds, a page at a time; once at most at a time. */
function catchUp(state: ReplicaState): Promise<void> {
  state.catchingUp ??= readSince(state).finally(() => {
    state.catchingUp = undefined;
  });
  return state.catchingUp;
}

async function readSince(state: ReplicaState): Promise<void> {
  const { client, clock } = state.options;
  for (;;) {
    const reply = (await client.eval(SINCE, 2, state.keys.data, state.keys.order, state.seq, PAGE)) as (
      number | string
    )[];
    const current = Number(reply[0]);
    // Redis lost the denylist (a restart without persistence): read it all again from the start.
    if (current < state.seq) {
      state.seq = 0;
      continue;
    }
    for (let i = 1; i + 1 < reply.length; i += 2) {
      learn(state, String(reply[i + 1]));
      state.seq = Math.max(state.seq, Number(reply[i]));
    }
    if (reply.length - 1 < 2 * PAGE && current >= state.seq) break;
  }
  state.list.prune(clock());
  state.list.loaded = true;
}

function hear(state: ReplicaState, message: string): void {
  const space = message.indexOf(' ');
  const seq = Number(message.slice(0, space));
  if (space < 1 || !Number.isSafeInteger(seq)) return;
  learn(state, message.slice(space + 1));
  if (seq === state.seq + 1 && state.list.loaded) state.seq = seq;
  // A revision skipped: a message was missed (or Redis restarted); what was written meanwhile is read.
  else if (seq > state.seq + 1 || !state.list.loaded) void catchUp(state).catch(() => {});
}

async function write(state: ReplicaState, { held, replaced }: HeldRevocation): Promise<void> {
  const { client, clock } = state.options;
  const { data, order, ends, channel } = state.keys;
  const gone = replaced.map((jti) => `t:${jti}`);
  const args = [clock(), memberOf(held), entryOf(held), held.until, channel, ...gone];
  await client.eval(ADD, 3, data, order, ends, ...args);
}

/** Pushes what Redis did not take, oldest first; on a failure tries again later, each time waiting twice as long. */
async function flush(state: ReplicaState): Promise<void> {
  state.retry = undefined;
  const now = state.options.clock();
  for (const [member, revocation] of state.pending) {
    if (revocation.held.until <= now) {
      state.pending.delete(member);
      continue;
    }
    try {
      await write(state, revocation);
      state.pending.delete(member);
    } catch {
      scheduleRetry(state);
      return;
    }
  }
  state.retryMs = RETRY_FIRST_MS;
  state.options.logger.info({ event: 'revocations_shared' }, 'revocations kept while Redis was away are shared');
}

function scheduleRetry(state: ReplicaState): void {
  if (state.retry !== undefined || state.closed) return;
  state.retry = setTimeout(() => void flush(state), state.retryMs);
  state.retry.unref();
  state.retryMs = Math.min(state.retryMs * 2, RETRY_MAX_MS);
}

async function revoke(state: ReplicaState, revocation: Revocation): Promise<boolean> {
  state.list.prune(state.options.clock());
  const held = state.list.add(revocation);
  try {
    await write(state, held);
    return true;
  } catch (err) {
    const reason = err instanceof Error ? err.message.slice(0, 200) : 'unknown';
    state.pending.set(memberOf(held.held), held);
    scheduleRetry(state);
    state.options.logger.warn(
      { event: 'revocation_not_shared', reason, pending: state.pending.size },
      'revocation holds on this replica only until Redis takes it; pushed again with backoff',
    );
    return false;
  }
}

async function subscribe(state: ReplicaState): Promise<void> {
  const { subscriber } = state.options;
  try {
    await subscriber.subscribe(state.keys.channel);
    state.subscribed = true;
    // Revocations published while this connection was away were missed: the denylist has them.
    await catchUp(state);
    if (state.pending.size > 0) void flush(state);
  } catch {
    subscriber.disconnect(true);
  }
}

function createRedisRevocations(options: RedisRevocationsOptions): RedisRevocations {
  const { subscriber } = options;
  const tag = `{${options.keyPrefix}:revoked}`;
  const state: ReplicaState = {
    options,
    keys: {
      data: `${tag}:data`,
      order: `${tag}:order`,
      ends: `${tag}:ends`,
      channel: `${options.keyPrefix}:revocations`,
    },
    list: new RevocationList(options.bounds, false),
    seq: 0,
    subscribed: false,
    catchingUp: undefined,
    pending: new Map(),
    retryMs: RETRY_FIRST_MS,
    retry: undefined,
    closed: false,
  };
  subscriber.on('ready', () => void subscribe(state));
  subscriber.on('message', (from: string, message: string) => {
    if (from === state.keys.channel) hear(state, message);
  });
  subscriber.on('close', () => {
    state.subscribed = false;
  });
  if (subscriber.status === 'ready') void subscribe(state);
  void catchUp(state).catch(() => {});
  const isCluster = 'nodes' in subscriber && typeof subscriber.nodes === 'function';
  const sync = setInterval(() => {
    catchUp(state).catch(() => {});
    if (!isCluster && subscriber.status === 'ready') subscriber.ping().catch(() => subscriber.disconnect(true));
  }, options.syncIntervalMs ?? 5000);
  sync.unref();

  return {
    list: state.list,
    reach: 'deployment',
    revoke: (revocation) => revoke(state, revocation),
    ready: (timeoutMs) => waitFor(() => state.list.loaded && state.subscribed, timeoutMs),
    close() {
      state.closed = true;
      clearInterval(sync);
      clearTimeout(state.retry);
      subscriber.disconnect(false);
    },
  };
}

/** Resolves true once `done()` holds, false after `timeoutMs`. */
function waitFor(done: () => boolean, timeoutMs: number): Promise<boolean> {
  if (done()) return Promise.resolve(true);
  const started = Date.now();
  return new Promise((resolve) => {
    const check = setInterval(() => {
      if (done() || Date.now() - started >= timeoutMs) {
        clearInterval(check);
        resolve(done());
      }
    }, 10);
  });
}
