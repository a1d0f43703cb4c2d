// A password given to a Redis or Sentinel that wants none: taken as the success it is, told once, never on stderr.
import { Cluster, type Redis } from 'ioredis';
import type { RedisClient } from './redis-connection.js';

/** AUTH's reply from a server that wants no password (Redis 6 and later, and before). */
const NO_PASSWORD_WANTED = /without any password configured|no password is set/;

type AuthWithCallback = (...args: unknown[]) => unknown;
type Server = 'redis' | 'sentinel';

/**
 * A password configured for a server that wants none: ioredis goes on without it but prints `[WARN] … a password was
 * supplied` on stderr for every connection. Such an AUTH reply is taken here as the success it is for the connection,
 * so ioredis prints nothing, and `unneeded` is told (the caller logs one line of its own). The hook returned takes
 * a client that is not connecting yet, and hooks its connections, the Sentinels' (Sentinel mode) and the nodes'
 * (Cluster).
 */
export function unneededPasswordHook(unneeded: (server: Server) => void): (client: RedisClient) => void {
  const hooked = new WeakSet<Redis>();
  const hook = (connection: Redis, server: Server): void => {
    // A copy made through a hooked connection's duplicate() is hooked already.
    if (hooked.has(connection)) return;
    hooked.add(connection);
    hookConnection(connection, server, hook, unneeded);
  };
  return (client) => {
    if (client instanceof Cluster) {
      // Each node's connection is made (lazily) before '+node' and connects after it.
      client.on('+node', (node: Redis) => hook(node, 'redis'));
      return;
    }
    hook(client, 'redis');
    hookSentinels(client, hook);
  };
}

function hookConnection(
  connection: Redis,
  server: Server,
  hook: (connection: Redis, server: Server) => void,
  unneeded: (server: Server) => void,
): void {
  const target = connection as unknown as { auth: AuthWithCallback; duplicate: (...args: unknown[]) => Redis };
  // A Cluster asks a node for its slots on a copy of the node's connection.
  const duplicate = target.duplicate.bind(connection);
  target.duplicate = (...args: unknown[]) => {
    const copy = duplicate(...args);
    hook(copy, server);
    return copy;
  };
  const auth = target.auth.bind(connection);
  target.auth = (...args: unknown[]) => {
    const callback = args.at(-1);
    // ioredis's own AUTH on connecting passes a callback; a caller's AUTH goes through as it is.
    if (typeof callback !== 'function') return auth(...args);
    return auth(...args.slice(0, -1), (err: Error | null, result: unknown) => {
      if (err && NO_PASSWORD_WANTED.test(err.message)) {
        unneeded(server);
        return callback(null, 'OK');
      }
      return callback(err, result);
    });
  };
}

/** Sentinel mode: every connection to a Sentinel (asking for the primary, watching for failovers) is made here. */
function hookSentinels(client: Redis, hook: (connection: Redis, server: Server) => void): void {
  const connector = (client as unknown as { connector?: { connectToSentinel?: (...args: unknown[]) => Redis } })
    .connector;
  const connectToSentinel = connector?.connectToSentinel?.bind(connector);
  if (connector && connectToSentinel) {
    connector.connectToSentinel = (...args: unknown[]) => {
      const sentinel = connectToSentinel(...args);
      hook(sentinel, 'sentinel');
      return sentinel;
    };
  }
}
