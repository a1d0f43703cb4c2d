// Starts the simulator and the gateway on loopback ports for integration tests, and logs clients in.
import type { EnvSource } from '../../src/config/config.js';
import { sha256Hex } from '../../src/auth/client-registry.js';
import { startNodeGateway, type NodeGatewayOptions, type RunningGateway } from '../../src/runtime/node/gateway.js';
import { captureLogger, type CapturedLog } from './recorders.js';
import { startSimulatorServer, type SimulatorServer, type SimulatorServerOptions } from '../../src/simulator/server.js';

export { captureLogger, type CapturedLog };

export const CLIENTS = {
  crm: 'crm-secret-0123456789',
  pbx: 'pbx-secret-0123456789',
  ops: 'ops-secret-0123456789',
} as const;
export type ClientName = keyof typeof CLIENTS;

/** Logs a client in at a gateway's base URL and returns its gateway token (the login itself must succeed). */
export async function loginAt(base: string, clientId: string, clientSecret: string): Promise<string> {
  const res = await fetch(`${base}/token/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret }),
  });
  if (res.status !== 200) throw new Error(`login failed: ${res.status}`);
  return ((await res.json()) as { access_token: string }).access_token;
}

export interface Stack {
  gateway: RunningGateway;
  simulator: SimulatorServer;
  logs: CapturedLog[];
  /** A fresh gateway token for one of {@link CLIENTS}. */
  login(client?: ClientName): Promise<string>;
  search(what: string, token: string, init?: RequestInit): Promise<Response>;
  close(): Promise<void>;
}

export interface StackOptions {
  simulator?: SimulatorServerOptions;
  env?: EnvSource;
  gateway?: NodeGatewayOptions;
}

/** The simulator's credentials for the gateway under test. */
export const UPSTREAM_CLIENTS = { 'gateway-under-test': 'upstream-secret-xyz' };

/** The environment of a gateway in front of the simulator at `simulatorUrl`, with {@link CLIENTS} registered. */
export async function stackEnv(simulatorUrl: string): Promise<EnvSource> {
  const clients = await Promise.all(
    Object.entries(CLIENTS).map(async ([id, secret]) => `${id}:${await sha256Hex(secret)}`),
  );
  return {
    PORT: '0',
    HOST: '127.0.0.1',
    UPSTREAM_AUTH_URL: simulatorUrl,
    UPSTREAM_BASE_URL: simulatorUrl,
    UPSTREAM_CLIENT_ID: 'gateway-under-test',
    UPSTREAM_CLIENT_SECRET: 'upstream-secret-xyz',
    GATEWAY_TOKEN_SECRET: 'test-signing-key-of-at-least-32-bytes!',
    GATEWAY_CLIENTS: clients.join(','),
    GATEWAY_ADMIN_CLIENTS: 'ops',
    DEFAULT_REGION: 'GB',
    // Generous: a loaded machine (two suites at once) never turns a slow loopback answer into a 504. A test of the
    // timeout, or one that hangs the upstream, sets its own.
    UPSTREAM_TIMEOUT_MS: '5000',
    // /metrics beside the API, where the tests read it (parallel gateways cannot all have the default 9464).
    METRICS_PORT: '0',
  };
}

/**
 * Gateways in front of the simulator at `simulatorUrl` reading the clients file at `path` (the stack's own clients
 * left out), each logging to its own captured lines.
 */
export async function startFileGateways(
  count: number,
  simulatorUrl: string,
  path: string,
  options: { env?: EnvSource; gateway?: NodeGatewayOptions } = {},
): Promise<{ gateways: RunningGateway[]; logs: CapturedLog[][] }> {
  const { GATEWAY_CLIENTS: _, GATEWAY_ADMIN_CLIENTS: __, ...env } = await stackEnv(simulatorUrl);
  const logs: CapturedLog[][] = [];
  const gateways = await Promise.all(
    Array.from({ length: count }, () => {
      const logger = captureLogger();
      logs.push(logger.lines);
      return startNodeGateway({ ...env, ...options.env, GATEWAY_CLIENTS_FILE: path }, { logger, ...options.gateway });
    }),
  );
  return { gateways, logs };
}

export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const simulator = await startSimulatorServer({ clients: UPSTREAM_CLIENTS, ...options.simulator });
  const logger = captureLogger();
  const gateway = await startNodeGateway(
    { ...(await stackEnv(simulator.url)), ...options.env },
    { logger, ...options.gateway },
  );

  return {
    gateway,
    simulator,
    logs: logger.lines,
    login: (client = 'crm') => loginAt(gateway.url, client, CLIENTS[client]),
    search(what, token, init = {}) {
      return fetch(`${gateway.url}/v2/contacts/search?what=${encodeURIComponent(what)}`, {
        ...init,
        headers: { authorization: `Bearer ${token}`, ...(init.headers as Record<string, string> | undefined) },
      });
    },
    async close() {
      await gateway.close();
      await simulator.close();
    },
  };
}
