// POST /admin/tokens/revoke-client: every gateway token issued to one client so far revoked, on every replica (the
// deployment's revocations), for admin clients. The client logs in again for a new token.
import { Hono } from 'hono';
import type { AppEnv } from '../../http/app-env.js';
import { contentTypeIs } from '../../auth/media-type.js';
import { revokeClientTokens } from '../../auth/token-revocation.js';
import { adminDocs } from './admin-docs.js';
import { GatewayError } from '../../base/errors.js';
import { bearerAuth } from '../../middleware/client-auth.js';
import type { Services } from '../../services/services.js';
import { adminOnly } from './admin-cache-route.js';

/** A client id as GATEWAY_CLIENTS and the clients file spell one. */
const CLIENT_ID = /^[A-Za-z0-9._-]{1,64}$/;

/** The body's `client_id` (an `application/json` body), or a 400 saying what the body must be. */
async function clientIdOf(contentType: string | undefined, body: () => Promise<unknown>): Promise<string> {
  // A body that is no JSON is refused below; one that did not arrive whole is refused as it failed.
  const parsed = contentTypeIs(contentType, 'application/json')
    ? await body().catch((err: unknown) => {
        if (err instanceof SyntaxError) return undefined;
        throw err;
      })
    : undefined;
  const id = (parsed as { client_id?: unknown } | undefined)?.client_id;
  if (typeof id !== 'string' || !CLIENT_ID.test(id)) {
    throw new GatewayError('bad_request', 'The body must be JSON: {"client_id": "<id>"}.');
  }
  return id;
}

export function adminTokenRoutes(
  services: Pick<
    Services,
    'config' | 'clients' | 'gatewayTokens' | 'clientCertificates' | 'revocations' | 'logger' | 'clock'
  >,
): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const guard = [bearerAuth(services), adminOnly(services.clients.isAdmin, "revoke a client's tokens")] as const;

  app.post('/admin/tokens/revoke-client', adminDocs.revokeClient, ...guard, async (c) => {
    const clientId = await clientIdOf(c.req.header('content-type'), () => c.req.json());
    if (!services.clients.has(clientId)) throw new GatewayError('not_found', 'No registered client has this id.');
    const maxTtl = services.clients.maxTokenTtlSeconds(services.config.gatewayTokens.ttlSeconds);
    const { before, shared } = await revokeClientTokens(services, c.get('clientId'), clientId, maxTtl);
    if (!shared) {
      throw new GatewayError(
        'unavailable',
        'Revoked on this replica, which pushes the revocation to the shared store until it answers; until then other replicas may still accept the tokens. Retry.',
        { headers: { 'retry-after': '1' } },
      );
    }
    const reach = services.revocations.reach;
    return c.json({ client_id: clientId, revoked_before: new Date(before).toISOString(), reach }, 200, {
      'cache-control': 'no-store',
    });
  });

  return app;
}
