// Records every request the app answers once, through the shared request recorder (metrics and one log line).
import type { MiddlewareHandler } from 'hono';
import { routePath } from 'hono/route';
import type { AppEnv } from '../app-env.js';
import { UNMATCHED_ROUTE } from '../observability/metrics.js';
import type { RequestRecorder } from '../observability/request-recorder.js';

export interface AccessLogOptions {
  record: RequestRecorder;
  /** A monotonic clock in milliseconds. */
  now?: () => number;
}

/** The route template that answered, or {@link UNMATCHED_ROUTE} when only the catch-all middleware ran. */
export function routeLabel(path: string): string {
  return path === '/*' || path === '*' || path === '' ? UNMATCHED_ROUTE : path;
}

export function accessLog(options: AccessLogOptions): MiddlewareHandler<AppEnv> {
  const { record } = options;
  const now = options.now ?? (() => performance.now());

  return async function accessLog(c, next) {
    const started = now();
    let threw = true;
    try {
      await next();
      threw = false;
    } finally {
      record({
        requestId: c.get('requestId'),
        method: c.req.method,
        route: routeLabel(routePath(c)),
        status: threw ? 500 : c.res.status,
        elapsedMs: now() - started,
        clientId: c.get('clientId'),
        lookup: c.get('lookup'),
      });
    }
  };
}
