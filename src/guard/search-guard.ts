// The guard on the search routes: the client's rate before the lookup (429 with the RateLimit fields and Retry-After),
// the RateLimit fields on every answer, and each answer counted per caller with its result.
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../app-env.js';
import { GatewayError, type ErrorCode } from '../errors.js';
import type { SearchResult } from '../observability/telemetry.js';
import type { CostGuard } from './cost-guard.js';

const REFUSALS: Partial<Record<ErrorCode, SearchResult>> = {
  too_many_requests: 'rate_limited',
  quota_exhausted: 'quota_exhausted',
  budget_exhausted: 'budget_exhausted',
  upstream_rate_limited: 'upstream_refused',
  upstream_unavailable: 'upstream_refused',
  upstream_busy: 'upstream_refused',
};

/** The result of one finished search: the cache's result when it answered, else which refusal or an error. */
export function searchResultOf(status: number, cache: SearchResult | undefined, error: unknown): SearchResult {
  if (status === 200) return cache ?? 'miss';
  return error instanceof GatewayError ? (REFUSALS[error.code] ?? 'error') : 'error';
}

/** After bearerAuth on GET /v2/contacts/search. */
export function clientSearchGuard(guard: CostGuard): MiddlewareHandler<AppEnv> {
  return async function clientSearchGuard(c, next) {
    const client = c.get('clientId');
    const { allowed, state } = guard.rate.take(client);
    const headers = guard.rate.fields.headers(state);
    if (!allowed) {
      guard.countSearch(client, 'rate_limited');
      const retryAfter = String(state.resetSeconds);
      throw new GatewayError(
        'too_many_requests',
        `This client made more than ${state.limit} searches this minute; try again in ${retryAfter} s.`,
        {
          headers: { ...headers, 'retry-after': retryAfter },
        },
      );
    }
    await next();
    guard.countSearch(client, searchResultOf(c.res.status, c.get('lookup')?.cache, c.error));
    for (const [name, value] of Object.entries(headers)) c.res.headers.set(name, value);
  };
}

/** On the console's search: counted as the `console` caller (its limits are the console's own). */
export function consoleSearchAccounting(guard: CostGuard, caller: string): MiddlewareHandler<AppEnv> {
  return async function consoleSearchAccounting(c, next) {
    await next();
    guard.countSearch(caller, searchResultOf(c.res.status, c.get('lookup')?.cache, c.error));
  };
}
