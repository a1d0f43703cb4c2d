// The Cloudflare Workers entry point: the same app, configured from bindings (the same names as on Node), with
// the shared state of docs/workers.md: the upstream token and the counters in Durable Objects, the
// lookup tier in the Cache API, background work through ctx.waitUntil, metrics pushed to one Durable Object that
// serves the deployment's /metrics (and a data point per request to Analytics Engine).
import { tlsClientAuthCertificate } from './tls-client-auth.js';
import { createHmac } from 'node:crypto';
import { createApp, type GatewayApp } from '../../app/app.js';
import { systemClock } from '../../base/clock.js';
import { ConfigError } from '../../config/config.js';
import { problemResponse } from '../../base/errors.js';
import { metricSourcesOf } from '../../services/metric-sources.js';
import { noopTelemetry } from '../../observability/telemetry.js';
import { createServices, type RuntimeDeps, type Services } from '../../services/services.js';
import { createFetchHttp } from '../../base/upstream-http.js';
import { createCacheApiTier, type EdgeCache } from './workers-lookup-tier.js';
import { analyticsDataPoint } from './analytics.js';
import { createCacheApiIdpDocuments } from './workers-idp-documents.js';
import { createWorkerCounterStore } from './workers-counter-store.js';
import { createWorkerLimiters } from './workers-limiters.js';
import { createConsoleLogger } from './workers-logger.js';
import { callerTrace, createRequestScopes } from './request-scope.js';
import { METRICS_OBJECT, readWorkerSettings, type WorkerSettings } from './settings.js';
import { unknownSettingLine } from '../../config/unknown-settings.js';
import { createWorkerTokenStore } from './workers-token-store.js';
import { workerRevocationsOf } from './workers-revocations.js';
import type { ExecutionContext } from './bindings.js';
import { callDurableObject } from './durable-object-call.js';
import { createIsolateMetrics, type IsolateMetrics } from './isolate-metrics.js';
import { createWorkerTracing } from './workers-tracing.js';

export { UpstreamTokenObject } from './durable-objects/upstream-token.js';
export { CounterObject } from './durable-objects/counter.js';
export { MetricsObject } from './durable-objects/metrics-object.js';
export { RevocationObject } from './durable-objects/revocation-object.js';

export interface WorkerGateway {
  app: GatewayApp;
  services: Services;
  /** This isolate's counts and their pushes (absent without the METRICS binding). */
  metrics: IsolateMetrics | undefined;
  /** Serves one request; work it starts in the background is kept alive with `ctx.waitUntil`. */
  fetch(request: Request, ctx: ExecutionContext): Promise<Response>;
}

export interface WorkerGatewayOptions {
  /** Host of the request that built the gateway: the Cache API tier's key host unless LOOKUP_CACHE_HOST says otherwise. */
  host: string;
}

