// The request id of every answer: the caller's `X-Request-Id` when well formed, else a new one (request/request-parts.ts,
// the rule the search's JSON renderer applies too), kept for the handlers and the access log and sent back.
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../http/app-env.js';
import { requestIdOf } from '../request/request-parts.js';

export function requestId(): MiddlewareHandler<AppEnv> {
  return async function requestId(c, next) {
    const id = requestIdOf(c.req.header('x-request-id'));
    c.set('requestId', id);
    c.header('x-request-id', id);
    await next();
  };
}
