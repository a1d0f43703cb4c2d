// Records every request the app answers once, through the shared request recorder (metrics and one log line).
import type { MiddlewareHandler } from 'hono';
import { routePath } from 'hono/route';
import type { AppEnv } from '../http/app-env.js';
import { UNMATCHED_ROUTE } from '../observability/telemetry.js';
import type { RequestRecorder } from '../observability/request-recorder.js';
import { finishedRequest } from '../observability/served-request.js';

export interface AccessLogOptions {
  record: RequestRecorder;
  /**
   * The route template a method and path belong to, for answers a middleware gave before any route ran (a console
   * 429, a 413 of the body limit): they are labelled with the route they were for, not the middleware's pattern.
   */
  routeOf?: (method: string, path: string) => string | undefined;
  /** A monotonic clock in milliseconds. */
  now?: () => number;
}

/** The route template that answered, or {@link UNMATCHED_ROUTE} when only the catch-all middleware ran. */
function routeLabel(path: string): string {
  return path === '/*' || path === '*' || path === '' ? UNMATCHED_ROUTE : path;
}

/**
 * Resolves a method and path to one of `routes` (Hono's `app.routes`: its method and path templates, `:param`
 * segments included); middleware patterns (`*`) are not routes. Built once, on first use, after every route is in.
 */
export function routeResolver(routes: () => readonly { method: string; path: string }[]) {
  let table: { method: string; path: string; pattern: RegExp }[] | undefined;
  return function routeOf(method: string, path: string): string | undefined {
    table ??= routes()
      .filter((r) => !r.path.includes('*'))
      .map((r) => ({
        method: r.method,
        path: r.path,
        pattern: new RegExp(`^${r.path.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/:[^/]+/g, '[^/]+')}$`),
      }));
    const found = table.find(
      (r) =>
        (r.method === method || r.method === 'ALL' || (method === 'HEAD' && r.method === 'GET')) &&
        r.pattern.test(path),
    );
    return found?.path;
  };
}

export function accessLog(options: AccessLogOptions): MiddlewareHandler<AppEnv> {
  const { record } = options;
  const now = options.now ?? (() => performance.now());
  const labelOf = (method: string, path: string, matched: string): string => {
    if (!matched.includes('*')) return routeLabel(matched);
    return options.routeOf?.(method, path) ?? routeLabel(matched);
  };

  return async function accessLog(c, next) {
    const started = now();
    let threw = true;
    try {
      await next();
      threw = false;
    } finally {
      const answered = {
        requestId: c.get('requestId'),
        status: threw ? 500 : c.res.status,
        clientId: c.get('clientId'),
        lookup: c.get('lookup'),
      };
      const route = labelOf(c.req.method, c.req.path, routePath(c));
      record(finishedRequest(c.req, route, answered, now() - started, c.get('span')));
    }
  };
}
