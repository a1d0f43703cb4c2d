// DELETE /admin/cache/{number} and DELETE /admin/cache: cache purges for the clients in GATEWAY_ADMIN_CLIENTS.
// With a shared tier a purge also removes the shared copy and tells every replica to drop its own; the answer's
// `reach` says how far it went: `process`, `deployment` (Redis) or `data-centre` (Workers' Cache API).
import { Hono, type MiddlewareHandler } from 'hono';
import type { AppEnv } from '../../http/app-env.js';
import { adminDocs } from './admin-docs.js';
import { GatewayError } from '../../base/errors.js';
import { bearerAuth } from '../../middleware/client-auth.js';
import type { Services } from '../../services/services.js';

const NO_STORE = { 'cache-control': 'no-store' } as const;

/** After bearerAuth: 403 for clients that are not admins (the registry's, as reloaded); `action` says what. */
export function adminOnly(
  isAdmin: (clientId: string) => boolean,
  action = 'purge the cache',
): MiddlewareHandler<AppEnv> {
  return async function adminOnly(c, next) {
    if (!isAdmin(c.get('clientId'))) {
      throw new GatewayError('forbidden', `This client may not ${action} (GATEWAY_ADMIN_CLIENTS).`);
    }
    await next();
  };
}

/** A purge that reached this replica only: the operator must know the others may still answer the old copy. */
function notShared(): GatewayError {
  return new GatewayError(
    'unavailable',
    'Purged on this replica only: the shared cache (Redis) did not answer, so other replicas may still hold the entry. Retry the purge.',
    { headers: { 'retry-after': '1' } },
  );
}

export function adminCacheRoutes(
  services: Pick<
    Services,
    'clients' | 'gatewayTokens' | 'clientCertificates' | 'normalizer' | 'lookupCache' | 'logger'
  >,
): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const { lookupCache: cache, logger } = services;
  const guard = [bearerAuth(services), adminOnly(services.clients.isAdmin)] as const;

  app.delete('/admin/cache/:number', adminDocs.purgeNumber, ...guard, async (c) => {
    // Any spelling of the number reaches its one entry; the number itself is not logged.
    const e164 = services.normalizer.normalize(c.req.param('number'), 'The number in the path (/admin/cache/{number})');
    const { purged, shared } = await cache.purge(e164);
    logger.info({ event: 'cache_purge', scope: 'number', clientId: c.get('clientId'), purged, shared }, 'cache purged');
    if (shared === false) throw notShared();
    return c.json({ number: e164, purged, reach: cache.purgeReach }, 200, NO_STORE);
  });

  app.delete('/admin/cache', adminDocs.purgeAll, ...guard, async (c) => {
    const { purged, shared } = await cache.purgeAll();
    logger.info({ event: 'cache_purge', scope: 'all', clientId: c.get('clientId'), purged, shared }, 'cache purged');
    if (shared === false) throw notShared();
    return c.json({ purged, reach: cache.purgeReach }, 200, NO_STORE);
  });

  return app;
}
