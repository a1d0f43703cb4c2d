// Starts the gateway on Node from an environment: demo mode when no upstream is configured, then the
// services, the app and an HTTP server. Used by the entry point and by the integration tests.
import { getRequestListener, type ServerType } from '@hono/node-server';
import { getConnInfo } from '@hono/node-server/conninfo';
import { createHmac } from 'node:crypto';
import { createNodeDocsAssets } from './docs-assets.js';
import { withSearchDoor } from './search-door.js';
import type { AddressInfo } from 'node:net';
import { bodyBoundOf, createApp, routeOfApp } from '../../app.js';
import { bodyByMethod } from '../../request/request-rules.js';
import { createListener } from './listener.js';
import type { NodeRulesOptions } from './request-rules.js';
import { systemClock, type Clock } from '../../clock.js';
import { ConfigError, parseConfig, SETTING_NAMES, type Config, type EnvSource } from '../../config.js';
import { unknownSettingLine, unknownSettings } from '../../unknown-settings.js';
import type { Logger } from '../../observability/logger.js';
import { metricSourcesOf } from '../../metric-sources.js';
import type { GatewayMetrics } from '../../observability/metrics.js';
import { createServices, type Services } from '../../services.js';
import type { UpstreamHttp } from '../../upstream/http.js';
import { startDemo, type DemoSetup } from './demo.js';
import { createNodeHttp } from './http.js';
import { createNodeLogger } from './logger.js';
import { createMetricsServer, createNodeMetrics } from './metrics.js';
import { createNodeRedis } from '../redis/client.js';
import { createRedisCounterStore } from '../redis/counter-store.js';
import { createRedisLimiters } from '../redis/limiters.js';
import { createRedisLookupTier } from '../redis/lookup-tier.js';
import { createRedisTokenStore } from '../redis/token-store.js';
import { closeGracefully, type CloseResult } from './shutdown.js';
import { createNodeTracing } from './tracing.js';

export interface NodeGatewayOptions {
  /** False: searches go through the Hono app too, not through Node's own door of the search contract. */
  searchDoor?: boolean;
  logger?: Logger;
  clock?: Clock;
  http?: UpstreamHttp;
  /** Default: a fresh registry with Node's default metrics. */
  metrics?: GatewayMetrics;
}

export interface RunningGateway {
  url: string;
  port: number;
  config: Config;
  services: Services;
  /** The Hono app the server's listener serves, for calls in process. */
  app: ReturnType<typeof createApp>;
  server: ServerType;
  demo: DemoSetup | null;
  /** Set when METRICS_PORT serves /metrics on a port of its own (by default). */
  metricsServer: { port: number; server: ServerType } | null;
  /**
   * Stops accepting, lets in-flight requests finish within `timeoutMs` (default SHUTDOWN_TIMEOUT_SECONDS),
   * cuts what is still running after that, then releases the upstream pool and demo simulator.
   */
  close(options?: { timeoutMs?: number }): Promise<CloseResult>;
}

