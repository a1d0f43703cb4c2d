// Why Redis does not serve the gateway, read from what ioredis reports: a setting that is wrong (a master name the
// Sentinels do not know, cluster nodes that are not in cluster mode, a refused password) or Redis not answering,
// each as one log line naming the setting to look at. Addresses and reply codes only, never a credential. And
// which failures of a command say Redis does not serve at all, rather than refuse that one command.
import type { RedisTarget } from '../../config/config.js';

export type RedisFailureCause =
  'unreachable' | 'unknown_master' | 'not_cluster' | 'password_refused' | 'sentinel_password_refused';

/** Redis 7 answers an unknown name with an error; older Sentinels answer nil, which ioredis calls an invalid reply. */
const UNKNOWN_MASTER = /No such master with that name|got an invalid reply: null/;
/** `CLUSTER SLOTS` on a server started without `cluster-enabled yes`. */
const NOT_CLUSTER = /cluster support disabled/;
/** A wrong user or password (WRONGPASS; `ERR invalid password` before ACLs), or none given where one is wanted. */
const AUTH_REFUSED = /\bWRONGPASS\b|\bNOAUTH\b|invalid password/;

/**
 * Replies that are Redis itself not serving (a failover under way, a replica answering, a dataset loading): the
 * client stops asking as after a timeout. Any other error reply (a script's, WRONGTYPE) is about one key or command.
 */
const UNAVAILABLE_REPLY = /^(CLUSTERDOWN|LOADING|READONLY|MASTERDOWN|TRYAGAIN|NOAUTH|NOPERM|BUSY)\b/;

/** Whether a command's failure says Redis does not serve now (no answer, a closed connection, a failover reply). */
export function stopsServing(err: unknown): boolean {
  return !(err instanceof Error && err.name === 'ReplyError' && !UNAVAILABLE_REPLY.test(err.message));
}

/** The cause of one ioredis error (an `error`, `node error` or `sentinelError` event). */
export function redisFailureCause(err: Error): RedisFailureCause {
  // A Cluster reports "Failed to refresh slots cache." with the last node's own reply beside it.
  const nodeReply = (err as { lastNodeError?: unknown }).lastNodeError;
  const text = nodeReply instanceof Error ? `${err.message} ${nodeReply.message}` : err.message;
  if (UNKNOWN_MASTER.test(text)) return 'unknown_master';
  if (NOT_CLUSTER.test(text)) return 'not_cluster';
  // ioredis names the Sentinels in every error about them ("failed to connect to sentinel …", "All sentinels …").
  if (AUTH_REFUSED.test(text)) return /sentinel/i.test(err.message) ? 'sentinel_password_refused' : 'password_refused';
  return 'unreachable';
}

/** A wrong setting, which waiting does not mend (unlike a Redis that is away). */
export function isMisconfiguration(cause: RedisFailureCause): boolean {
  return cause !== 'unreachable';
}

/** The log line's message for `cause`: what is wrong and what to set. */
export function redisFailureLine(cause: RedisFailureCause, target: RedisTarget): string {
  const fallback = 'shared state falls back per process';
  switch (cause) {
    case 'unknown_master':
      return `the Sentinels know no primary named "${target.kind === 'sentinel' ? target.masterName : ''}" (REDIS_SENTINEL_MASTER); ${fallback}`;
    case 'not_cluster':
      return `REDIS_CLUSTER_NODES names a Redis that is not in cluster mode (for one server set REDIS_URL instead); ${fallback}`;
    case 'password_refused':
      return `Redis refused the password (REDIS_PASSWORD and REDIS_USERNAME, or the URL's); ${fallback}`;
    case 'sentinel_password_refused':
      return `the Sentinels refused the password (REDIS_SENTINEL_PASSWORD and REDIS_SENTINEL_USERNAME); ${fallback}`;
    case 'unreachable':
      return `redis not reachable; ${fallback} until it is`;
  }
}
