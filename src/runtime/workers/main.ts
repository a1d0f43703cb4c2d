// The Cloudflare Workers entry point: the same app, configured from bindings (the same names as on Node), with
// the shared state of docs/workers.md: the upstream token and the counters in Durable Objects, the
// lookup tier in the Cache API, background work through ctx.waitUntil, metrics to Analytics Engine.
import { createHmac } from 'node:crypto';
import { createApp, type GatewayApp } from '../../app.js';
import { systemClock } from '../../clock.js';
import { ConfigError } from '../../config.js';
import { problemResponse } from '../../errors.js';
import { noopTelemetry } from '../../observability/telemetry.js';
import { createServices, type Services } from '../../services.js';
import { createFetchHttp } from '../../upstream/http.js';
import { createCacheApiTier, type EdgeCache } from './lookup-tier.js';
import { analyticsDataPoint } from './analytics.js';
import { createWorkerCounterStore } from './counter-store.js';
import { createWorkerLimiters } from './limiters.js';
import { createConsoleLogger } from './logger.js';
import { createRequestScopes } from './request-scope.js';
import { readWorkerSettings } from './settings.js';
import { unknownSettingLine } from '../../unknown-settings.js';
import { createWorkerTokenStore } from './token-store.js';
import type { ExecutionContext } from './bindings.js';

export { UpstreamTokenObject } from './durable-objects/upstream-token.js';
export { CounterObject } from './durable-objects/counter.js';

export interface WorkerGateway {
  app: GatewayApp;
  services: Services;
  /** Serves one request; work it starts in the background is kept alive with `ctx.waitUntil`. */
  fetch(request: Request, ctx: ExecutionContext): Promise<Response>;
}

export interface WorkerGatewayOptions {
  /** Host of the request that built the gateway: the Cache API tier's key host unless LOOKUP_CACHE_HOST says otherwise. */
  host: string;
}

/** Builds one gateway from the bindings: what one isolate holds (tests build two to stand in for two isolates). */
export async function createWorkerGateway(
  env: Record<string, unknown>,
  options: WorkerGatewayOptions,
): Promise<WorkerGateway> {
  const settings = readWorkerSettings(env);
  const { config } = settings;
  const logger = createConsoleLogger(config.log.level);
  for (const unknown of settings.unknown) {
    logger.warn(
      { event: 'unknown_setting', variable: unknown.name, closest: unknown.closest },
      unknownSettingLine(unknown),
    );
  }
  const scopes = createRequestScopes();
  // No Prometheus registry on Workers: a scrape would reach one arbitrary isolate and count for it alone, and
  // prom-client would be a tenth of the bundle. The deployment's figures are in Analytics Engine and the logs.
  const timeoutMs = settings.durableObjectTimeoutMs;
  const edgeCache = (globalThis as { caches?: { default?: EdgeCache } }).caches?.default;
  const { analytics } = settings;

  const counters = settings.counterObjects
    ? createWorkerCounterStore({ namespace: settings.counterObjects, timeoutMs })
    : undefined;
  const services = await createServices(config, {
    http: createFetchHttp((input, init) => fetch(input, init), { maxBodyBytes: config.upstream.maxBodyBytes }),
    clock: systemClock,
    logger,
    telemetry: scopes.timing(noopTelemetry),
    peerAddress: (c) => c.req.header('cf-connecting-ip'),
    // nodejs_compat's createHmac: the number hash of a log line is ready before the response, nothing to flush after.
    syncHmac: (key, data) => createHmac('sha256', key).update(data).digest('hex'),
    tokenStore: settings.tokenObjects
      ? createWorkerTokenStore({
          namespace: settings.tokenObjects,
          clientId: config.upstream.clientId,
          timeoutMs,
          upstreamTimeoutMs: config.upstream.timeoutMs,
        })
      : undefined,
    counters,
    limiters: counters && createWorkerLimiters(counters),
    lookupTier:
      settings.lookupCacheApi && edgeCache
        ? createCacheApiTier({ cache: edgeCache, host: settings.lookupCacheHost ?? options.host, clock: systemClock })
        : undefined,
    background: scopes.background,
    onRequest: analytics
      ? (r) => analytics.writeDataPoint(analyticsDataPoint(r, scopes.current()?.upstreamMs ?? 0))
      : undefined,
  });
  const app = createApp(services);
  return {
    app,
    services,
    fetch: async (request, ctx) => scopes.run(ctx, () => app.fetch(request, env, ctx as never)),
  };
}

// Built once per isolate from the first request's bindings: bindings are not available at module load.
let built: Promise<WorkerGateway> | undefined;

export default {
  async fetch(request: Request, env: Record<string, unknown>, ctx: ExecutionContext): Promise<Response> {
    built ??= createWorkerGateway(env, { host: new URL(request.url).hostname });
    let gateway: WorkerGateway;
    try {
      gateway = await built;
    } catch (err) {
      built = undefined;
      const detail = err instanceof ConfigError ? err.message : 'start-up failed';
      console.log(JSON.stringify({ level: 'error', service: 'callerid-gateway', msg: detail }));
      return problemResponse(
        'unavailable',
        'The gateway is not configured correctly; see its logs.',
        crypto.randomUUID(),
      );
    }
    return gateway.fetch(request, ctx);
  },
};
