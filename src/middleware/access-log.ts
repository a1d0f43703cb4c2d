// Records every request once: the request metrics and one JSON log line (route template, never the URL,
// whose query holds the number; the number itself only as a keyed hash).
import type { MiddlewareHandler } from 'hono';
import { routePath } from 'hono/route';
import type { AppEnv } from '../app-env.js';
import type { LogFields, Logger, LogLevel } from '../observability/logger.js';
import { UNMATCHED_ROUTE, type GatewayMetrics } from '../observability/metrics.js';
import type { NumberHasher } from '../observability/number-hash.js';

declare module 'hono' {
  interface ContextVariableMap {
    /** The E.164 number a route looked up; the access log writes its keyed hash, never the number. */
    e164?: string;
  }
}

export interface AccessLogOptions {
  logger: Logger;
  metrics?: GatewayMetrics | undefined;
  hasher?: NumberHasher | undefined;
  /** Routes logged at debug instead of info: probes and scrapes would drown the rest. */
  quietRoutes?: ReadonlySet<string>;
  /** A monotonic clock in milliseconds. */
  now?: () => number;
}

const DEFAULT_QUIET = new Set(['/healthz', '/readyz', '/metrics']);

/** The route template that answered, or {@link UNMATCHED_ROUTE} when only the catch-all middleware ran. */
export function routeLabel(path: string): string {
  return path === '/*' || path === '*' || path === '' ? UNMATCHED_ROUTE : path;
}

/**
 * What the cache did, read back from the RFC 9211 `Cache-Status` the lookup sets, in the closed set of
 * the cache metric: hit, miss, stale, coalesced, stale_if_error (a synchronous revalidation counts as a miss).
 */
export function cacheResultOf(cacheStatus: string | null): string | undefined {
  if (cacheStatus === null) return undefined;
  let hit = false;
  let fwd: string | undefined;
  let detail: string | undefined;
  let collapsed = false;
  for (const param of cacheStatus.split(',')[0]!.split(';').slice(1)) {
    const p = param.trim();
    if (p === 'hit') hit = true;
    else if (p === 'collapsed') collapsed = true;
    else if (p.startsWith('fwd=')) fwd = p.slice(4);
    else if (p.startsWith('detail=')) detail = p.slice(7);
  }
  if (hit) return 'hit';
  if (fwd === undefined) return undefined;
  if (fwd === 'stale' && detail === 'stale-if-error') return 'stale_if_error';
  if (fwd === 'stale' && detail === 'stale-while-revalidate') return 'stale';
  return collapsed ? 'coalesced' : 'miss';
}

export function accessLog(options: AccessLogOptions): MiddlewareHandler<AppEnv> {
  const { logger, metrics, hasher } = options;
  const quiet = options.quietRoutes ?? DEFAULT_QUIET;
  const now = options.now ?? (() => performance.now());
  const enabled = (level: LogLevel): boolean => logger.enabled?.(level) ?? true;

  return async function accessLog(c, next) {
    const started = now();
    let threw = true;
    try {
      await next();
      threw = false;
    } finally {
      const elapsedMs = now() - started;
      const route = routeLabel(routePath(c));
      const status = threw ? 500 : c.res.status;
      metrics?.observeRequest(route, c.req.method, status, elapsedMs / 1000);

      const level: LogLevel = status >= 500 ? 'warn' : quiet.has(route) ? 'debug' : 'info';
      if (enabled(level)) {
        const fields: LogFields = {
          event: 'request',
          requestId: c.get('requestId'),
          method: c.req.method,
          route,
          status,
          durationMs: Math.round(elapsedMs * 1000) / 1000,
        };
        const clientId = c.get('clientId');
        if (clientId !== undefined) fields.clientId = clientId;
        const cache = threw ? undefined : cacheResultOf(c.res.headers.get('cache-status'));
        if (cache !== undefined) fields.cache = cache;
        const e164 = c.get('e164');
        const known = e164 === undefined || hasher === undefined ? undefined : hasher.cached(e164);
        if (e164 !== undefined && hasher !== undefined && known === undefined) {
          // Not memoised yet: the line is written once the hash is ready, without holding the response.
          void hasher.hash(e164).then(
            (numberHash) => logger[level]({ ...fields, numberHash }, 'request'),
            () => logger[level](fields, 'request'),
          );
        } else {
          if (known !== undefined) fields.numberHash = known;
          logger[level](fields, 'request');
        }
      }
    }
  };
}