export async function startNodeGateway(env: EnvSource, options: NodeGatewayOptions = {}): Promise<RunningGateway> {
  let config = parseConfig(env);
  let demo: DemoSetup | null = null;
  if (!config.upstream) {
    if (env.NODE_ENV === 'production') {
      throw new ConfigError(
        'UPSTREAM_AUTH_URL',
        'demo mode is refused when NODE_ENV=production: set UPSTREAM_AUTH_URL, UPSTREAM_BASE_URL, UPSTREAM_CLIENT_ID and UPSTREAM_CLIENT_SECRET',
      );
    }
    demo = await startDemo(env);
    config = parseConfig(demo.env);
  }

  const logger = options.logger ?? createNodeLogger(config.log.level);
  for (const unknown of unknownSettings(env, SETTING_NAMES)) {
    logger.warn(
      { event: 'unknown_setting', variable: unknown.name, closest: unknown.closest },
      unknownSettingLine(unknown),
    );
  }
  const http =
    options.http ??
    createNodeHttp({ maxBodyBytes: config.upstream?.maxBodyBytes, connectTimeoutMs: config.upstream?.timeoutMs });
  const clock = options.clock ?? systemClock;
  const metrics = options.metrics ?? createNodeMetrics();
  const redis = config.redis.connection
    ? createNodeRedis(config.redis.connection, logger, { commandTimeoutMs: config.redis.timeoutMs })
    : undefined;
  await redis?.ready(2000);
  // The lookup cache's shared tier: answers and fill leases in Redis, purges heard on a subscriber connection of its own.
  const lookupTier =
    redis && config.gatewayTokens.secret
      ? createRedisLookupTier({
          client: redis.client,
          subscriber: redis.duplicate({ autoResubscribe: false }),
          keyPrefix: config.redis.keyPrefix,
          secret: config.gatewayTokens.secret,
          clock,
          maxEntryBytes: config.sharedCache.maxEntryBytes,
          maxRetentionMs: maxRetentionMsOf(config),
          logger,
        })
      : undefined;
  await lookupTier?.ready(2000);
  const services = await createServices(config, {
    http,
    clock,
    logger,
    telemetry: metrics.telemetry,
    metrics,
    // Absent where the app is called in process, without a connection (tests).
    peerAddress: (c) =>
      (c.env as { incoming?: unknown } | undefined)?.incoming ? getConnInfo(c).remote.address : undefined,
    requestTarget: (c) => (c.env as { incoming?: { url?: string } } | undefined)?.incoming?.url,
    // Limits, quotas and the budget hold for every replica sharing this Redis.
    counters: redis
      ? createRedisCounterStore({
          client: redis.client,
          keyPrefix: config.redis.keyPrefix,
          timeoutMs: config.redis.timeoutMs,
          clock,
        })
      : undefined,
    // The rate limits (rate-limiter-flexible's RateLimiterRedis) hold for every replica too.
    limiters: redis ? createRedisLimiters({ client: redis.client, keyPrefix: config.redis.keyPrefix }) : undefined,
    lookupTier,
    tokenStore:
      redis && config.upstream && config.gatewayTokens.secret
        ? createRedisTokenStore({
            client: redis.client,
            keyPrefix: config.redis.keyPrefix,
            clientId: config.upstream.clientId,
            secret: config.gatewayTokens.secret,
            timeoutMs: config.redis.timeoutMs,
            // The holder's login may take the upstream timeout; publishing it one more Redis command.
            leaseMs: config.upstream.timeoutMs + 2 * config.redis.timeoutMs,
            clock,
          })
        : undefined,
    syncHmac: (key, data) => createHmac('sha256', key).update(data).digest('hex'),
    docsAssets: config.docs.enabled ? createNodeDocsAssets() : undefined,
    tracing: createNodeTracing(config.tracing),
  });
  metrics.watch({ ...metricSourcesOf(services), logLinesDropped: () => logger.dropped?.() ?? 0 });
  const app = createApp(services);

  const listener = getRequestListener(app.fetch, { hostname: config.host });
  const rules: NodeRulesOptions = {
    rules: { takesBody: bodyByMethod, boundOf: bodyBoundOf(config) },
    record: services.recordRequest,
    routeOf: routeOfApp(app),
  };
  const server = createListener(options.searchDoor === false ? listener : withSearchDoor(listener, services), {
    ...rules,
    http: config.http,
    maxConnections: config.http.maxConnections,
  });
  const metricsListener =
    config.metrics.port > 0
      ? createMetricsServer(metrics, { token: config.metrics.token, http: config.http, record: services.recordRequest })
      : null;
  try {
    await listen(server, config.port, config.host, 'PORT');
    if (metricsListener) await listen(metricsListener, config.metrics.port, config.metrics.host, 'METRICS_PORT');
  } catch (err) {
    if (server.listening) server.close();
    await settledWithin(http.close?.(), 1000);
    await redis?.close();
    await demo?.close();
    throw err;
  }
  const { port } = server.address() as AddressInfo;
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const metricsServer = metricsListener
    ? { port: (metricsListener.address() as AddressInfo).port, server: metricsListener }
    : null;
  logger.info(
    {
      event: 'start',
      port,
      metricsPort: metricsServer?.port ?? port,
      docs: config.docs.enabled ? `${url}/docs` : false,
      demo: demo !== null,
    },
    'gateway listening',
  );
  if (!metricsServer && config.metrics.token === undefined) {
    logger.warn(
      { event: 'metrics_open', port },
      'METRICS_PORT=0 and no METRICS_TOKEN: GET /metrics on the API port shows every client id to anyone who reaches it',
    );
  }

  return {
    url,
    port,
    config,
    services,
    app,
    server,
    demo,
    metricsServer,
    async close(closeOptions = {}) {
      const timeoutMs = closeOptions.timeoutMs ?? config.shutdownTimeoutSeconds * 1000;
      const deadline = Date.now() + timeoutMs;
      const [result] = await Promise.all([
        closeGracefully(server, timeoutMs),
        metricsServer ? closeGracefully(metricsServer.server, timeoutMs) : undefined,
      ]);
      // Releasing the upstream pool waits for its requests; those of cut requests are not waited for past the bound.
      await settledWithin(http.close?.(), deadline - Date.now());
      lookupTier?.close();
      await redis?.close();
      await demo?.close();
      await settledWithin(services.tracing.flush(), Math.max(1000, deadline - Date.now()));
      return result;
    },
  };
}

/** The longest an answer is kept in the shared tier: the longest TTL and the longest stale window after it. */
function maxRetentionMsOf(config: Config): number {
  const { ttlSeconds, negativeTtlSeconds, staleWhileRevalidateSeconds, staleIfErrorSeconds } = config.cache;
  return (Math.max(ttlSeconds, negativeTtlSeconds) + Math.max(staleWhileRevalidateSeconds, staleIfErrorSeconds)) * 1000;
}

/** Listens, turning the usual failures (port taken, not allowed) into one line that names the port and its setting. */
function listen(server: ServerType, port: number, host: string, setting: 'PORT' | 'METRICS_PORT'): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => {
      const where = `${host}:${port}`;
      if (err.code === 'EADDRINUSE')
        reject(
          new Error(
            `port ${port} is already in use (${where}): stop the other process or set ${setting} to a free port`,
          ),
        );
      else if (err.code === 'EACCES')
        reject(new Error(`not allowed to listen on port ${port} (${where}): use a port above 1023 or set ${setting}`));
      else if (err.code === 'EADDRNOTAVAIL')
        reject(
          new Error(
            `cannot listen on ${where}: ${setting === 'PORT' ? 'HOST' : 'METRICS_HOST'} is not an address of this machine`,
          ),
        );
      else reject(err);
    };
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

function settledWithin(work: Promise<unknown> | undefined, ms: number): Promise<void> {
  if (work === undefined) return Promise.resolve();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const bound = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, Math.max(0, ms));
  });
  return Promise.race([
    work.then(
      () => undefined,
      () => undefined,
    ),
    bound,
  ]).finally(() => clearTimeout(timer));
}
