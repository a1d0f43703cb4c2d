// createApp: the gateway's Hono app (middleware order, routes, error mapping), the same on Node and Workers.
import { Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { methodNotAllowed } from 'hono/method-not-allowed';
import { requestId } from 'hono/request-id';
import type { AppEnv } from './app-env.js';
import { errorCodes, GatewayError, problemResponse, type ErrorCode } from './errors.js';
import { contactsSearchRoutes } from './routes/contacts-search.js';
import { tokenLoginRoutes } from './routes/token-login.js';
import type { Services } from './services.js';

const statusToCode = new Map<number, ErrorCode>(
  Object.entries(errorCodes).map(([code, { status }]) => [status, code as ErrorCode]),
);

export function createApp(services: Services): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const { logger } = services;

  app.use(requestId({ limitLength: 64 }));

  app.route('/', tokenLoginRoutes(services));
  app.route('/', contactsSearchRoutes(services));

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

  app.onError((err, c) => {
    const id = c.get('requestId') ?? crypto.randomUUID();
    if (err instanceof GatewayError) {
      if (err.status >= 500) logger.warn({ requestId: id, code: err.code, reason: err.message }, 'request failed');
      return problemResponse(err.code, err.message, id, err.headers, err.extensions);
    }
    if (err instanceof HTTPException && err.status < 500) {
      const code = statusToCode.get(err.status) ?? 'bad_request';
      return problemResponse(code, errorCodes[code].title, id, {});
    }
    logger.error({ requestId: id, err: err instanceof Error ? { name: err.name, message: err.message, stack: err.stack } : String(err) }, 'unhandled error');
    return problemResponse('internal', `An internal error occurred; please contact support and quote request id ${id}.`, id);
  });

  return app;
}
