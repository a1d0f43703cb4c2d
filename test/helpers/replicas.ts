// Several gateways (replicas of one deployment, e.g. sharing one REDIS_URL) in front of one simulator, on
// loopback ports, each with its own captured log.
import type { EnvSource } from '../../src/config/config.js';
import { startNodeGateway, type RunningGateway } from '../../src/runtime/node/gateway.js';
import { startSimulatorServer, type SimulatorServer, type SimulatorServerOptions } from '../../src/simulator/server.js';
import { freePort } from './free-port.js';
import { captureLogger, type CapturedLog } from './recorders.js';
import { CLIENTS, loginAt, stackEnv, UPSTREAM_CLIENTS, type ClientName } from './stack.js';

export interface Replica {
  gateway: RunningGateway;
  logs: CapturedLog[];
  /** A fresh gateway token for one of {@link CLIENTS}, issued by this replica. */
  login(client?: ClientName): Promise<string>;
  search(what: string, token: string): Promise<Response>;
  /** The same search with HTTP Basic client credentials (no gateway token), as PBXs send them. */
  searchBasic(what: string, client?: ClientName): Promise<Response>;
  /** DELETE /admin/cache (every number) or /admin/cache/{number} with an admin token; its status. */
  purge(token: string, number?: string): Promise<number>;
}

export interface Replicas {
  simulator: SimulatorServer;
  replicas: Replica[];
  close(): Promise<void>;
}

export async function startReplicas(
  count: number,
  options: {
    env?: EnvSource;
    simulator?: SimulatorServerOptions;
    /** Each replica's /metrics on a listener of its own (METRICS_PORT, a free port), as deployed; else on the API port. */
    metricsPorts?: boolean;
  } = {},
): Promise<Replicas> {
  const simulator = await startSimulatorServer({ clients: UPSTREAM_CLIENTS, ...options.simulator });
  // These tests drive one client in loops across all replicas to measure sharing; the client rate (default 600 a
  // minute, counted once for the deployment through Redis) is not what they test and a fast runtime passes it.
  const env = { ...(await stackEnv(simulator.url)), CLIENT_RATE_PER_MINUTE: '1000000', ...options.env };
  const replicas = await Promise.all(
    Array.from({ length: count }, async (): Promise<Replica> => {
      const logger = captureLogger();
      const metricsPort = options.metricsPorts ? { METRICS_PORT: String(await freePort()) } : {};
      const gateway = await startNodeGateway({ ...env, ...metricsPort }, { logger });
      return {
        gateway,
        logs: logger.lines,
        login: (client = 'crm') => loginAt(gateway.url, client, CLIENTS[client]),
        search: (what, token) =>
          fetch(`${gateway.url}/v2/contacts/search?what=${encodeURIComponent(what)}`, {
            headers: { authorization: `Bearer ${token}` },
          }),
        searchBasic: (what, client = 'crm') =>
          fetch(`${gateway.url}/v2/contacts/search?what=${encodeURIComponent(what)}`, {
            headers: { authorization: `Basic ${btoa(`${client}:${CLIENTS[client]}`)}` },
          }),
        async purge(token, number) {
          const path = number === undefined ? '/admin/cache' : `/admin/cache/${encodeURIComponent(number)}`;
          const res = await fetch(`${gateway.url}${path}`, {
            method: 'DELETE',
            headers: { authorization: `Bearer ${token}` },
          });
          await res.arrayBuffer();
          return res.status;
        },
      };
    }),
  );
  return {
    simulator,
    replicas,
    async close() {
      await Promise.all(replicas.map((r) => r.gateway.close({ timeoutMs: 1_000 })));
      await simulator.close();
    },
  };
}
