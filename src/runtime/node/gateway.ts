// Starts the gateway on Node from an environment: demo mode when no upstream is configured, then the
// services, the app and an HTTP server. Used by the entry point and by the integration tests.
import { getRequestListener, type ServerType } from '@hono/node-server';
import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context } from 'hono';
import { createHmac } from 'node:crypto';
import { createNodeDocsAssets } from './node-docs-assets.js';
import { withSearchDoor } from './search-door.js';
import type { AddressInfo } from 'node:net';
import type { IncomingMessage } from 'node:http';
import { bodyBoundOf, createApp, routeOfApp, type GatewayApp } from '../../app/app.js';
import { bodyByMethod } from '../../request/request-rules.js';
import { createListener, type ListenerOptions } from './listener.js';
import type { NodeRulesOptions } from './node-request-rules.js';
import { systemClock, type Clock } from '../../base/clock.js';
import { ConfigError, parseConfig, SETTING_NAMES, type Config, type EnvSource } from '../../config/config.js';
import { unknownSettingLine, unknownSettings } from '../../config/unknown-settings.js';
import type { Logger } from '../../observability/logger.js';
import type { SyncHmac } from '../../observability/keyed-hash.js';
import { metricSourcesOf } from '../../services/metric-sources.js';
import type { GatewayMetrics } from '../../observability/metrics.js';
import { createServices, type RuntimeDeps, type Services } from '../../services/services.js';
import type { UpstreamHttp } from '../../base/upstream-http.js';
import { startDemo, type DemoSetup } from './demo.js';
import { createNodeHttp } from './http.js';
import { createNodeLogger } from './node-logger.js';
import { createMetricsServer, createNodeMetrics } from './node-metrics.js';
import { loadClientsFile, watchClientsFile } from './clients-file-watch.js';
import { closeGracefully, type CloseResult } from './shutdown.js';
import { createNodeTracing, quietUnderHost } from './node-tracing.js';
import { startRedisParts } from './node-redis-parts.js';
import { hostTracerProvider } from '../../observability/tracing/host-tracer.js';
import { httpsOptionsOf, watchTlsFiles } from './tls-files.js';
import { nodeCertificateReader, type CertificateReader } from './node-certificates.js';

