// Revoked gateway tokens shared through Redis (Node replicas): a denylist (one sorted set, each revocation scored by
// when the tokens it names expire, the key itself living as long as the longest of them) and a PUBLISH that every
// replica's subscriber adds to its in-memory list at once. The list is loaded at start, again on every
// resubscribe (messages sent while away are lost) and every few seconds, so a restarted or cut-off replica refuses
// what was revoked meanwhile. The hit path only reads the in-memory list: no Redis call per request.
import type { Clock } from '../../clock.js';
import type { Logger } from '../../observability/logger.js';
import { RevocationList, type Revocation, type Revocations } from '../../auth/revocations.js';
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
  /** How often the denylist is read again and the subscriber PINGed; default 5 s. */
  syncIntervalMs?: number;
}

interface RedisRevocations extends Revocations {
  /** Resolves true once the denylist is loaded and the subscriber listens, false after `timeoutMs`. */
  ready(timeoutMs: number): Promise<boolean>;
  close(): void;
}

// KEYS: the denylist. ARGV: expiry (ms), the revocation as JSON, now (ms), the channel. Drops what expired, adds
// this one, keeps the key as long as its longest entry, and tells every replica.
const ADD = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[3])
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
redis.call('PEXPIREAT', KEYS[1], last[2])
return redis.call('PUBLISH', ARGV[4], ARGV[2])`;

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
  const until = v.until as number;
  if (v.kind === 'token' && typeof v.jti === 'string' && JTI.test(v.jti)) return { kind: 'token', jti: v.jti, until };
  if (v.kind === 'client' && typeof v.clientId === 'string' && ID.test(v.clientId) && Number.isFinite(v.before))
    return { kind: 'client', clientId: v.clientId, before: v.before as number, until };
  return undefined;
}

/** One spelling per revocation, so the same one added twice is one member of the set. */
const memberOf = (r: Revocation): string =>
  JSON.stringify(
    r.kind === 'token'
      ? { kind: r.kind, jti: r.jti, until: r.until }
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

function createRedisRevocations(options: RedisRevocationsOptions): RedisRevocations {
  const { client, subscriber, clock, logger } = options;
  const key = `${options.keyPrefix}:revoked`;
  const channel = `${options.keyPrefix}:revocations`;
  const list = new RevocationList();
  const state = { loaded: false, subscribed: false };

  const learn = (text: string) => {
    const revocation = parseRevocation(text);
    if (revocation !== undefined) list.add(revocation);
  };
  const load = async () => {
    const now = clock();
    for (const member of await client.zrangebyscore(key, now, '+inf')) learn(member);
    list.prune(now);
    state.loaded = true;
  };
  const subscribe = async () => {
    try {
      await subscriber.subscribe(channel);
      state.subscribed = true;
      // Revocations published while this connection was away were missed: the denylist has them.
      await load();
    } catch {
      subscriber.disconnect(true);
    }
  };
  subscriber.on('ready', () => void subscribe());
  subscriber.on('message', (from: string, message: string) => {
    if (from === channel) learn(message);
  });
  subscriber.on('close', () => {
    state.subscribed = false;
  });
  if (subscriber.status === 'ready') void subscribe();
  void load().catch(() => {});
  const isCluster = 'nodes' in subscriber && typeof subscriber.nodes === 'function';
  const sync = setInterval(() => {
    load().catch(() => {});
    if (!isCluster && subscriber.status === 'ready') subscriber.ping().catch(() => subscriber.disconnect(true));
  }, options.syncIntervalMs ?? 5000);
  sync.unref();

  return {
    list,
    reach: 'deployment',
    async revoke(revocation) {
      list.add(revocation);
      try {
        await client.eval(ADD, 1, key, String(revocation.until), memberOf(revocation), String(clock()), channel);
        return true;
      } catch (err) {
        const reason = err instanceof Error ? err.message.slice(0, 200) : 'unknown';
        logger.warn({ event: 'revocation_not_shared', reason }, 'revocation holds on this replica only');
        return false;
      }
    },
    ready: (timeoutMs) => waitFor(() => state.loaded && state.subscribed, timeoutMs),
    close() {
      clearInterval(sync);
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