/** What the Cache API of the data centre holds for the isolates (none where there is no `caches.default`). */
function cacheApiStores(
  settings: WorkerSettings,
  requestHost: string,
): Pick<RuntimeDeps, 'lookupTier' | 'identityProviders'> {
  const cache = (globalThis as { caches?: { default?: EdgeCache } }).caches?.default;
  if (cache === undefined) return { identityProviders: { allowHttp: false } };
  const host = settings.lookupCacheHost ?? requestHost;
  return {
    lookupTier: settings.lookupCacheApi ? createCacheApiTier({ cache, host, clock: systemClock }) : undefined,
    // Isolates of one data centre share the identity providers' documents: one fetch per refresh, not one each.
    identityProviders: {
      allowHttp: false,
      shared: createCacheApiIdpDocuments({
        cache,
        host,
        clock: systemClock,
        timeoutMs: settings.durableObjectTimeoutMs,
      }),
    },
  };
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
  // Every call to a Durable Object made for a request carries the context of that request's server span.
  const tracing = scopes.traced(createWorkerTracing(config.tracing, scopes.background));
  const { trace } = scopes;
  const timeoutMs = settings.durableObjectTimeoutMs;
  // No prom-client here (a sixth of the bundle): the isolate counts the same families in plain numbers and pushes
  // them to the metrics object, which serves one /metrics for every isolate of the deployment.
  const metricsObjects = settings.metricsObjects;
  const isolateMetrics: IsolateMetrics | undefined = metricsObjects
    ? createIsolateMetrics({
        isolate: crypto.randomUUID(),
        intervalMs: settings.metricsPushIntervalMs,
        maxRequests: settings.metricsPushMaxRequests,
        now: () => Date.now(),
        // A stub belongs to the request that made it, so each call makes its own.
        push: (batch) =>
          callDurableObject('counter', timeoutMs, () =>
            metricsObjects.get(metricsObjects.idFromName(METRICS_OBJECT)).push(batch),
          ),
        read: () =>
          callDurableObject('counter', timeoutMs, () =>
            metricsObjects.get(metricsObjects.idFromName(METRICS_OBJECT)).render(trace()),
          ),
        onPushError: (err) =>
          logger.warn(
            { event: 'metrics_push_failed', err: err instanceof Error ? err.message : String(err) },
            'metrics push failed; sent again with the next one',
          ),
      })
    : undefined;
  // The Worker is on the internet: without METRICS_TOKEN its /metrics answers every scrape 401 (a token no one has).
  const metricsToken = config.metrics.token ?? crypto.randomUUID();
  if (isolateMetrics && config.metrics.token === undefined) {
    logger.warn({ event: 'metrics_token_missing' }, 'METRICS_TOKEN is not set: GET /metrics refuses every scrape');
  }
  const { analytics } = settings;

  const counters = settings.counterObjects
    ? createWorkerCounterStore({ namespace: settings.counterObjects, timeoutMs, trace })
    : undefined;
  const revocations = workerRevocationsOf(settings, config.revocations, logger, trace);
  const services = await createServices(
    { ...config, metrics: { ...config.metrics, token: metricsToken } },
    {
      http: createFetchHttp((input, init) => fetch(input, init), { maxBodyBytes: config.upstream.maxBodyBytes }),
      clock: systemClock,
      logger,
      telemetry: scopes.timing(isolateMetrics?.endpoint.telemetry ?? noopTelemetry),
      metrics: isolateMetrics?.endpoint,
      peerAddress: (c) => c.req.header('cf-connecting-ip'),
      // `HTTP/2`, `HTTP/1.1`: the version the client spoke to Cloudflare's edge.
      protocolOf: (c) => (c.req.raw as { cf?: { httpProtocol?: string } }).cf?.httpProtocol?.replace(/^HTTP\//, ''),
      peerCertificate: (c) => tlsClientAuthCertificate(c.req.raw),
      // nodejs_compat's createHmac: the number hash of a log line is ready before the response, nothing to flush after.
      syncHmac: (key, data) => createHmac('sha256', key).update(data).digest('hex'),
      tokenStore: settings.tokenObjects
        ? createWorkerTokenStore({
            namespace: settings.tokenObjects,
            clientId: config.upstream.clientId,
            timeoutMs,
            upstreamTimeoutMs: config.upstream.timeoutMs,
            trace,
          })
        : undefined,
      counters,
      limiters: counters && createWorkerLimiters(counters),
      revocations,
      clients: settings.clients,
      issuers: settings.issuers,
      ...cacheApiStores(settings, options.host),
      background: scopes.background,
      tracing,
      onRequest: analytics
        ? (r) => analytics.writeDataPoint(analyticsDataPoint(r, scopes.current()?.upstreamMs ?? 0))
        : undefined,
    },
  );
  isolateMetrics?.endpoint.watch(metricSourcesOf(services));
  const app = createApp(services);
  return {
    app,
    services,
    metrics: isolateMetrics,
    fetch: async (request, ctx) => {
      // A token revoked on another isolate is refused here too once this isolate's copy is brought up to date.
      await revocations?.sync(callerTrace(request.headers));
      const response = await scopes.run(ctx, () => app.fetch(request, env, ctx as never));
      isolateMetrics?.afterRequest(ctx);
      return response;
    },
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
      // Every wrong or missing setting in one line, so one fix-up round makes the Worker start.
      const fields =
        err instanceof ConfigError
          ? { event: 'config_error', problems: err.problems, msg: err.message }
          : { msg: 'start-up failed' };
      console.log(JSON.stringify({ level: 'error', service: 'callerid-gateway', ...fields }));
      return problemResponse(
        'unavailable',
        'The gateway is not configured correctly; see its logs.',
        crypto.randomUUID(),
      );
    }
    return gateway.fetch(request, ctx);
  },
};
