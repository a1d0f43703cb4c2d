// GET /admin/usage: today's use of the paid upstream per caller, the budget, the breaker and the cooldown,
// for the clients in GATEWAY_ADMIN_CLIENTS.
import { Hono } from 'hono';
import type { AppEnv } from '../../http/app-env.js';
import { adminDocs } from './admin-docs.js';
import { bearerAuth } from '../../middleware/client-auth.js';
import type { Services } from '../../services/services.js';
import { adminOnly } from './admin-cache-route.js';

export function adminUsageRoutes(
  services: Pick<Services, 'clients' | 'gatewayTokens' | 'clientCertificates' | 'guard'>,
): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get(
    '/admin/usage',
    adminDocs.usage,
    bearerAuth(services),
    adminOnly(services.clients.isAdmin, 'read the usage'),
    async (c) => c.json(await services.guard.usage(), 200, { 'cache-control': 'no-store' }),
  );
  return app;
}
