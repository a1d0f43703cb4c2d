// Demo mode: with no upstream configured, the simulator runs on a loopback port and a demo client is made up,
// so a newcomer can log in and search at once. Never in production.
import { randomBytes } from 'node:crypto';
import type { EnvSource } from '../../config/config.js';
import { sha256Hex } from '../../auth/client-registry.js';
import { startSimulatorServer } from '../../simulator/server.js';

export interface DemoSetup {
  env: EnvSource;
  clientId: string;
  clientSecret: string;
  simulatorUrl: string;
  close(): Promise<void>;
}

const DEMO_CLIENT_ID = 'demo-client';
const DEMO_UPSTREAM_CLIENT = 'gateway-demo';

export async function startDemo(env: EnvSource): Promise<DemoSetup> {
  const upstreamSecret = randomBytes(24).toString('base64url');
  const simulator = await startSimulatorServer({
    clients: { [DEMO_UPSTREAM_CLIENT]: upstreamSecret },
    host: '127.0.0.1',
    port: 0,
  });
  const clientSecret = randomBytes(24).toString('base64url');
  const demoClients = `${DEMO_CLIENT_ID}:${await sha256Hex(clientSecret)}`;
  return {
    env: {
      ...env,
      UPSTREAM_AUTH_URL: simulator.url,
      UPSTREAM_BASE_URL: simulator.url,
      UPSTREAM_CLIENT_ID: DEMO_UPSTREAM_CLIENT,
      UPSTREAM_CLIENT_SECRET: upstreamSecret,
      GATEWAY_TOKEN_SECRET: env.GATEWAY_TOKEN_SECRET || randomBytes(32).toString('base64url'),
      GATEWAY_CLIENTS: env.GATEWAY_CLIENTS ? `${env.GATEWAY_CLIENTS},${demoClients}` : demoClients,
      GATEWAY_ADMIN_CLIENTS: env.GATEWAY_ADMIN_CLIENTS
        ? `${env.GATEWAY_ADMIN_CLIENTS},${DEMO_CLIENT_ID}`
        : DEMO_CLIENT_ID,
      DEFAULT_REGION: env.DEFAULT_REGION || 'GB',
      CONSOLE_PROVIDER: env.CONSOLE_PROVIDER || 'swissdir',
    },
    clientId: DEMO_CLIENT_ID,
    clientSecret,
    simulatorUrl: simulator.url,
    close: simulator.close,
  };
}

/**
 * The shell lines printed for a newcomer to paste: a login, then a search with its token. A failed login stops
 * there and says so with the gateway's answer (curl --fail-with-body), instead of searching with an error as token.
 */
export function demoCommands(base: string, clientId: string, clientSecret: string): string[] {
  return [
    `  LOGIN=$(curl -sS --fail-with-body -X POST ${base}/token/login -d grant_type=client_credentials -d client_id=${clientId} -d client_secret=${clientSecret}) \\`,
    `    && TOKEN=$(printf '%s' "$LOGIN" | sed -nE 's/.*"access_token":"([^"]+)".*/\\1/p') \\`,
    `    && curl -sS --fail-with-body "${base}/v2/contacts/search?what=020%207946%200001" -H "Authorization: Bearer $TOKEN" \\`,
    `    || { echo "failed: $LOGIN" >&2; false; }`,
  ];
}
