// Revoked gateway tokens shared through Redis (Node replicas). The denylist is three keys in one hash slot: each
// entry's JSON (a hash that also holds the revision counter), its revision (a sorted set scored by the revision
// that wrote it) and its end (a sorted set scored by expiry, which each write sweeps). Every write takes the next
// revision and PUBLISHes it with the entry; a replica adds what it hears to its in-memory list and reads from Redis
// only the entries written after the last revision it holds: at start, on a gap in the revisions it hears, on every
// resubscribe, and every few seconds (one HGET and an empty range when nothing changed). The hit path only reads the
// in-memory list. A revocation Redis did not take is kept and pushed again, with backoff, until Redis takes it.
import type { Clock } from '../../base/clock.js';
import type { Logger } from '../../observability/logger.js';
import {
  RevocationList,
  type HeldRevocation,
  type Revocation,
  type RevocationBounds,
  type Revocations,
} from '../../auth/revocations.js';
import type { RedisClient } from './redis-connection.js';
import { ADD, entryOf, memberOf, parseRevocation, SINCE } from './revocation-denylist.js';

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

/** Entries read per round trip while catching up: the parsing between two reads stays well under a millisecond. */
const PAGE = 500;
const RETRY_FIRST_MS = 250;
const RETRY_MAX_MS = 30_000;

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

/**
 * Queues a revocation Redis did not take. A cut drops the queued entries it covers and inherits what they and the
 * cut it replaces were to remove, so the queue holds no more than the list does.
 */
function keep(state: ReplicaState, { held, replaced }: HeldRevocation): void {
  const member = memberOf(held);
  const gone = new Set([...(state.pending.get(member)?.replaced ?? []), ...replaced]);
  for (const jti of replaced) state.pending.delete(`t:${jti}`);
  state.pending.set(member, { held, replaced: [...gone] });
}

async function revoke(state: ReplicaState, revocation: Revocation): Promise<boolean> {
  state.list.prune(state.options.clock());
  const held = state.list.add(revocation);
  try {
    await write(state, held);
    return true;
  } catch (err) {
    const reason = err instanceof Error ? err.message.slice(0, 200) : 'unknown';
    keep(state, held);
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