export interface NodeGatewayOptions {
  /** False: searches go through the Hono app too, not through Node's own door of the search's JSON renderer. */
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

/** The configuration to run with: the environment's, or demo mode's (refused with NODE_ENV=production). */
async function configOf(env: EnvSource): Promise<{ config: Config; demo: DemoSetup | null }> {
  const config = parseConfig(env, {
    publicBaseUrlRequiredBy: env.NODE_ENV === 'production' ? 'when NODE_ENV=production' : undefined,
  });
  if (config.upstream) return { config, demo: null };
  if (env.NODE_ENV === 'production') {
    throw new ConfigError(
      'UPSTREAM_AUTH_URL',
      'demo mode is refused when NODE_ENV=production: set UPSTREAM_AUTH_URL, UPSTREAM_BASE_URL, UPSTREAM_CLIENT_ID and UPSTREAM_CLIENT_SECRET',
    );
  }
  const demo = await startDemo(env);
  return { config: parseConfig(demo.env), demo };
}

/** The keyed number hash's HMAC-SHA-256, synchronous on Node. */
const nodeHmac: SyncHmac = (key, data) => createHmac('sha256', key).update(data).digest('hex');

/** What only Node gives the services: its clock, upstream pool, logger, metrics, connection and HMAC. */
function nodeRuntime(
  config: Config,
  options: NodeGatewayOptions,
  logger: Logger,
  metrics: GatewayMetrics,
  certificateOf: CertificateReader | undefined,
) {
  const tracing = createNodeTracing(config.tracing);
  return {
    http: quietUnderHost(
      tracing,
      options.http ??
        createNodeHttp({ maxBodyBytes: config.upstream?.maxBodyBytes, connectTimeoutMs: config.upstream?.timeoutMs }),
    ),
    clock: options.clock ?? systemClock,
    logger,
    telemetry: metrics.telemetry,
    metrics,
    // Absent where the app is called in process, without a connection (tests).
    peerAddress: (c: Context) =>
      (c.env as { incoming?: unknown } | undefined)?.incoming ? getConnInfo(c).remote.address : undefined,
    peerCertificate:
      certificateOf && ((c: Context) => certificateOf((c.env as { incoming: IncomingMessage }).incoming)),
    requestTarget: (c: Context) => (c.env as { incoming?: { url?: string } } | undefined)?.incoming?.url,
    protocolOf: (c: Context) => (c.env as { incoming?: { httpVersion?: string } } | undefined)?.incoming?.httpVersion,
    syncHmac: nodeHmac,
    docsAssets: config.docs.enabled ? createNodeDocsAssets() : undefined,
    tracing,
  } satisfies Partial<RuntimeDeps>;
}

/** The API's listener (Node's search door in front of the app, behind the request rules) and the metrics listener. */
function listenersOf(
  config: Config,
  services: Services,
  app: GatewayApp,
  metrics: GatewayMetrics,
  options: NodeGatewayOptions,
  tls: ListenerOptions['tls'],
  certificateOf: CertificateReader | undefined,
) {
  const listener = getRequestListener(app.fetch, { hostname: config.host });
  const rules: NodeRulesOptions = {
    rules: { takesBody: bodyByMethod, boundOf: bodyBoundOf(config) },
    record: services.recordRequest,
    routeOf: routeOfApp(app),
    tracing: { tracer: services.tracing.tracer, trustProxyHops: config.trustProxyHops },
  };
  const door = options.searchDoor === false ? listener : withSearchDoor(listener, services, certificateOf);
  const server = createListener(door, {
    ...rules,
    http: config.http,
    maxConnections: config.http.maxConnections,
    tls,
  });
  const metricsListener =
    config.metrics.port > 0
      ? createMetricsServer(metrics, {
          host: config.metrics.host,
          token: config.metrics.token,
          http: config.http,
          record: services.recordRequest,
          tracing: rules.tracing,
          addressOf: services.addressOf,
          protocolOf: services.protocolOf,
        })
      : null;
  return { server, metricsListener };
}

/** The start line, and a warning where /metrics answers anyone on the API port. */
function announce(
  logger: Logger,
  config: Config,
  at: { url: string; port: number; metricsPort?: number },
  demo: boolean,
) {
  logger.info(
    {
      event: 'start',
      port: at.port,
      metricsPort: at.metricsPort ?? at.port,
      docs: config.docs.enabled ? `${at.url}/docs` : false,
      demo,
    },
    'gateway listening',
  );
  if (at.metricsPort === undefined && config.metrics.token === undefined) {
    logger.warn(
      { event: 'metrics_open', port: at.port },
      'METRICS_PORT=0 and no METRICS_TOKEN: GET /metrics on the API port shows every client id to anyone who reaches it',
    );
  }
}

/** The gateway built on Node without a listener: the app to serve or to mount in another app, and its services. */
export interface NodeGateway {
  config: Config;
  services: Services;
  /**
   * The Hono app. {@link startNodeGateway} serves it behind its own listener; another Hono app mounts it
   * (`host.mount('/', gateway.app.fetch)`), behind `@hono/otel` or anything else.
   */
  app: GatewayApp;
  demo: DemoSetup | null;
  /** Releases what it holds (the clients-file watch, the upstream pool, Redis, the demo) within `timeoutMs`. */
  close(options?: { timeoutMs?: number }): Promise<void>;
}

/** What {@link startNodeGateway} adds its listeners to. */
interface BuiltGateway {
  gateway: NodeGateway;
  metrics: GatewayMetrics;
  certificateOf: CertificateReader | undefined;
  /** Releases what the gateway holds, giving the upstream pool `httpWithinMs` to finish. */
  release(httpWithinMs: number): Promise<void>;
}

async function buildGateway(
  env: EnvSource,
  options: NodeGatewayOptions,
  { config, demo }: { config: Config; demo: DemoSetup | null },
): Promise<BuiltGateway> {
  const { clientsFile } = config;
  // Before anything is connected: a wrong file stops the start with one line naming the field.
  const file = clientsFile === undefined ? undefined : await loadClientsFile(clientsFile, config.clientsFileMaxBytes);
  const logger = options.logger ?? createNodeLogger(config.log.level);
  // Under a host's OpenTelemetry SDK the OTEL_* variables are the SDK's, most of them unknown to the gateway.
  const underHost = hostTracerProvider() !== undefined;
  for (const unknown of unknownSettings(env, SETTING_NAMES)) {
    if (underHost && unknown.name.startsWith('OTEL_')) continue;
    logger.warn(
      { event: 'unknown_setting', variable: unknown.name, closest: unknown.closest },
      unknownSettingLine(unknown),
    );
  }
  const metrics = options.metrics ?? createNodeMetrics();
  const certificateOf = nodeCertificateReader(config, logger);
  const runtime = nodeRuntime(config, options, logger, metrics, certificateOf);
  const redis = await startRedisParts(config, logger, runtime.clock);
  const services = await createServices(config, {
    ...runtime,
    ...redis,
    clients: file?.clients,
    issuers: file?.issuers,
    // Identity providers over plain http to any host outside production; https (or loopback) under it.
    identityProviders: { allowHttp: env.NODE_ENV !== 'production' },
  });
  metrics.watch({ ...metricSourcesOf(services), logLinesDropped: () => logger.dropped?.() ?? 0 });
  const app = createApp(services);
  // Clients added to or removed from the file take effect without a restart (and on SIGHUP).
  const clientsWatch =
    clientsFile === undefined
      ? undefined
      : watchClientsFile({
          path: clientsFile,
          maxBytes: config.clientsFileMaxBytes,
          registry: services.clients,
          logger,
          metrics: metrics.registry,
        });
  const release = async (httpWithinMs: number) => {
    clientsWatch?.close();
    await settledWithin(runtime.http.close?.(), httpWithinMs);
    await redis.close();
    await demo?.close();
  };
  const gateway: NodeGateway = {
    config,
    services,
    app,
    demo,
    async close(closeOptions = {}) {
      const timeoutMs = closeOptions.timeoutMs ?? config.shutdownTimeoutSeconds * 1000;
      const deadline = Date.now() + timeoutMs;
      await release(timeoutMs);
      await settledWithin(services.tracing.flush(), Math.max(1000, deadline - Date.now()));
    },
  };
  return { gateway, metrics, certificateOf, release };
}

/**
 * The gateway from an environment (the same variables as `npm start`), built without a listener: for another
 * Hono app or server to mount. Under a host's OpenTelemetry SDK its spans are the host's (docs/operations.md).
 */
export async function createNodeGateway(env: EnvSource, options: NodeGatewayOptions = {}): Promise<NodeGateway> {
  return (await buildGateway(env, options, await configOf(env))).gateway;
}

export async function startNodeGateway(env: EnvSource, options: NodeGatewayOptions = {}): Promise<RunningGateway> {
  const configured = await configOf(env);
  const { config, demo } = configured;
  const tls = config.tls.certFile === undefined ? undefined : await httpsOptionsOf(config.tls);
  const { gateway, metrics, certificateOf, release } = await buildGateway(env, options, configured);
  const { services, app } = gateway;
  const { logger } = services;
  const { server, metricsListener } = listenersOf(config, services, app, metrics, options, tls, certificateOf);
  const tlsWatch = tls && watchTlsFiles(server as never, config.tls, logger);
  try {
    await listen(server, config.port, config.host, 'PORT');
    if (metricsListener) await listen(metricsListener, config.metrics.port, config.metrics.host, 'METRICS_PORT');
  } catch (err) {
    if (server.listening) server.close();
    tlsWatch?.close();
    await release(1000);
    throw err;
  }
  const { port } = server.address() as AddressInfo;
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  const url = `${tls ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const metricsServer = metricsListener
    ? { port: (metricsListener.address() as AddressInfo).port, server: metricsListener }
    : null;
  announce(logger, config, { url, port, metricsPort: metricsServer?.port }, demo !== null);

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
      tlsWatch?.close();
      // Releasing the upstream pool waits for its requests; those of cut requests are not waited for past the bound.
      await gateway.close({ timeoutMs: deadline - Date.now() });
      return result;
    },
  };
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
