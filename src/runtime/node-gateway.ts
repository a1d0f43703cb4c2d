// Starts the gateway on Node from an environment: demo mode when no upstream is configured, then the
// services, the app and an HTTP server. Used by the entry point and by the integration tests.
import { serve, type ServerType } from '@hono/node-server';
import { getConnInfo } from '@hono/node-server/conninfo';
import type { AddressInfo } from 'node:net';
import { createApp } from '../app.js';
import { systemClock, type Clock } from '../clock.js';
import { ConfigError, parseConfig, type Config, type EnvSource } from '../config.js';
import type { Logger } from '../observability/logger.js';
import { noopTelemetry } from '../observability/telemetry.js';
import { createServices, type Services } from '../services.js';
import type { UpstreamHttp } from '../upstream/http.js';
import { startDemo, type DemoSetup } from './demo.js';
import { createNodeHttp } from './node-http.js';
import { createNodeLogger } from './node-logger.js';

export interface NodeGatewayOptions {
  logger?: Logger;
  clock?: Clock;
  http?: UpstreamHttp;
}

export interface RunningGateway {
  url: string;
  port: number;
  config: Config;
  services: Services;
  server: ServerType;
  demo: DemoSetup | null;
  close(): Promise<void>;
}

export async function startNodeGateway(env: EnvSource, options: NodeGatewayOptions = {}): Promise<RunningGateway> {
  let config = parseConfig(env);
  let demo: DemoSetup | null = null;
  if (!config.upstream) {
    if (env.NODE_ENV === 'production') {
      throw new ConfigError('UPSTREAM_AUTH_URL', 'demo mode is refused when NODE_ENV=production: set UPSTREAM_AUTH_URL, UPSTREAM_BASE_URL, UPSTREAM_CLIENT_ID and UPSTREAM_CLIENT_SECRET');
    }
    demo = await startDemo(env);
    config = parseConfig(demo.env);
  }

  const logger = options.logger ?? createNodeLogger(config.log.level);
  const http = options.http ?? createNodeHttp();
  const services = await createServices(config, {
    http,
    clock: options.clock ?? systemClock,
    logger,
    telemetry: noopTelemetry,
    peerAddress: (c) => getConnInfo(c).remote.address,
  });
  const app = createApp(services);

  const server = await new Promise<ServerType>((resolve) => {
    const s = serve({ fetch: app.fetch, port: config.port, hostname: config.host }, () => resolve(s));
  });
  const { port } = server.address() as AddressInfo;
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  logger.info({ event: 'start', port, demo: demo !== null }, 'gateway listening');

  return {
    url,
    port,
    config,
    services,
    server,
    demo,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        if ('closeIdleConnections' in server) server.closeIdleConnections();
      });
      await http.close?.();
      await demo?.close();
    },
  };
}
