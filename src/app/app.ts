// createApp: the gateway's Hono app (middleware order, routes, error mapping), the same on Node and Workers.
import { Hono } from 'hono';
import { methodNotAllowed } from 'hono/method-not-allowed';
import type { AppEnv } from '../http/app-env.js';
import { consoleRoutes } from '../operations/console/console-route.js';
import { docsRoutes } from '../docs/docs-routes.js';
import { problemResponse } from '../base/errors.js';
import { errorResponse } from './error-response.js';
import { accessLog, routeResolver } from '../middleware/access-log.js';
import { headLength } from '../middleware/head-length.js';
import { requestId } from '../middleware/request-id.js';
import { serverSpan, type ServerSpanOptions } from '../middleware/server-span.js';
import { requestBodyLimit } from '../middleware/body-limit.js';
import { bodyByMethod, type BodyBoundOf } from '../request/request-rules.js';
import { requestRules } from '../middleware/apply-request-rules.js';
import { UNMATCHED_ROUTE } from '../observability/telemetry.js';
import { adminCacheRoutes } from '../operations/admin/admin-cache-route.js';
import { adminUsageRoutes } from '../operations/admin/admin-usage-route.js';
import { BATCH_ROUTE, batchBodyBytes, contactsBatchRoutes } from '../operations/batch/batch-route.js';
import { contactsCnamRoutes } from '../operations/cnam/cnam-route.js';
import { contactsSearchRoutes } from '../operations/search/search-route.js';
import { healthRoutes } from '../operations/health/health-route.js';
import { metricsRoutes } from '../operations/metrics/metrics-route.js';
import { oauthServerRoutes } from '../operations/oauth/oauth-route.js';
import { tokenLoginRoutes } from '../operations/token-login/token-login-route.js';
import type { GatewayMetrics } from '../observability/metrics.js';
import type { Services } from '../services/services.js';

/** The gateway's app, as its runtime's door (Node's listener, the Worker's fetch) holds it. */
export type GatewayApp = Hono<AppEnv>;

/** Every route's body bound: REQUEST_MAX_BODY_BYTES, the batch search's own (larger) one. */
export function bodyBoundOf(config: Services['config']): BodyBoundOf {
  const batch = batchBodyBytes(config);
  return (path) => (path === BATCH_ROUTE ? batch : config.http.maxBodyBytes);
}

export function createApp(services: Services): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const { logger } = services;

  app.use(headLength());
  app.use(requestId());
  const routeOf = routeResolver(() => app.routes);
  app.use(accessLog({ record: services.recordRequest, routeOf }));
  // Inside the access log, which writes the span's ids on its line; around everything that answers.
  const { addressOf, protocolOf } = services;
  app.use(serverSpan({ tracer: services.tracing.tracer, routeOf, addressOf, protocolOf }));
  // Before any route: a bad Host, an unwanted body, two Authorization fields, `/console/../x` (which must not reach `/x`).
  app.use(requestRules({ takesBody: bodyByMethod, boundOf: bodyBoundOf(services.config) }, services.requestTarget));
  // Before any route reads a body: an oversized one is refused, never buffered.
  app.use(requestBodyLimit(bodyBoundOf(services.config)));

  app.route(
    '/',
    healthRoutes({
      upstreamTokens: services.upstreamTokens,
      clock: services.clock,
      revocationsLoaded: () => services.revocations.list.loaded,
    }),
  );
  // Beside the API only behind METRICS_TOKEN, or when METRICS_PORT=0 chose no listener of its own (Node): its
  // labels name every client id. Otherwise /metrics is on METRICS_PORT alone.
  if (services.metrics && (services.config.metrics.port === 0 || services.config.metrics.token !== undefined)) {
    app.route('/', metricsRoutes({ metrics: services.metrics, token: services.config.metrics.token }));
  }

  app.route('/', tokenLoginRoutes(services));
  app.route('/', oauthServerRoutes(services));
  app.route('/', contactsSearchRoutes(services));
  // For PBXs and CRMs (docs/pbx.md): the caller name as plain text, and many numbers in one request.
  app.route('/', contactsCnamRoutes(services));
  app.route('/', contactsBatchRoutes(services));
  app.route('/', adminCacheRoutes(services));
  app.route('/', adminUsageRoutes(services));
  // Anonymous and restricted: only its page and one search, one provider, tablets and larger, rate limited.
  app.route('/', consoleRoutes(services));
  // /openapi.json describes the routes above, read from this app when first asked; /docs renders it.
  app.route('/', docsRoutes(services, app));

  app.use(
    methodNotAllowed({
      app,
      onMethodNotAllowed: (c, methods) =>
        problemResponse('method_not_allowed', `Use ${methods.join(', ')} on this path.`, c.get('requestId'), {
          allow: methods.join(', '),
        }),
    }),
  );

  app.notFound((c) => problemResponse('not_found', 'No such resource.', c.get('requestId')));

  app.onError((err, c) => errorResponse(err, c.get('requestId') ?? crypto.randomUUID(), logger));

  return app;
}

/** The route template of a method and path among the app's routes, for answers given before the app saw a request. */
export function routeOfApp(app: GatewayApp): (method: string, path: string) => string {
  const resolve = routeResolver(() => app.routes);
  return (method, path) => resolve(method, path) ?? UNMATCHED_ROUTE;
}

/**
 * The app of the separate metrics port (METRICS_PORT, Node): GET /metrics and nothing else, each answer with its
 * server span as the API's have theirs (`spans`: the tracer and the trusted client address).
 */
export function createMetricsApp(
  metrics: GatewayMetrics,
  token: string | undefined,
  spans: Pick<ServerSpanOptions, 'tracer' | 'addressOf' | 'protocolOf'>,
): GatewayApp {
  const app = new Hono<AppEnv>();
  const routeOf = routeResolver(() => app.routes);
  app.use(serverSpan({ ...spans, routeOf }));
  app.route('/', metricsRoutes({ metrics, token }));
  app.notFound(() => problemResponse('not_found', 'Only /metrics is served on this port.', crypto.randomUUID()));
  return app;
}
