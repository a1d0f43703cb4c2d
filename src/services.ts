// Builds the gateway's services once from the configuration and what the runtime provides.
import type { Context } from 'hono';
import { createClientRegistry, type ClientRegistry } from './auth/client-registry.js';
import { createGatewayTokens, type GatewayTokens } from './auth/gateway-tokens.js';
import type { Clock } from './clock.js';
import type { Config } from './config.js';
import { createLookupService, type LookupService } from './lookup/lookup-service.js';
import type { Logger } from './observability/logger.js';
import type { Telemetry } from './observability/telemetry.js';
import { createNumberNormalizer, type NumberNormalizer } from './phone/normalize.js';
import type { UpstreamHttp } from './upstream/http.js';
import { createSearchClient } from './upstream/search-client.js';
import { createTokenManager, type TokenManager } from './upstream/token-manager.js';

/** What only the runtime can provide: the network, time, and where logs and metrics go. */
export interface RuntimeDeps {
  http: UpstreamHttp;
  clock: Clock;
  logger: Logger;
  telemetry: Telemetry;
  /** The peer address of the connection (Node: the socket; Workers: CF-Connecting-IP), before any proxy logic. */
  peerAddress: (c: Context) => string | undefined;
}

export interface Services {
  config: Config;
  clock: Clock;
  logger: Logger;
  telemetry: Telemetry;
  peerAddress: (c: Context) => string | undefined;
  clients: ClientRegistry;
  gatewayTokens: GatewayTokens;
  normalizer: NumberNormalizer;
  upstreamTokens: TokenManager;
  lookup: LookupService;
}

export async function createServices(config: Config, runtime: RuntimeDeps): Promise<Services> {
  const { upstream } = config;
  if (!upstream) throw new Error('no upstream configured: the runtime must start demo mode or refuse to start');
  if (!config.gatewayTokens.secret) throw new Error('GATEWAY_TOKEN_SECRET is missing');
  const { clock, logger, telemetry, http } = runtime;

  const upstreamTokens = createTokenManager({
    http,
    authUrl: upstream.authUrl,
    clientId: upstream.clientId,
    clientSecret: upstream.clientSecret,
    timeoutMs: upstream.timeoutMs,
    expiresInUnit: upstream.expiresInUnit,
    refreshAheadSeconds: upstream.refreshAheadSeconds,
    clock,
    telemetry,
    logger,
  });
  const search = createSearchClient({
    http,
    tokens: upstreamTokens,
    baseUrl: upstream.baseUrl,
    timeoutMs: upstream.timeoutMs,
    clock,
    telemetry,
    logger,
  });

  return {
    config,
    clock,
    logger,
    telemetry,
    peerAddress: runtime.peerAddress,
    clients: createClientRegistry(config.clients),
    gatewayTokens: await createGatewayTokens({
      secret: config.gatewayTokens.secret,
      previousSecrets: config.gatewayTokens.previousSecrets,
      ttlSeconds: config.gatewayTokens.ttlSeconds,
      clock,
    }),
    normalizer: createNumberNormalizer({ defaultRegion: config.defaultRegion }),
    upstreamTokens,
    lookup: createLookupService({ search }),
  };
}
